"""VMAS's tasks on ssx (ssx.envs.vmas): shapes and spaces, seeded resets, every world of a batch
against a lone world, the reward against its closed form, VMAS's discrete actions, the
holonomic agent's physics, bad options by name, Gymnasium's vector API and TorchRL's specs."""

import numpy as np
import pytest

import ssx
from ssx import envs
from ssx.envs import vmas


def bits(a):
    return np.ascontiguousarray(a).view(np.uint64)


def test_navigation_has_vmas_shapes_and_spaces():
    b = envs.navigation(worlds=3)
    assert (b.num_worlds, b.num_agents) == (3, 4)
    # position, velocity, position - goal, then 12 rays.
    assert b.observation_space.shape == (18,)
    assert b.action_space.shape == (2,) and b.action_space.high.tolist() == [1.0, 1.0]
    obs = b.reset(seed=0)
    assert obs.shape == (3, 4, 18)
    o, r, term, trunc, info = b.step(np.zeros((3, 4, 2)))
    assert r.shape == term.shape == trunc.shape == (3, 4)
    assert b.state().shape == (3, 4 * 4 + 4 * 4)
    assert set(info) == {"cycles", "goals_reached", "collisions", "distance"}
    # Nothing within 0.35 m: every ray reads range - range = 0; the goal term is position - goal.
    names = b.names + b.objects
    s = b.worlds.states(names)
    assert np.array_equal(o[..., :2], s[:, :4, :2])
    assert np.array_equal(o[..., 4:6], s[:, :4, :2] - s[:, 4:, :2])
    assert b.metric("distance").shape == (3,)


def test_a_reset_per_seed_repeats_to_the_bit_and_starts_apart():
    b = envs.navigation(worlds=8)
    a = b.reset(seed=11)
    again = b.reset(seed=11)
    other = b.reset(seed=12)
    assert np.array_equal(bits(a), bits(again))
    assert not np.array_equal(a, other)
    # Agents and goals no nearer than 2 * 0.1 + 0.05 (VMAS's min_distance_between_entities).
    s = b.worlds.states(b.names + b.objects)[..., :2]
    d = np.linalg.norm(s[:, :, None] - s[:, None], axis=-1) + np.eye(8) * 9
    assert d.min() >= 0.25


@pytest.mark.parametrize("workers", [1, 2])
def test_world_k_equals_a_lone_world_seeded_seed_plus_k(workers):
    k = 5
    batch = envs.navigation(worlds=k, seed=30, workers=workers)
    lone = [envs.navigation(seed=30 + i, workers=1) for i in range(k)]
    got = [batch.reset(seed=30)] + [[w.reset(seed=30 + i)] for i, w in enumerate(lone)]
    rng = np.random.default_rng(4)
    for _ in range(25):
        a = rng.uniform(-1, 1, (k, 4, 2))
        ob, rb, tb, _, _ = batch.step(a)
        for i, w in enumerate(lone):
            o, r, t, _, _ = w.step(a[i : i + 1])
            assert np.array_equal(bits(ob[i]), bits(o[0]))
            assert np.array_equal(bits(rb[i]), bits(r[0]))
            assert np.array_equal(tb[i], t[0])
    assert got


def test_the_reward_is_the_shaping_difference_and_the_collision_penalty():
    """BenchMARL's navigation (shared_rew False): an agent's reward is its distance to its goal
    before the step less after it, plus −1 for each agent its surface came within 0.005 m of."""
    b = envs.navigation(worlds=16, shared_rew=False)
    b.reset(seed=2)
    names = b.names + b.objects
    rng = np.random.default_rng(0)
    collided = 0
    for _ in range(40):
        before = b.worlds.states(names)[..., :2]
        _, r, _, _, _ = b.step(rng.uniform(-1, 1, (16, 4, 2)))
        after = b.worlds.states(names)[..., :2]
        d0 = np.linalg.norm(before[:, :4] - before[:, 4:], axis=-1)
        d1 = np.linalg.norm(after[:, :4] - after[:, 4:], axis=-1)
        gap = np.linalg.norm(after[:, :4, None] - after[:, None, :4], axis=-1) + np.eye(4) * 9
        hits = (gap <= 0.2 + 0.005).sum(axis=2)
        collided += hits.sum()
        want = d0 - d1 - hits + 0.01 * (d1 < 0.05).all(axis=1, keepdims=True)
        np.testing.assert_allclose(r, want, rtol=0, atol=1e-12)
    assert collided > 0, "the agents met at least once"


