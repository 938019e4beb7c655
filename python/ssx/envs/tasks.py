"""The shipped tasks: dispersal (Stage's benchmark: spread out from a crowded start drawn from
the seed) and exploration (MAES: explore a generated building; the team is rewarded for newly
explored cells),
each as one world (a PettingZoo ``ParallelEnv``) or as a batch of ``worlds`` (a
``SwarmBatch``; ``ssx.envs.vector`` and ``ssx.envs.sb3`` adapt it to learning libraries).

A reward is ``reward(env)`` on either form: it reads ``env.obs`` (K, N, obs), ``env.states``
(K, N, 13), ``env.readings`` (K, N, R), ``env.nearest()`` (K, N) and ``env.metric(name)`` (K,),
K = 1 for one world, and returns (K, N) (or (K,) or one number, the same for every robot).
"""

from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np

from .. import Sim, Worlds, data_dir
from .batch import SwarmBatch
from .single import ParallelSwarmEnv, nearest  # noqa: F401  (nearest: the reward's helper, re-exported)

def _library(name):
    return os.path.join(data_dir(), "library", name)


def _scene_dir():
    """A new directory for scene files the caller keeps (removing it is the caller's)."""
    return tempfile.mkdtemp(prefix="ssx-task-")


def _write(directory, name, value):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump(value, f, indent=1)
    return path


def _walls(side):
    """Four walls of 1 m sections around the square [-side/2, side/2]²."""
    half, n = side / 2.0, int(math.ceil(side))
    first = -half + 0.5
    out = []
    for name, pos, rot in [
        ("wall_s", [first, -half, 0], False),
        ("wall_n", [first, half, 0], False),
        ("wall_w", [-half, first, 0], True),
        ("wall_e", [half, first, 0], True),
    ]:
        pose = {"position": pos}
        if rot:
            pose["rpy"] = [0, 0, math.pi / 2]
        out.append(
            {
                "name": name,
                "artifact": _library("wall.json"),
                "pose": pose,
                "replicate": {"grid": {"count": n, "columns": n, "spacing": [1, 1]}},
            }
        )
    return out


def dispersal_scene(agents=100, engine="kinematic", seed=3, directory=None, timestep=0.01, behaviour=None):
    """A scene file for the dispersal task: ``agents`` Pioneers that take velocity commands,
    placed at random from the scene's ``seed`` (no two nearer than 0.6 m, as VMAS's scenarios
    place their agents) in a square 1.5 times as wide as a 0.6 m grid of them would be, with a
    12-ray range ring of 2 m at 10 Hz (every step from a timestep of 0.1 s up), in a walled
    square three times that grid's width. Another seed is another start (a batch's world k takes
    ``seed + k``). Returns its path.
    ``behaviour="dispersal"``: the robots run Stage's hand-written dispersal controller (the
    ground driver's) instead of waiting for commands: the baseline a learnt policy is held to."""
    if behaviour not in (None, "dispersal"):
        raise ValueError(f"behaviour must be None or 'dispersal', got {behaviour!r}")
    drive = {"dispersal": {}} if behaviour else {"velocity": {"linear": 0.0, "angular": 0.0}}
    if not (1e-4 <= timestep <= 1.0):
        raise ValueError(f"timestep must be from 0.0001 to 1 s, got {timestep}")
    cols = int(math.ceil(math.sqrt(agents)))
    pack = cols * 0.6
    side = max(6.0, 3.0 * pack)
    half = 0.75 * pack
    # 0.6 m apart: more than the diameter of the circle about pioneer.json's 0.45 x 0.38 m
    # footprint (0.59 m), so no two start overlapping.
    scene = {
        "name": f"dispersal-task-{agents}",
        "timestep": timestep,
        "seed": seed,
        "engine": engine,
        "artifacts": [
            {"name": "ground", "artifact": _library("ground.json")},
            {
                "name": "robot",
                "artifact": _library("pioneer.json"),
                "pose": {"position": [0.0, 0.0, 0.12]},
                "replicate": {
                    "random": {"count": agents, "min": [-half, -half, 0], "max": [half, half, 0], "clearance": 0.6}
                },
                "overrides": {
                    "driver": {
                        "behaviour": drive,
                        "commands": {"timeout": 1.0},
                    },
                    "sensors": {
                        "range": {
                            "count": 12,
                            "max_range": 2.0,
                            "rate_divider": max(1, round(0.1 / timestep)),
                            "stagger": True,
                        }
                    },
                },
            },
        ]
        + _walls(side),
    }
    return _write(directory or _scene_dir(), "dispersal.json", scene)


def dispersal_reward(env):
    """Per robot: its distance to the nearest other robot over 2 m (at most 1), less 1 when its
    range ring sees something within 0.3 m (a collision is near). Reads ``env.nearest()`` and
    the ring's part of ``env.obs`` (0: nothing seen)."""
    r = np.minimum(env.nearest() / 2.0, 1.0)
    ranges = env.obs[..., :-4]
    seen = np.where(ranges > 0, ranges, np.inf).min(axis=2, initial=np.inf)
    return r - (seen < 0.3)


# A batch computes this reward in its step's own pass over the worlds, on the workers, to the
# bit of this function (ssx.envs.batch, Worlds.act(reward="dispersal")).
dispersal_reward.reads_nearest = True
dispersal_reward.batch_reward = "dispersal"


