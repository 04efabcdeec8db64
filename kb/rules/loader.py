"""Reading rule files into a KnowledgeBase, collecting per-file problems instead of raising.

One broken file never hides the others: each file is parsed and validated on its own,
and its problems become `Issue`s with the line they are on.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kb.rules import vocabulary, vocabulary_lint
from kb.rules.knowledge import Issue, KnowledgeBase, Source
from kb.rules.schema.models import KIND_MODELS, Strict
from kb.util import rulefiles
from kb.util.rulefiles import RuleFileError, read_rule_bytes
from kb.util.yamlsrc import Located, YamlSyntaxError, load_located

KIND_BY_FOLDER = {"symptoms": "symptom", "fixes": "fix"}


def rule_files(root: Path) -> list[Path]:
    """Every rule file under `root`, in a stable order (FIFOs and links too: `load_file`
    reports them instead of leaving them out silently)."""
    return rulefiles.rule_files(root)


def display_path(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def load(root: Path) -> tuple[KnowledgeBase, list[Issue]]:
    """Load every rule under `root`; return the valid nodes and the problems found."""
    kb = KnowledgeBase(root=root)
    issues: list[Issue] = []
    if not root.is_dir():
        issues.append(Issue(str(root), 1, "", "rules-dir", "rules directory not found"))
        return kb, issues
    for path in rule_files(root):
        if vocabulary.is_vocabulary_file(path, root):
            issues.extend(load_vocabulary_file(path, root, kb.vocabulary))
            continue
        node, source, file_issues = load_file(path, root)
        issues.extend(file_issues)
        if node is None or source is None:
            continue
        node_id = node.id  # type: ignore[attr-defined]
        if node_id in kb.sources:
            first = kb.sources[node_id]
            issues.append(
                Issue(
                    source.display,
                    source.line("id"),
                    node_id,
                    "duplicate-id",
                    f"id '{node_id}' is already defined in {first.display}:{first.line('id')}",
                    "ids are unique across causes, symptoms and fixes",
                )
            )
            continue
        kb.sources[node_id] = source
        tables: dict[str, dict[str, Any]] = {
            "cause": kb.causes,
            "symptom": kb.symptoms,
            "fix": kb.fixes,
        }
        tables[source.kind][node_id] = node
    issues.extend(vocabulary_lint.check_words(kb))
    return kb, issues


def _read_located(path: Path, root: Path, shown: str, stem: str) -> Located | list[Issue]:
    """The file's YAML with its lines, or the issues that stop it from being read."""
    try:
        text = read_rule_bytes(path, root).decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Issue(shown, 1, stem, "encoding", f"not UTF-8 text ({exc.reason})")]
    except RuleFileError as exc:
        return [Issue(shown, 1, stem, "read", str(exc))]
    try:
        return load_located(text)
    except YamlSyntaxError as exc:
        hint = "check indentation, quotes and ':' in unquoted strings"
        return [Issue(shown, exc.line, stem, "yaml-syntax", str(exc), hint)]


def load_vocabulary_file(path: Path, root: Path, vocab: vocabulary.Vocabulary) -> list[Issue]:
    """Read one `rules/vocabulary/*.yaml` file into `vocab`; its problems as issues."""
    shown = display_path(path, root)
    stem = path.stem
    located = _read_located(path, root, shown, stem)
    if isinstance(located, list):
        return located
    problems = [
        Issue(shown, line, stem, "duplicate-key", f"key '{key}' appears twice in the same mapping")
        for key, line in located.duplicate_keys
    ]
    if not isinstance(located.data, dict):
        problems.append(
            Issue(shown, 1, stem, "not-a-mapping", "a vocabulary file must be a YAML mapping")
        )
        return problems
    try:
        data = vocabulary.parse(located)
    except ValidationError as exc:
        return problems + _schema_issues(exc, located, shown, stem)
    problems.extend(
        Issue(shown, line, stem, "duplicate-word", msg)
        for line, msg in vocab.add(data, shown, located)
    )
    return problems


def kind_and_area(path: Path, root: Path) -> tuple[str, str]:
    parts = path.relative_to(root).parts
    folder = parts[0] if len(parts) > 1 else ""
    return KIND_BY_FOLDER.get(folder, "cause"), folder


