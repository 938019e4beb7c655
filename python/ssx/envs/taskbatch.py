"""``TaskBatch``: K worlds of one of VMAS's tasks (``ssx.envs.vmas``), each agent's observation,
the rewards, the episode's end, the task's metrics and a state for central critics computed in
Rust (``ssx._ssx.Task``) in the step's one pass over the worlds, with no Python loop over worlds or
agents. The same surface as ``SwarmBatch``, so ``ssx.envs.vector``, ``ssx.envs.sb3`` and
``ssx.envs.torchrl`` adapt it alike.

- ``reset(seed=None, mask=None)`` -> observations (K, N, obs);
- ``step(actions)`` -> observations (K, N, obs), rewards (K, N), terminations (K, N) (the task's
  ``done``, VMAS's), truncations (K, N) (``max_steps`` actions), infos (``cycles`` and each metric,
  (K,) arrays);
- ``state()`` -> (K, S): every agent's and object's position and velocity.

Actions: ``"continuous"`` (VMAS's default: (ux, uy) in [-u_range, u_range]), ``"discrete"``
(``Discrete(9)``, VMAS's flat index over 3 choices an axis) or ``"multidiscrete"``
(``MultiDiscrete([3, 3])``); a choice of an axis is VMAS's: 0 stays, 1 is -u_range, 2 is +u_range.
"""

from __future__ import annotations

import numpy as np

try:
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs needs gymnasium and pettingzoo: pip install 'ssx[envs]'") from e

from .. import _ssx
from .batch import _remake, world_mask, world_seeds

ACTIONS = ("continuous", "discrete", "multidiscrete")


class TaskBatch:
    """See the module docs. ``worlds``: the task's ``ssx.Worlds``; ``task``: an
    ``ssx._ssx.Task``; ``objects``: the names of its bodies after the agents; ``lidar``: the
    agents' range sensor (None: none)."""

    render_mode = None
    metadata = {"render_modes": []}

    def __init__(
        self,
        worlds,
        task,
        objects,
        lidar=None,
        steps_per_action=1,
        max_steps=100,
        actions="continuous",
        u_range=1.0,
        seed_stride=None,
    ):
        if actions not in ACTIONS:
            raise ValueError(f"actions must be one of {', '.join(ACTIONS)}, got {actions!r}")
        self.worlds = worlds
        self.task = task
        self.num_worlds = k = len(worlds)
        self.num_agents = n = task.agents
        self.names = [f"agent_{i}" for i in range(n)]
        self.objects = list(objects)
        self.lidar = lidar
        self.steps_per_action = int(steps_per_action)
        self.max_cycles = int(max_steps)
        if self.steps_per_action < 1 or self.max_cycles < 1:
            raise ValueError("steps_per_action and max_steps must be at least 1")
        self.seed_stride = k if seed_stride is None else int(seed_stride)
        self.u_range = float(u_range)
        self.actions = actions
        if actions == "continuous":
            self.action_space = spaces.Box(-self.u_range, self.u_range, (2,), dtype=np.float64)
        elif actions == "discrete":
            self.action_space = spaces.Discrete(9)
        else:
            self.action_space = spaces.MultiDiscrete([3, 3])
        w = task.observation_width
        self.observation_space = spaces.Box(-np.inf, np.inf, (w,), dtype=np.float64)
        self.state_space = spaces.Box(-np.inf, np.inf, (task.state_width,), dtype=np.float64)
        self.metric_names = list(task.metric_names)
        self.obs = np.zeros((k, n, w))
        self._reward = np.zeros((k, n))
        self._done = np.zeros(k)
        self._memory = np.zeros((k, task.memory))
        self._metrics = np.zeros((k, len(self.metric_names)))
        self._state = np.zeros((k, task.state_width))
        self.cycles = np.zeros(k, dtype=np.int64)
        self._started = False
        # The drivers subscribe to their commands on their first step.
        worlds.reset()
        self._pass(None, 1, None, start=True)

    def _pass(self, values, steps, mask, start):
        _ssx.task_act(
            self.worlds, self.task, self.names, self.objects, values, steps, mask, self.lidar, start,
            self.obs, self._reward, self._done, self._memory, self._metrics, self._state,
        )

    def _forces(self, actions):
        """(K, N, 2) commands from (K, N, ...) actions, clipped to the action space."""
        k, n = self.num_worlds, self.num_agents
        a = np.asarray(actions)
        if self.actions == "continuous":
            a = np.asarray(a, dtype=np.float64).reshape(k, n, 2)
            return np.clip(a, -self.u_range, self.u_range)
        if self.actions == "discrete":
            flat = np.asarray(a).reshape(k, n).astype(np.int64)
            if ((flat < 0) | (flat > 8)).any():
                raise ValueError("discrete actions are 0 to 8")
            choice = np.stack([flat // 3, flat % 3], axis=-1)
        else:
            choice = np.asarray(a).reshape(k, n, 2).astype(np.int64)
            if ((choice < 0) | (choice > 2)).any():
                raise ValueError("multidiscrete actions are 0, 1 or 2 an axis")
        # VMAS's three choices: stay, -u, +u.
        return np.choose(choice, [0.0, -self.u_range, self.u_range]).astype(np.float64)

    def observe(self):
        """Observations (K, N, obs) of the current state."""
        return self.obs.copy()

    def state(self):
        """Each world's state (K, S) for a central critic."""
        return self._state.copy()

    def metric(self, name):
        """Each world's metric ``name`` (one of ``metric_names``), (K,)."""
        return self._metrics[:, self.metric_names.index(name)].copy()

    def _seeds(self, seed):
        return world_seeds(self, seed)

    def reset(self, seed=None, mask=None):
        """Starts the worlds where ``mask`` (K,) is true (None: all) over; returns every world's
        observations. ``seed`` as for ``SwarmBatch.reset``."""
        mask = world_mask(self, mask)
        if mask is not None and not mask.any():
            return self.observe()
        seeds = self._seeds(seed)
        self._started = True
        self.worlds.reset(mask, seeds=seeds)
        # One step with no action: the drivers subscribe, the lidar reads; the task starts.
        self._pass(None, 1, mask, start=True)
        if mask is None:
            self.cycles[:] = 0
        else:
            self.cycles[mask] = 0
        return self.observe()

    def step(self, actions, mask=None):
        """Every world's agents act for ``steps_per_action`` steps (only the worlds where
        ``mask`` is true, when given). Returns observations, rewards, terminations, truncations
        and infos."""
        self._pass(self._forces(actions), self.steps_per_action, mask, start=False)
        if mask is None:
            self.cycles += 1
        else:
            self.cycles[mask] += 1
        n = self.num_agents
        terminated = np.repeat((self._done > 0)[:, None], n, axis=1)
        truncated = np.repeat((self.cycles >= self.max_cycles)[:, None], n, axis=1)
        infos = {"cycles": self.cycles.copy()}
        for i, name in enumerate(self.metric_names):
            infos[name] = self._metrics[:, i].copy()
        return self.observe(), self._reward.copy(), terminated, truncated, infos

    def close(self):
        self.worlds.close()

    def __reduce__(self):
        recipe = getattr(self, "_recipe", None)
        if recipe is None:
            raise TypeError("this TaskBatch was not made by a task function (ssx.envs.navigation, ...) and cannot be copied")
        return (_remake, recipe)

