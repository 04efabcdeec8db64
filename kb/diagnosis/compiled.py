"""The rules in the plain form the diagnosis needs, cached on disk by their content.

Loading YAML, validating with pydantic and linting with networkx costs about half a
second; a pasted log should be diagnosed in less. So the first run compiles the rules
into plain data (`CompiledRules`) and caches it under `kb.util.paths.cache_dir()` (a
pickle of our own, read back through an allow-list: `kb.util.cachepickle`), named by a
hash of every rule file's bytes (and of this engine's format and modules); later runs
find it and never import pydantic, yaml or networkx. Any change to a rule file gives a
new key, so a stale cache is never used; a cache that cannot be written is simply not
kept. Hashing the rules and the catalogue costs tens of milliseconds, so a warm run
first compares what `os.stat` says of those files with what it said when their key was
last computed (`_fingerprint`), and hashes them only when something moved.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from kb.diagnosis.matching import SignatureSpec, signature_spec
from kb.util import cachepickle
from kb.util.digest import blake2b
from kb.util.record import field, record, replace

TYPE_CHECKING = False
if TYPE_CHECKING:  # a warm run names files by plain strings: pathlib is not imported
    from pathlib import Path

FORMAT = "dlperf-compiled-rules/9"  # 9: regex matchers carry `where` bounds


# records (`kb.util.record`), not `@dataclass`: these are imported at every start


@record()
class FixSpec:
    id: str
    title: str
    steps: str = ""
    commands: list[dict[str, Any]] = field(default_factory=list)  # {run, where, applies_if}
    caution: dict[str, Any] | None = None  # {text, when_major_differs}: kb.rules.fixchoice

    def __init__(
        self,
        id: str,
        title: str,
        steps: str = "",
        commands: list[dict[str, Any]] | None = None,
        caution: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.title = title
        self.steps = steps
        self.commands = [] if commands is None else commands
        self.caution = caution


@record()
class CauseSpec:
    id: str
    title: str
    prior: float
    symptoms: list[str]
    fixes: list[str]
    signatures: list[SignatureSpec]
    generic: bool = False
    area: str = ""
    examples: list[str] = field(default_factory=list)  # its `match` log lines (approximate)
    no_match: list[str] = field(default_factory=list)  # its `no_match` lines: not it
    named_by: list[str] = field(default_factory=list)  # findings that are evidence for it
    traits: list[str] = field(default_factory=list)  # where it can occur (rules/vocabulary)

    def __init__(
        self,
        id: str,
        title: str,
        prior: float,
        symptoms: list[str],
        fixes: list[str],
        signatures: list[SignatureSpec],
        generic: bool = False,
        area: str = "",
        examples: list[str] | None = None,
        no_match: list[str] | None = None,
        named_by: list[str] | None = None,
        traits: list[str] | None = None,
    ) -> None:
        self.id = id
        self.title = title
        self.prior = prior
        self.symptoms = symptoms
        self.fixes = fixes
        self.signatures = signatures
        self.generic = generic
        self.area = area
        self.examples = [] if examples is None else examples
        self.no_match = [] if no_match is None else no_match
        self.named_by = [] if named_by is None else named_by
        self.traits = [] if traits is None else traits


@record()
class SymptomSpec:
    id: str
    title: str
    signatures: list[SignatureSpec]
    group: str = ""  # hang, slow, launch, ... (the TUI's tree)
    next_step: str = ""  # its cheapest question: what to do when only the symptom shows
    failure: dict[str, Any] | None = None  # kb.rules.schema.Failure as plain data (English)
    examples: list[str] = field(default_factory=list)
    no_match: list[str] = field(default_factory=list)
    named_by: list[str] = field(default_factory=list)  # findings that show it
    next: str = ""  # what to do when only it shows (English)

    def __init__(
        self,
        id: str,
        title: str,
        signatures: list[SignatureSpec],
        group: str = "",
        next_step: str = "",
        failure: dict[str, Any] | None = None,
        examples: list[str] | None = None,
        no_match: list[str] | None = None,
        named_by: list[str] | None = None,
        next: str = "",
    ) -> None:
        self.id = id
        self.title = title
        self.signatures = signatures
        self.group = group
        self.next_step = next_step
        self.failure = failure
        self.examples = [] if examples is None else examples
        self.no_match = [] if no_match is None else no_match
        self.named_by = [] if named_by is None else named_by
        self.next = next


@record()
class VocabularySpec:
    """`rules/vocabulary/` as plain data: finding names, and how traits are weighed."""

    findings: dict[str, str] = field(default_factory=dict)  # name -> meaning
    observations: dict[str, float | None] = field(default_factory=dict)  # name -> otherwise
    traits: dict[str, dict[str, float]] = field(default_factory=dict)  # name -> weights
    framework_areas: list[str] = field(default_factory=list)
    framework_shown: float = 1.0
    framework_not_shown: float = 1.0
    framework_libraries: dict[str, str] = field(default_factory=dict)  # catalogue -> area
    framework_markers: dict[str, list[str]] = field(default_factory=dict)  # area -> RE2s

    def __init__(
        self,
        findings: dict[str, str] | None = None,
        observations: dict[str, float | None] | None = None,
        traits: dict[str, dict[str, float]] | None = None,
        framework_areas: list[str] | None = None,
        framework_shown: float = 1.0,
        framework_not_shown: float = 1.0,
        framework_libraries: dict[str, str] | None = None,
        framework_markers: dict[str, list[str]] | None = None,
    ) -> None:
        self.findings = {} if findings is None else findings
        self.observations = {} if observations is None else observations
        self.traits = {} if traits is None else traits
        self.framework_areas = [] if framework_areas is None else framework_areas
        self.framework_shown = framework_shown
        self.framework_not_shown = framework_not_shown
        self.framework_libraries = {} if framework_libraries is None else framework_libraries
        self.framework_markers = {} if framework_markers is None else framework_markers

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VocabularySpec:
        return cls(**data)


@record()
class CompiledRules:
    """Everything the diagnosis reads from the rules, as plain data."""

    key: str
    causes: dict[str, CauseSpec]
    symptoms: dict[str, SymptomSpec]
    fixes: dict[str, FixSpec]
    vocabulary: VocabularySpec = field(default_factory=VocabularySpec)
    plans: dict[bool, Any] = field(default_factory=dict, repr=False, compare=False)

    def __init__(
        self,
        key: str,
        causes: dict[str, CauseSpec],
        symptoms: dict[str, SymptomSpec],
        fixes: dict[str, FixSpec],
        vocabulary: VocabularySpec | None = None,
        plans: dict[bool, Any] | None = None,
    ) -> None:
        self.key = key
        self.causes = causes
        self.symptoms = symptoms
        self.fixes = fixes
        self.vocabulary = VocabularySpec() if vocabulary is None else vocabulary
        self.plans = {} if plans is None else plans

    def causes_named_by(self, finding: str) -> list[str]:
        """The ids of the causes whose `named_by` lists the finding."""
        return [c.id for c in self.causes.values() if finding in c.named_by]

    def symptoms_named_by(self, finding: str) -> list[str]:
        """The ids of the symptoms whose `named_by` lists the finding."""
        return [s.id for s in self.symptoms.values() if finding in s.named_by]

    def rules_named_by(self, finding: str) -> list[str]:
        """Causes, then symptoms, that the finding is evidence for."""
        return self.causes_named_by(finding) + self.symptoms_named_by(finding)

    def signatures(self) -> list[tuple[str, SignatureSpec]]:
        """(rule id, signature) for every cause and symptom, in a stable order."""
        out: list[tuple[str, SignatureSpec]] = []
        nodes: list[CauseSpec | SymptomSpec] = [*self.causes.values(), *self.symptoms.values()]
        for node in nodes:
            out.extend((node.id, s) for s in node.signatures)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "key": self.key,
            "causes": [_cause_json(c) for c in self.causes.values()],
            "symptoms": [
                {
                    "id": s.id,
                    "title": s.title,
                    "signatures": [g.to_json() for g in s.signatures],
                    "group": s.group,
                    "next_step": s.next_step,
                    "failure": s.failure,
                    "examples": s.examples,
                    "no_match": s.no_match,
                    "named_by": s.named_by,
                    "next": s.next,
                }
                for s in self.symptoms.values()
            ],
            "fixes": [vars(f) for f in self.fixes.values()],
            "vocabulary": vars(self.vocabulary),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompiledRules:
        if data.get("format") != FORMAT:
            raise ValueError("compiled rules of another format")
        causes = {}
        for c in data["causes"]:
            sigs = [SignatureSpec.from_json(s) for s in c["signatures"]]
            causes[c["id"]] = CauseSpec(**{**c, "signatures": sigs})
        symptoms = {
            s["id"]: SymptomSpec(
                s["id"],
                s["title"],
                [SignatureSpec.from_json(g) for g in s["signatures"]],
                s.get("group", ""),
                s.get("next_step", ""),
                s.get("failure"),
                list(s.get("examples", [])),
                list(s.get("no_match", [])),
                list(s.get("named_by", [])),
                str(s.get("next", "")),
            )
            for s in data["symptoms"]
        }
        fixes = {f["id"]: FixSpec(**f) for f in data["fixes"]}
        vocabulary = VocabularySpec.from_json(data["vocabulary"])
        return cls(data["key"], causes, symptoms, fixes, vocabulary)


def _cause_json(c: CauseSpec) -> dict[str, Any]:
    out = dict(vars(c))
    out["signatures"] = [s.to_json() for s in c.signatures]
    return out


def _en(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(getattr(value, "en", value))


def from_kb(kb: Any, key: str = "") -> CompiledRules:
    """Compile a loaded `KnowledgeBase` (pydantic models) into plain data."""
    causes = {
        cid: CauseSpec(
            id=cid,
            title=_en(c.title),
            prior=float(c.prior),
            symptoms=list(c.symptoms),
            fixes=list(c.fixes),
            signatures=[signature_spec(s) for s in c.signatures],
            generic=bool(c.generic),
            area=kb.area_of(cid) if hasattr(kb, "area_of") else "",
            examples=_example_lines(c),
            no_match=_example_lines(c, "no_match"),
            named_by=list(getattr(c, "named_by", [])),
            traits=list(getattr(c, "traits", [])),
        )
        for cid, c in kb.causes.items()
    }
    _add_catalogue(causes)
    symptoms = {
        sid: SymptomSpec(
            sid,
            _en(s.title),
            [signature_spec(g) for g in s.signatures],
            str(getattr(s, "group", "") or ""),
            _next_step(s),
            _failure(s),
            _example_lines(s),
            _example_lines(s, "no_match"),
            list(getattr(s, "named_by", [])),
            " ".join(_en(getattr(s, "next", None)).split()),
        )
        for sid, s in kb.symptoms.items()
    }
    fixes = {
        fid: FixSpec(
            fid,
            _en(f.title),
            _en(f.steps),
            [{"run": c.run, "where": c.where, "applies_if": c.applies_if} for c in f.commands],
            _caution(f),
        )
        for fid, f in kb.fixes.items()
    }
    return CompiledRules(key, causes, symptoms, fixes, _vocabulary(getattr(kb, "vocabulary", None)))


def _caution(fix: Any) -> dict[str, Any] | None:
    """A fix's caution as plain data (English text), for kb.rules.fixchoice."""
    c = getattr(fix, "caution", None)
    if c is None:
        return None
    cond = c.when_major_differs
    return {
        "text": " ".join(_en(c.text).split()),
        "when_major_differs": {"wanted": cond.wanted, "installed": list(cond.installed)},
    }


