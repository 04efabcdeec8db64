"""For mypy: the tests import tests/ssh/ssh_helpers.py by its file name (conftest puts the folder
on sys.path), so this names it for the type checker the same way."""

from tests.ssh.ssh_helpers import *  # noqa: F403
