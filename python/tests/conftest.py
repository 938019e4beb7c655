import contextlib
import os
import shutil
import signal
import threading

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


@pytest.fixture
def ctrl_c_after():
    """A context in which Ctrl-C (SIGINT to this process) comes `seconds` after it is entered.
    Python's handler for it is set meanwhile: Python leaves SIGINT ignored when it starts
    ignored (a job started with `&` from a script: a CI run so started once stepped all of a
    Ctrl-C test's 10,000,000 steps), where a terminal would have it."""

    @contextlib.contextmanager
    def after(seconds):
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            yield
        finally:
            timer.join()
            signal.signal(signal.SIGINT, previous)

    return after
