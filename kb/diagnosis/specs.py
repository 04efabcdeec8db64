"""Signatures and matchers as plain data: what the compiled-rules cache stores and
`kb.diagnosis.matching` runs, without pydantic (so that `dlperf-help diagnose` starts fast).

`matcher_spec` and `signature_spec` turn the pydantic models of `kb.rules.schema` (or specs
already) into these; `kb.diagnosis.matching` re-exports all of it, as its API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.rules.numeric import Bound, bounds_of
from kb.util.record import field, record


@record(hashable=True, init_pickle=True)  # frozen; thousands in the rules' cache
class MatcherSpec:
    """One matcher, as plain data (see the module docstring for what each type means)."""

    type: str  # "regex", "substring" or "fuzzy"
    pattern: str = ""  # regex
    text: str = ""  # substring, fuzzy
    ignore_case: bool = False
    scope: str = "log"  # for `unless` matchers
    threshold: float = 85.0  # fuzzy
    where: tuple[Bound, ...] = ()  # regex: bounds on its groups' numbers (kb.rules.numeric)

    def __init__(
        self,
        type: str,
        pattern: str = "",
        text: str = "",
        ignore_case: bool = False,
        scope: str = "log",
        threshold: float = 85.0,
        where: tuple[Bound, ...] = (),
    ) -> None:
        self.type = type
        self.pattern = pattern
        self.text = text
        self.ignore_case = ignore_case
        self.scope = scope
        self.threshold = threshold
        self.where = where

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if v not in ("", None) and k != "where"}
        if self.where:
            out["where"] = [b.to_json() for b in self.where]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatcherSpec:
        where = tuple(Bound.from_json(b) for b in data.get("where", ()))
        return cls(**{**data, "where": where})


@record(hashable=True, init_pickle=True)
class SignatureSpec:
    """One signature, as plain data with the attribute names of `kb.rules.schema.Signature`."""

    id: str
    matchers: tuple[MatcherSpec, ...]
    condition: str = "or"
    unless: tuple[MatcherSpec, ...] = ()
    weight: float = 0.8
    alone: bool = True
    note: str | None = None  # English text
    asked: bool = False  # a few pasted lines holding it ask about its cause
    extract: Mapping[str, str] = field(default_factory=dict)
    min_hits: int = 1
    at_end: bool = False

    def __init__(
        self,
        id: str,
        matchers: tuple[MatcherSpec, ...],
        condition: str = "or",
        unless: tuple[MatcherSpec, ...] = (),
        weight: float = 0.8,
        alone: bool = True,
        note: str | None = None,
        asked: bool = False,
        extract: Mapping[str, str] | None = None,
        min_hits: int = 1,
        at_end: bool = False,
    ) -> None:
        self.id = id
        self.matchers = matchers
        self.condition = condition
        self.unless = unless
        self.weight = weight
        self.alone = alone
        self.note = note
        self.asked = asked
        self.extract = {} if extract is None else extract
        self.min_hits = min_hits
        self.at_end = at_end

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "matchers": [m.to_json() for m in self.matchers],
            "condition": self.condition,
            "unless": [m.to_json() for m in self.unless],
            "weight": self.weight,
            "alone": self.alone,
            "note": self.note,
            "asked": self.asked,
            "extract": dict(self.extract),
            "min_hits": self.min_hits,
            "at_end": self.at_end,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SignatureSpec:
        return cls(
            id=data["id"],
            matchers=tuple(MatcherSpec.from_json(m) for m in data["matchers"]),
            condition=data.get("condition", "or"),
            unless=tuple(MatcherSpec.from_json(m) for m in data.get("unless", ())),
            weight=float(data.get("weight", 0.8)),
            alone=bool(data.get("alone", True)),
            note=data.get("note"),
            asked=bool(data.get("asked", False)),
            extract=dict(data.get("extract", {})),
            min_hits=int(data.get("min_hits", 1)),
            at_end=bool(data.get("at_end", False)),
        )


def _english(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(getattr(value, "en", value))


def matcher_spec(m: Any) -> MatcherSpec:
    """A pydantic matcher (or a spec) as a `MatcherSpec`."""
    if isinstance(m, MatcherSpec):
        return m
    return MatcherSpec(
        type=m.type,
        pattern=getattr(m, "pattern", "") or "",
        text=getattr(m, "text", "") or "",
        ignore_case=bool(m.ignore_case),
        scope=m.scope,
        threshold=float(getattr(m, "threshold", 85.0)),
        where=_where(getattr(m, "where", None) or {}),
    )


def _where(where: Mapping[str, Any]) -> tuple[Bound, ...]:
    """A regex matcher's `where:` (group -> NumberBounds) as plain bounds."""
    return tuple(
        b
        for group, ops in where.items()
        for b in bounds_of(group, ops if isinstance(ops, Mapping) else vars(ops))
    )


