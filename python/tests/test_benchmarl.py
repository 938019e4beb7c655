"""BenchMARL, unmodified, on two of ssx's tasks: its own Experiment runs MAPPO (continuous actions)
on SsxTask.NAVIGATION.get_task() and QMIX (discrete) on SsxTask.BALANCE.get_task(), writes its
marl-eval JSON, and logs the task's metrics through log_info. A smoke: two short iterations each (the learning curves are
docs/learning.md's, from python/bench/vs_vmas.py). Every other task's env is built from BenchMARL's
config and checked by TorchRL's check_env_specs."""

import glob
import json

import pytest

pytest.importorskip("benchmarl")

from benchmarl.algorithms import MappoConfig, QmixConfig  # noqa: E402
from benchmarl.experiment import Experiment, ExperimentConfig  # noqa: E402
from benchmarl.models.mlp import MlpConfig  # noqa: E402

from ssx.envs.benchmarl import BENCHMARL_CONFIGS, SsxTask  # noqa: E402


def experiment(algorithm, folder, continuous, task=SsxTask.NAVIGATION):
    cfg = ExperimentConfig.get_from_yaml()
    cfg.max_n_iters = 2
    cfg.on_policy_collected_frames_per_batch = 1200
    cfg.on_policy_n_envs_per_worker = 12
    cfg.off_policy_collected_frames_per_batch = 1200
    cfg.off_policy_n_envs_per_worker = 12
    cfg.off_policy_init_random_frames = 0
    cfg.evaluation_interval = 1200
    cfg.evaluation_episodes = 2
    cfg.loggers = ["csv"]
    cfg.create_json = True
    cfg.save_folder = str(folder)
    cfg.checkpoint_interval = 0
    cfg.prefer_continuous_actions = continuous
    return Experiment(
        task=task.get_task(),
        algorithm_config=algorithm.get_from_yaml(),
        model_config=MlpConfig.get_from_yaml(),
        critic_model_config=MlpConfig.get_from_yaml(),
        seed=0,
        config=cfg,
    )


@pytest.mark.parametrize(
    "algorithm,continuous,task,metric",
    [(MappoConfig, True, SsxTask.NAVIGATION, "distance"), (QmixConfig, False, SsxTask.BALANCE, "fell")],
)
def test_an_experiment_runs_and_writes_marl_eval_json(tmp_path, algorithm, continuous, task, metric):
    exp = experiment(algorithm, tmp_path, continuous, task)
    name = task.name.lower()
    # BenchMARL's configs: navigation 3 agents, balance 4; 100 steps an episode.
    config = BENCHMARL_CONFIGS[name]
    assert exp.task.max_steps(exp.test_env) == config["max_steps"]
    assert exp.task.group_map(exp.test_env) == {"agents": [f"agent_{i}" for i in range(config["n_agents"])]}
    exp.run()
    (path,) = glob.glob(str(tmp_path / "*" / "*.json"))
    with open(path) as f:
        data = json.load(f)
    (env,) = data.keys()
    run = data[env][name]
    (algo,) = run.keys()
    steps = run[algo]["seed_0"]
    evaluated = [k for k in steps if k.startswith("step_")]
    assert evaluated and all("return" in steps[k] for k in evaluated)
    # The task's metrics, through log_info, beside BenchMARL's own figures.
    assert glob.glob(str(tmp_path / "*" / "*" / "scalars" / f"ssx_{metric}.csv"))


def test_options_ssx_does_not_offer_are_refused():
    task = SsxTask.NAVIGATION.get_task(config=dict(BENCHMARL_CONFIGS["navigation"], split_goals=True))
    with pytest.raises(ValueError, match="navigation: ssx's task has split_goals=False only"):
        task.get_env_fun(2, True, 0, "cpu")()


def test_sampling_takes_its_own_collisions_option():
    """``collisions`` is sampling's own option (navigation's is fixed): off, its agents touch
    nothing and have no lidar."""
    config = dict(BENCHMARL_CONFIGS["sampling"], collisions=False, spawn_same_pos=True)
    env = SsxTask.SAMPLING.get_task(config=config).get_env_fun(2, True, 0, "cpu")()
    assert env.batch.observation_space.shape == (12,)


@pytest.mark.parametrize("task", list(SsxTask), ids=lambda t: t.name)
def test_every_task_builds_from_benchmarls_config_and_passes_torchrls_spec_check(task):
    """Each member's env, from BenchMARL's yaml values, with the agents the yaml (or VMAS) has,
    BenchMARL's episode length, and specs that TorchRL's check_env_specs accepts."""
    from torchrl.envs.utils import check_env_specs

    config = BENCHMARL_CONFIGS[task.name.lower()]
    t = task.get_task()
    env = t.get_env_fun(2, True, 0, "cpu")()
    assert t.max_steps(env) == config["max_steps"]
    assert len(t.group_map(env)["agents"]) == config.get("n_agents", env.batch.num_agents)
    check_env_specs(env)