def test_the_shared_reward_is_the_teams_sum():
    b = envs.navigation(worlds=4)
    b.reset(seed=3)
    _, r, _, _, _ = b.step(np.full((4, 4, 2), 0.5))
    # Shared (VMAS's default): every agent of a world gets the same shaping term.
    np.testing.assert_allclose(r - r[:, :1], 0.0, atol=1e-12)


def test_a_force_moves_the_holonomic_agent_as_the_closed_form():
    """1 N on 1 kg for 0.1 s from rest, then VMAS's drag (× 0.75): 0.075 m/s (f32 physics)."""
    b = envs.navigation(agents=1)
    b.reset(seed=0)
    o, _, _, _, _ = b.step(np.array([[[1.0, -0.5]]]))
    np.testing.assert_allclose(o[0, 0, 2:4], [0.075, -0.0375], atol=1e-6)


def test_vmas_discrete_actions():
    """Discrete(9): the flat index of two 3-way choices (0 stays, 1 is -u, 2 is +u)."""
    b = envs.navigation(agents=1, actions="discrete")
    assert b.action_space.n == 9
    b.reset(seed=0)
    o, _, _, _, _ = b.step(np.array([[2 * 3 + 1]]))  # +x, -y
    np.testing.assert_allclose(o[0, 0, 2:4], [0.075, -0.075], atol=1e-6)
    m = envs.navigation(agents=1, actions="multidiscrete")
    m.reset(seed=0)
    o, _, _, _, _ = m.step(np.array([[[0, 2]]]))  # stay, +y
    np.testing.assert_allclose(o[0, 0, 2:4], [0.0, 0.075], atol=1e-6)
    with pytest.raises(ValueError, match="discrete actions are 0 to 8"):
        b.step(np.array([[9]]))


def test_bad_options_are_refused_by_name():
    with pytest.raises(ValueError, match=r"navigation: no option 'lidar_rang' \(it has: .*lidar_range"):
        envs.navigation(lidar_rang=0.5)
    with pytest.raises(ValueError, match="navigation: option 'agent_radius' must be from 0.001 to 10, got -1"):
        envs.navigation(agent_radius=-1)
    with pytest.raises(ValueError, match="actions must be one of continuous, discrete, multidiscrete"):
        envs.navigation(actions="both")


def test_gymnasium_make_vec_and_torchrl_specs():
    gymnasium = pytest.importorskip("gymnasium")
    env = gymnasium.make_vec("ssx/Navigation-v0", num_envs=8)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (8, 18)
    obs, r, term, trunc, _ = env.step(env.action_space.sample())
    assert r.shape == (8,)
    env.close()
    pytest.importorskip("torchrl")
    from torchrl.envs.utils import check_env_specs

    from ssx.envs.torchrl import SwarmTorchRLEnv

    for actions in ("continuous", "discrete"):
        e = SwarmTorchRLEnv(envs.navigation(worlds=3, actions=actions))
        check_env_specs(e)
        td = e.rollout(3)
        assert td["next", "state"].shape == (3, 3, 32)
        assert td["next", "agents", "info", "distance"].shape == (3, 3, 4)