def _vocabulary(vocab: Any) -> VocabularySpec:
    """A loaded `kb.rules.vocabulary.Vocabulary` as plain data (none: an empty one)."""
    if vocab is None:
        return VocabularySpec()
    fw = vocab.frameworks
    return VocabularySpec(
        findings={name: w.meaning for name, w in vocab.findings.items()},
        observations={name: w.otherwise for name, w in vocab.observations.items()},
        traits={name: dict(w.weights) for name, w in vocab.traits.items()},
        framework_areas=list(fw.areas),
        framework_shown=float(fw.shown),
        framework_not_shown=float(fw.not_shown),
        framework_libraries=dict(getattr(fw, "libraries", {})),
        framework_markers={a: list(p) for a, p in getattr(fw, "markers", {}).items()},
    )


def _failure(symptom: Any) -> dict[str, Any] | None:
    """A failure symptom's `failure:` section as plain data, texts in English."""
    f = getattr(symptom, "failure", None)
    if f is None:
        return None
    return {
        "kind": f.kind,
        "what": _en(f.what),
        "causes": list(f.causes),
        "rerun_with": list(f.rerun_with),
        "next": _en(f.next),
        "catalogue": list(f.catalogue),
        "in_traceback": bool(f.in_traceback),
        "pasted_only": bool(getattr(f, "pasted_only", False)),
        "generic": bool(getattr(f, "generic", False)),
    }


