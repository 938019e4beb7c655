"""Trained policies out of Python and into ssx's policy driver (``drivers/policy``), which runs
them in a scene under ``ssxd run`` (real time) or ``ssx.Sim``/``ssx.Worlds``.

- ``export(actor, path, batch)``: ``actor``, a torch module that maps observations (agents, obs)
  to actions (agents, 2), written as an ONNX file (``torch.onnx.export``) with the metadata the
  driver checks: the task, its options and agents, the observation's width, the action's fields
  and limits. ``batch``: the task's ``TaskBatch`` (``ssx.envs.navigation(...)``), which says
  them. The file is written whole or not at all.
- ``sb3_actor(model)``: a Stable-Baselines3 policy's deterministic action (its Gaussian's mean)
  as such a module.
- ``metadata(path)``: the ssx metadata of an exported file.

Then ``ssx.envs.navigation_scene(..., policy=path)`` writes the task's scene with every agent
driven by the file. Needs torch, onnx and onnxscript (``pip install 'ssx[learn]'``).
"""

from __future__ import annotations

import json
import os
import tempfile

# The metadata keys (ONNX metadata_props) the policy driver reads: drivers/policy/src/model.rs.
TASK = "ssx.task"
AGENTS = "ssx.agents"
OPTIONS = "ssx.options"
OBSERVATION_WIDTH = "ssx.observation_width"
ACTION = "ssx.action"
ACTION_LOW = "ssx.action_low"
ACTION_HIGH = "ssx.action_high"
DRIVE = "ssx.drive"


def _task_of(batch):
    """(task, options, drive) of a TaskBatch made by a task function."""
    recipe = getattr(batch, "_recipe", None)
    task = getattr(batch, "task", None)
    if recipe is None or task is None:
        raise TypeError("export: batch must be a task's TaskBatch (ssx.envs.navigation(...), ...)")
    kwargs = dict(recipe[1])
    for k in ("agents", "worlds", "seed", "workers", "max_steps", "actions"):
        kwargs.pop(k, None)
    drive = kwargs.pop("drive", "holonomic")
    return task, kwargs, drive


def export(actor, path, batch, notes=None):
    """Writes ``actor`` (a torch module: observations (agents, obs) float32 -> actions (agents,
    2)) to ``path`` as ONNX, with the task's metadata from ``batch`` (its ``TaskBatch``), for
    continuous actions. ``notes``: a text kept in the file's doc string. Returns ``path``."""
    import onnx
    import torch

    task, options, drive = _task_of(batch)
    if batch.actions != "continuous":
        raise ValueError(f"export: the policy driver takes continuous actions, the batch's are {batch.actions!r}")
    width = task.observation_width
    example = torch.zeros((task.agents, width), dtype=torch.float32)
    actor = actor.eval()
    with torch.no_grad():
        out = actor(example)
    if tuple(out.shape) != (task.agents, 2):
        raise ValueError(
            f"export: actor gives actions of shape {tuple(out.shape)} for {task.agents} observations of {width}; it must give ({task.agents}, 2)"
        )
    batch_dim = torch.export.Dim("agents", min=1, max=1 << 20)
    program = torch.onnx.export(
        actor,
        (example,),
        dynamo=True,
        input_names=["observation"],
        output_names=["action"],
        dynamic_shapes=({0: batch_dim},),
        verbose=False,
    )
    model = program.model_proto
    u = float(batch.u_range)
    props = {
        TASK: task.name,
        AGENTS: str(task.agents),
        OPTIONS: json.dumps({k: float(v) for k, v in options.items()}, sort_keys=True),
        OBSERVATION_WIDTH: str(width),
        ACTION: "v,omega" if drive == "diffdrive" else "ux,uy",
        ACTION_LOW: f"{-u!r},{-u!r}",
        ACTION_HIGH: f"{u!r},{u!r}",
        DRIVE: drive,
    }
    onnx.helper.set_model_props(model, props)
    if notes:
        model.doc_string = str(notes)
    onnx.checker.check_model(model)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".policy-", suffix=".onnx", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def metadata(path):
    """The ``ssx.*`` metadata of the ONNX file at ``path``, as a dict of strings."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    return {p.key: p.value for p in model.metadata_props if p.key.startswith("ssx.")}


def sb3_actor(model):
    """The deterministic action of a Stable-Baselines3 on-policy model with a Gaussian policy
    (PPO, A2C on a continuous action space): its features, its actor's layers and its action
    net, the Gaussian's mean, as a torch module (on the CPU). The driver clips it to the drive's
    limits, as SB3 clips it to the action space."""
    import torch

    policy = model.policy.to("cpu")

    class _Actor(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = policy.pi_features_extractor
            self.mlp = policy.mlp_extractor.policy_net
            self.action = policy.action_net

        def forward(self, obs):
            return self.action(self.mlp(self.features(obs)))

    return _Actor()