def load_file(path: Path, root: Path) -> tuple[Strict | None, Source | None, list[Issue]]:
    """Parse and validate one file; problems come back as issues, never as exceptions."""
    shown = display_path(path, root)
    kind, area = kind_and_area(path, root)
    stem = path.stem

    def issue(line: int, check: str, message: str, hint: str = "") -> Issue:
        return Issue(shown, line, stem, check, message, hint)

    if not area:
        return (
            None,
            None,
            [
                issue(
                    1,
                    "folder",
                    "rule file outside an area folder",
                    "move it to rules/<area>/, rules/symptoms/ or rules/fixes/",
                )
            ],
        )
    located = _read_located(path, root, shown, stem)
    if isinstance(located, list):
        return None, None, located
    problems = [
        issue(line, "duplicate-key", f"key '{key}' appears twice in the same mapping")
        for key, line in located.duplicate_keys
    ]
    if not isinstance(located.data, dict):
        problems.append(
            issue(1, "not-a-mapping", "a rule file must be a YAML mapping (key: value)")
        )
        return None, None, problems
    model = KIND_MODELS[kind]
    try:
        node = model.model_validate(located.data)
    except ValidationError as exc:
        problems.extend(_schema_issues(exc, located, shown, stem))
        return None, None, problems
    source = Source(path=path, display=shown, kind=kind, area=area, located=located)
    node_id: str = getattr(node, "id", "")
    if node_id != stem:
        problems.append(
            issue(
                source.line("id"),
                "id-filename",
                f"id '{node_id}' does not match the file name '{path.name}'",
                f"rename the file to {node_id}{path.suffix} or change the id",
            )
        )
    return (node if not problems else None), source, problems


def _schema_issues(exc: ValidationError, located: Located, shown: str, stem: str) -> list[Issue]:
    out: list[Issue] = []
    seen: set[tuple[int, str]] = set()
    errors = exc.errors()
    # a misspelt field shows up twice (unknown 'titel', missing 'title'): report it once
    unknown = {
        (tuple(e["loc"][:-1]), str(e["loc"][-1])) for e in errors if e["type"] == "extra_forbidden"
    }
    for err in errors:
        if _other_union_member(err):
            continue
        if err["type"] == "missing" and any(
            parent == tuple(err["loc"][:-1])
            and difflib.get_close_matches(str(err["loc"][-1]), [name], cutoff=0.6)
            for parent, name in unknown
        ):
            continue
        loc = tuple(err["loc"])
        line = located.line_of(loc)
        where = _dotted(loc)
        kind = err["type"]
        hint = ""
        if kind == "extra_forbidden":
            field = str(loc[-1])
            message = f"unknown field '{field}'" + (f" in {_dotted(loc[:-1])}" if loc[:-1] else "")
            hint = _suggest(field, _known_fields())
            check = "unknown-field"
        elif kind == "missing":
            message = f"missing required field '{loc[-1]}'" + (
                f" in {_dotted(loc[:-1])}" if loc[:-1] else ""
            )
            check = "missing-field"
        elif kind == "union_tag_invalid" or kind == "union_tag_not_found":
            message = f"{where}: {err['msg']}"
            hint = "a matcher's type is one of: regex, substring, fuzzy"
            check = "schema"
        else:
            msg = str(err["ctx"]["error"]) if kind == "value_error" else err["msg"]
            message = f"{where}: {msg}" if where else msg
            check = "schema"
        key = (line, message)
        if key in seen:  # unions report the same problem once per member
            continue
        seen.add(key)
        out.append(Issue(shown, line, stem, check, message, hint))
    return out


def _other_union_member(err: Any) -> bool:
    """A mapping given where a name *or* a mapping may stand (an inline check) fails as a
    name too: that "should be a string" is noise next to the mapping's real errors."""
    loc = tuple(err["loc"])
    return (
        bool(loc)
        and loc[-1] in ("str", "constrained-str")
        and err["type"] in ("string_type", "string_pattern_mismatch")
        and isinstance(err.get("input"), dict)
    )


def _dotted(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        elif p in ("str", "Localized", "Check", "LogExample") or p in (
            "regex",
            "substring",
            "fuzzy",
        ):
            continue  # union member names pydantic inserts into locations
        else:
            parts.append(("." if parts else "") + str(p))
    return "".join(parts)


def _known_fields() -> list[str]:
    """Every field name of the rule format, for 'did you mean' hints."""
    from kb.rules.schema import models as m

    names: set[str] = set()
    for cls in [*vars(m).values(), *vars(vocabulary).values()]:
        if isinstance(cls, type) and issubclass(cls, Strict):
            names.update(cls.model_fields)
    return sorted(names)


def _suggest(field: str, known: list[str]) -> str:
    close = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
    return (
        f"did you mean '{close[0]}'?" if close else "see rules/schema/ for the fields allowed here"
    )
