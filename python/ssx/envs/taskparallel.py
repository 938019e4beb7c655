"""One world of a VMAS task as PettingZoo's ``ParallelEnv``: ``TaskParallelEnv(envs.navigation())``.

Agents are the task's (``agent_0``, ...), each with the batch's observation and action spaces;
``reset`` and ``step`` give dictionaries by agent, as PettingZoo's parallel API has them; the
episode ends for every agent at once (the task's end or its ``max_steps``), after which
``agents`` is empty until the next ``reset``. ``state()`` is the world's state for a central
critic. The world is the batch's single world, stepped by the same Rust pass, so a policy sees
the same numbers here as in the batch.
"""

from __future__ import annotations

import numpy as np
from pettingzoo import ParallelEnv


class TaskParallelEnv(ParallelEnv):
    """PettingZoo's parallel API on a ``TaskBatch`` of one world (see the module's docs)."""

    def __init__(self, batch):
        if batch.num_worlds != 1:
            raise ValueError(f"TaskParallelEnv takes a batch of one world, got {batch.num_worlds} (leave out worlds=)")
        self.batch = batch
        self.possible_agents = list(batch.names)
        self.agents = []
        self.metadata = {"name": f"ssx_{batch.task.name}_v0", "render_modes": [], "is_parallelizable": True}
        self.render_mode = None
        self.state_space = batch.state_space

    def observation_space(self, agent):
        return self.batch.observation_space

    def action_space(self, agent):
        return self.batch.action_space

    def _by_agent(self, rows):
        return {a: rows[i] for i, a in enumerate(self.possible_agents)}

    def reset(self, seed=None, options=None):
        obs = self.batch.reset(seed=seed)[0]
        self.agents = list(self.possible_agents)
        return self._by_agent(obs), {a: {} for a in self.agents}

    def step(self, actions):
        if not self.agents:
            raise RuntimeError("the episode is over: call reset() first")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise KeyError(f"no action for {', '.join(missing)}")
        act = np.stack([np.asarray(actions[a]) for a in self.possible_agents])[None]
        obs, rewards, terminated, truncated, info = self.batch.step(act)
        metrics = {k: v[0].item() for k, v in info.items()}
        out = (
            self._by_agent(obs[0]),
            {a: float(r) for a, r in zip(self.possible_agents, rewards[0])},
            {a: bool(t) for a, t in zip(self.possible_agents, terminated[0])},
            {a: bool(t) for a, t in zip(self.possible_agents, truncated[0])},
            {a: dict(metrics) for a in self.possible_agents},
        )
        if terminated[0].any() or truncated[0].any():
            self.agents = []
        return out

    def state(self):
        return self.batch.state()[0]

    def render(self):
        return None

    def close(self):
        self.batch.close()
