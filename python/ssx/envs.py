"""PettingZoo and Gymnasium environments on an ssx world (``ssx.Sim`` in this process, or
``ssx.connect`` to a running daemon).

One agent a robot: its action is its driver's command (the fields its driver subscribes to,
e.g. ``linear`` and ``angular`` for a diff-drive robot, bounded by the driver's limits), its
observation one sensor's newest reading followed by its pose in the plane
``(x, y, cos yaw, sin yaw)``. An action holds for ``steps_per_action`` simulation steps. The
reward is a Python callable.

Two tasks ship: ``dispersal`` (Stage's benchmark: spread out from a packed grid) and
``exploration`` (MAES: explore a generated building; the team is rewarded for newly explored
cells).
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import tempfile

import numpy as np

from . import Sim, data_dir

try:
    import gymnasium
    from gymnasium import spaces
    from pettingzoo import ParallelEnv
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs needs gymnasium and pettingzoo: pip install 'ssx[envs]'") from e


def _yaw(states):
    qx, qy, qz, qw = states[:, 3], states[:, 4], states[:, 5], states[:, 6]
    return np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


class _Swarm:
    """What both environments share: agents, spaces, one step of the world."""

    def __init__(self, sim, agents, sensor, reward, steps_per_action, max_cycles):
        self.sim = sim
        self.sensor = sensor
        self.reward_fn = reward
        self.steps_per_action = int(steps_per_action)
        self.max_cycles = int(max_cycles)
        if self.steps_per_action < 1 or self.max_cycles < 1:
            raise ValueError("steps_per_action and max_cycles must be at least 1")
        names = [n for n in sim.artifact_names if fnmatch.fnmatchcase(n, agents)]
        carriers = set(sim.sensor_artifacts(sensor))
        names = [n for n in names if n in carriers]
        if not names:
            raise ValueError(
                f"no artifact matches '{agents}' and carries a sensor '{sensor}'"
            )
        self.names = names
        self.keys = [f"artifacts/{n}/cmd" for n in names]
        # Drivers subscribe to their command keys on their first step: one settling period
        # (no command) tells what they take, and gives every sensor a first reading.
        sim.reset()
        sim.step(self.steps_per_action)
        fields = sim.command_fields(self.keys[0])
        if fields is None:
            raise ValueError(
                f"artifact '{names[0]}' takes no commands: its driver needs \"commands\": {{}}"
            )
        for n, k in zip(names, self.keys):
            if sim.command_fields(k) != fields:
                raise ValueError(f"artifact '{n}' takes other commands than '{names[0]}'")
        self.fields = fields
        high = np.concatenate([np.full(n, m) for _, n, m in fields])
        self.action_space = spaces.Box(-high, high, dtype=np.float64)
        width = sim.readings(sensor, names).shape[1] + 4
        self.observation_space = spaces.Box(-np.inf, np.inf, (width,), dtype=np.float64)
        self.cycles = 0

    def start(self, seed):
        self.sim.reset(seed)
        self.sim.step(self.steps_per_action)
        self.cycles = 0
        if hasattr(self.reward_fn, "reset"):
            self.reward_fn.reset(self)
        return self.observe()

    def observe(self):
        r = self.sim.readings(self.sensor, self.names)
        s = self.sim.states(self.names)
        yaw = _yaw(s)
        obs = np.concatenate(
            [r, s[:, 0:1], s[:, 1:2], np.cos(yaw)[:, None], np.sin(yaw)[:, None]], axis=1
        )
        # A reading not taken yet (NaN) reads as nothing seen.
        return np.nan_to_num(obs, nan=0.0)

    def act(self, actions):
        actions = np.asarray(actions, dtype=np.float64).reshape(len(self.names), -1)
        high = self.action_space.high
        self.sim.command_many(self.names, np.clip(actions, -high, high))
        self.sim.step(self.steps_per_action)
        self.cycles += 1
        obs = self.observe()
        reward = np.asarray(self.reward_fn(self), dtype=np.float64).reshape(-1)
        if reward.size == 1:
            reward = np.full(len(self.names), reward[0])
        return obs, reward, self.cycles >= self.max_cycles


class ParallelSwarmEnv(ParallelEnv):
    """A PettingZoo ``ParallelEnv``: one agent per robot whose name matches ``agents``."""

    metadata = {"name": "ssx_swarm_v0", "render_modes": [], "is_parallelizable": True}
    render_mode = None

    def __init__(
        self,
        sim,
        agents="robot*",
        sensor="range",
        reward=None,
        steps_per_action=10,
        max_cycles=200,
    ):
        self._s = _Swarm(sim, agents, sensor, reward or (lambda env: 0.0), steps_per_action, max_cycles)
        self.possible_agents = list(self._s.names)
        self.agents = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}

    @property
    def sim(self):
        return self._s.sim

    @property
    def max_cycles(self):
        """Actions an episode lasts (then every agent is truncated)."""
        return self._s.max_cycles

    @max_cycles.setter
    def max_cycles(self, n):
        self._s.max_cycles = int(n)

    def observation_space(self, agent):
        return self._s.observation_space

    def action_space(self, agent):
        return self._s.action_space

    def reset(self, seed=None, options=None):
        obs = self._s.start(seed)
        self.agents = list(self.possible_agents)
        return (
            {a: obs[i] for i, a in enumerate(self.agents)},
            {a: {} for a in self.agents},
        )

    def step(self, actions):
        if not self.agents:
            raise RuntimeError("step() after the episode ended: call reset()")
        # Agents without an action this time keep still.
        act = np.zeros((len(self.possible_agents),) + self._s.action_space.shape)
        for a, v in actions.items():
            act[self._index[a]] = v
        obs, reward, done = self._s.act(act)
        agents = self.agents
        out = (
            {a: obs[self._index[a]] for a in agents},
            {a: float(reward[self._index[a]]) for a in agents},
            {a: False for a in agents},
            {a: done for a in agents},
            {a: {} for a in agents},
        )
        if done:
            self.agents = []
        return out

    def render(self):
        return None

    def close(self):
        pass

    def state(self):
        """The whole world's body states, flattened (``Sim.states()``)."""
        return self._s.sim.states().reshape(-1)


