"""ssx's VMAS tasks for BenchMARL, unmodified: ``SsxTask.NAVIGATION.get_task()`` is a BenchMARL
``TaskClass``, so that ``benchmarl.experiment.Experiment(task=SsxTask.NAVIGATION.get_task(),
algorithm_config=MappoConfig.get_from_yaml(), ...)`` trains MAPPO (or IPPO, MASAC, QMIX with
discrete actions, ...) on ssx's batched worlds from a ``pip install benchmarl``.

``get_task(config=None)`` takes BenchMARL's own task configuration for VMAS's task of the same
name (``benchmarl/conf/task/vmas/<task>.yaml``: ``max_steps``, ``n_agents`` and the scenario's
keywords); without one, those files' values, copied below. Specs are unbatched as BenchMARL
expects; ``log_info`` gives the task's metrics at the end of each episode; the env is
``ssx.envs.torchrl.SwarmTorchRLEnv`` on a ``TaskBatch``. Needs ``benchmarl`` (``pip install
benchmarl``), never needed by the package itself.
"""

from __future__ import annotations

import copy

try:
    from benchmarl.environments.common import Task, TaskClass
except ImportError as e:  # pragma: no cover
    raise ImportError("ssx.envs.benchmarl needs BenchMARL: pip install benchmarl") from e

from . import vmas

# BenchMARL 1.5's benchmarl/conf/task/vmas/<task>.yaml.
BENCHMARL_CONFIGS = {
    "navigation": {
        "max_steps": 100,
        "n_agents": 3,
        "collisions": True,
        "agents_with_same_goal": 1,
        "split_goals": False,
        "observe_all_goals": False,
        "shared_rew": False,
        "lidar_range": 0.35,
        "agent_radius": 0.1,
    },
    "dispersion": {"max_steps": 100, "n_agents": 4, "n_food": 4, "share_reward": True, "food_radius": 0.02, "penalise_by_time": False},
    "wheel": {"max_steps": 100, "n_agents": 4, "line_length": 1, "line_mass": 30, "desired_velocity": 0.05},
    "sampling": {
        "max_steps": 100,
        "n_agents": 3,
        "shared_rew": False,
        "n_gaussians": 3,
        "lidar_range": 0.2,
        "cov": 0.05,
        "collisions": True,
        "spawn_same_pos": False,
    },
    "give_way": {"max_steps": 100, "mirror_passage": False, "observe_rel_pos": False, "done_on_completion": False, "final_reward": 0.01},
    "balance": {"max_steps": 100, "n_agents": 4, "random_package_pos_on_line": True, "package_mass": 5},
    "transport": {"max_steps": 100, "n_agents": 4, "n_packages": 1, "package_width": 0.15, "package_length": 0.15, "package_mass": 50},
    "passage": {"max_steps": 500, "n_passages": 1, "shared_reward": True},
    "flocking": {"max_steps": 100, "n_agents": 4, "n_obstacles": 5, "collision_reward": -0.1},
    "discovery": {
        "max_steps": 100,
        "n_agents": 5,
        "n_targets": 7,
        "lidar_range": 0.35,
        "covering_range": 0.25,
        "agents_per_target": 2,
        "targets_respawn": True,
        "shared_reward": True,
    },
}

# VMAS's options ssx's tasks do not offer, by task, accepted at the value the task always has.
FIXED = {"navigation": {"collisions": True, "agents_with_same_goal": 1, "split_goals": False}}


class SsxTaskClass(TaskClass):
    """A BenchMARL ``TaskClass`` for one of ssx's VMAS tasks (see the module's docs)."""

    def _options(self):
        config = copy.deepcopy(self.config)
        name = self.name.lower()
        steps = config.pop("max_steps", BENCHMARL_CONFIGS[name]["max_steps"])
        # Without n_agents (give_way's yaml has none), VMAS's own default.
        agents = config.pop("n_agents", vmas.DEFAULT_AGENTS[name])
        for key, value in FIXED.get(name, {}).items():
            if key in config and config.pop(key) != value:
                raise ValueError(f"{name}: ssx's task has {key}={value} only")
        return steps, agents, config

    def get_env_fun(self, num_envs, continuous_actions, seed, device):
        from .torchrl import SwarmTorchRLEnv

        steps, agents, options = self._options()
        make = vmas.TASKS[self.name.lower()]
        actions = "continuous" if continuous_actions else "discrete"

        def env():
            batch = make(agents=agents, worlds=num_envs, seed=seed or 0, max_steps=steps, actions=actions, **options)
            return SwarmTorchRLEnv(batch, device=str(device))

        return env

    def supports_continuous_actions(self):
        return True

    def supports_discrete_actions(self):
        return True

    def has_render(self, env):
        return False

    def max_steps(self, env):
        return self._options()[0]

    def group_map(self, env):
        return {"agents": list(env.batch.names)}

    def observation_spec(self, env):
        spec = env.full_observation_spec_unbatched.clone()
        del spec[("agents", "info")]
        del spec["state"]
        return spec

    def info_spec(self, env):
        spec = env.full_observation_spec_unbatched.clone()
        del spec[("agents", "observation")]
        del spec["state"]
        return spec

    def state_spec(self, env):
        spec = env.full_observation_spec_unbatched.clone()
        del spec["agents"]
        return spec

    def action_spec(self, env):
        return env.full_action_spec_unbatched

    def action_mask_spec(self, env):
        return None

    @staticmethod
    def env_name():
        return "ssx"

    @staticmethod
    def log_info(batch):
        """Each metric's mean over the episodes that ended in the collected batch."""
        done = batch.get(("next", "done"))
        info = batch.get(("next", "agents", "info"), None)
        if info is None or not done.any():
            return {}
        ended = done.squeeze(-1)
        return {f"ssx/{name}": float(v[..., 0][ended].float().mean()) for name, v in info.items()}


class SsxTask(Task):
    """ssx's VMAS tasks (one member a task, named as BenchMARL's ``VmasTask``)."""

    NAVIGATION = None
    TRANSPORT = None
    DISPERSION = None
    WHEEL = None
    BALANCE = None
    SAMPLING = None
    GIVE_WAY = None
    PASSAGE = None
    FLOCKING = None
    DISCOVERY = None

    @staticmethod
    def associated_class():
        return SsxTaskClass

    def get_task(self, config=None):
        if config is None:
            config = copy.deepcopy(BENCHMARL_CONFIGS[self.name.lower()])
        return self.associated_class()(name=self.name, config=config)
