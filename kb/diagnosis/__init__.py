"""Paste-a-log diagnosis: from log lines to ranked causes with evidence and values.

Public entry points: `diagnose_paths` and `diagnose_text` (in `kb.diagnosis.engine`),
returning a `Diagnosis` (in `kb.diagnosis.model`) whose `to_json()` is the
`diagnose --json` contract. The way there:

- `compiled`: the rules as plain data (`specs`), cached on disk by their content;
- `reader`: any input as blocks of whole, cleaned lines (gzip, stdin, huge lines);
- `decorations`: quoting and launcher prefixes around a message, quotes in prose, and
  what a regex's line anchors mean under them; `shapes`: a line's shape and a fuzzy
  text's anchors; `lines`: a line's level, host, rank and time, optional-plugin
  probes, and which lines end a log;
- `scanner`: hyperscan/RE2 prefilter that finds the few candidate lines of a block;
- `plan`: the prefilter patterns of given rules and who consumes them (built once);
- `pipeline`: feeds candidates to `kb.diagnosis.matching` signatures and to the `analyzers`
  (NCCL INFO, command outputs, progress lines, where the job runs, how the log ends,
  whether the run completed), or every line on the reference path; `unwrap` rebuilds
  wrapped and URL-encoded messages as `logical` lines;
- `ranking`: prior and evidence into a confidence, notes, first failure; `healthy`:
  evidence that only describes the setup, and runs that completed; `candidates`: a
  failure symptom's probable causes when no line names the cause;
- `render`: the human-readable report.
"""
