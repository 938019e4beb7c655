"""BenchMARL, unmodified, on ssx's navigation: its own Experiment runs MAPPO (continuous actions)
and QMIX (discrete) from SsxTask.NAVIGATION.get_task(), writes its marl-eval JSON, and logs the
task's metrics through log_info. A smoke: two short iterations each (the learning curves are
docs/learning.md's, from python/bench/vs_vmas.py)."""

import glob
import json

import pytest

pytest.importorskip("benchmarl")

from benchmarl.algorithms import MappoConfig, QmixConfig  # noqa: E402
from benchmarl.experiment import Experiment, ExperimentConfig  # noqa: E402
from benchmarl.models.mlp import MlpConfig  # noqa: E402

from ssx.envs.benchmarl import BENCHMARL_CONFIGS, SsxTask  # noqa: E402


def experiment(algorithm, folder, continuous):
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
        task=SsxTask.NAVIGATION.get_task(),
        algorithm_config=algorithm.get_from_yaml(),
        model_config=MlpConfig.get_from_yaml(),
        critic_model_config=MlpConfig.get_from_yaml(),
        seed=0,
        config=cfg,
    )


@pytest.mark.parametrize("algorithm,continuous", [(MappoConfig, True), (QmixConfig, False)])
def test_an_experiment_runs_and_writes_marl_eval_json(tmp_path, algorithm, continuous):
    exp = experiment(algorithm, tmp_path, continuous)
    # BenchMARL's navigation config: 3 agents, 100 steps an episode.
    assert exp.task.max_steps(exp.test_env) == BENCHMARL_CONFIGS["navigation"]["max_steps"]
    assert exp.task.group_map(exp.test_env) == {"agents": ["agent_0", "agent_1", "agent_2"]}
    exp.run()
    (path,) = glob.glob(str(tmp_path / "*" / "*.json"))
    with open(path) as f:
        data = json.load(f)
    (env,) = data.keys()
    run = data[env]["navigation"]
    (algo,) = run.keys()
    steps = run[algo]["seed_0"]
    evaluated = [k for k in steps if k.startswith("step_")]
    assert evaluated and all("return" in steps[k] for k in evaluated)
    # The task's metrics, through log_info, beside BenchMARL's own figures.
    assert glob.glob(str(tmp_path / "*" / "*" / "scalars" / "ssx_distance.csv"))


def test_options_ssx_does_not_offer_are_refused():
    task = SsxTask.NAVIGATION.get_task(config=dict(BENCHMARL_CONFIGS["navigation"], split_goals=True))
    with pytest.raises(ValueError, match="navigation: ssx's task has split_goals=False only"):
        task.get_env_fun(2, True, 0, "cpu")()
