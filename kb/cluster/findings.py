"""The findings the cluster report and the speedup verdict emit, by name.

Neither names a cause: each emits a finding, defined in `rules/vocabulary/findings.yaml`,
and the causes (or symptoms) whose YAML lists it under `named_by` are what it is evidence
for.  An enum, so that a misspelt member fails at import and a misspelt value fails the
test that every member is defined in the vocabulary and named by a rule.
"""

from __future__ import annotations

from enum import Enum


class Finding(str, Enum):
    """A finding name (the value) as the vocabulary defines it."""

    # kb.cluster.report.rules_facts: survey facts compared across nodes, or read on one
    NCCL_VERSION_DIFFERS = "report-nccl-version-differs"
    HOSTNAME_DUPLICATE = "report-hostname-duplicate"
    OFED_VERSION_DIFFERS = "report-ofed-version-differs"
    IB_INACTIVE_ON_SOME_NODES = "report-ib-inactive-on-some-nodes"
    IB_VERBS_DEVICE_MISSING = "report-ib-verbs-device-missing"
    SHM_TOO_SMALL = "report-shm-too-small"
    MEMLOCK_LIMIT_ON_IB_NODE = "report-memlock-limit-on-ib-node"
    FRAMEWORK_VERSION_DIFFERS = "report-framework-version-differs"
    OPENMPI_VERSION_DIFFERS = "report-openmpi-version-differs"
    HOROVOD_WITHOUT_NCCL_OPS = "report-horovod-without-nccl-ops"
    CUDA_NEWER_THAN_DRIVER = "report-cuda-newer-than-driver"
    GPU_COUNT_DIFFERS = "report-gpu-count-differs"
    GPU_LINK_SLOW = "report-gpu-link-slow"
    GPU_TOPOLOGY_DIFFERS = "report-gpu-topology-differs"
    # kb.cluster.report.rules: the environment and the interfaces
    SOCKET_IFNAME_UNUSABLE = "report-socket-ifname-unusable"
    IB_DISABLED_WITH_ACTIVE_PORT = "report-ib-disabled-with-active-port"
    ENV_IFNAME_DIFFERS = "report-env-ifname-differs"
    ENV_IB_DIFFERS = "report-env-ib-differs"
    ENV_P2P_DIFFERS = "report-env-p2p-differs"
    ENV_VISIBLE_DEVICES_DIFFERS = "report-env-visible-devices-differs"
    ENV_FRAMEWORK_DIFFERS = "report-env-framework-differs"
    NO_COMMON_NIC = "report-no-common-nic"
    # kb.cluster.speedup.verdict: where the loss starts (names the symptom), and the
    # causes to look at first there, by how likely each is without other evidence
    LOW_SINGLE_GPU = "speedup-low-single-gpu"
    LOW_SINGLE_GPU_STRONG = "speedup-low-single-gpu-suspect-strong"
    LOW_SINGLE_GPU_LIKELY = "speedup-low-single-gpu-suspect-likely"
    LOW_SINGLE_GPU_POSSIBLE = "speedup-low-single-gpu-suspect-possible"
    LOW_SINGLE_NODE = "speedup-low-single-node"
    LOW_SINGLE_NODE_STRONG = "speedup-low-single-node-suspect-strong"
    LOW_SINGLE_NODE_LIKELY = "speedup-low-single-node-suspect-likely"
    LOW_SINGLE_NODE_POSSIBLE = "speedup-low-single-node-suspect-possible"
    LOW_SINGLE_NODE_WEAK = "speedup-low-single-node-suspect-weak"
    LOW_MULTI_NODE = "speedup-low-multi-node"
    LOW_MULTI_NODE_PRIME = "speedup-low-multi-node-suspect-prime"
    LOW_MULTI_NODE_LIKELY = "speedup-low-multi-node-suspect-likely"
    LOW_MULTI_NODE_POSSIBLE = "speedup-low-multi-node-suspect-possible"
    LOW_MULTI_NODE_WEAK = "speedup-low-multi-node-suspect-weak"