def dispersal(
    agents=100,
    engine="kinematic",
    seed=3,
    workers=None,
    steps_per_action=10,
    max_cycles=200,
    reward=None,
    worlds=None,
    timestep=0.01,
):
    """The dispersal task in this process: one world as a PettingZoo ParallelEnv, or with
    ``worlds=K`` a ``SwarmBatch`` of K worlds (world k seeded ``seed + k``). ``timestep`` and
    ``steps_per_action``: 0.01 x 10 (the default) or 0.1 x 1 (one integration step an action,
    as VMAS steps by default; collisions are then resolved once per 0.1 s)."""
    # The scene file lives as long as the env (a reset with a new seed reads it again).
    files = tempfile.TemporaryDirectory(prefix="ssx-task-")
    scene = dispersal_scene(agents, engine, seed, directory=files.name, timestep=timestep)
    kw = dict(
        agents="robot_*",
        sensor="range",
        reward=reward or dispersal_reward,
        steps_per_action=steps_per_action,
        max_cycles=max_cycles,
    )
    if worlds is not None:
        batch = SwarmBatch(Worlds(scene, worlds, workers=workers), **kw)
        batch._recipe = (dispersal, dict(
            agents=agents, engine=engine, seed=seed, workers=workers, steps_per_action=steps_per_action,
            max_cycles=max_cycles, reward=reward, worlds=worlds, timestep=timestep,
        ))
        return _keeping(files, batch)
    return _keeping(files, ParallelSwarmEnv(Sim(scene, workers=workers), **kw))


def _keeping(files, env):
    """`env`, holding the directory of its scene files (removed with it)."""
    env._files = files
    return env


def exploration_scene(agents=10, directory=None, seed=11):
    """A scene file for the exploration task: MAES's explorers (bumper ring and SLAM scanner)
    that take velocity commands, in a 30 × 20 m building generated from the scene's seed (a
    reset with a new seed makes a new building), on the kinematic engine, with the ``explore``
    extension counting explored cells. The robots start at random from the seed about the
    building's spawn point (no two nearer than 0.5 m). Returns its path."""
    directory = directory or _scene_dir()
    with open(_library("explorer.json")) as f:
        robot = json.load(f)
    robot["driver"] = {
        "library": "libssx_driver_ground.so",
        "plugin": "diffdrive",
        "descriptor": {
            "max_speed": 0.6,
            "max_turn_rate": 2.0,
            "behaviour": {"velocity": {"linear": 0.0, "angular": 0.0}},
            "commands": {"timeout": 1.0},
        },
    }
    robot["description"] = "explorer.json with a diff-drive driver that takes velocity commands"
    _write(directory, "explorer-commanded.json", robot)
    # The spawn's clear disc holds the box the robots are drawn in; 0.5 m apart is more than the
    # diameter of the circle about explorer.json's 0.35 x 0.3 m footprint (0.46 m).
    spawn_radius = max(1.5, 0.5 * math.sqrt(agents) + 0.5)
    half = 0.99 * spawn_radius / math.sqrt(2.0)
    scene = {
        "name": f"exploration-task-{agents}",
        "timestep": 0.01,
        "seed": seed,
        "engine": "kinematic",
        "map": {
            "building": {"size": [30, 20], "room_size": 5, "door_width": 1.2, "spawn": [15, 10], "spawn_radius": spawn_radius},
            "resolution": 0.25,
            "height": 0.5,
        },
        "extensions": [
            {
                "name": "explore",
                "library": "libssx_explore.so",
                "plugin": "explore",
                "descriptor": {"area": [[0, 0], [30, 20]], "cell": 0.25, "robots": "explorer"},
            }
        ],
        "artifacts": [
            {"name": "ground", "artifact": _library("ground.json")},
            {
                "name": "explorer",
                "artifact": "explorer-commanded.json",
                "pose": {"position": [15.0, 10.0, 0.1]},
                "replicate": {
                    "random": {"count": agents, "min": [-half, -half, 0], "max": [half, half, 0], "clearance": 0.5}
                },
            },
        ],
    }
    return _write(directory, "exploration.json", scene)


class ExplorationReward:
    """The team's reward: the share of the building's free cells newly explored since the last
    action, in per mille (``explore.explored`` of the explore extension), the same for every
    robot of a world."""

    def __init__(self):
        self.last = None

    def reset(self, env, mask):
        """A new episode in the worlds where ``mask`` is true (None: all)."""
        now = np.nan_to_num(env.metric("explore.explored"), nan=0.0)
        if self.last is None or mask is None:
            self.last = now
        else:
            self.last = np.where(mask, now, self.last)

    def __call__(self, env):
        now = np.nan_to_num(env.metric("explore.explored"), nan=0.0)
        gain, self.last = now - self.last, now
        return 1000.0 * gain


def exploration(agents=10, seed=11, workers=None, steps_per_action=10, max_cycles=300, worlds=None):
    """The exploration task in this process: one world as a PettingZoo ParallelEnv, or with
    ``worlds=K`` a ``SwarmBatch`` of K worlds, each with a building of its own (world k
    seeded ``seed + k``)."""
    files = tempfile.TemporaryDirectory(prefix="ssx-task-")
    scene = exploration_scene(agents, directory=files.name, seed=seed)
    kw = dict(
        agents="explorer_*",
        sensor="range",
        reward=ExplorationReward(),
        steps_per_action=steps_per_action,
        max_cycles=max_cycles,
    )
    if worlds is not None:
        batch = SwarmBatch(Worlds(scene, worlds, workers=workers), **kw)
        batch._recipe = (exploration, dict(
            agents=agents, seed=seed, workers=workers, steps_per_action=steps_per_action,
            max_cycles=max_cycles, worlds=worlds,
        ))
        return _keeping(files, batch)
    return _keeping(files, ParallelSwarmEnv(Sim(scene, workers=workers), **kw))
