"""conftest.py: a live daemon (build/memplan, or $MEMPLAN_BIN) shared by the contract tests of one module."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from daemon import Daemon  # noqa: E402


@pytest.fixture(scope="module")
def daemon():
    d = Daemon()
    yield d
    rc = d.stop()
    assert rc == 0, "memplan exited %d:\n%s" % (rc, "".join(d.lines))
