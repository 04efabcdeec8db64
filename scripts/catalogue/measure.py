"""The catalogue's effect on the labelled corpora, measured in one process on one state
of the tree: each log diagnosed with the compiled rules as shipped and with the
catalogue's signatures taken out (top-1, top-3, healthy logs kept clean).

    python scripts/catalogue/measure.py [CORPUS_DIR ...]   # default: corpora/dev, corpora/batch-2026-11-*
    # and their healthy logs in corpora/healthy/
"""

from __future__ import annotations

import csv
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kb.authoring.checked import load_rules  # noqa: E402
from kb.diagnosis.compiled import CompiledRules  # noqa: E402
from kb.diagnosis.engine import diagnose_paths  # noqa: E402

PREFIX = "catalogued: "


def without_catalogue(rules: CompiledRules) -> CompiledRules:
    causes = {
        cid: dataclasses.replace(
            c, signatures=[s for s in c.signatures if not s.id.startswith(PREFIX)]
        )
        for cid, c in rules.causes.items()
    }
    return CompiledRules(rules.key + "-no-catalogue", causes, rules.symptoms, rules.fixes)


def _log(corpus: Path, name: str) -> Path:
    beside = corpus / name
    return beside if beside.exists() else corpus / "logs" / name


def score(rules: CompiledRules, corpus: Path) -> tuple[int, int, int, int, int, list[str]]:
    """(top1, top3, judged, clean, healthy, per-log top causes)."""
    top1 = top3 = judged = clean = healthy = 0
    rows = []
    with (corpus / "labels.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            label = row["cause_id"].strip()
            if label == "other":
                continue
            ids = [
                c["id"]
                for c in diagnose_paths(rules, [_log(corpus, row["file"])]).to_json()["causes"]
            ]
            rows.append(f"{row['file']}: {ids[:3]}")
            if label == "none":
                healthy += 1
                clean += not ids
            else:
                judged += 1
                top1 += ids[:1] == [label]
                top3 += label in ids[:3]
    return top1, top3, judged, clean, healthy, rows


def main(argv: list[str]) -> int:
    corpora = [Path(a) for a in argv] or [
        ROOT / "corpora" / top / name
        for top in (".", "healthy")
        for name in ("dev", *(p.name for p in sorted(ROOT.glob("corpora/batch-2026-11-*"))))
    ]
    shipped = load_rules()
    plain = without_catalogue(shipped)
    for corpus in corpora:
        a = score(plain, corpus)
        b = score(shipped, corpus)
        fmt = "top1 {0}/{2}  top3 {1}/{2}  healthy-clean {3}/{4}"
        print(f"{corpus.name}: without catalogue {fmt.format(*a)} | with {fmt.format(*b)}")
        for x, y in zip(a[5], b[5], strict=True):
            if x != y:
                print(f"  changed: {x}  ->  {y.split(': ', 1)[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
