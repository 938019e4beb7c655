"""Learning environments on ssx worlds in this process (or, for one world, a running daemon).

- ``ssx.envs.single``: one world, PettingZoo ``ParallelSwarmEnv`` and Gymnasium ``RobotEnv``.
- ``ssx.envs.batch``: ``SwarmBatch``, K worlds of N robots with arrays over the batch (VMAS's
  way).
- ``ssx.envs.vector``: a Gymnasium ``VectorEnv`` on a batch (``gymnasium.make_vec
  ("ssx/Dispersal-v0", num_envs=...)``), every autoreset mode.
- ``ssx.envs.sb3``: a Stable-Baselines3 ``VecEnv`` on a batch (needs ``ssx[learn]``).
- ``ssx.envs.torchrl``: a TorchRL ``EnvBase`` on a batch, the robots as one agent group (needs
  ``ssx[learn]``).
- ``ssx.envs.tasks``: the shipped tasks, dispersal and exploration, one world or ``worlds=K``.
- ``ssx.envs.vmas``: VMAS's tasks under their names (``navigation``) on the planar engine, as a
  ``TaskBatch`` (``ssx.envs.taskbatch``) whose observations and rewards are computed in Rust;
  ``ssx.envs.benchmarl``: their BenchMARL ``TaskClass`` (``SsxTask.NAVIGATION.get_task()``).

See docs/python.md.
"""

from .batch import SwarmBatch
from .single import ParallelSwarmEnv, RobotEnv, nearest, observation, yaw
from .tasks import (
    ExplorationReward,
    dispersal,
    dispersal_reward,
    dispersal_scene,
    exploration,
    exploration_scene,
)
from .taskbatch import TaskBatch
from .taskparallel import TaskParallelEnv
from .vector import SwarmVectorEnv, register
from .vmas import (
    balance,
    balance_scene,
    discovery,
    discovery_scene,
    dispersion,
    dispersion_scene,
    flocking,
    flocking_scene,
    give_way,
    give_way_scene,
    navigation,
    navigation_scene,
    passage,
    passage_scene,
    sampling,
    sampling_scene,
    transport,
    transport_scene,
    wheel,
    wheel_scene,
)

register()

__all__ = [
    "ExplorationReward",
    "ParallelSwarmEnv",
    "RobotEnv",
    "SwarmBatch",
    "SwarmVectorEnv",
    "TaskBatch",
    "TaskParallelEnv",
    "balance",
    "balance_scene",
    "dispersal",
    "dispersal_reward",
    "dispersal_scene",
    "discovery",
    "discovery_scene",
    "dispersion",
    "dispersion_scene",
    "exploration",
    "exploration_scene",
    "flocking",
    "flocking_scene",
    "give_way",
    "give_way_scene",
    "navigation",
    "navigation_scene",
    "nearest",
    "passage",
    "passage_scene",
    "sampling",
    "sampling_scene",
    "transport",
    "transport_scene",
    "wheel",
    "wheel_scene",
    "observation",
    "register",
    "yaw",
]
