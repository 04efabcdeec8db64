"""The causes of the launch area (SSH, mpirun, containers, Horovod's build), named once for
the launch tests: each must be covered by the real logs, and none may fire on a healthy
launch."""

LAUNCH_CAUSES = frozenset(
    {
        "ssh-passwordless-missing",
        "ssh-port-unreachable",
        "docker-network-mode",
        "mpi-launch-failure",
        "mpi-build-deps",
        "horovod-built-without-nccl",
    }
)
