"""The rule format (pydantic models) and its JSON Schema export."""

from kb.rules.schema.models import (
    KIND_MODELS,
    Cause,
    Check,
    Fix,
    Localized,
    Signature,
    Symptom,
    Text,
    text_of,
)

__all__ = [
    "KIND_MODELS",
    "Cause",
    "Check",
    "Fix",
    "Localized",
    "Signature",
    "Symptom",
    "Text",
    "text_of",
]
