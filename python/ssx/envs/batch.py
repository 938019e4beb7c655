"""``SwarmBatch``: a batched multi-agent environment over K worlds of N robots each
(``ssx.Worlds``), in the manner of VMAS: every call takes and gives arrays over the batch, with
no Python loop over worlds or robots.

- ``reset(seed=None, mask=None)`` -> observations (K, N, obs);
- ``step(actions (K, N, act))`` -> observations (K, N, obs), rewards (K, N), terminations and
  truncations (K, N) bool, infos (a dict of arrays);
- ``reset(mask=...)`` starts some worlds over while the others go on (no autoreset here: the
  adapters in ``ssx.envs.vector`` and ``ssx.envs.sb3`` do it as their libraries expect).

Each world runs exactly as a single-world env (``ssx.envs.single``) with its seed would: the
same settling period after a reset, the same observations and the same reward function.
"""

from __future__ import annotations

import fnmatch

import numpy as np

try:
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs needs gymnasium and pettingzoo: pip install 'ssx[envs]'") from e


class SwarmBatch:
    """K worlds (``ssx.Worlds``) of N agents each: the robots whose names match ``agents`` and
    carry ``sensor``. An agent's action is its driver's command, held for
    ``steps_per_action`` steps; its observation the sensor's newest reading then
    ``(x, y, cos yaw, sin yaw)``. An episode ends by truncation after ``max_cycles`` actions.
    A reset without a seed after the first starts each world with its seed + ``seed_stride``
    (K by default: no two worlds share a seed)."""

    render_mode = None
    metadata = {"render_modes": []}

    def __init__(
        self,
        worlds,
        agents="robot*",
        sensor="range",
        reward=None,
        steps_per_action=10,
        max_cycles=200,
        seed_stride=None,
    ):
        self.worlds = worlds
        self.num_worlds = len(worlds)
        self.sensor = sensor
        self.reward_fn = reward or (lambda env: 0.0)
        # A reward that says it reads `nearest()` (``reward.reads_nearest = True``) gets the
        # distances filled in the step's own pass over the worlds; a shipped task's reward that
        # the batch computes there too (``reward.batch_reward = "dispersal"``) is not called.
        self._reads_nearest = bool(getattr(self.reward_fn, "reads_nearest", False))
        self._batch_reward = getattr(self.reward_fn, "batch_reward", None)
        self.steps_per_action = int(steps_per_action)
        self.max_cycles = int(max_cycles)
        if self.steps_per_action < 1 or self.max_cycles < 1:
            raise ValueError("steps_per_action and max_cycles must be at least 1")
        self.seed_stride = self.num_worlds if seed_stride is None else int(seed_stride)
        carriers = set(worlds.sensor_artifacts(sensor))
        names = [n for n in worlds.artifact_names if fnmatch.fnmatchcase(n, agents) and n in carriers]
        if not names:
            raise ValueError(f"no artifact matches '{agents}' and carries a sensor '{sensor}'")
        self.names = names
        self.num_agents = len(names)
        keys = [f"artifacts/{n}/cmd" for n in names]
        # Drivers subscribe to their command keys on their first step: one settling period (no
        # command) tells what they take, and gives every sensor a first reading.
        worlds.reset()
        worlds.step(self.steps_per_action)
        fields = worlds.command_fields(keys[0])
        if fields is None:
            raise ValueError(f"artifact '{names[0]}' takes no commands: its driver needs \"commands\": {{}}")
        for n, k in zip(names, keys):
            if worlds.command_fields(k) != fields:
                raise ValueError(f"artifact '{n}' takes other commands than '{names[0]}'")
        self.fields = fields
        high = np.concatenate([np.full(n, m) for _, n, m in fields])
        self.action_space = spaces.Box(-high, high, dtype=np.float64)
        self._high = high
        self._states = np.empty((self.num_worlds, self.num_agents, 13))
        self._nearest = np.empty((self.num_worlds, self.num_agents))
        self._width = worlds.readings(sensor, names).shape[2]
        self._obs = np.empty((self.num_worlds, self.num_agents, self._width + 4))
        self._look()
        self.observation_space = spaces.Box(-np.inf, np.inf, (self._width + 4,), dtype=np.float64)
        self.cycles = np.zeros(self.num_worlds, dtype=np.int64)
        self._started = False

    # What a reward reads: `obs` (K, N, obs) now; `states` (K, N, 13) and `readings` (K, N, R)
    # fetched when first asked for after a step; `nearest()` (K, N) and `metric(name)` (K,).

    def _look(self):
        self.obs = self.worlds.observe(self.sensor, self.names, width=self._width, out=self._obs)
        self._states_now = self._readings_now = self._nearest_now = None

    @property
    def states(self):
        if self._states_now is None:
            self._states_now = self.worlds.states(self.names, out=self._states)
        return self._states_now

    @property
    def readings(self):
        if self._readings_now is None:
            self._readings_now = self.worlds.readings(self.sensor, self.names)
        return self._readings_now

    def nearest(self):
        """Each robot's distance to the nearest other robot of its world, (K, N)."""
        if self._nearest_now is None:
            self._nearest_now = self.worlds.nearest(self.names, out=self._nearest)
        return self._nearest_now

    def metric(self, name):
        """Each world's figure ``name`` (``explore.explored``), (K,); NaN where none yet."""
        return self.worlds.metric(name)

    def observe(self):
        """Observations (K, N, obs) of the current state."""
        return self.obs.copy()

    # The environment.

    def _seeds(self, seed):
        return world_seeds(self, seed)

    def reset(self, seed=None, mask=None):
        """Starts the worlds where ``mask`` (K,) is true (None: all) over and returns every
        world's observations (K, N, obs). ``seed``: an int (world k gets seed + k), one a world
        (K,), or None (each world its seed + ``seed_stride``; at the first reset, as built)."""
        mask = world_mask(self, mask)
        if mask is not None and not mask.any():
            return self.observe()
        seeds = self._seeds(seed)
        self._started = True
        self.worlds.reset(mask, seeds=seeds)
        self.worlds.step(self.steps_per_action, mask=mask)
        if mask is None:
            self.cycles[:] = 0
        else:
            self.cycles[mask] = 0
        self._look()
        if hasattr(self.reward_fn, "reset"):
            self.reward_fn.reset(self, mask)
        return self.observe()

    def step(self, actions, mask=None):
        """Every world's agents act (``actions`` (K, N, act), clipped to the drivers' limits)
        for ``steps_per_action`` steps (only the worlds where ``mask`` is true, when given).
        Returns observations (K, N, obs), rewards (K, N), terminations and truncations (K, N)
        and infos (``{"cycles": (K,)}``)."""
        actions = np.asarray(actions, dtype=np.float64)
        shape = (self.num_worlds, self.num_agents) + self.action_space.shape
        if actions.shape != shape:
            actions = actions.reshape(shape)
        # One pass a world on the workers: the commands, the steps, the observations and (when
        # the reward reads them) the distances, while each world is in the caches.
        _, near, reward = self.worlds.act(
            self.names,
            np.clip(actions, -self._high, self._high),
            self.steps_per_action,
            mask=mask,
            sensor=self.sensor,
            width=self._width,
            nearest=self._reads_nearest or self._batch_reward is not None,
            reward=self._batch_reward,
            out=self._obs,
            nearest_out=self._nearest,
        )
        if mask is None:
            self.cycles += 1
        else:
            self.cycles[mask] += 1
        self.obs = self._obs
        self._states_now = self._readings_now = None
        self._nearest_now = near
        obs = self.observe()
        if reward is None:
            reward = np.asarray(self.reward_fn(self), dtype=np.float64)
            reward = np.broadcast_to(
                reward.reshape(reward.shape + (1,) * (2 - reward.ndim)), (self.num_worlds, self.num_agents)
            ).copy()
        truncated = np.repeat((self.cycles >= self.max_cycles)[:, None], self.num_agents, axis=1)
        terminated = np.zeros_like(truncated)
        return obs, reward, terminated, truncated, {"cycles": self.cycles.copy()}

    def close(self):
        self.worlds.close()

    def __reduce__(self):
        # Worlds live in this process: a copy is a new batch made the same way (the shipped
        # tasks say how), not a copy of the worlds' state.
        recipe = getattr(self, "_recipe", None)
        if recipe is None:
            raise TypeError("this SwarmBatch was not made by a task function (ssx.envs.dispersal, ...) and cannot be copied")
        return (_remake, recipe)


def world_mask(batch, mask):
    """A reset's mask as a (K,) bool array (None: all worlds); refused at another shape."""
    if mask is None:
        return None
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (batch.num_worlds,):
        raise ValueError(f"mask has shape {mask.shape}; one a world is ({batch.num_worlds},)")
    return mask


def world_seeds(batch, seed):
    """The seeds a reset gives a batch's worlds (None: keep them): an int gives world k seed + k,
    an array one a world; None after the first reset moves each world on by ``seed_stride``."""
    k = batch.num_worlds
    if seed is None:
        if not batch._started:
            return None
        return batch.worlds.seeds + np.uint64(batch.seed_stride)
    if np.ndim(seed) == 0:
        return (np.uint64(int(seed)) + np.arange(k, dtype=np.uint64)).astype(np.uint64)
    seeds = np.asarray(seed, dtype=np.uint64)
    if seeds.shape != (k,):
        raise ValueError(f"seed has shape {seeds.shape}; one a world is ({k},)")
    return seeds


def _remake(make, kwargs):
    return make(**kwargs)
