"""For mypy: the tests import tests/ssh/sshd_nodes.py by its file name (conftest puts the folder
on sys.path), so this names it for the type checker the same way."""

from tests.ssh.sshd_nodes import *  # noqa: F403
