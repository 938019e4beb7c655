"""A Gymnasium 1.x ``VectorEnv`` on a ``SwarmBatch``, for parameter sharing: one policy for
every robot, so the vector's sub-environments are the K·N robots (world-major: robot j of world k
is sub-environment k·N + j).

All three of Gymnasium's autoreset modes (``metadata["autoreset_mode"]``, an ``AutoresetMode``):

- ``NEXT_STEP`` (the default): the step after a world's episode ended starts it over (its
  actions are ignored; reward 0, not terminated, not truncated) and returns its first
  observation;
- ``SAME_STEP``: a world whose episode ends is started over in the same step; the observation
  returned is the new episode's first, the last one is in ``infos["final_obs"]`` (an object
  array, None elsewhere) with ``infos["final_info"]``, each with its ``_key`` mask;
- ``DISABLED``: nothing starts over by itself: ``reset(options={"reset_mask": mask})`` with a
  (K·N,) bool mask (whole worlds: all of a world's robots or none).

A world's episode ends for all its robots at once. The same actions give the same arrays as
Gymnasium's ``SyncVectorEnv`` over single-world envs (``ssx.envs.single.RobotEnv``, one robot a
world, ``seed_stride=K``), which is how the tests check it.
"""

from __future__ import annotations

import numpy as np

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs needs gymnasium and pettingzoo: pip install 'ssx[envs]'") from e


