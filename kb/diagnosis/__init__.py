"""Paste-a-log diagnosis: from log lines to ranked causes with evidence and values.

Public entry points: `diagnose_paths` and `diagnose_text` (in `kb.diagnosis.engine`),
returning a `Diagnosis` (in `kb.diagnosis.model`) whose `to_json()` is the
`diagnose --json` contract.
"""
