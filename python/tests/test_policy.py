"""The policy driver (drivers/policy) against torch: a policy exported by ``ssx.policy.export``
drives a task's scene as the same torch module drives the task's batch; each bad model file
gets its one message; an action that is not a number holds the agent still."""

import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxscript")

import ssx  # noqa: E402
from ssx import envs, policy  # noqa: E402

AGENTS = 4
NAMES = [f"agent_{i}" for i in range(AGENTS)]


def _mlp(width, out=2, seed=0):
    """A 64 x 64 tanh MLP with seeded weights: what a trained policy's actor is, untrained."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(width, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, out)
    )


@pytest.fixture(scope="module")
def navigation_model(tmp_path_factory):
    batch = envs.navigation(agents=AGENTS, worlds=1, seed=3)
    actor = _mlp(batch.task.observation_width)
    path = str(tmp_path_factory.mktemp("policy") / "navigation.onnx")
    policy.export(actor, path, batch, notes="an untrained MLP")
    batch.close()
    return actor, path


def test_export_writes_the_task_into_the_file(navigation_model):
    _, path = navigation_model
    meta = policy.metadata(path)
    assert meta["ssx.task"] == "navigation"
    assert meta["ssx.agents"] == "4"
    assert meta["ssx.observation_width"] == str(ssx._ssx.Task("navigation", 4).observation_width)
    assert meta["ssx.action"] == "ux,uy"
    assert meta["ssx.action_low"] == "-1.0,-1.0" and meta["ssx.action_high"] == "1.0,1.0"
    assert json.loads(meta["ssx.options"]) == {}


def _side_by_side(actor, path, tmp_path, **options):
    """The largest difference in an agent's position (m) over 30 actions between one world of
    the navigation batch driven by torch's ``actor`` and the scene driven by the exported file
    at ``path``, both seeded 3; and the farthest an agent went from where it started."""
    batch = envs.navigation(agents=AGENTS, worlds=1, seed=3, **options)
    obs = batch.reset()
    scene = envs.navigation_scene(AGENTS, seed=3, directory=str(tmp_path), policy=path, **options)
    with ssx.Sim(scene) as sim:
        sim.step(1)  # the batch's first pass: one step, no action
        start = sim.states(NAMES)[:, :2].copy()
        worst = 0.0
        for _ in range(30):
            with torch.no_grad():
                a = actor(torch.as_tensor(obs[0], dtype=torch.float32)).numpy().astype(np.float64)
            obs, *_ = batch.step(a[None])
            sim.step(1)
            mine = sim.states(NAMES)[:, :3]
            theirs = batch.worlds.states(NAMES)[0, :, :3]
            worst = max(worst, float(np.abs(mine - theirs).max()))
        moved = float(np.linalg.norm(sim.states(NAMES)[:, :2] - start, axis=1).max())
    batch.close()
    return worst, moved


def test_the_driver_drives_the_scene_as_torch_drives_the_batch(navigation_model, tmp_path):
    """The same seed, the same policy: the batch's agents moved by torch's actions on its
    observations, the scene's by the driver's (tract) on its own: the same trajectories."""
    actor, path = navigation_model
    worst, moved = _side_by_side(actor, path, tmp_path)
    assert moved > 0.05, moved
    # float32 inference in tract against float32 in torch: sums in another order.
    print(f"holonomic: largest difference {worst:.3g} m, farthest move {moved:.3g} m")
    assert worst < 1e-5, worst


def test_on_the_differential_drive_too(tmp_path):
    """The agents on ssx's differential drive: the action (v, omega), the driver's drive law
    against the ground library's diffdrive that the batch's agents run on."""
    batch = envs.navigation(agents=AGENTS, worlds=1, seed=3, drive="diffdrive")
    actor = _mlp(batch.task.observation_width, seed=1)
    path = policy.export(actor, str(tmp_path / "diffdrive.onnx"), batch)
    batch.close()
    assert policy.metadata(path)["ssx.action"] == "v,omega"
    worst, moved = _side_by_side(actor, path, tmp_path / "scene", drive="diffdrive")
    print(f"diffdrive: largest difference {worst:.3g} m, farthest move {moved:.3g} m")
    assert moved > 0.05, moved
    assert worst < 1e-5, worst


def _raw_export(module, width, path):
    """A policy file without ssx's metadata (torch.onnx.export alone)."""
    torch.onnx.export(module.eval(), (torch.zeros(AGENTS, width),), path, dynamo=True, external_data=False, verbose=False)
    return path


