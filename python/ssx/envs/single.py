"""PettingZoo and Gymnasium environments on one ssx world (``ssx.Sim`` in this process, or
``ssx.connect`` to a running daemon).

One agent a robot: its action is its driver's command (the fields its driver subscribes to,
e.g. ``linear`` and ``angular`` for a diff-drive robot, bounded by the driver's limits), its
observation one sensor's newest reading followed by its pose in the plane
``(x, y, cos yaw, sin yaw)``. An action holds for ``steps_per_action`` simulation steps. The
reward is a Python callable on the env (``reward(env)``) that returns one value a robot (or one
for all): it reads ``env.states`` (1, N, 13), ``env.readings`` (1, N, R) and ``env.metric(name)``
(1,), the same arrays a batch of worlds gives with K = 1 (``ssx.envs.batch``), so one reward
serves both.
"""

from __future__ import annotations

import fnmatch

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
    from pettingzoo import ParallelEnv
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs needs gymnasium and pettingzoo: pip install 'ssx[envs]'") from e


def yaw(states):
    """The heading (rad) of state rows (..., 13)."""
    qx, qy, qz, qw = states[..., 3], states[..., 4], states[..., 5], states[..., 6]
    return np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


def heading(states):
    """cos and sin of the heading of state rows (..., 13), without the arctangent: the yaw's
    (cos, sin) is the quaternion's (1 - 2(qy² + qz²), 2(qw qz + qx qy)) made unit length."""
    qx, qy, qz, qw = states[..., 3], states[..., 4], states[..., 5], states[..., 6]
    c = 1.0 - 2.0 * (qy * qy + qz * qz)
    s = 2.0 * (qw * qz + qx * qy)
    r = np.hypot(c, s)
    r[r == 0.0] = 1.0  # a body on its side has no heading: (0, 0)
    return c / r, s / r


def observation(readings, states):
    """Observations (..., R + 4): the readings (a reading not taken yet, NaN, reads as nothing
    seen: 0) then x, y, cos yaw, sin yaw."""
    c, s = heading(states)
    obs = np.concatenate([readings, states[..., 0:2], c[..., None], s[..., None]], axis=-1)
    np.nan_to_num(obs, copy=False, nan=0.0)
    return obs


def nearest(p):
    """Each robot's distance to its nearest other robot: p (K, N, 2) -> (K, N) (inf alone).
    Element by element, in blocks of rows (bounded memory at 10,000 robots): the same bits
    whatever K, so one world and a batch agree."""
    k, n, _ = p.shape
    near = np.empty((k, n))
    for i in range(0, n, 256):
        d = p[:, i : i + 256, None, :] - p[:, None, :, :]
        d2 = d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1]
        rows = np.arange(i, min(i + 256, n))
        d2[:, rows - i, rows] = np.inf
        near[:, rows] = np.sqrt(d2.min(axis=2))
    return near


class _Swarm:
    """What both environments share: agents, spaces, one step of the world."""

    def __init__(self, sim, agents, sensor, reward, steps_per_action, max_cycles, seed_stride=1):
        self.sim = sim
        self.sensor = sensor
        self.reward_fn = reward
        self.steps_per_action = int(steps_per_action)
        self.max_cycles = int(max_cycles)
        # A reset without a seed after the first starts the next episode with the seed this much
        # further on (a batch of K worlds uses K, so that no two of its worlds share a seed).
        self.seed_stride = int(seed_stride)
        self._started = False
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
        # (A remote world's client does not know its seed: it starts over with the same one.)
        current = getattr(self.sim, "seed", None)
        if seed is None and self._started and current is not None:
            seed = current + self.seed_stride
        self._started = True
        self.sim.reset(seed)
        self.sim.step(self.steps_per_action)
        self.cycles = 0
        self._look()
        if hasattr(self.reward_fn, "reset"):
            self.reward_fn.reset(self, None)
        return self.observe()

    def _look(self):
        self.states = self.sim.states(self.names)[None]
        self.readings = self.sim.readings(self.sensor, self.names)[None]
        self.obs = observation(self.readings, self.states)

    def nearest(self):
        """Each robot's distance to the nearest other robot, (1, N)."""
        return nearest(self.states[..., :2])

    def metric(self, name):
        """An extension's figure (``explore.explored``) as a (1,) array (NaN when none yet)."""
        return np.array([self.sim.metrics().get(name, np.nan)])

    def observe(self):
        return self.obs[0].copy()

    def act(self, actions):
        actions = np.asarray(actions, dtype=np.float64).reshape(len(self.names), -1)
        high = self.action_space.high
        self.sim.command_many(self.names, np.clip(actions, -high, high))
        self.sim.step(self.steps_per_action)
        self.cycles += 1
        self._look()
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
        seed_stride=1,
    ):
        self._s = _Swarm(
            sim, agents, sensor, reward or (lambda env: 0.0), steps_per_action, max_cycles, seed_stride
        )
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

    def __init__(
        self, sim, agent, sensor="range", reward=None, steps_per_action=10, max_cycles=200, seed_stride=1
    ):
        self._s = _Swarm(
            sim, agent, sensor, reward or (lambda env: 0.0), steps_per_action, max_cycles, seed_stride
        )
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
