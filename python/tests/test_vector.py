"""The batched environments against their libraries' documented contracts: Gymnasium's
SyncVectorEnv over single-world envs is the reference for each autoreset mode."""

import pickle
import tempfile

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import ssx
from ssx import envs
from ssx.envs.vector import SwarmVectorEnv

K = 3
CYCLES = 4  # a short episode: autoresets within the test


def bits(a):
    return np.ascontiguousarray(a).view(np.uint64)


@pytest.fixture(scope="module")
def one_robot_scene():
    with tempfile.TemporaryDirectory() as d:
        yield envs.dispersal_scene(1, directory=d, seed=5, timestep=0.1)


def native(scene, mode):
    batch = envs.SwarmBatch(
        ssx.Worlds(scene, K, workers=2),
        agents="robot_*",
        reward=envs.dispersal_reward,
        steps_per_action=1,
        max_cycles=CYCLES,
    )
    return SwarmVectorEnv(batch, autoreset_mode=mode)


def reference(scene, mode):
    def make():
        return envs.RobotEnv(
            ssx.Sim(scene, workers=1),
            "robot_0",
            reward=envs.dispersal_reward,
            steps_per_action=1,
            max_cycles=CYCLES,
            seed_stride=K,
        )

    return SyncVectorEnv([make for _ in range(K)], autoreset_mode=mode)


