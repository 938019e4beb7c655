"""The pieces VMAS's tasks' scenes are made of (``ssx.envs.vmas``): VMAS's agent as an artifact
(a disc with the holonomic driver, a lidar), goals, walls where VMAS's semidims stop an agent,
movable boxes, balls and lines with VMAS's drag, a task's scene, and a task's ``TaskBatch``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

from .. import Worlds
from .. import _ssx
from .taskbatch import TaskBatch



# VMAS's World defaults (vmas/simulator/core.py): dt 0.1 s, drag 0.25; an agent's mass 1 kg.
VMAS_DT = 0.1
VMAS_DRAG = 0.25
AGENT_MASS = 1.0


def _damping(dt=VMAS_DT, drag=VMAS_DRAG):
    """Rapier's damping c that takes a velocity to (1 − drag) of itself each step of dt:
    v ← v / (1 + dt·c)."""
    return (1.0 / (1.0 - drag) - 1.0) / dt


def _write(directory, name, value):
    """Writes ``value`` as JSON to ``directory``/``name`` (the directory made if it is not there)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump(value, f, indent=1)
    return path


def _agent(radius, rays, lidar_range, u_range=1.0, u_multiplier=1.0, color=(0.22, 0.49, 0.72, 1.0)):
    """A VMAS agent: a disc of 1 kg that takes forces (the holonomic driver) and, when ``rays``,
    a lidar ring of ``rays`` rays and ``lidar_range`` m, starting along its x axis."""
    c = _damping()
    art = {
        "description": f"VMAS's holonomic agent: a disc of radius {radius} m and {AGENT_MASS} kg, forces from outside",
        "bodies": [
            {
                "name": "base",
                "mass": AGENT_MASS,
                "linear_damping": c,
                "angular_damping": c,
                "planar": True,
                "color": list(color),
                # VMAS's contacts push along the line of centres only: no friction, no bounce.
                "colliders": [{"shape": {"sphere": {"radius": radius}}, "friction": 0.0, "restitution": 0.0}],
            }
        ],
        "driver": {
            "library": "libssx_driver_ground.so",
            "plugin": "holonomic",
            "descriptor": {
                "mode": "force",
                "u_range": u_range,
                "u_multiplier": u_multiplier,
                "commands": {"timeout": 1e9},
            },
        },
    }
    if rays:
        art["sensors"] = [
            {
                "name": "lidar",
                "library": "libssx_sensors.so",
                "plugin": "range",
                "descriptor": {"count": rays, "max_range": lidar_range, "min_range": 0.0},
            }
        ]
    return art


DRIVES = ("holonomic", "diffdrive")
"""How a task's agents move: VMAS's holonomic agent (the default), or ssx's differential drive."""


def _options(options):
    """The task's own options: ``options`` less ``drive`` and ``policy`` (ssx's, not VMAS's)."""
    return {k: v for k, v in options.items() if k not in ("drive", "policy")}


def _task(name, agents, options):
    """The task ``name`` (its options checked, ``drive`` among them)."""
    drive = options.get("drive", "holonomic")
    if drive not in DRIVES:
        raise ValueError(f"{name}: drive must be one of {', '.join(DRIVES)}, got {drive!r}")
    return _ssx.Task(name, agents, _options(options))


def _diff_drive(art):
    """``art``, a holonomic agent, driven by ssx's differential drive instead: its action (v, ω),
    the forward speed along its heading (m/s) and its turn rate (rad/s), each within the
    holonomic agent's ±u_range, set every step (VMAS's ``DiffDrive`` dynamics take the same two
    numbers; ``u_multiplier``, a force's, is not applied), with no drag."""
    u = art["driver"]["descriptor"].get("u_range", 1.0)
    art["driver"] = {
        "library": "libssx_driver_ground.so",
        "plugin": "diffdrive",
        "descriptor": {
            "max_speed": u,
            "max_turn_rate": u,
            "behaviour": {"velocity": {"linear": 0.0, "angular": 0.0}},
            "commands": {"timeout": 1e9},
        },
    }
    # The drive sets the velocity every step: no drag between (give_way's velocity agents too).
    body = art["bodies"][0]
    body["linear_damping"] = body["angular_damping"] = 0.0
    art["description"] += ", on a differential drive"
    return art