class RobotEnv(gymnasium.Env):
    """A Gymnasium ``Env`` driving one robot (``agent``: its artifact name)."""

    metadata = {"render_modes": []}

    def __init__(self, sim, agent, sensor="range", reward=None, steps_per_action=10, max_cycles=200):
        self._s = _Swarm(sim, agent, sensor, reward or (lambda env: 0.0), steps_per_action, max_cycles)
        if len(self._s.names) != 1:
            raise ValueError(f"'{agent}' names {len(self._s.names)} robots; RobotEnv drives one")
        self.action_space = self._s.action_space
        self.observation_space = self._s.observation_space

    @property
    def sim(self):
        return self._s.sim

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._s.start(seed)[0], {}

    def step(self, action):
        obs, reward, done = self._s.act(np.asarray(action)[None, :])
        return obs[0], float(reward[0]), False, done, {}


# The shipped tasks.


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


def dispersal_scene(agents=100, engine="kinematic", seed=3, directory=None):
    """A scene file for the dispersal task: ``agents`` Pioneers that take velocity commands,
    packed on a 0.6 m grid, with a 12-ray range ring of 2 m at 10 Hz, in a walled square three
    times the pack's width. Returns its path."""
    cols = int(math.ceil(math.sqrt(agents)))
    pack = cols * 0.6
    side = max(6.0, 3.0 * pack)
    scene = {
        "name": f"dispersal-task-{agents}",
        "timestep": 0.01,
        "seed": seed,
        "engine": engine,
        "artifacts": [
            {"name": "ground", "artifact": _library("ground.json")},
            {
                "name": "robot",
                "artifact": _library("pioneer.json"),
                "pose": {"position": [-pack / 2 + 0.3, -pack / 2 + 0.3, 0.12]},
                "replicate": {"grid": {"count": agents, "columns": cols, "spacing": [0.6, 0.6]}},
                "overrides": {
                    "driver": {
                        "behaviour": {"velocity": {"linear": 0.0, "angular": 0.0}},
                        "commands": {"timeout": 1.0},
                    },
                    "sensors": {
                        "range": {"count": 12, "max_range": 2.0, "rate_divider": 10, "stagger": True}
                    },
                },
            },
        ]
        + _walls(side),
    }
    return _write(directory or _scene_dir(), "dispersal.json", scene)


