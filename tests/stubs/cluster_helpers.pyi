"""For mypy: the tests import tests/cluster/cluster_helpers.py by its file name (conftest puts
the folder on sys.path), so this names it for the type checker the same way."""

from tests.cluster.cluster_helpers import *  # noqa: F403
