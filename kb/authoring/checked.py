"""The rule set as the commands use it: linted first, so a broken rule is one line naming
it; compiled and cached for `diagnose`, whose start must not pay for pydantic and lint."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kb.diagnosis import compiled as compiled_mod
from kb.diagnosis.compiled import CompiledRules
from kb.util.errors import UserError

if TYPE_CHECKING:  # the cached path must not load pydantic (nor pathlib)
    from pathlib import Path

    from kb.rules.knowledge import KnowledgeBase


def load_kb(root: Path | None = None) -> KnowledgeBase:
    """The shipped (or --rules) knowledge base; a broken rule set is a one-line error."""
    from kb.authoring import lint
    from kb.util import paths

    root = root or paths.rules_dir()
    kb, issues = lint.lint(root)
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        raise UserError(
            f"the rules have {len(errors)} error(s), first: {errors[0]} "
            f"(run: dlperf-help rules lint {root})"
        )
    return kb


def load_rules(root: Path | None = None) -> CompiledRules:
    """The compiled rules: from the cache, or loaded, linted, compiled and cached.

    Raises `kb.util.errors.UserError` when the rules have errors (as `load_kb`).
    """
    from kb.util.paths import rules_folder

    folder = rules_folder() if root is None else root
    if not os.path.isdir(folder):
        from pathlib import Path

        raise UserError(f"rules directory not found: {Path(folder)}")
    cached = compiled_mod.load_cached(folder)
    if cached is not None:
        return cached
    from pathlib import Path

    root = Path(folder)
    # the key is taken before reading, and checked after: a rule edited meanwhile must not be
    # cached under a key that says its new content (the fingerprint, taken first, then only
    # names the key of older content: it is never seen again)
    fingerprint = compiled_mod.fingerprint_of(folder)  # as `load_cached` will take it
    key = compiled_mod.rules_key(root)
    compiled = compiled_mod.from_kb(load_kb(root), key)
    if compiled_mod.rules_key(root) == key:
        compiled_mod.save(compiled, fingerprint)
    return compiled
