"""Writes the JSON Schema files editors use (`rules/schema/*.schema.json`).

Run `python -m kb.rules.schema.export` after changing the models; a test fails while the
committed files differ from what the models generate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kb.rules.schema.models import KIND_MODELS


def schemas() -> dict[str, str]:
    """File name -> JSON text, one schema per kind of rule file."""
    out = {}
    for kind, model in KIND_MODELS.items():
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = f"dlperf-help {kind} rule"
        out[f"{kind}.schema.json"] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    from kb.util.paths import rules_dir

    target = Path(argv[0]) if argv else rules_dir() / "schema"
    target.mkdir(parents=True, exist_ok=True)
    for name, text in schemas().items():
        (target / name).write_text(text, encoding="utf-8")
        print(f"wrote {target / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