def dispersal_reward(env):
    """Per robot: its distance to the nearest other robot over 2 m (at most 1), less 1 when its
    range ring sees something within 0.3 m (a collision is near)."""
    p = env.sim.states(env.names)[:, :2]
    sq = (p * p).sum(axis=1)
    near = np.empty(len(p))
    # Nearest neighbour by blocks of rows: |a - b|² = |a|² + |b|² - 2 a·b as one matrix product
    # a block (O(n²) work, bounded memory at 10,000 robots).
    for i in range(0, len(p), 256):
        d2 = sq[i : i + 256, None] + sq[None, :] - 2.0 * (p[i : i + 256] @ p.T)
        idx = np.arange(i, min(i + 256, len(p)))
        d2[idx - i, idx] = np.inf
        near[idx] = np.sqrt(np.maximum(d2.min(axis=1), 0.0))
    r = np.minimum(near / 2.0, 1.0)
    ranges = env.sim.readings(env.sensor, env.names)
    closest = np.nanmin(np.where(ranges > 0, ranges, np.nan), axis=1, initial=np.inf)
    return r - (closest < 0.3)


def dispersal(agents=100, engine="kinematic", seed=3, workers=None, steps_per_action=10, max_cycles=200, reward=None):
    """The dispersal task as a PettingZoo ParallelEnv (in this process)."""
    # The scene file lives as long as the env (a reset with a new seed reads it again).
    files = tempfile.TemporaryDirectory(prefix="ssx-task-")
    sim = Sim(dispersal_scene(agents, engine, seed, directory=files.name), workers=workers)
    return _keeping(files, ParallelSwarmEnv(
        sim,
        agents="robot_*",
        sensor="range",
        reward=reward or dispersal_reward,
        steps_per_action=steps_per_action,
        max_cycles=max_cycles,
    ))


def _keeping(files, env):
    """`env`, holding the directory of its scene files (removed with it)."""
    env._files = files
    return env


def exploration_scene(agents=10, directory=None, seed=11):
    """A scene file for the exploration task: MAES's explorers (bumper ring and SLAM scanner)
    that take velocity commands, in a 30 × 20 m building generated from the scene's seed (a
    reset with a new seed makes a new building), on the kinematic engine, with the ``explore``
    extension counting explored cells. Returns its path."""
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
    cols = min(agents, 5)
    scene = {
        "name": f"exploration-task-{agents}",
        "timestep": 0.01,
        "seed": seed,
        "engine": "kinematic",
        "map": {
            "building": {"size": [30, 20], "room_size": 5, "door_width": 1.2, "spawn": [15, 10], "spawn_radius": 1.5},
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
                "pose": {"position": [14.0, 9.6, 0.1]},
                "replicate": {"grid": {"count": agents, "columns": cols, "spacing": [0.5, 0.8]}},
            },
        ],
    }
    return _write(directory, "exploration.json", scene)


class ExplorationReward:
    """The team's reward: the share of the building's free cells newly explored since the last
    action, in per mille (``explore.explored`` of the explore extension), the same for every
    robot."""

    def __init__(self):
        self.last = 0.0

    def reset(self, env):
        self.last = env.sim.metrics().get("explore.explored", 0.0)

    def __call__(self, env):
        now = env.sim.metrics().get("explore.explored", 0.0)
        gain, self.last = now - self.last, now
        return 1000.0 * gain


def exploration(agents=10, seed=11, workers=None, steps_per_action=10, max_cycles=300):
    """The exploration task as a PettingZoo ParallelEnv (in this process)."""
    files = tempfile.TemporaryDirectory(prefix="ssx-task-")
    sim = Sim(exploration_scene(agents, directory=files.name, seed=seed), workers=workers)
    return _keeping(files, ParallelSwarmEnv(
        sim,
        agents="explorer_*",
        sensor="range",
        reward=ExplorationReward(),
        steps_per_action=steps_per_action,
        max_cycles=max_cycles,
    ))