def signature_spec(sig: Any) -> SignatureSpec:
    """A pydantic `Signature` (or a spec) as a `SignatureSpec`."""
    if isinstance(sig, SignatureSpec):
        return sig
    return SignatureSpec(
        id=sig.id,
        matchers=tuple(matcher_spec(m) for m in sig.matchers),
        condition=sig.condition,
        unless=tuple(matcher_spec(m) for m in sig.unless),
        weight=float(sig.weight),
        alone=bool(sig.alone),
        note=_english(sig.note),
        asked=bool(getattr(sig, "asked", False)),
        extract=dict(sig.extract),
        min_hits=int(getattr(sig, "min_hits", 1) or 1),
        at_end=bool(getattr(sig, "at_end", False)),
    )


CATALOGUE_WEIGHT = 0.5  # below a hand-written rule's 0.8: a template is no reviewed rule
CATALOGUE_LEVELS = frozenset({"warn", "error", "fatal", "help"})  # INFO lines describe


def catalogue_signatures(messages: Any, causes: Any) -> dict[str, list[SignatureSpec]]:
    """Signatures of their cause for the catalogue's `class: cause` messages (see
    `kb.rules.catalogue`): one per usable template printed at a failing level whose cause the
    rules define, its id saying where it comes from (the evidence shows it). The
    catalogue fills the rules' gaps, never doubles them: a line that any of the cause's
    own matchers fires on vetoes the catalogue's signature there (`unless`, line scope),
    so a rule's evidence is never counted twice."""
    out: dict[str, list[SignatureSpec]] = {}
    vetoes: dict[str, tuple[MatcherSpec, ...]] = {}
    for m in messages:
        if (
            m.class_ != "cause"
            or m.cause not in causes
            or not m.usable
            or m.level not in CATALOGUE_LEVELS
        ):
            continue
        if m.cause not in vetoes:
            vetoes[m.cause] = _own_matchers(causes[m.cause])
        text = " ".join(m.template.split())
        sig = SignatureSpec(
            id=f"catalogued: {m.library} {text} ({m.versions})",
            matchers=(MatcherSpec(type="regex", pattern=m.pattern),),
            unless=vetoes[m.cause],
            weight=CATALOGUE_WEIGHT,
        )
        out.setdefault(m.cause, []).append(sig)
    return out


def _own_matchers(cause: Any) -> tuple[MatcherSpec, ...]:
    """The cause's own regex and substring matchers that fire their signature by
    themselves, as line-scope vetoes. A matcher of an `and` signature, of one that needs
    another (`alone: false`), several hits or the log's end, is one part of a piece of
    evidence (often a broad word such as `paddle`): it must not silence a catalogued
    message on every line that merely holds that word."""
    seen: dict[tuple[str, str, bool, tuple[Bound, ...]], MatcherSpec] = {}
    for sig in getattr(cause, "signatures", ()):
        if (
            getattr(sig, "condition", "or") == "and"
            or not getattr(sig, "alone", True)
            or getattr(sig, "min_hits", 1) > 1
            or getattr(sig, "at_end", False)
        ):
            continue
        for mt in sig.matchers:
            if mt.type in ("regex", "substring"):
                key = (mt.type, mt.pattern or mt.text, mt.ignore_case, mt.where)
                seen.setdefault(
                    key,
                    MatcherSpec(
                        type=mt.type,
                        pattern=mt.pattern,
                        text=mt.text,
                        ignore_case=mt.ignore_case,
                        scope="line",
                        where=mt.where,
                    ),
                )
    return tuple(seen.values())
