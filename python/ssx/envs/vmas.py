"""VMAS's tasks under their names, on ssx's planar engine: ``ssx.envs.navigation(agents=4,
worlds=K, **options)`` is a ``TaskBatch`` of K worlds (world k seeded ``seed + k``), and
``ssx.envs.navigation_scene(...)`` writes the task's scene file, which ``ssxd run`` runs too.

Each task's rules, defaults, observation terms (in VMAS's order) and reward terms are VMAS
1.5's (``vmas/scenarios/<task>.py``, cited in the Rust module that computes them,
``tasks/src/<task>.rs``). Its physics is ssx's: rigid contacts on rapier2d where VMAS pushes
bodies apart with penalty forces, and VMAS's drag (the velocity times 1 − 0.25 once a 0.1 s step)
as a damping of the same factor a step (docs/learning.md says what differs).
"""

from __future__ import annotations

import json
import os
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


def _landmark(color=(0.3, 0.69, 0.29, 1.0)):
    """A goal: a static body with no collider (VMAS's `collide=False` landmark)."""
    return {
        "description": "a goal: nothing touches it, no ray meets it",
        "bodies": [{"name": "mark", "kind": "static", "color": list(color)}],
    }


def navigation_scene(agents=4, seed=0, directory=None, **options):
    """The scene file of VMAS's navigation for ``agents`` agents (options: ``agent_radius``,
    ``n_lidar_rays``, ``lidar_range``, as ``navigation``'s): agents and goals drawn in [-1, 1]²
    from the seed, no two nearer than 2·radius + 0.05. Returns its path."""
    task = _ssx.Task("navigation", agents, options)  # checks the options
    radius = options.get("agent_radius", 0.1)
    rays = task.lidar_rays
    lidar_range = options.get("lidar_range", 0.35)
    directory = directory or tempfile.mkdtemp(prefix="ssx-task-")
    _write(directory, "agent.json", _agent(radius, rays, lidar_range))
    _write(directory, "goal.json", _landmark())
    apart = 2 * radius + 0.05
    box = {"min": [-1.0, -1.0, 0.0], "max": [1.0, 1.0, 0.0], "clearance": apart}
    scene = {
        "name": f"navigation-{agents}",
        "timestep": VMAS_DT,
        "gravity": [0.0, 0.0, 0.0],
        "seed": seed,
        "engine": "planar",
        "artifacts": [
            {"name": "agent", "artifact": "agent.json", "replicate": {"random": dict(count=agents, **box)}},
            {
                "name": "goal",
                "artifact": "goal.json",
                "replicate": {"random": dict(count=agents, apart_from=["agent"], **box)},
            },
        ],
    }
    return _write(directory, "navigation.json", scene)


def navigation(agents=4, worlds=None, seed=0, workers=None, max_steps=100, actions="continuous", **options):
    """VMAS's navigation (see ``navigation_scene``): a ``TaskBatch`` of ``worlds`` worlds (one
    without ``worlds``). ``max_steps``: BenchMARL's navigation episode (100 actions of 0.1 s).
    ``options``: VMAS's keyword arguments (``shared_rew``, ``pos_shaping_factor``,
    ``final_reward``, ``agent_collision_penalty``, ``lidar_range``, ``n_lidar_rays``,
    ``agent_radius``, ``observe_all_goals``); an unknown one raises ValueError naming it."""
    files = tempfile.TemporaryDirectory(prefix="ssx-task-")
    scene = navigation_scene(agents, seed=seed, directory=files.name, **options)
    task = _ssx.Task("navigation", agents, options)
    batch = TaskBatch(
        Worlds(scene, worlds or 1, workers=workers),
        task,
        objects=[f"goal_{i}" for i in range(agents)],
        lidar="lidar",
        max_steps=max_steps,
        actions=actions,
    )
    batch._files = files
    batch._recipe = (
        navigation,
        dict(agents=agents, worlds=worlds, seed=seed, workers=workers, max_steps=max_steps, actions=actions, **options),
    )
    return batch


TASKS = {"navigation": navigation}
"""VMAS's tasks ssx has, by name."""

DEFAULT_AGENTS = {"navigation": 4}
"""Each task's agents by default (VMAS's ``n_agents``)."""