def _policy_drive(art):
    """The policy driver's ``drive`` for ``art``'s driver: the same law and limits."""
    e = art["driver"]["descriptor"]
    if art["driver"]["plugin"] == "diffdrive":
        return {"diffdrive": {"max_speed": e["max_speed"], "max_turn_rate": e["max_turn_rate"]}}
    return {"holonomic": {k: e[k] for k in ("mode", "u_range", "u_multiplier") if k in e}}


def _with_policy(directory, art, policy, team):
    """``art`` driven by the trained policy in the ONNX file ``policy`` (the policy driver,
    ``drivers/policy``), copied into ``directory`` as ``policy.onnx`` so that the scene's
    directory holds what its run reads; ``team``: the task's name, options, agents, bodies and
    lidar."""
    if not os.path.isfile(policy):
        raise FileNotFoundError(f"policy: no file {policy!r}")
    os.makedirs(directory, exist_ok=True)
    shutil.copyfile(policy, os.path.join(directory, "policy.onnx"))
    descriptor = {"model": "policy.onnx", **{k: v for k, v in team.items() if v is not None}}
    descriptor["drive"] = _policy_drive(art)
    art["driver"] = {"library": "libssx_policy.so", "plugin": "policy", "descriptor": descriptor}
    art["description"] += f", driven by the trained policy {os.path.basename(policy)}"
    return art


def _write_agent(directory, art, options, team):
    """Writes the task's agent, ``art``, as ``agent.json``, on the drive ``options`` names, and
    driven by ``options["policy"]`` (an ONNX file) when given (``team``: what the policy reads)."""
    if options.get("drive", "holonomic") == "diffdrive":
        art = _diff_drive(art)
    if options.get("policy") is not None:
        art = _with_policy(directory, art, os.fspath(options["policy"]), team)
    return _write(directory, "agent.json", art)


def _landmark(color=(0.3, 0.69, 0.29, 1.0), radius=None):
    """A goal: a static body with no collider (VMAS's `collide=False` landmark), drawn as a flat
    disc of ``radius`` (none drawn without one)."""
    body = {"name": "mark", "kind": "static", "color": list(color)}
    if radius:
        body["visuals"] = [{"shape": {"cylinder": {"radius": radius, "length": 0.01}}}]
    return {"description": "a goal: nothing touches it, no ray meets it", "bodies": [body]}


def _task_scene(name, seed, artifacts, gravity=(0.0, 0.0), dt=VMAS_DT):
    """A task's scene: VMAS's step (0.1 s unless the scenario sets its own) on the planar engine,
    no gravity but the task's in the plane (VMAS's drag stands for the floor), world k's
    placements drawn from ``seed + k``."""
    return {
        "name": name,
        "timestep": dt,
        "gravity": [gravity[0], gravity[1], 0.0],
        "seed": seed,
        "engine": "planar",
        "artifacts": artifacts,
    }


def _walls(inner, inner_y=None):
    """Four static walls whose inner faces bound [-inner, inner] × [-inner_y, inner_y] (a
    square without ``inner_y``): where VMAS clamps its entities' positions to the world's
    semidims, ssx's walls stop them."""
    inner_y = inner if inner_y is None else inner_y
    t = 0.1
    wall = lambda name, pos, half: {  # noqa: E731
        "name": name,
        "kind": "static",
        "pose": {"position": pos},
        "color": [0.4, 0.4, 0.4, 1.0],
        "colliders": [{"shape": {"box": {"size": [2 * half[0], 2 * half[1], 0.2]}}, "friction": 0.0}],
    }
    return {
        "description": f"four walls around [-{inner}, {inner}] × [-{inner_y}, {inner_y}]",
        "bodies": [
            wall("s", [0.0, -inner_y - t / 2, 0.0], [inner + t, t / 2]),
            wall("n", [0.0, inner_y + t / 2, 0.0], [inner + t, t / 2]),
            wall("w", [-inner - t / 2, 0.0, 0.0], [t / 2, inner_y + t]),
            wall("e", [inner + t / 2, 0.0, 0.0], [t / 2, inner_y + t]),
        ],
    }


