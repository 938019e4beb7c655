"""docs/scenes.md's "Your own robot, step by step", run as written: its commands and files are
read from the page itself, so the page and this test cannot drift apart. The commands run in a
directory of their own that sees the repository's `artifacts/` and `target/` (as the page's "from
the repository's root" does); the Python block runs there too."""

import json
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import ROOT

SECTION = "### Your own robot, step by step"


def blocks():
    """The section's fenced blocks in order: (file label or None, language, text)."""
    with open(os.path.join(ROOT, "docs", "scenes.md")) as f:
        page = f.read()
    start = page.index(SECTION) + len(SECTION)
    end = page.find("\n## ", start)
    body = page[start : end if end >= 0 else len(page)]
    out = []
    for m in re.finditer(r"(?:^`([^`\n]+)`:\n)?^```(\w*)\n(.*?)^```", body, re.S | re.M):
        out.append((m.group(1), m.group(2), m.group(3)))
    return out


def test_the_section_is_read_with_its_files():
    labels = [(f, lang) for f, lang, _ in blocks()]
    assert labels == [
        (None, "sh"),
        ("my-robot/arm.json", "json"),
        ("my-robot/my-scene.json", "json"),
        (None, "sh"),
        (None, "python"),
    ], "the walkthrough's blocks changed; this test follows them in order"


def test_your_own_robot_step_by_step_works_as_written(ssxd, tmp_path, monkeypatch):
    # The page's root: the repository's artifacts and build, nothing else of it.
    for part in ("artifacts", "target"):
        os.symlink(os.path.join(ROOT, part), tmp_path / part)
    logs = []
    values = None
    for label, lang, text in blocks():
        if label:
            path = tmp_path / label
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        elif lang == "sh":
            run = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", text],
                cwd=tmp_path, capture_output=True, text=True, timeout=120,
            )
            assert run.returncode == 0, f"{text}\n{run.stdout}\n{run.stderr}"
            logs.append(run.stdout + run.stderr)
        elif lang == "python":
            monkeypatch.chdir(tmp_path)
            scope = {}
            exec(compile(text, "docs/scenes.md", "exec"), scope)
            values = re.search(r'"values": (\[[^\]]*\])', text).group(1)
            values = np.array(json.loads(values))
            q = np.asarray(scope["q"])
    # ssxd ran the robot for its 5 s: no plugin disabled, and the one warning that says
    # commands have no way in, with what lets them in.
    run_log = logs[-1]
    assert "steps 2500 of 0.002 s" in run_log, run_log
    assert "plugin faults 0" in run_log and "disabled" not in run_log, run_log
    warning = "its driver takes outside commands through the extension 'zenoh', which is not in the scene"
    assert run_log.count(warning) == 1, run_log
    assert "'arm'" in run_log and "docs/zenoh.md" in run_log, run_log
    # From Python: every joint at its command. The joints driver is a PD position loop, so under
    # gravity a joint rests short of its target by the load's torque over the stiffness: at the
    # page's 10,000 N·m/rad the Panda's shoulder and elbow droop by a few mrad (7.8 at the
    # elbow here); 10 mrad bounds that. The fingers carry no load: 0.1 mm.
    assert values is not None and len(values) == 9
    assert np.max(np.abs(q[:7] - values[:7])) < 1e-2, (q[:9], values)
    assert np.max(np.abs(q[7:9] - values[7:9])) < 1e-4, (q[:9], values)