def _example_lines(node: Any, kind: str = "match") -> list[str]:
    """The node's `match` (or `no_match`) examples, one log line each (the approximate
    matcher's corpus). A `match` example of several lines is left out: each of its lines
    may name the cause only beside the others (a missing script only in a multi-host
    launch), so none of them alone is a message of that cause."""
    examples = getattr(node, "examples", None)
    out: list[str] = []
    for ex in getattr(examples, kind, []) or []:
        text = ex if isinstance(ex, str) else getattr(ex, "log", "")
        lines = [line.strip() for line in str(text).splitlines() if line.strip()]
        if kind == "no_match" or len(lines) == 1:
            out.extend(lines)
    return out


def _add_catalogue(causes: dict[str, CauseSpec]) -> None:
    """The message catalogue's `class: cause` templates as further signatures of their
    cause (weaker than the rules' own); a catalogue that cannot be read adds none (lint
    reports it)."""
    from kb.diagnosis.specs import catalogue_signatures
    from kb.rules.catalogue import CatalogueError, load_catalogue

    try:
        messages = load_catalogue().messages
    except (CatalogueError, OSError):
        return
    for cid, sigs in catalogue_signatures(messages, causes).items():
        causes[cid].signatures.extend(sigs)


def _next_step(symptom: Any) -> str:
    """The text of the symptom's cheapest question (the first of the cheapest)."""
    questions = list(getattr(symptom, "questions", []) or [])
    if not questions:
        return ""
    best = min(questions, key=lambda q: float(getattr(q, "cost", 1) or 1))
    return " ".join(_en(best.text).split())