def _movable(name, mass, shape, color):
    """A movable body in the plane of ``mass`` and one collider of ``shape``, VMAS's drag as
    damping, no friction and no bounce (VMAS's contacts push along the line of centres only)."""
    c = _damping()
    return {
        "name": name,
        "mass": mass,
        "linear_damping": c,
        "angular_damping": c,
        "planar": True,
        "color": list(color),
        "colliders": [{"shape": shape, "friction": 0.0, "restitution": 0.0}],
    }


def _slab(name, centre, size):
    """A static box of ``size`` (x, y) at ``centre`` in the plane, without friction."""
    return {
        "name": name,
        "kind": "static",
        "pose": {"position": [centre[0], centre[1], 0.0]},
        "color": [0.6, 0.6, 0.6, 1.0],
        "colliders": [{"shape": {"box": {"size": [size[0], size[1], 0.2]}}, "friction": 0.0}],
    }


def _ball(radius, mass, color=(0.9, 0.1, 0.1, 1.0)):
    """A movable disc of ``radius`` and ``mass`` that nothing holds but the floor's drag."""
    return {
        "description": f"a ball of radius {radius} m and {mass} kg",
        "bodies": [
            _movable("ball", mass, {"sphere": {"radius": radius}}, color)
        ],
    }


def _line(length, mass):
    """VMAS's movable line: a box ``length`` long and ``LINE_MIN_DIST`` thick each side."""
    return {
        "description": f"a line of {length} m and {mass} kg",
        "bodies": [
            _movable("line", mass, {"box": {"size": [length, 2 * LINE_MIN_DIST, 0.05]}}, (0.1, 0.1, 0.1, 1.0))
        ],
    }


# VMAS's LINE_MIN_DIST (vmas/simulator/utils.py): how near a line counts as touching; here the
# half width of the box that stands for VMAS's line.
LINE_MIN_DIST = 4 / 600


def _ghost_agent(radius):
    """VMAS's agent that touches nothing (``collide=False``): a 1 kg body with no collider, the
    inertia of a solid ball of ``radius``, that takes forces (the holonomic driver), drawn as a
    ball of ``radius`` that nothing meets."""
    art = _agent(radius, 0, 0.0)
    body = art["bodies"][0]
    body["visuals"] = [{"shape": body.pop("colliders")[0]["shape"]}]
    i = 0.4 * AGENT_MASS * radius**2
    body["inertia"] = [i, i, i]
    art["description"] = f"VMAS's holonomic agent that touches nothing: {AGENT_MASS} kg, forces from outside"
    return art


def _batch(make, name, scene, agents, objects, lidar, worlds, seed, workers, max_steps, actions, options, u_range=1.0):
    """A task's ``TaskBatch`` on ``scene`` (a function of the directory it writes into), its
    actions within ±``u_range``."""
    if options.get("policy") is not None:
        raise ValueError(
            f"{name}: policy= is for the task's scene file ({name}_scene); a TaskBatch's agents take their actions from step()"
        )
    files = tempfile.TemporaryDirectory(prefix="ssx-task-")
    path = scene(files.name)
    batch = TaskBatch(
        Worlds(path, worlds or 1, workers=workers),
        _task(name, agents, options),
        objects=objects,
        lidar=lidar,
        max_steps=max_steps,
        actions=actions,
        u_range=u_range,
    )
    batch._files = files
    batch._recipe = (
        make,
        dict(agents=agents, worlds=worlds, seed=seed, workers=workers, max_steps=max_steps, actions=actions, **options),
    )
    return batch
