import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def ssxd():
    """The daemon of the README's build, to compare messages with."""
    path = os.path.join(ROOT, "target", "release", "ssxd")
    if not os.path.exists(path):
        path = shutil.which("ssxd")
    if not path:
        pytest.skip("no ssxd built (cargo build --release --workspace)")
    return path