# ---------------------------------------------------------------- the on-disk cache


_HERE = os.path.dirname(__file__)  # absolute: imported modules have absolute paths


def _engine_sources() -> list[str]:
    """The modules that define the compiled form: a cache written by another version of
    them (an upgrade, a checkout with edits) must never be read back. Named by place, not
    imported: the warm path must not load the catalogue's modules."""
    templates = os.path.join(os.path.dirname(_HERE), "rules", "catalogue", "templates.py")
    names = ("compiled.py", "specs.py", "matching.py")
    return [*(os.path.join(_HERE, n) for n in names), templates]


def rules_key(root: str | Path) -> str:
    """A hash of every rule file's path and bytes, of the compiled format, and of the
    engine modules that write and read it."""
    from pathlib import Path

    from kb.util.rulefiles import (  # as kb.rules.loader finds them
        RuleFileError,
        read_rule_bytes,
        rule_files,
    )

    root = Path(root)
    h = blake2b(FORMAT.encode(), digest_size=16)
    for source in _engine_sources():
        try:
            with open(source, "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(b"\0engine")
    h.update(_catalogue_key().encode())
    for path in rule_files(root):
        h.update(str(path.relative_to(root)).encode("utf-8", "surrogateescape") + b"\0")
        try:  # never `read_bytes`: a FIFO in the folder would block every command
            h.update(read_rule_bytes(path, root))
        except RuleFileError as exc:
            h.update(b"\0unreadable " + str(exc).encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()


def _catalogue_key() -> str:
    """The catalogue's content key: its templates are signatures of the compiled rules."""
    from kb.rules.catalogue.loader import content_key
    from kb.util.paths import catalogue_dir

    return content_key(catalogue_dir())


RACY_NS = 2_000_000_000  # a file changed this recently may change again within its clock tick


def _fingerprint(root: str | Path) -> tuple[str, bool]:
    """(a hash of what `os.stat` says of every file `rules_key` reads, whether one of them
    changed too recently for its stat to prove it unchanged later).

    Any write to a file moves its change time (`st_ctime_ns`, which no tool can set back)
    past the moment the fingerprint was taken; files added or removed change the listing.
    So an equal fingerprint, taken from files none of which had changed in the `RACY_NS`
    before it was recorded, means the content key recorded beside it still holds. The
    files are a superset of those the key reads (every `*.yaml`/`*.yml` under the rules
    folder, the catalogue's `*.yaml` and modules): a superset can only miss the shortcut,
    never mislead it."""
    from kb.util.paths import catalogue_folder
    from kb.util.statkey import listing, stamp_files

    catalogue = catalogue_folder()
    package = os.path.join(os.path.dirname(_HERE), "rules", "catalogue")
    h = blake2b(f"{FORMAT}\0{root}\0{catalogue}".encode(errors="surrogateescape"), digest_size=16)
    paths = [
        *_engine_sources(),
        *listing(package, (".py",)),
        *listing(catalogue, (".yaml",)),
        os.path.join(catalogue, "symptoms.yaml"),
        *listing(str(root), (".yaml", ".yml"), deep=True),
    ]
    newest = stamp_files(h, paths)
    return h.hexdigest(), newest > time.time_ns() - RACY_NS


def cache_path(key: str) -> Path:
    from pathlib import Path

    return Path(_cache_file(key))


def _cache_file(key: str) -> str:
    from kb.util.paths import cache_file

    return cache_file(f"rules-{key}.pickle")


def _fingerprint_path(fingerprint: str) -> Path:
    from pathlib import Path

    return Path(_fingerprint_file(fingerprint))


def _fingerprint_file(fingerprint: str) -> str:
    from kb.util.paths import cache_file

    return cache_file(f"rules-stat-{fingerprint}.key")


def _known_key(fingerprint: str) -> str | None:
    """The content key recorded for this fingerprint, if one was."""
    from kb.util.statkey import read_key

    return read_key(_fingerprint_file(fingerprint))


def _cache_classes() -> dict[tuple[str, str], type]:
    """What a cached `CompiledRules` is made of: nothing else is ever unpickled."""
    from kb.diagnosis.specs import MatcherSpec
    from kb.rules.numeric import Bound

    return cachepickle.allow(
        CompiledRules, CauseSpec, SymptomSpec, FixSpec, VocabularySpec, SignatureSpec,
        MatcherSpec, Bound,
    )  # fmt: skip


def load_cached(root: str | Path) -> CompiledRules | None:
    """The compiled rules for `root`'s current content, if a previous run cached them.

    The content key comes from the files' fingerprint when it was recorded for them
    (`_fingerprint`), else from hashing them (then recorded, when not racy)."""
    fingerprint, racy = _fingerprint(root)
    key = _known_key(fingerprint)
    known = key is not None
    if key is None:
        key = rules_key(root)
    compiled = cachepickle.load(_cache_file(key), _cache_classes())
    if not isinstance(compiled, CompiledRules) or compiled.key != key:
        return None
    if not known:
        _remember(fingerprint, racy, key)
    return compiled


def fingerprint_of(root: str | Path) -> tuple[str, bool]:
    """`root`'s fingerprint, to take before its key (see `_fingerprint`): for `save`."""
    return _fingerprint(root)


def _remember(fingerprint: str, racy: bool, key: str) -> None:
    if not racy:
        from kb.util.statkey import write_key

        write_key(_fingerprint_file(fingerprint), key)


def save(compiled: CompiledRules, fingerprint: tuple[str, bool] | None = None) -> None:
    """Write the cache, and the key for the `fingerprint` taken before the key was (so
    the next run need not hash the files); a cache directory that cannot be written is
    not an error. What is cached is the rules as their JSON form gives them back
    (tuples, floats, plain dicts), so a warm run sees exactly what the run that compiled
    them would have read back."""
    import json

    canonical = CompiledRules.from_json(json.loads(json.dumps(compiled.to_json())))
    cachepickle.save(_cache_file(compiled.key), _shared(canonical))
    if fingerprint is not None and os.path.exists(_cache_file(compiled.key)):
        _remember(*fingerprint, compiled.key)


def _shared(compiled: CompiledRules) -> CompiledRules:
    """The same rules with equal matchers and matcher tuples made one object (the catalogue's
    signatures repeat their cause's matchers as vetoes: 4,762 matchers, 1,132 distinct), so
    the pickle holds, and a warm run builds, each once. Specs are frozen: sharing is safe."""
    seen: dict[tuple[object, str], Any] = {}

    def one(x: Any) -> Any:
        return seen.setdefault((x, repr(x)), x)  # repr: 85 and 85.0 are equal, not the same

    nodes: list[CauseSpec | SymptomSpec] = [*compiled.causes.values(), *compiled.symptoms.values()]
    for node in nodes:
        node.signatures = [
            replace(
                s,
                matchers=one(tuple(one(m) for m in s.matchers)),
                unless=one(tuple(one(m) for m in s.unless)),
            )
            for s in node.signatures
        ]
    return compiled


def ensure_compiled(rules: Any) -> CompiledRules:
    """`rules` as `CompiledRules`: a `KnowledgeBase` is compiled in memory (never
    cached: it may hold only the valid part of a rule set that has errors)."""
    if isinstance(rules, CompiledRules):
        return rules
    cached = getattr(rules, "__dict__", {}).get("_dlperf_compiled")
    if cached is None:
        cached = from_kb(rules)
        with contextlib.suppress(AttributeError, TypeError):
            rules.__dict__["_dlperf_compiled"] = cached  # the same KB object: compile once
    return cached
