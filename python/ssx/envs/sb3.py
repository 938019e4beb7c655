"""A Stable-Baselines3 ``VecEnv`` on a ``SwarmBatch`` (SB3 has a vector base class of its own
and does not take Gymnasium's vector envs), for parameter sharing: the K·N robots are the
sub-environments, world-major.

SB3's contract: ``step_wait`` returns observations, rewards, dones and a list of info dicts, and
a world whose episode ended is started over in the same step: the observation returned is the
new episode's first, the last one is ``infos[i]["terminal_observation"]``, and
``infos[i]["TimeLimit.truncated"]`` says the episode was cut by its time limit (not ended by the
task), so that PPO bootstraps its value. Needs ``stable-baselines3`` (``pip install
'ssx[learn]'``).
"""

from __future__ import annotations

import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs.sb3 needs stable-baselines3: pip install 'ssx[learn]'") from e


class SwarmVecEnv(VecEnv):
    """See the module docs. ``batch``: a ``SwarmBatch``."""

    def __init__(self, batch):
        self.batch = batch
        self.num_worlds = batch.num_worlds
        self.agents_per_world = batch.num_agents
        super().__init__(self.num_worlds * self.agents_per_world, batch.observation_space, batch.action_space)
        self._actions = None

    def _flat(self, a):
        return a.reshape((self.num_envs,) + a.shape[2:])

    def reset(self):
        # SB3's seed(s) sets the seeds of the next reset: a world takes its first robot's.
        seeds = self._seeds[:: self.agents_per_world] if self._seeds else [None]
        seed = None if seeds[0] is None else np.asarray(seeds, dtype=np.uint64)
        obs = self.batch.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return self._flat(obs)

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        b = self.batch
        obs, reward, term, trunc, _ = b.step(self._actions)
        done_world = (term | trunc).any(axis=1)
        dones = self._flat(term | trunc)
        infos = [{} for _ in range(self.num_envs)]
        if done_world.any():
            flat_obs = self._flat(obs)
            cut = self._flat(trunc & ~term)
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = flat_obs[i].copy()
                infos[i]["TimeLimit.truncated"] = bool(cut[i])
            obs = b.reset(seed=None, mask=done_world)
        return self._flat(obs), self._flat(reward).astype(np.float32), dones, infos

    def close(self):
        self.batch.close()

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices

    def get_attr(self, attr_name, indices=None):
        return [getattr(self.batch, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None):
        setattr(self.batch, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        # One batch serves every sub-environment: the method runs once, its result repeated.
        result = getattr(self.batch, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]
