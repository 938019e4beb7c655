"""ssx.envs: the API checkers of PettingZoo and Gymnasium, and repeatable episodes."""

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test

import ssx
from ssx import envs


def test_dispersal_passes_pettingzoos_parallel_api_test():
    env = envs.dispersal(agents=10, max_cycles=30, workers=2)
    parallel_api_test(env, num_cycles=40)


def test_exploration_passes_pettingzoos_parallel_api_test():
    env = envs.exploration(agents=4, max_cycles=20, workers=2)
    parallel_api_test(env, num_cycles=25)


def test_one_robot_passes_gymnasiums_check_env(tmp_path):
    sim = ssx.Sim(envs.dispersal_scene(agents=4, directory=str(tmp_path)), workers=1)
    env = envs.RobotEnv(sim, agent="robot_0", reward=envs.dispersal_reward, max_cycles=50)
    check_env(env, skip_render_check=True)


def run(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    out = [np.stack([obs[a] for a in env.possible_agents])]
    rewards = []
    for act in actions:
        obs, rew, _, _, _ = env.step({a: act[i] for i, a in enumerate(env.possible_agents)})
        out.append(np.stack([obs[a] for a in env.possible_agents]))
        rewards.append([rew[a] for a in env.possible_agents])
    return np.stack(out), np.array(rewards)


@pytest.mark.parametrize("engine", ["kinematic", "rapier"])
def test_the_same_seed_and_actions_give_the_same_episode_bit_for_bit(engine):
    rng = np.random.default_rng(0)
    a = envs.dispersal(agents=16, engine=engine, workers=2)
    b = envs.dispersal(agents=16, engine=engine, workers=1)
    high = a.action_space("robot_0").high
    actions = rng.uniform(-high, high, size=(30, 16, 2))
    oa, ra = run(a, 5, actions)
    ob, rb = run(b, 5, actions)
    assert np.array_equal(oa.view(np.uint64), ob.view(np.uint64))
    assert np.array_equal(ra.view(np.uint64), rb.view(np.uint64))
    # And again on the same env, after a reset.
    oa2, _ = run(a, 5, actions)
    assert np.array_equal(oa.view(np.uint64), oa2.view(np.uint64))
    # The robots moved.
    assert not np.array_equal(oa[0], oa[-1])


def test_exploration_rewards_newly_explored_cells():
    env = envs.exploration(agents=4, max_cycles=60, workers=1)
    obs, _ = env.reset(seed=11)
    start = env.sim.metrics().get("explore.explored", 0.0)
    total = 0.0
    for _ in range(60):
        acts = {a: np.array([0.5, 0.8]) for a in env.agents}
        obs, rew, term, trunc, _ = env.step(acts)
        total += rew["explorer_0"]
        assert len(set(rew.values())) == 1, "one team reward"
    explored = env.sim.metrics()["explore.explored"]
    assert explored > start
    assert total == pytest.approx(1000.0 * (explored - start), rel=1e-9)
    assert all(trunc.values()) and env.agents == []