def same(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.array_equal(bits(np.asarray(a, dtype=np.float64)), bits(np.asarray(b, dtype=np.float64)))


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_native_vector_env_equals_sync_vector_env_of_single_envs(one_robot_scene, mode):
    a, b = native(one_robot_scene, mode), reference(one_robot_scene, mode)
    assert a.metadata["autoreset_mode"] is mode
    assert a.single_observation_space == b.single_observation_space
    assert a.single_action_space == b.single_action_space
    oa, _ = a.reset(seed=40)
    ob, _ = b.reset(seed=40)
    same(oa, ob)
    rng = np.random.default_rng(7)
    ends = 0
    for t in range(3 * CYCLES + 2):
        act = rng.uniform(-1, 1, size=(K, 2)) * np.array([0.5, 1.5])
        ra, rb = a.step(act), b.step(act)
        for x, y in zip(ra[:4], rb[:4]):
            same(x, y)
        ia, ib = ra[4], rb[4]
        assert sorted(ia) == sorted(ib), (ia.keys(), ib.keys())
        if "final_obs" in ib:
            assert np.array_equal(ia["_final_obs"], ib["_final_obs"])
            for i in np.flatnonzero(ib["_final_obs"]):
                same(ia["final_obs"][i], ib["final_obs"][i])
            assert np.array_equal(ia["_final_info"], ib["_final_info"])
        done = ra[2] | ra[3]
        ends += int(done.any())
        if mode == AutoresetMode.DISABLED and done.any():
            with pytest.raises(RuntimeError, match="autoreset is DISABLED"):
                a.step(act)
            oa, _ = a.reset(seed=90 + t, options={"reset_mask": done.copy()})
            ob, _ = b.reset(seed=90 + t, options={"reset_mask": done.copy()})
            same(oa, ob)
    assert ends >= 3  # every world's episode ended, and started over, at least three times


def test_make_vec_returns_the_native_env():
    env = gymnasium.make_vec("ssx/Dispersal-v0", num_envs=8, agents=4, timestep=0.1, steps_per_action=1)
    assert isinstance(env, SwarmVectorEnv)
    assert env.num_envs == 8 and env.num_worlds == 2
    assert isinstance(env.metadata["autoreset_mode"], AutoresetMode)
    obs, info = env.reset(seed=1)
    assert obs.shape == (8, 16) and obs.dtype == np.float64 and info == {}
    assert env.observation_space.shape == (8, 16) and env.action_space.shape == (8, 2)
    obs, rew, term, trunc, info = env.step(env.action_space.sample())
    assert rew.shape == term.shape == trunc.shape == (8,)
    assert term.dtype == trunc.dtype == np.bool_
    # Picklable: a copy is the same task made again.
    copy = pickle.loads(pickle.dumps(env))
    assert isinstance(copy, SwarmVectorEnv) and copy.num_envs == 8
    with pytest.raises(ValueError, match="num_envs \\(6\\) must be a multiple of agents \\(4\\)"):
        gymnasium.make_vec("ssx/Dispersal-v0", num_envs=6, agents=4)


def test_a_reset_mask_must_take_whole_worlds():
    env = gymnasium.make_vec("ssx/Dispersal-v0", num_envs=8, agents=4, timestep=0.1, steps_per_action=1,
                             autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=1)
    mask = np.zeros(8, dtype=bool)
    mask[1] = True
    with pytest.raises(ValueError, match="names some robots of world 0 and not others"):
        env.reset(options={"reset_mask": mask})


def test_batch_arrays_and_the_reward_of_one_world():
    batch = envs.dispersal(agents=4, worlds=5, seed=3, timestep=0.1, steps_per_action=1, max_cycles=3)
    single = envs.dispersal(agents=4, seed=5, timestep=0.1, steps_per_action=1, max_cycles=3)
    obs = batch.reset(seed=3)
    o1, _ = single.reset(seed=5)
    assert obs.shape == (5, 4, 16)
    same(obs[2], np.stack([o1[a] for a in single.agents]))
    rng = np.random.default_rng(3)
    for _ in range(3):
        act = rng.uniform(-1, 1, size=(5, 4, 2))
        obs, rew, term, trunc, info = batch.step(act)
        o1, r1, _, t1, _ = single.step({a: act[2, i] for i, a in enumerate(single.agents)})
        same(rew[2], np.array([r1[a] for a in r1]))
        same(obs[2], np.stack([o1[a] for a in o1]))
    assert trunc.all() and not term.any() and trunc.dtype == np.bool_
    assert np.array_equal(info["cycles"], [3] * 5)


def test_sb3_vec_env_gives_the_terminal_observation():
    sb3 = pytest.importorskip("ssx.envs.sb3", reason="stable-baselines3 is not installed (ssx[learn])")
    batch = envs.dispersal(agents=2, worlds=3, timestep=0.1, steps_per_action=1, max_cycles=2)
    env = sb3.SwarmVecEnv(batch)
    assert env.num_envs == 6
    env.seed(10)
    first = env.reset()
    assert first.shape == (6, 16)
    act = np.zeros((6, 2))
    obs, rew, dones, infos = env.step(act)
    assert not dones.any() and all(i == {} for i in infos) and rew.dtype == np.float32
    obs, rew, dones, infos = env.step(act)
    assert dones.all()
    for i, info in enumerate(infos):
        assert info["TimeLimit.truncated"] is True
        assert info["terminal_observation"].shape == (16,)
    # The observation returned is the next episode's first: the world started over (its seed
    # moved on by the batch's size).
    assert np.array_equal(batch.worlds.steps, [1, 1, 1])
    assert np.array_equal(batch.worlds.seeds, 10 + np.arange(0, 6, 2) + 3)


def test_torchrl_env_passes_check_env_specs_and_resets_worlds_apart():
    pytest.importorskip("torchrl", reason="torchrl is not installed")
    from torchrl.envs.utils import check_env_specs

    from ssx.envs.torchrl import SwarmTorchRLEnv

    batch = envs.dispersal(agents=3, worlds=4, timestep=0.1, steps_per_action=1, max_cycles=5)
    env = SwarmTorchRLEnv(batch)
    assert env.batch_size == (4,)
    check_env_specs(env)
    env.set_seed(20)
    td = env.rollout(12, break_when_any_done=False)
    assert td["next", "agents", "reward"].shape == (4, 12, 3, 1)
    assert td["agents", "observation"].shape == (4, 12, 3, 16)
    # Every world's episode ends at actions 5 and 10 and starts over (TorchRL's partial reset).
    assert td["next", "done"].squeeze(-1).sum(1).tolist() == [2, 2, 2, 2]
    assert np.array_equal(batch.worlds.seeds, 20 + np.arange(4) + 2 * 4)
    # The same seed and the same actions give the same rollout, bit for bit.
    from tensordict.nn import TensorDictModule

    policy = TensorDictModule(
        lambda obs: obs[..., :2] * 0.1, in_keys=[("agents", "observation")], out_keys=[("agents", "action")]
    )

    runs = []
    for _ in range(2):
        env.set_seed(20)
        runs.append(env.rollout(12, policy=policy, break_when_any_done=False)["next", "agents", "observation"])
    assert bool((runs[0] == runs[1]).all())
