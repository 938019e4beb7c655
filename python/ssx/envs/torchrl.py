"""A TorchRL ``EnvBase`` on a ``SwarmBatch``: ``batch_size=(K,)`` and the robots as one agent
group, the layout TorchRL's multi-agent tools and BenchMARL use (as VMAS's TorchRL wrapper does):

- ``("agents", "observation")`` (K, N, obs), ``("agents", "action")`` (K, N, act),
  ``("agents", "reward")`` (K, N, 1);
- ``("agents", "done" | "terminated" | "truncated")`` (K, N, 1) and the world's own
  ``"done" | "terminated" | "truncated"`` (K, 1);
- a reset with ``"_reset"`` (K, 1) starts those worlds over and leaves the others as they are;
- for a ``TaskBatch`` (VMAS's tasks, ``ssx.envs.vmas``): ``"state"`` (K, S) for central critics,
  the task's metrics in ``("agents", "info", name)`` (K, N) (each world's figure for each of its
  agents), and discrete actions as ``Categorical(9)`` (K, N) when the batch's are.

Tensors are float32 (observations, rewards, actions) on the CPU. Needs ``torchrl`` (``pip
install torchrl``), never needed by the package itself.
"""

from __future__ import annotations

import numpy as np

try:
    import torch
    from tensordict import TensorDict
    from torchrl.data import Bounded, Categorical, Composite, Unbounded
    from torchrl.envs import EnvBase
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs.torchrl needs torchrl: pip install torchrl") from e


class SwarmTorchRLEnv(EnvBase):
    """See the module docs. ``batch``: a ``SwarmBatch``."""

    def __init__(self, batch, device="cpu"):
        k, n = batch.num_worlds, batch.num_agents
        super().__init__(device=device, batch_size=torch.Size([k]))
        self.batch = batch
        self.num_worlds, self.num_agents = k, n
        obs = batch.observation_space.shape[0]
        self._metrics = list(getattr(batch, "metric_names", []))
        self._has_state = hasattr(batch, "state_space")
        agents = {"observation": Unbounded(shape=(k, n, obs), dtype=torch.float32, device=device)}
        if self._metrics:
            agents["info"] = Composite(
                {m: Unbounded(shape=(k, n), dtype=torch.float32, device=device) for m in self._metrics},
                shape=(k, n),
            )
        spec = {"agents": Composite(agents, shape=(k, n))}
        if self._has_state:
            spec["state"] = Unbounded(shape=(k, batch.state_space.shape[0]), dtype=torch.float32, device=device)
        self.observation_spec = Composite(spec, shape=(k,))
        self._discrete = not hasattr(batch.action_space, "high")
        if self._discrete:
            action = Categorical(int(batch.action_space.n), shape=(k, n), dtype=torch.int64, device=device)
        else:
            act = batch.action_space.shape[0]
            high = torch.as_tensor(batch.action_space.high, dtype=torch.float32)
            action = Bounded(
                low=-high.expand(k, n, act), high=high.expand(k, n, act), shape=(k, n, act),
                dtype=torch.float32, device=device,
            )
        self.action_spec = Composite(agents=Composite(action=action, shape=(k, n)), shape=(k,))
        self.reward_spec = Composite(
            agents=Composite(reward=Unbounded(shape=(k, n, 1), dtype=torch.float32, device=device), shape=(k, n)),
            shape=(k,),
        )
        flag = lambda *shape: Categorical(2, shape=shape, dtype=torch.bool, device=device)  # noqa: E731
        self.done_spec = Composite(
            done=flag(k, 1),
            terminated=flag(k, 1),
            truncated=flag(k, 1),
            agents=Composite(done=flag(k, n, 1), terminated=flag(k, n, 1), truncated=flag(k, n, 1), shape=(k, n)),
            shape=(k,),
        )
        self._seed = None
        self._obs = None

    def _flags(self, term, trunc):
        term = torch.as_tensor(term, device=self.device).unsqueeze(-1)
        trunc = torch.as_tensor(trunc, device=self.device).unsqueeze(-1)
        done = term | trunc
        return {
            "done": done.any(1),
            "terminated": term.any(1),
            "truncated": trunc.any(1),
            "agents": {"done": done, "terminated": term, "truncated": trunc},
        }

    def _reset(self, tensordict=None, **kwargs):
        mask = None
        if tensordict is not None and "_reset" in tensordict.keys():
            mask = tensordict.get("_reset").reshape(self.num_worlds).cpu().numpy()
            if mask.all():
                mask = None
        seed, self._seed = self._seed, None
        if mask is not None and not mask.any():
            obs = self.batch.observe()
        else:
            obs = self.batch.reset(seed=seed, mask=mask)
        self._obs = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        zeros = np.zeros((self.num_worlds, self.num_agents), dtype=bool)
        return self._out({"observation": self._obs.clone()}, zeros, zeros)

    def _out(self, agents, term, trunc):
        """The tensordict of a reset or a step: the agents' entries (K, N, ...) in a group of
        batch size (K, N), the worlds' flags, and the state, beside it."""
        k, n = self.num_worlds, self.num_agents
        flags = self._flags(term, trunc)
        agents.update(flags.pop("agents"))
        if self._metrics:
            agents["info"] = TensorDict(
                {
                    m: torch.as_tensor(self.batch.metric(m), dtype=torch.float32, device=self.device)
                    .unsqueeze(-1)
                    .expand(k, n)
                    .clone()
                    for m in self._metrics
                },
                batch_size=(k, n),
                device=self.device,
            )
        if self._has_state:
            flags["state"] = torch.as_tensor(self.batch.state(), dtype=torch.float32, device=self.device)
        group = TensorDict(agents, batch_size=(k, n), device=self.device)
        return TensorDict({"agents": group, **flags}, batch_size=self.batch_size, device=self.device)

    def _step(self, tensordict):
        action = tensordict.get(("agents", "action")).detach().cpu().numpy()
        if not self._discrete:
            action = action.astype(np.float64)
        obs, reward, term, trunc, _ = self.batch.step(action)
        agents = {
            "observation": torch.as_tensor(obs, dtype=torch.float32, device=self.device),
            "reward": torch.as_tensor(reward, dtype=torch.float32, device=self.device).unsqueeze(-1),
        }
        return self._out(agents, term, trunc)

    def _set_seed(self, seed):
        # The next reset seeds world k with seed + k.
        self._seed = None if seed is None else int(seed)
        return seed

    def __reduce__(self):
        return (SwarmTorchRLEnv, (self.batch, str(self.device)))
