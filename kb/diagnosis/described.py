"""What the user describes, when no line of the paste names a cause.

Many pastes are a question more than a log: "GPU utilisation stays at 30 %, the
DataLoader seems slow", "两台机器的容器用的是bridge网络，训练卡住". No signature and no
known message fires on such prose, yet an expert reading it knows where to look. The
knowledge base already says, in its own words, what each cause looks like to the user:
the cause's title and description, the questions and answers that confirm it, the
titles of its fixes. Those texts are the index (BM25 over their words; CJK text as
character pairs), and the paste's prose lines are the query, so any wording of the
complaint that uses the field's vocabulary finds the cause; no rule is written for it.

It is asked only when nothing else named a cause, the input was read whole, and its
prose says something is wrong (a problem word: slow, hangs, fails, 报错, ...). The
answer is marked `basis: described`, with the prose lines that weigh most as its
evidence and the words they share with the cause: a place to start, never a proof.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from kb.diagnosis.model import BASIS_DESCRIBED, CauseResult, Evidence
from kb.util.lazyre import LazyPattern

CACHE_FORMAT = "dlperf-described/2"  # 2: links and a thread's own words are not indexed
DESCRIBED_MAX = 0.3  # a description is never "likely": it is where to look first
TOP = 3
MIN_SCORE = 9.5  # BM25: below this the prose shares only a word or two with any cause
RELATIVE = 0.6  # causes after the first are shown only when this close to it
MIN_PROSE_WORDS = 6
K1, B = 1.2, 0.75

_WORD = LazyPattern(r"[a-z][a-z0-9_]*[a-z0-9]|[\u4e00-\u9fff]+")
_ANY_CASE = LazyPattern(_WORD.pattern, re.IGNORECASE)
_URL = LazyPattern(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_LETTERS = LazyPattern(r"[A-Za-z][A-Za-z'’]+")
_CJK = LazyPattern(r"[\u4e00-\u9fff]")
# lines a program prints, not a person: a time or level first, a frame, an exception,
# a library's own prefix, key=value runs
_LOGGED = LazyPattern(
    r"^\s*(?:\[?\d{2,4}[-/:.]\d\d|\[?\d+:\d+|[IWEF]\d{4} |\[?(?:INFO|WARN(?:ING)?|ERROR|DEBUG|"
    r"TRACE|FATAL|CRITICAL)\b|File \"|Traceback|at [\w.$]+\(|[\w.]*(?:Error|Exception|Warning)\b)"
    r"|\bNCCL (?:INFO|WARN)\b|(?:\S+=\S+\s+){3}"
)
_DECOR = LazyPattern(r"^\s*(?:[#>*+\-]+|\d+[.)])\s+")
# a shell prompt, a launcher's rank prefix: a command or its output, quoted
_PROMPT = LazyPattern(r"^\s*(?:\$|\(\w+\)\s|[\w.-]+@[\w.-]+[:#$ ~])|<std(?:out|err)>")
# a program's own prefix or place: `[host:pid]`, `[rank0]:[W ...]`, `***NOTE`, `: W tf/x.cc:64]`,
# a comment line of a tool's report (`# Errors with asterisks ...`: one `#`, where a
# person's Markdown heading has two or more)
_PRINTED = LazyPattern(r"^\s*(?:\[[^\]]*\]|\*{2,}|:|#(?!#))|\b\w+\.(?:cc|cpp|cu|c|h|hpp|py):\d+")
# the small words of English sentences: a line of a program's output holds few of them
_FUNCTION = frozenset(
    "the a an is are was were be been it this that i we my our you to of in on for with but "
    "and not when if so have has had can do does did there what how why which seems seem "
    "because then than after before".split()
)
MIN_FUNCTION_WORDS = 2
# what says the problem is gone: a log of a run that works now is no complaint
_SOLVED = LazyPattern(
    r"(?i)\b(?:solved|resolved|fixed|works? (?:fine|now|well)|working (?:fine|now|well)|"
    r"successfully|as expected|no longer|clos(?:e|ing) (?:this|the) issue)\b|解决|正常了"
)
# prose about warnings ("these warnings shouldn't be printed"): a question about messages
# that are no failure, which the catalogue answers line by line, not a cause
_ABOUT_WARNINGS = LazyPattern(r"(?i)\bwarn(?:ing|ings|s)?\b|\bnoisy\b|\bspam|警告")
# a complaint: what the prose must say before its words are taken for a problem
_PROBLEM = LazyPattern(
    r"(?i)\b(?:slow(?:er|ly|s)?|hang(?:s|ing)?|hung|stuck|freez(?:e|es|ing)|froze|fail(?:s|ed|"
    r"ing|ure)?|errors?|cannot|can't|can not|couldn't|unable|doesn't work|does not work|won't|"
    r"not work(?:ing)?|low(?:er)?|poor|time[sd]? ?out|crash(?:es|ed)?|problem|wrong|bottleneck|"
    r"idle|instead of|only (?:one|1|uses?)|refused|denied|unreachable|missing|not found)\b"
    r"|慢|卡住|卡死|卡在|报错|失败|错误|无法|不能|问题|不通|超时|异常|找不到|不动"
    # a person asking how to get what the job does not do ("请问如何去使1个进程占1个显卡")
    r"|请问|如何|怎么|怎样|\bhow (?:do|can|could|should) (?:i|we|you)\b"
)
_STOP = frozenset(
    "the a an of to in on and or is are be it its this that for with as by at from when not "
    "no do does can any all their they them which than then there these those was were has "
    "have had you your our we my me will would could should into out up so if but also only "
    "each one two more most other another same such via per may must what how why who use "
    "used using get got run runs running job jobs just like see seen here there some very "
    "much many still even after before while where only both every own set sets "
    # a thread's words about itself
    "issue issues thread post comment reply please thanks thank help anyone".split()
)


def _stem(word: str) -> str:
    """A crude English stem, the same on both sides: enough that `hangs`, `hanging` and
    `hang` meet."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """The indexed words of a text: lower-case English stems (no stop words) and the
    character pairs of its Chinese runs; links are no words (a thread's URL says nothing of
    the problem)."""
    out: list[str] = []
    for w in _WORD.findall(_URL.sub(" ", text).lower()):
        if _CJK.match(w):
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
        elif len(w) > 2 and w not in _STOP:
            out.append(_stem(w))
    return out


def _surface(text: str) -> dict[str, str]:
    """Each indexed word of `text` as the text first writes it (a stem is no word to show)."""
    out: dict[str, str] = {}
    for w in _ANY_CASE.findall(text):
        if not _CJK.match(w):
            for stem in words(w):
                out.setdefault(stem, w)
    return out


def prose_lines(lines: Iterable[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """The lines that read as a person's sentences, not as a program's output."""
    out = []
    for file, no, text in lines:
        plain = _DECOR.sub("", text).strip()
        if not plain or _LOGGED.search(plain) or _PROMPT.search(plain) or _PRINTED.search(text):
            continue
        tokens = plain.split()
        lettered = _LETTERS.findall(plain)
        small = {w.lower() for w in lettered} & _FUNCTION
        sentence = len(lettered) >= MIN_PROSE_WORDS and len(lettered) >= 0.6 * len(tokens)
        if len(_CJK.findall(plain)) >= 4 or (sentence and len(small) >= MIN_FUNCTION_WORDS):
            out.append((file, no, text))
    return out


class Index:
    """BM25 over each cause's own texts."""

    def __init__(self, docs: Mapping[str, list[str]]) -> None:
        self.docs = {cid: Counter(ws) for cid, ws in docs.items() if ws}
        self.lengths = {cid: sum(c.values()) for cid, c in self.docs.items()}
        n = len(self.docs) or 1
        self.mean = sum(self.lengths.values()) / n or 1.0
        df = Counter(w for c in self.docs.values() for w in c)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def scores(self, query: Iterable[str]) -> dict[str, float]:
        q = set(query)
        out: dict[str, float] = {}
        for cid, counts in self.docs.items():
            norm = K1 * (1 - B + B * self.lengths[cid] / self.mean)
            s = sum(
                self.idf[w] * counts[w] * (K1 + 1) / (counts[w] + norm) for w in q if w in counts
            )
            if s:
                out[cid] = s
        return out

    def shared(self, cid: str, query: Iterable[str]) -> list[str]:
        """The query's words this cause's texts hold, the rarest first."""
        counts = self.docs.get(cid, Counter())
        held = {w for w in query if w in counts}
        return sorted(held, key=lambda w: (-self.idf[w], w))


