"""Paste-a-log diagnosis: from log lines to ranked causes with evidence and values.

Public entry points: `diagnose_paths` and `diagnose_text` (in `kb.diagnosis.engine`),
returning a `Diagnosis` (in `kb.diagnosis.model`) whose `to_json()` is the
`diagnose --json` contract. The way there:

- `compiled`: the rules as plain data, cached on disk by their content (fast start);
- `reader`: any input as blocks of whole, cleaned lines (gzip, stdin, huge lines);
- `scanner`: hyperscan/RE2 prefilter that finds the few candidate lines of a block;
- `pipeline`: feeds candidates to `kb.matching` signatures and to the `analyzers`
  (NCCL INFO, command outputs, progress lines), or every line on the reference path;
- `ranking`: prior and evidence into a confidence, notes, first failure;
- `render`: the human-readable report.
"""
