"""ssx.connect against a real ssxd on loopback: lockstep, commands, reset over Zenoh."""

import json
import os
import socket
import subprocess

import numpy as np
import pytest

import ssx


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def daemon(ssxd, tmp_path):
    """ssxd running lockstep.json, paused, on a free loopback port; (endpoint, prefix)."""
    port, prefix = free_port(), "ssx/pytest"
    with open(ssx.scene("lockstep.json")) as f:
        scene = json.load(f)
    ext = scene["extensions"][0]["descriptor"]
    ext["listen"], ext["prefix"] = [f"tcp/127.0.0.1:{port}"], prefix
    path = tmp_path / "lockstep.json"
    path.write_text(json.dumps(scene))
    log = open(tmp_path / "ssxd.log", "w")
    proc = subprocess.Popen(
        [ssxd, "run", str(path), "--scene-dir", os.path.dirname(ssx.scene("lockstep.json")),
         "--paused", "--quiet", "--duration", "600"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        yield f"tcp/127.0.0.1:{port}", prefix
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def drive(world, steps):
    world.step(1)
    for _ in range(steps):
        world.command("rover", {"linear": 0.5, "angular": 0.2})
        world.step(1)


def test_lockstep_over_zenoh_matches_the_world_in_process_and_resets(daemon):
    endpoint, prefix = daemon
    rig = ssx.connect(endpoint, prefix=prefix, timeout=20)
    rig.observe(["rover", "rover/range"])
    drive(rig, 300)
    assert rig.steps == 301
    remote = rig.states(["rover"])
    local = ssx.Sim(ssx.scene("lockstep.json"), workers=1)
    drive(local, 300)
    # The same scene, the same commands at the same steps: the same state to the bit.
    assert np.array_equal(remote.view(np.uint64), local.states(["rover"]).view(np.uint64))
    assert np.array_equal(rig.reading("rover", "range"), local.reading("rover", "range"))
    assert np.hypot(remote[0, 7], remote[0, 8]) == pytest.approx(0.5, abs=0.02), "at the commanded speed"

    rig.reset()
    assert rig.steps == 0 and rig.time == 0.0
    drive(rig, 300)
    assert np.array_equal(rig.states(["rover"]).view(np.uint64), remote.view(np.uint64))
    assert rig.stats()["steps"] == 301

    rig.reset(seed=8)
    assert rig.steps == 0
    with pytest.raises(ssx.Error, match="reset takes at most a seed"):
        rig._ask("reset twice")
    rig.close()