@pytest.mark.parametrize("task", sorted(vmas.TASKS))
def test_every_tasks_scene_runs_under_ssxd(ssxd, tmp_path, task):
    import subprocess

    scene = getattr(envs, f"{task}_scene")(seed=1, directory=str(tmp_path))
    out = subprocess.run([ssxd, "run", scene, "--mode", "fast", "--steps", "50", "--quiet"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    batch = vmas.TASKS[task]()
    assert ssx.Sim(scene).states().shape[0] >= batch.num_agents + len(batch.objects)


def push(obs):
    """Goes behind the package (seen from the goal) and pushes it at the goal."""
    to_goal = -obs[..., 4:6]
    d = to_goal / (np.linalg.norm(to_goal, axis=-1, keepdims=True) + 1e-9)
    behind = obs[..., 6:8] - d * 0.15
    near = np.linalg.norm(behind, axis=-1, keepdims=True) < 0.05
    return np.clip(np.where(near, d, behind * 6.0), -1, 1)


def test_transport_agents_push_the_50_kg_package_and_earn_its_shaping():
    """The team pushes the package (rigid contacts in the plane); until it is on the goal the
    rewards add up to 100 × the distance it came nearer, every agent alike."""
    b = envs.transport(worlds=16)
    assert b.observation_space.shape == (11,)
    obs = b.reset(seed=4)
    s = b.worlds.states(b.names + b.objects)
    start = np.linalg.norm(s[:, 5, :2] - s[:, 4, :2], axis=-1)
    p0 = s[:, 5, :2].copy()
    total = np.zeros(16)
    ever_on = np.zeros(16, dtype=bool)
    for _ in range(100):
        obs, r, term, _, info = b.step(push(obs))
        np.testing.assert_array_equal(r, r[:, :1].repeat(4, axis=1))
        total += r[:, 0]
        ever_on |= info["on_goal"] > 0
        assert np.array_equal(term[:, 0], info["on_goal"] > 0)
    s = b.worlds.states(b.names + b.objects)
    moved = np.linalg.norm(s[:, 5, :2] - p0, axis=-1)
    # 2.4 N on 50 kg against the drag: at most F / (m·c) = 1.4 cm/s, once the agents are behind it.
    assert (moved > 0.01).sum() >= 8, moved
    now = np.linalg.norm(s[:, 5, :2] - s[:, 4, :2], axis=-1)
    off = ~ever_on
    np.testing.assert_allclose(total[off], 100 * (start - now)[off], atol=1e-9)
    # The observation's package terms are the states'.
    np.testing.assert_array_equal(obs[:, 0, 4:6], s[:, 5, :2] - s[:, 4, :2])
    np.testing.assert_array_equal(obs[:, :, 6:8], s[:, 5:6, :2] - s[:, :4, :2])


def test_dispersion_agents_touch_nothing_and_each_item_pays_once():
    """VMAS's dispersion: all agents start at the origin (they touch nothing, so nothing pushes
    them apart); each item is paid once, shared among the agents on it, so a world's agents
    earn as many in all as there are items, and the episode ends when all are eaten."""
    b = envs.dispersion(worlds=8)
    assert b.observation_space.shape == (4 + 3 * 4,)
    obs = b.reset(seed=9)
    s = b.worlds.states(b.names + b.objects)
    assert np.array_equal(s[:, :4, :2], np.zeros((8, 4, 2)))
    total = np.zeros((8, 4))
    done = np.zeros(8, dtype=bool)
    for _ in range(100):
        # Agent i drives at item i (the observation's item − agent), its eaten flag beside it.
        to = np.stack([obs[:, i, 4 + 3 * i : 6 + 3 * i] for i in range(4)], axis=1)
        obs, r, term, _, info = b.step(np.clip(to * 5, -1, 1))
        total += np.where(done[:, None], 0.0, r)
        done |= term[:, 0]
        if done.all():
            break
    assert done.all()
    np.testing.assert_allclose(total.sum(axis=1), 4.0, atol=1e-12)
    assert np.array_equal(info["eaten"], np.full(8, 4.0))
    assert (obs[..., 6::3] == 1.0).all(), "every item reads eaten"


def test_wheel_the_pinned_bar_turns_in_place_and_the_reward_is_its_speed_error():
    """VMAS's wheel: agents push a 30 kg bar pinned at its centre; it turns and stays where it is,
    and every agent's reward is −||ω| − 0.05|."""
    b = envs.wheel(worlds=6)
    assert b.observation_space.shape == (13,)
    obs = b.reset(seed=5)
    turned = 0.0
    for _ in range(80):
        p = obs[..., :2]
        obs, r, term, _, info = b.step(np.clip(np.stack([-p[..., 1], p[..., 0]], -1) * 3, -1, 1))
        bar = b.worlds.states(b.objects)[:, 0]
        # Within 1 mm: Rapier's joint is a stiff spring, not a hard constraint.
        np.testing.assert_allclose(bar[:, :2], 0.0, atol=1e-3)
        np.testing.assert_allclose(r, -np.abs(np.abs(bar[:, 12:13]) - 0.05).repeat(4, axis=1), atol=1e-12)
        assert not term.any()
        turned = max(turned, np.abs(bar[:, 12]).max())
    assert turned > 0.005, "the agents turned the bar"
    np.testing.assert_allclose(info["angular_speed"], np.abs(bar[:, 12]), atol=1e-12)


@pytest.mark.parametrize("task", sorted(vmas.TASKS))
def test_every_task_resets_per_seed_to_the_bit_and_world_k_is_a_lone_world(task):
    """Each VMAS task: a reset per seed repeats to the bit, another seed differs, and world k of a
    batch on 2 workers steps as a lone world seeded seed + k on 1, bit for bit."""
    make = vmas.TASKS[task]
    batch = make(worlds=3, seed=20, workers=2)
    a = batch.reset(seed=20)
    assert np.array_equal(bits(a), bits(batch.reset(seed=20)))
    assert not np.array_equal(a, batch.reset(seed=21))
    batch.reset(seed=20)
    lone = make(seed=22, workers=1)
    lone.reset(seed=22)
    rng = np.random.default_rng(1)
    n = batch.num_agents
    for _ in range(15):
        act = rng.uniform(-1, 1, (3, n, 2))
        ob, rb, _, _, _ = batch.step(act)
        o, r, _, _, _ = lone.step(act[2:3])
        assert np.array_equal(bits(ob[2]), bits(o[0]))
        assert np.array_equal(bits(rb[2]), bits(r[0]))


def yaw(s):
    """Heading about z from a state row's quaternion (x, y, z, w) of a body turning in the plane."""
    return 2 * np.arctan2(s[..., 5], s[..., 6])


def test_balance_starts_under_the_line_as_vmas_places_it():
    """VMAS's balance: the line's centre at y = −0.94 and x in [−0.6, 0.6], the agents evenly
    under it resting on the floor, the package on the line, the goal in [−1, 1] × [0, 1]."""
    b = envs.balance(agents=4, worlds=16)
    assert b.observation_space.shape == (16,) and b.state().shape == (16, 4 * 4 + 3 * 4)
    obs = b.reset(seed=3)
    s = b.worlds.states(b.names + b.objects)
    agents, goal, package, line = s[:, :4], s[:, 4], s[:, 5], s[:, 6]
    # A reset's step: gravity's 0.05 m/s² moves a body at most 0.25 mm in 0.1 s.
    np.testing.assert_allclose(line[:, 1], -0.94, atol=1e-3)
    assert np.all(np.abs(line[:, 0]) <= 0.6) and line[:, 0].std() > 0.1
    spread = np.linspace(-0.385, 0.385, 4)
    np.testing.assert_allclose(agents[..., 0], line[:, :1] + spread, atol=1e-3)
    np.testing.assert_allclose(agents[..., 1], -1.0, atol=1e-3)
    np.testing.assert_allclose(package[:, 1], line[:, 1] + 0.05 + 4 / 600, atol=1e-3)
    assert np.all(np.abs(package[:, 0] - line[:, 0]) <= 0.35) and (package[:, 0] - line[:, 0]).std() > 0.05
    assert np.all(np.abs(goal[:, 0]) <= 1) and np.all((goal[:, 1] >= 0) & (goal[:, 1] <= 1))
    np.testing.assert_array_equal(obs[:, :, 8:10], (package[:, :2] - goal[:, :2])[:, None].repeat(4, 1))
    middle = envs.balance(worlds=4, random_package_pos_on_line=False)
    middle.reset(seed=3)
    s = middle.worlds.states(middle.objects)
    np.testing.assert_allclose(s[:, 1, 0], s[:, 2, 0], atol=1e-4)


def test_balance_the_reward_is_the_shaping_and_a_fall_costs_ten():
    """The agents drive out from under the line: until it touches the floor every agent earns 100
    × the package's approach to the goal; the step it lands, −10 more and the episode ends (the
    line within 4/600 + 1e-3 m of the floor's top at y = −1.03)."""
    b = envs.balance(worlds=8)
    b.reset(seed=6)
    s = b.worlds.states(b.objects)
    before = np.linalg.norm(s[:, 1, :2] - s[:, 0, :2], axis=-1)
    ended = np.zeros(8, dtype=bool)
    out = np.zeros((8, 3, 2))
    out[..., 0] = 1.0
    for _ in range(100):
        _, r, term, _, info = b.step(out)
        s = b.worlds.states(b.objects)
        now = np.linalg.norm(s[:, 1, :2] - s[:, 0, :2], axis=-1)
        low = s[:, 2, 1] - 0.4 * np.abs(np.sin(yaw(s[:, 2])))
        fell = low < -1.03 + 4 / 600 + 1e-3
        live = ~ended
        np.testing.assert_allclose(r[live], (100 * (before - now) - 10 * fell)[live, None].repeat(3, 1), atol=1e-9)
        np.testing.assert_array_equal(term[live, 0], fell[live])
        np.testing.assert_array_equal(info["fell"][live] > 0, fell[live])
        ended |= term[:, 0]
        before = now
    assert ended.all(), "the line fell in every world once the agents left"


@pytest.mark.parametrize("task", sorted(vmas.TASKS))
@pytest.mark.parametrize("actions", ["continuous", "discrete"])
def test_one_world_of_every_task_passes_pettingzoos_parallel_api_test(task, actions):
    from pettingzoo.test import parallel_api_test

    env = envs.TaskParallelEnv(vmas.TASKS[task](actions=actions, max_steps=30))
    parallel_api_test(env, num_cycles=40)
    obs, _ = env.reset(seed=4)
    lone = vmas.TASKS[task](seed=4, actions=actions, max_steps=30)
    np.testing.assert_array_equal(np.stack([obs[a] for a in env.possible_agents]), lone.reset(seed=4)[0])
    assert env.state().shape == env.state_space.shape


def test_a_parallel_env_takes_one_world_and_every_agents_action():
    with pytest.raises(ValueError, match="a batch of one world, got 2"):
        envs.TaskParallelEnv(envs.navigation(worlds=2))
    env = envs.TaskParallelEnv(envs.navigation())
    env.reset(seed=0)
    with pytest.raises(KeyError, match="no action for agent_3"):
        env.step({f"agent_{i}": np.zeros(2) for i in range(3)})


def test_sampling_pays_each_cell_once_as_its_closed_form():
    """VMAS's sampling: each agent's reward is the normalised density of the Gaussians at its
    cell, paid once a cell, agent after agent; computed here from the states alone."""
    b = envs.sampling(worlds=4, shared_rew=False)
    assert b.observation_space.shape == (4 + 12 + 8,)
    b.reset(seed=8)
    centres = b.worlds.states(b.objects)[..., :2]  # (4, 3, 2)
    grid = -1 + 0.05 * np.arange(40)
    pts = np.stack(np.meshgrid(grid, grid, indexing="ij"), -1).reshape(-1, 2)

    def density(p, c):  # p (..., 2), c (3, 2)
        d2 = ((p[..., None, :] - c) ** 2).sum(-1)
        return (np.exp(-d2 / 0.1) / (2 * np.pi * 0.05)).sum(-1)

    top = [density(np.clip(pts, -0.975, 0.975), centres[k]).max() for k in range(4)]
    sampled = [set() for _ in range(4)]
    rng = np.random.default_rng(3)
    paid = 0
    for _ in range(60):
        _, r, _, _, info = b.step(rng.uniform(-1, 1, (4, 3, 2)))
        pos = b.worlds.states(b.names)[..., :2]
        for k in range(4):
            for i in range(3):
                p = pos[k, i]
                want = 0.0
                if np.all(np.abs(p) <= 1):
                    q = np.clip(p, -0.975, 0.975)
                    cell = tuple((q / 0.05 + 20).astype(int))
                    if cell not in sampled[k]:
                        sampled[k].add(cell)
                        want = density(q, centres[k]) / top[k]
                np.testing.assert_allclose(r[k, i], want, rtol=1e-9, atol=1e-12)
                paid += want > 0
        np.testing.assert_array_equal(info["cells_sampled"], [len(s) for s in sampled])
    assert paid > 50


def test_give_way_the_corridor_blocks_a_head_on_pass_and_the_reward_is_the_teams_approach():
    """VMAS's give_way: the agents start at (∓2, 0) ± 0.02 with their goals at the other end; driven
    head-on they meet and stop, the corridor too narrow to pass in; every step each earns both
    agents' approach to their goals (1e-9), the same for both."""
    b = envs.give_way(worlds=4)
    assert (b.num_agents, b.observation_space.shape) == (2, (4,))
    assert b.action_space.high.tolist() == [0.5, 0.5]
    b.reset(seed=2)
    s = b.worlds.states(b.names + b.objects)[..., :2]
    np.testing.assert_allclose(s[:, :2], np.broadcast_to([[-2.0, 0.0], [2.0, 0.0]], (4, 2, 2)), atol=0.02 + 1e-6)
    assert s[:, 0, 0].std() > 1e-3
    np.testing.assert_allclose(s[:, 2:], np.broadcast_to([[2.29, 0.0], [-2.29, 0.0]], (4, 2, 2)), atol=1e-6)  # single precision
    before = np.linalg.norm(s[:, :2] - s[:, 2:], axis=-1).sum(-1)
    head_on = np.zeros((4, 2, 2))
    head_on[:, 0, 0], head_on[:, 1, 0] = 0.5, -0.5
    for _ in range(150):
        _, r, term, _, _ = b.step(head_on)
        s = b.worlds.states(b.names + b.objects)[..., :2]
        now = np.linalg.norm(s[:, :2] - s[:, 2:], axis=-1).sum(-1)
        np.testing.assert_allclose(r, (before - now)[:, None].repeat(2, 1), atol=1e-9)
        assert not term.any()
        before = now
    assert np.all(s[:, 0, 0] < s[:, 1, 0]), "neither passed the other"
    # They meet under the nook: one slides up into it, pressing the other onto the floor's face.
    assert np.all(s[:, :, 1] > -(0.2 - 0.16 - 4 / 600) - 1e-3), "none through the floor"
    gap = np.linalg.norm(s[:, 0] - s[:, 1], axis=-1)
    assert np.all(gap > 0.3) and np.all(gap < 0.34), gap


def test_passage_a_cross_to_a_cross_through_the_gap_the_seed_draws():
    """VMAS's passage: agent i and its goal at place i of two crosses (0.1 m arms), below and above
    a wall of 19 boxes on 20 slots; the open slot, seen relative to each agent, is the one with no
    box, and differs among worlds. Pushed straight up, the agents not under the gap stop at the
    wall, each step's reward their shaping (100 × approach) less 10 for each contact."""
    b = envs.passage(worlds=8, seed=3)
    assert (b.num_agents, b.observation_space.shape, len(b.objects)) == (5, (8,), 24)
    o = b.reset(seed=3)
    s = b.state().reshape(8, -1, 4)[..., :2]
    agents, goals, boxes = s[:, :5], s[:, 5:10], s[:, 10:]
    cross = np.array(vmas.PASSAGE_CROSS)
    np.testing.assert_allclose(agents - agents[:, 4:5], np.broadcast_to(cross, (8, 5, 2)), atol=1e-6)
    np.testing.assert_allclose(goals - goals[:, 4:5], np.broadcast_to(cross, (8, 5, 2)), atol=1e-6)
    assert np.all(agents[:, 4, 1] <= -0.3 + 1e-6) and np.all(goals[:, 4, 1] >= 0.3 - 1e-6)
    np.testing.assert_allclose(o[..., 4:6], goals - agents, atol=1e-6)
    slots = -1 - vmas.PASSAGE_RADIUS + 0.103 / 2 + 0.103 * np.arange(20)
    gaps = o[:, 0, 6:8] + agents[:, 0]
    for k in range(8):
        taken = np.abs(boxes[k, :, None, 0] - slots[None, :]).min(axis=0) < 1e-6
        assert taken.sum() == 19
        np.testing.assert_allclose(gaps[k], [slots[~taken][0], 0.0], atol=1e-6)
    assert len(set(np.round(gaps[:, 0], 4))) > 1, gaps
    up = np.zeros((8, 5, 2))
    up[..., 1] = 1.0
    before = np.linalg.norm(agents - goals, axis=-1)
    for _ in range(40):
        _, r, _, _, info = b.step(up)
        now_s = b.state().reshape(8, -1, 4)[..., :2]
        now = np.linalg.norm(now_s[:, :5] - goals, axis=-1)
        penalty = (r - 100 * (before - now)) / -10
        np.testing.assert_allclose(penalty, np.round(penalty), atol=1e-6)
        assert np.all(np.round(penalty) >= 0)
        before = now
    x = now_s[:, :5, 0]
    under_gap = np.abs(x - gaps[:, :1]) < 0.103 / 2 - vmas.PASSAGE_RADIUS
    stopped = now_s[:, :5, 1] < -0.1 - vmas.PASSAGE_RADIUS + 2e-3
    assert np.all(stopped | under_gap), now_s[:, :5]
    on_wall = np.abs(now_s[:, :5, 1] - (-0.1 - vmas.PASSAGE_RADIUS)) < 2e-3
    assert on_wall.sum() >= 8
    assert np.all(np.round(penalty)[on_wall] >= 1), "an agent on the wall pays for it"
    assert info["collisions"].min() >= 1


def test_flocking_the_target_drives_itself_and_the_reward_is_the_distance_shaping():
    """VMAS's flocking: the target starts at (0, −1) and pushes itself with (cos(t/30), sin(t/30)) N
    from the first action, its velocity the closed form v ← (v + 0.1·u)·0.75 while nothing touches
    it; agents that do not act are paid the change of their mean (distance − 0.1)² to the others
    and the target, to 1e-9."""
    b = envs.flocking(agents=2, worlds=8, seed=5, n_obstacles=0)
    b.reset(seed=5)
    s = b.state().reshape(8, 3, 4)
    np.testing.assert_allclose(s[:, 2], np.broadcast_to([0.0, -1.0, 0.0, 0.0], (8, 4)), atol=1e-6)
    clear = np.linalg.norm(s[:, :2, :2] - s[:, 2:3, :2], axis=-1).min(axis=1) > 0.6
    clear &= np.linalg.norm(s[:, 0, :2] - s[:, 1, :2], axis=-1) > 0.2
    assert clear.sum() >= 2, "too few worlds with room about the target"

    def shaping(p):
        d = np.linalg.norm(p[:, :, None] - p[:, None, :], axis=-1)
        return np.stack([((np.delete(d[:, i], i, axis=1) - 0.1) ** 2).mean(-1) for i in range(2)], axis=1)

    before = shaping(s[..., :2])
    v = np.zeros(2)
    for t in range(12):
        _, r, _, _, _ = b.step(np.zeros((8, 2, 2)))
        v = (v + 0.1 * np.array([np.cos(t / 30), np.sin(t / 30)])) * 0.75
        s = b.state().reshape(8, 3, 4)
        np.testing.assert_allclose(s[clear, 2, 2:], np.broadcast_to(v, (clear.sum(), 2)), atol=1e-6)
        now = shaping(s[..., :2])
        np.testing.assert_allclose(r[clear], (before - now)[clear], atol=1e-9)
        before = now


def test_discovery_two_agents_cover_a_target_which_then_appears_elsewhere():
    """VMAS's discovery: targets and agents start 0.2 apart; a target with two agents within 0.25
    is covered: each of them is paid at least 1 (the covered targets in its range) and the target
    moves, in the state, to a place at least 0.2 from every agent and other target. Agents 0 and
    1 driven to target 0 cover it in every world."""
    b = envs.discovery(worlds=4, seed=2)
    b.reset(seed=2)
    s = b.state().reshape(4, 12, 4)[..., :2]
    d = np.linalg.norm(s[:, :, None] - s[:, None, :], axis=-1) + np.eye(12) * 9
    assert d.min() >= 0.2 - 1e-6
    covered_0 = np.zeros(4, bool)
    for _ in range(60):
        act = np.zeros((4, 5, 2))
        act[:, :2] = np.clip(4 * (s[:, 5:6] - s[:, :2]), -1, 1)
        _, r, _, _, info = b.step(act)
        new = b.state().reshape(4, 12, 4)[..., :2]
        moved = np.abs(new[:, 5:] - s[:, 5:]).max(-1) > 1e-9
        np.testing.assert_array_equal(info["targets_covered"], moved.sum(-1))
        for k, j in zip(*np.nonzero(moved)):
            near = np.linalg.norm(new[k, :5] - s[k, 5 + j], axis=-1) < 0.25
            assert near.sum() >= 2 and np.all(r[k, near] >= 1.0), (near, r[k])
            others = np.delete(new[k], 5 + j, axis=0)
            assert np.linalg.norm(others - new[k, 5 + j], axis=-1).min() >= 0.2 - 1e-9
        covered_0 |= moved[:, 0]
        s = new
    assert covered_0.all(), "two agents driven onto a target cover it"


def test_a_turning_target_takes_no_commands_and_a_bad_rate_is_refused(tmp_path):
    """The flocking target's open-loop ``turning`` action with ``commands`` beside it, or a rate
    that is not a number in range, is refused by the world with the driver's message."""
    import json

    scene = envs.flocking_scene(directory=str(tmp_path))
    path = tmp_path / "target.json"
    target = json.loads(path.read_text())
    for change, message in [
        ({"commands": {"timeout": 1.0}}, "'turning' is an open-loop action and takes no 'commands'"),
        ({"turning": {"rate": 1e9}}, "'turning.rate' must be from -1e6 to 1e6, got 1e9"),
    ]:
        bad = json.loads(json.dumps(target))
        bad["driver"]["descriptor"].update(change)
        path.write_text(json.dumps(bad))
        with pytest.raises(Exception, match="artifact 'target': cannot create driver 'holonomic': invalid descriptor: " + message):
            ssx.Worlds(scene, 1)


@pytest.mark.parametrize("task", ["navigation", "passage", "discovery"])
def test_a_task_on_the_differential_drive_moves_along_its_heading_and_turns(task):
    """``drive="diffdrive"``: an agent's action is (v, ω), its forward speed along its heading and
    its turn rate, held exactly (no drag): 0.5 m/s for 1 s moves a lone agent with room ahead 0.5 m
    straight on; 1 rad/s turns every agent 1 rad where it stands (single precision). Resets repeat
    to the bit, and a value of ``drive`` that is neither is refused."""
    agents = 5 if task == "passage" else 1
    b = vmas.TASKS[task](agents=agents, worlds=6, drive="diffdrive")
    b.reset(seed=1)
    s0 = b.worlds.states(b.names)
    act = np.zeros((6, agents, 2))
    act[:3, :, 0] = 0.5
    act[3:, :, 1] = 1.0
    for _ in range(10):
        o, _, _, _, _ = b.step(act)
    s = b.worlds.states(b.names)
    np.testing.assert_allclose(yaw(s[3:]), 1.0, atol=1e-3)
    np.testing.assert_allclose(s[3:, :, :2], s0[3:, :, :2], atol=1e-6)
    if task != "passage":  # the cross's agents run into each other going straight
        room = s0[:3, 0, 0] < 0.4  # the walls (or nothing) 0.5 m ahead and more
        assert room.any()
        moved = s[:3, 0, :2] - s0[:3, 0, :2]
        np.testing.assert_allclose(moved[room], np.broadcast_to([0.5, 0.0], (room.sum(), 2)), atol=1e-5)
        np.testing.assert_allclose(o[:3][room, 0, 2:4], np.broadcast_to([0.5, 0.0], (room.sum(), 2)), atol=1e-5)
    first = b.reset(seed=1)
    assert np.array_equal(bits(first), bits(b.reset(seed=1)))
    with pytest.raises(ValueError, match=f"{task}: drive must be one of holonomic, diffdrive, got 'wheels'"):
        vmas.TASKS[task](drive="wheels")