def _open(tmp_path, model):
    scene = envs.navigation_scene(AGENTS, seed=3, directory=str(tmp_path / "scene"), policy=model)
    with pytest.raises(Exception) as e:
        ssx.Sim(scene)
    return str(e.value)


def test_each_bad_model_file_gets_one_message(tmp_path):
    width = ssx._ssx.Task("navigation", AGENTS).observation_width
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07 this is not a protobuf \xff\xff\xff")
    assert "is not an ONNX model" in _open(tmp_path, str(junk))
    wide = _raw_export(_mlp(width + 3), width + 3, str(tmp_path / "wide.onnx"))
    e = _open(tmp_path, wide)
    assert f"takes observations of {width + 3} values, the navigation task's are {width}" in e, e
    three = _raw_export(_mlp(width, out=3), width, str(tmp_path / "three.onnx"))
    e = _open(tmp_path, three)
    assert "gives 3 values an agent, the holonomic drive takes 2 (ux, uy)" in e, e
    with pytest.raises(FileNotFoundError, match="policy: no file"):
        envs.navigation_scene(AGENTS, seed=3, directory=str(tmp_path / "s2"), policy=str(tmp_path / "none.onnx"))


def test_a_model_of_another_task_is_refused(tmp_path):
    batch = envs.transport(agents=AGENTS, worlds=1, seed=0)
    path = policy.export(_mlp(batch.task.observation_width), str(tmp_path / "transport.onnx"), batch)
    batch.close()
    e = _open(tmp_path, path)
    assert "was trained on the transport task, the descriptor names navigation" in e, e


class _NotANumber(torch.nn.Module):
    def forward(self, obs):
        return obs[:, :2] * float("nan")


def test_an_action_that_is_not_a_number_holds_the_agent_still(tmp_path):
    batch = envs.navigation(agents=AGENTS, worlds=1, seed=3)
    path = policy.export(_NotANumber(), str(tmp_path / "nan.onnx"), batch)
    batch.close()
    scene = envs.navigation_scene(AGENTS, seed=3, directory=str(tmp_path / "scene"), policy=path)
    with ssx.Sim(scene) as sim:
        start = sim.states(NAMES)[:, :3].copy()
        sim.step(20)
        # Still where they were, at rest; the run went on.
        assert np.abs(sim.states(NAMES)[:, :3] - start).max() < 1e-9
        assert np.abs(sim.states(NAMES)[:, 7:10]).max() < 1e-9
        assert sim.steps == 20


def test_a_batch_refuses_a_policy():
    with pytest.raises(ValueError, match="policy= is for the task's scene file"):
        envs.navigation(agents=AGENTS, worlds=1, policy="x.onnx")


def test_the_worlds_of_a_batch_each_have_their_own_team(navigation_model, tmp_path):
    """Three worlds of the policy's scene in one process: each world's agents form their own
    team (the driver's teams are found by world), so world 0 steps as the lone world does, to
    the bit, and world 1, seeded apart, goes elsewhere."""
    _, path = navigation_model
    scene = envs.navigation_scene(AGENTS, seed=3, directory=str(tmp_path), policy=path)
    with ssx.Worlds(scene, 3) as worlds, ssx.Sim(scene) as lone:
        worlds.step(40)
        lone.step(40)
        s = worlds.states(NAMES)[:, :, :3]
        assert np.array_equal(s[0], lone.states(NAMES)[:, :3])
        assert np.abs(s[1] - s[0]).max() > 0.01