def described_causes(
    rules: Any, compiled: Any, lines: list[tuple[str, int, str]]
) -> list[CauseResult]:
    """The causes whose own texts are closest to what the prose of `lines` complains of,
    `basis: described`; none when the prose says nothing is wrong or shares too little."""
    prose = prose_lines(lines)
    text = "\n".join(t for _, _, t in prose)
    if not prose or not _PROBLEM.search(text) or _SOLVED.search(text):
        return []
    if _ABOUT_WARNINGS.search(text):
        return []
    index = index_for(rules, compiled)
    query = words(text)
    ranked = sorted(index.scores(query).items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked or ranked[0][1] < MIN_SCORE:
        return []
    best = ranked[0][1]
    kept = [(cid, s) for cid, s in ranked[:TOP] if s >= RELATIVE * best]
    total = sum(s for _, s in kept)
    by_line = [(ln, index.scores(words(ln[2]))) for ln in prose]  # each line scored once
    shown = _surface(text)
    out = []
    for cid, s in kept:
        cause = compiled.causes[cid]
        # the prose line that says most of this cause: its evidence
        line = max(by_line, key=lambda ls: (ls[1].get(cid, 0.0), -ls[0][1]))[0]
        shared = index.shared(cid, words(line[2]))[:6] or index.shared(cid, query)[:6]
        ev = Evidence(line[0], line[1], line[2], 0, len(line[2]), f"described/{cid}")
        why = (
            "no line names a cause; the text describes it: it shares "
            + ", ".join(repr(shown.get(w, w)) for w in shared)
            + " with this cause's description"
        )
        out.append(
            CauseResult(
                cid,
                cause.title,
                DESCRIBED_MAX * s / total,
                [ev],
                {},
                list(cause.fixes),
                why,
                basis=BASIS_DESCRIBED,
                symptom=cause.symptoms[0] if cause.symptoms else "",
            )
        )
    return out


# ---------------------------------------------------------------- the index and its texts

_INDEXES: dict[str, Index] = {}


def index_for(rules: Any, compiled: Any) -> Index:
    """The index of the causes of `compiled`, from the rule files they came from: kept in
    memory, and on disk beside the compiled rules (reading every rule file costs more than
    a paste may wait)."""
    key = str(getattr(compiled, "key", "") or "")
    if key and key in _INDEXES:
        return _INDEXES[key]
    root = getattr(rules, "root", None)
    if root is None:
        from kb.util.paths import rules_dir

        root = rules_dir()
    docs = _cached_docs(key, Path(root), set(compiled.causes))
    index = Index(docs)
    if key:
        _INDEXES.clear()
        _INDEXES[key] = index
    return index


def _cached_docs(key: str, root: Path, causes: set[str]) -> dict[str, list[str]]:
    import json

    from kb.util.atomicfile import write_atomic
    from kb.util.digest import blake2b
    from kb.util.paths import cache_dir

    if not key:
        return dict(cause_texts(root, causes))
    h = blake2b(f"{CACHE_FORMAT}\0{key}\0{root}".encode(), digest_size=16)
    h.update(Path(__file__).read_bytes())
    path = cache_dir() / f"described-{h.hexdigest()}.json"
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
            return {str(k): [str(w) for w in v] for k, v in data.items()}
    docs = dict(cause_texts(root, causes))
    with contextlib.suppress(OSError):
        write_atomic(path, json.dumps(docs, ensure_ascii=False).encode("utf-8"))
    return docs


def cause_texts(root: Path, causes: set[str]) -> Iterator[tuple[str, list[str]]]:
    """Each cause's indexed words: its title (twice: it is the cause in one line), its
    description, the questions and answers that confirm it, its fixes' titles."""
    nodes = list(_rule_nodes(root))
    fixes = {n["id"]: n for n in nodes if "steps" in n}
    texts: dict[str, list[str]] = {cid: [] for cid in causes}
    for node in nodes:
        cid = node.get("id")
        if cid in texts:
            title = _text(node.get("title"))
            texts[cid] += [title, title, _text(node.get("description"))]
            texts[cid] += [_text(fixes.get(f, {}).get("title")) for f in _ids(node.get("fixes"))]
        for q in node.get("questions") or []:
            if not isinstance(q, dict):
                continue
            for a in q.get("answers") or []:
                if not isinstance(a, dict):
                    continue
                for confirmed in _ids(a.get("confirms")):
                    if confirmed in texts:
                        texts[confirmed] += [_text(q.get("text")), _text(a.get("text"))]
    for cid, parts in texts.items():
        yield cid, words("\n".join(p for p in parts if p))


def _rule_nodes(root: Path) -> Iterator[dict[str, Any]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(root.rglob("*.yaml")):
        if "schema" in path.parts or path.name.endswith(".expect.yaml"):
            continue
        with contextlib.suppress(OSError, yaml.YAMLError, UnicodeDecodeError):
            node = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
            if isinstance(node, dict) and isinstance(node.get("id"), str):
                yield node


def _text(value: Any) -> str:
    """A rule text: plain, or `{en: ..., zh: ...}` (both languages are indexed)."""
    if isinstance(value, dict):
        return "\n".join(str(v) for v in value.values() if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _ids(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
