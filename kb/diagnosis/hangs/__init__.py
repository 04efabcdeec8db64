"""Hang artefacts read beside the logs: PyTorch Flight Recorder dumps and NCCL RAS reports.

Both are turned into *statements*: one plain line per finding (which rank never
reached which collective, which rank died, which ranks disagree), prefixed
`dlperf-hang:`. The engine scans them like log lines, so the hang signatures of `rules/nccl/nccl-timeout-hang.yaml`
(YAML) decide which cause each statement shows and extract the rank, host and
collective from it; no cause id lives in this package.
"""