class SwarmVectorEnv(VectorEnv):
    """See the module docs. ``batch``: a ``SwarmBatch``."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, batch, autoreset_mode=AutoresetMode.NEXT_STEP):
        if isinstance(autoreset_mode, str):
            autoreset_mode = AutoresetMode(autoreset_mode)
        if not isinstance(autoreset_mode, AutoresetMode):
            raise TypeError(f"autoreset_mode must be a gymnasium.vector.AutoresetMode, got {autoreset_mode!r}")
        self.batch = batch
        self.num_worlds = batch.num_worlds
        self.agents_per_world = batch.num_agents
        self.num_envs = self.num_worlds * self.agents_per_world
        self.single_observation_space = batch.observation_space
        self.single_action_space = batch.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = dict(type(self).metadata, autoreset_mode=autoreset_mode)
        self.autoreset_mode = autoreset_mode
        self.render_mode = None
        self.closed = False
        self._autoreset = np.zeros(self.num_worlds, dtype=bool)

    def _world_mask(self, mask):
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] must be a bool numpy array of shape ({self.num_envs},)")
        per_world = mask.reshape(self.num_worlds, self.agents_per_world)
        whole = per_world.all(axis=1)
        if (per_world.any(axis=1) != whole).any():
            k = int(np.flatnonzero(per_world.any(axis=1) != whole)[0])
            raise ValueError(
                f"options['reset_mask'] names some robots of world {k} and not others: a world starts over whole"
            )
        if not whole.any():
            raise ValueError("options['reset_mask'] must name at least one world")
        return whole

    def _world_seeds(self, seed):
        """A world's seed is its first robot's sub-environment's: Gymnasium's int seed gives
        sub-environment i seed + i, so world k gets seed + k·N."""
        if seed is None:
            return None
        n = self.agents_per_world
        if np.ndim(seed) == 0:
            return np.uint64(int(seed)) + np.arange(self.num_worlds, dtype=np.uint64) * np.uint64(n)
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed has {len(seeds)} values; num_envs is {self.num_envs}")
        # A world takes its first robot's seed.
        first = seeds[:: self.agents_per_world]
        if any(s is None for s in first):
            raise ValueError("a list of seeds needs a seed for each world's first robot")
        return np.asarray(first, dtype=np.uint64)

    def _flat(self, a):
        return a.reshape((self.num_envs,) + a.shape[2:])

    def reset(self, *, seed=None, options=None):
        mask = None
        if options is not None and "reset_mask" in options:
            mask = self._world_mask(options["reset_mask"])
        obs = self.batch.reset(seed=self._world_seeds(seed), mask=mask)
        if mask is None:
            self._autoreset[:] = False
        else:
            self._autoreset[mask] = False
        return self._flat(obs), {}

    def step(self, actions):
        b = self.batch
        actions = np.asarray(actions, dtype=np.float64).reshape(
            (self.num_worlds, self.agents_per_world) + self.single_action_space.shape
        )
        infos = {}
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and self._autoreset.any():
            restart = self._autoreset.copy()
            # The others act first, then the ended worlds start over (their actions are
            # ignored: a reset drops what a world's bus holds).
            obs, reward, term, trunc, _ = b.step(actions, mask=~restart)
            b.reset(seed=None, mask=restart)
            obs = b.observe()
            reward[restart] = 0.0
            term[restart] = False
            trunc[restart] = False
        else:
            if self.autoreset_mode == AutoresetMode.DISABLED and self._autoreset.any():
                k = int(np.flatnonzero(self._autoreset)[0])
                raise RuntimeError(
                    f"world {k}'s episode ended: reset it (options={{'reset_mask': ...}}) before stepping (autoreset is DISABLED)"
                )
            obs, reward, term, trunc, _ = b.step(actions)
        done = (term | trunc).any(axis=1)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and done.any():
            final = np.full(self.num_envs, None, dtype=object)
            flat_obs = self._flat(obs)
            rows = np.repeat(done, self.agents_per_world)
            for i in np.flatnonzero(rows):
                final[i] = flat_obs[i].copy()
            b.reset(seed=None, mask=done)
            obs = b.observe()
            infos = {"final_obs": final, "_final_obs": rows, "final_info": {}, "_final_info": rows.copy()}
        else:
            self._autoreset = done
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            self._autoreset[:] = False
        return self._flat(obs), self._flat(reward), self._flat(term), self._flat(trunc), infos

    def close_extras(self, **kwargs):
        self.batch.close()

    def __reduce__(self):
        return (SwarmVectorEnv, (self.batch, self.autoreset_mode))


def make_vec(num_envs=None, worlds=None, agents=4, task="dispersal", autoreset_mode=AutoresetMode.NEXT_STEP, **kwargs):
    """``gymnasium.make_vec("ssx/Dispersal-v0", num_envs=...)``'s entry point: ``num_envs``
    robots in all (``agents`` a world, so num_envs / agents worlds), or ``worlds`` worlds."""
    from . import tasks, vmas

    if worlds is None:
        if num_envs is None or num_envs % agents:
            raise ValueError(f"num_envs ({num_envs}) must be a multiple of agents ({agents})")
        worlds = num_envs // agents
    make = {"dispersal": tasks.dispersal, "exploration": tasks.exploration, **vmas.TASKS}[task]
    return SwarmVectorEnv(make(agents=agents, worlds=worlds, **kwargs), autoreset_mode=autoreset_mode)


def register():
    """Registers ``ssx/Dispersal-v0``, ``ssx/Exploration-v0`` and VMAS's tasks
    (``ssx/Navigation-v0``, ..., ``ssx/GiveWay-v0``) with Gymnasium (vector entry points:
    ``gymnasium.make_vec(id, num_envs=...)``), each with its default agents."""
    from .vmas import DEFAULT_AGENTS

    shipped = [("ssx/Dispersal-v0", "dispersal", 4), ("ssx/Exploration-v0", "exploration", 10)]
    camel = lambda t: "".join(part.capitalize() for part in t.split("_"))  # noqa: E731
    shipped += [(f"ssx/{camel(t)}-v0", t, n) for t, n in DEFAULT_AGENTS.items()]
    for name, task, agents in shipped:
        if name in gymnasium.registry:
            continue
        gymnasium.register(
            id=name,
            vector_entry_point=lambda num_envs, _task=task, _agents=agents, **kw: make_vec(
                num_envs=num_envs, task=_task, agents=kw.pop("agents", _agents), **kw
            ),
        )
