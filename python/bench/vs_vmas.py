"""ssx's VMAS tasks beside VMAS's own scenarios, on the same machine in one run (docs/learning.md).

(a) ``--speed``: each task's batched step with random actions, ssx's ``TaskBatch`` against
    VMAS's scenario of the same name and settings (agents, 1024 worlds, continuous actions, CPU),
    in turn A B A B over ``--rounds`` rounds; the median agent-steps/s of each and their ratio.
(b) ``--learn``: BenchMARL's MAPPO, one config and frame budget, on ssx's and VMAS's task, seeds
    0-2: wall time and the evaluation return at each evaluation, beside each task's random and
    scripted baselines (the same policy on both simulators); curves as PNG.

    python3 python/bench/vs_vmas.py --speed --learn --out target/vs_vmas

Needs vmas, benchmarl and matplotlib (pip install vmas benchmarl matplotlib).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import torch

import ssx.envs as envs

TASKS = ["navigation", "transport", "dispersion", "wheel", "balance", "sampling", "give_way", "passage", "flocking", "discovery"]
# BenchMARL's task configurations (benchmarl/conf/task/vmas/<task>.yaml) with VMAS's agents.
SETTINGS = {
    "navigation": dict(n_agents=4),
    "transport": dict(n_agents=4),
    "dispersion": dict(n_agents=4),
    "wheel": dict(n_agents=4),
    "balance": dict(n_agents=4),
    "sampling": dict(n_agents=3),
    "give_way": {},
    "passage": {},
    "flocking": dict(n_agents=4),
    "discovery": dict(n_agents=5),
}


def benchmarl_config(task):
    """BenchMARL's configuration of the task (its yaml's values) with ``SETTINGS``' agents, less
    ``max_steps``: what the learning runs use, and so the baselines too."""
    from ssx.envs.benchmarl import BENCHMARL_CONFIGS

    config = dict(BENCHMARL_CONFIGS[task], **SETTINGS[task])
    config.pop("max_steps")
    return config


def vmas_env(task, worlds, seed, **kw):
    import vmas

    return vmas.make_env(task, num_envs=worlds, device="cpu", continuous_actions=True, seed=seed, **kw)


def ssx_batch(task, worlds, seed, **kw):
    from ssx.envs.benchmarl import FIXED

    kw = {k: v for k, v in kw.items() if k not in FIXED.get(task, {})}
    agents = kw.pop("n_agents", envs.vmas.DEFAULT_AGENTS[task])
    return getattr(envs, task)(agents=agents, worlds=worlds, seed=seed, **kw)


def time_ssx(task, worlds, steps, seed=0):
    b = ssx_batch(task, worlds, seed, **SETTINGS[task])
    b.reset(seed=seed)
    rng = np.random.default_rng(seed)
    u = b.u_range
    acts = [rng.uniform(-u, u, (worlds, b.num_agents, 2)) for _ in range(8)]
    b.step(acts[0])
    t = time.perf_counter()
    for i in range(steps):
        b.step(acts[i % 8])
    dt = time.perf_counter() - t
    b.close()
    return worlds * b.num_agents * steps / dt


def time_vmas(task, worlds, steps, seed=0):
    env = vmas_env(task, worlds, seed, **SETTINGS[task])
    env.reset()
    n = env.n_agents
    g = torch.Generator().manual_seed(seed)
    u = env.agents[0].u_range
    acts = [[(torch.rand((worlds, 2), generator=g) * 2 - 1) * u for _ in range(n)] for _ in range(8)]
    env.step(acts[0])
    t = time.perf_counter()
    for i in range(steps):
        env.step(acts[i % 8])
    dt = time.perf_counter() - t
    return worlds * n * steps / dt


def speed(out, worlds, rounds, steps, tasks=TASKS):
    rows = {}
    for task in tasks:
        a, b = [], []
        for _ in range(rounds):
            a.append(time_ssx(task, worlds, steps))
            b.append(time_vmas(task, worlds, steps))
        ratios = [x / y for x, y in zip(a, b)]
        rows[task] = {
            "ssx": statistics.median(a),
            "vmas": statistics.median(b),
            "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
        }
        r = rows[task]
        print(
            f"{task:12s} ssx {r['ssx'] / 1e6:.3f} M agent-steps/s  vmas {r['vmas'] / 1e6:.3f} M  "
            f"ratio {r['ratio_median']:.2f} ({r['ratio_min']:.2f}-{r['ratio_max']:.2f})",
            flush=True,
        )
    with open(os.path.join(out, "speed.json"), "w") as f:
        json.dump({"worlds": worlds, "rounds": rounds, "steps": steps, "threads": torch.get_num_threads(), "tasks": rows}, f, indent=1)
    return rows


def scripted(task, obs):
    """A hand-written policy from the observation alone, the same on both simulators:
    navigation drives at the goal (the observation's position − goal, VMAS's term); transport
    goes behind the package and pushes it at the goal; dispersion drives agent i at item i; wheel
    goes round the origin counter-clockwise; balance is VMAS's own heuristic (balance.py's
    ``HeuristicPolicy``: push up by the package's height below the goal); sampling climbs the
    eight samples around the agent (its observation's last eight terms); give_way drives each
    agent at full speed toward the other end, head-on; passage drives to the open slot (the
    observation's last two terms) while below the wall, then to the goal; flocking and discovery
    are VMAS's own heuristics (their scenario files' ``HeuristicPolicy``: round a circle of 0.3
    or 0.75 m about the origin, away from an obstacle the lidar sees within 0.1 m, toward a
    target it sees within 0.3 m)."""
    if task in ("flocking", "discovery"):
        return circling(task, obs)
    if task == "passage":
        below = obs[..., 1:2] < 0.15
        u = np.where(below, obs[..., 6:8] + np.array([0.0, 0.05]), obs[..., 4:6]) * 4.0
    elif task == "give_way":
        u = np.zeros(obs.shape[:-1] + (2,))
        u[:, 0, 0], u[:, 1, 0] = 0.5, -0.5
    elif task == "sampling":
        around = np.array([[1, 0], [-1, 0], [0, 1], [0, -1], [-1, -1], [1, -1], [-1, 1], [1, 1]], dtype=float)
        u = obs[..., -8:] @ around * 10.0
    elif task == "balance":
        dy = obs[..., 9]
        u = np.stack([np.zeros_like(dy), np.where(dy >= 0, 0.0, -dy)], axis=-1)
    elif task == "navigation":
        u = -obs[..., 4:6] * 4.0
    elif task == "wheel":
        p = obs[..., :2]
        u = np.stack([-p[..., 1], p[..., 0]], axis=-1) * 3.0
    elif task == "dispersion":
        n = obs.shape[1]
        u = np.stack([obs[:, i, 4 + 3 * i : 6 + 3 * i] for i in range(n)], axis=1) * 5.0
    else:
        to_goal = -obs[..., 4:6]
        to_pkg = obs[..., 6:8]
        d = to_goal / (np.linalg.norm(to_goal, axis=-1, keepdims=True) + 1e-9)
        behind = to_pkg - d * 0.15
        near = np.linalg.norm(behind, axis=-1, keepdims=True) < 0.05
        u = np.where(near, d, behind * 6.0)
    return np.clip(u, -1, 1)


def circling(task, obs):
    """VMAS's flocking and discovery heuristics (vmas/scenarios/{flocking,discovery}.py,
    ``HeuristicPolicy.compute_action``), in numpy: aim 0.1 m ahead (clockwise) of the nearest
    point of a circle about the origin; flocking steps back from the nearest lidar ray under 0.1
    m, discovery steps toward the nearest under 0.3 m; the action 10 × the offset."""
    radius, lidar, near, sign = (0.3, obs[..., 6:18], 0.1, -1.0) if task == "flocking" else (0.75, obs[..., 4:19], 0.3, 1.0)
    p = obs[..., :2]
    on = p / (np.linalg.norm(p, axis=-1, keepdims=True) + 1e-12) * radius
    normal = np.stack([on[..., 1], -on[..., 0]], axis=-1)
    want = on + normal / (np.linalg.norm(normal, axis=-1, keepdims=True) + 1e-12) * 0.1
    k = lidar.argmin(-1)
    th = k / lidar.shape[-1] * 2 * np.pi
    seen = (lidar < near).any(-1, keepdims=True)
    want = np.where(seen, p + sign * 0.1 * np.stack([np.cos(th), np.sin(th)], axis=-1), want)
    return np.clip((want - p) * 10.0, -1, 1)


def baselines(task, episodes_worlds=64, seed=100):
    """The mean episode return (the sum over the episode, until it ends, of the agents' mean
    reward, as BenchMARL's evaluation counts it) of random and scripted actions, on ssx and on
    VMAS, with the learning runs' configuration."""
    steps = 100
    config = benchmarl_config(task)
    out = {}
    for policy in ("random", "scripted"):
        rng = np.random.default_rng(seed)
        b = ssx_batch(task, episodes_worlds, seed, **config)
        obs = b.reset(seed=seed)
        total = np.zeros(episodes_worlds)
        live = np.ones(episodes_worlds, dtype=bool)
        for _ in range(steps):
            a = rng.uniform(-b.u_range, b.u_range, obs.shape[:2] + (2,)) if policy == "random" else scripted(task, obs)
            obs, r, term, trunc, _ = b.step(a)
            total += r.mean(axis=1) * live
            live &= ~term[:, 0]
        out[f"ssx_{policy}"] = float(total.mean())
        env = vmas_env(task, episodes_worlds, seed, **config)
        obs = torch.stack(env.reset(), dim=1).numpy()
        total = np.zeros(episodes_worlds)
        live = np.ones(episodes_worlds, dtype=bool)
        for _ in range(steps):
            u = env.agents[0].u_range
            a = rng.uniform(-u, u, obs.shape[:2] + (2,)) if policy == "random" else scripted(task, obs)
            o, r, done, _ = env.step([torch.as_tensor(a[:, i], dtype=torch.float32) for i in range(a.shape[1])])
            obs = torch.stack(o, dim=1).numpy()
            total += torch.stack(r, dim=1).mean(dim=1).numpy() * live
            live &= ~done.numpy()
        out[f"vmas_{policy}"] = float(total.mean())
    return out


def learn(out, frames, seeds, tasks=TASKS):
    from benchmarl.algorithms import MappoConfig
    from benchmarl.environments import VmasTask
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig

    from ssx.envs.benchmarl import SsxTask

    results = {}
    for task in tasks:
        for sim, enum in (("ssx", SsxTask), ("vmas", VmasTask)):
            for seed in seeds:
                cfg = ExperimentConfig.get_from_yaml()
                cfg.max_n_frames = frames
                cfg.on_policy_collected_frames_per_batch = 6000
                cfg.on_policy_n_envs_per_worker = 60
                cfg.evaluation_interval = 12000
                cfg.evaluation_episodes = 60
                cfg.loggers = ["csv"]
                cfg.create_json = True
                cfg.save_folder = out
                cfg.checkpoint_interval = 0
                cfg.render = False
                t = enum[task.upper()].get_task()
                t.config.update(SETTINGS[task])
                exp = Experiment(
                    task=t, algorithm_config=MappoConfig.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
                    critic_model_config=MlpConfig.get_from_yaml(), seed=seed, config=cfg,
                )
                start = time.perf_counter()
                exp.run()
                wall = time.perf_counter() - start
                with open(exp.folder_name / f"{exp.name}.json") as f:
                    data = json.load(f)
                run = next(iter(next(iter(data.values())).values()))
                steps = next(iter(run.values()))[f"seed_{seed}"]
                curve = sorted(
                    (v["step_count"], float(np.mean(v["return"]))) for k, v in steps.items() if k.startswith("step_")
                )
                results.setdefault(task, {}).setdefault(sim, []).append({"seed": seed, "wall_s": wall, "curve": curve})
                print(f"{task} {sim} seed {seed}: {wall:.0f} s, returns {[round(c[1], 3) for c in curve]}", flush=True)
        results[task]["baselines"] = baselines(task)
        print(task, results[task]["baselines"], flush=True)
    with open(os.path.join(out, "learn.json"), "w") as f:
        json.dump({"frames": frames, "seeds": seeds, "tasks": results}, f, indent=1)
    plot(results, out)
    return results


def plot(results, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.6))
    for ax, (task, r) in zip(np.atleast_1d(axes), results.items()):
        for sim, color in (("ssx", "tab:blue"), ("vmas", "tab:orange")):
            for run in r[sim]:
                x, y = zip(*run["curve"])
                ax.plot(x, y, color=color, alpha=0.8, label=f"{sim} MAPPO" if run["seed"] == 0 else None)
            for policy, style in (("random", ":"), ("scripted", "--")):
                ax.axhline(r["baselines"][f"{sim}_{policy}"], color=color, linestyle=style, linewidth=1,
                           label=f"{sim} {policy}")
        ax.set_title(task)
        ax.set_xlabel("frames")
        ax.set_ylabel("evaluation return")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "vs_vmas_learning.png"), dpi=110)


def rebase(out):
    """The baselines again, into an earlier ``--learn`` run's results, and its plot."""
    path = os.path.join(out, "learn.json")
    with open(path) as f:
        data = json.load(f)
    for task, r in data["tasks"].items():
        r["baselines"] = baselines(task)
        print(task, r["baselines"], flush=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    plot(data["tasks"], out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--speed", action="store_true")
    p.add_argument("--learn", action="store_true")
    p.add_argument("--baselines", action="store_true", help="the baselines and the plot again, into --out's learn.json")
    p.add_argument("--worlds", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--frames", type=int, default=60_000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--tasks", nargs="+", default=TASKS, choices=TASKS)
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="torch's threads for VMAS")
    p.add_argument("--out", default="target/vs_vmas")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(a.threads)
    if a.speed:
        speed(a.out, a.worlds, a.rounds, a.steps, a.tasks)
    if a.learn:
        learn(a.out, a.frames, a.seeds, a.tasks)
    if a.baselines:
        rebase(a.out)


if __name__ == "__main__":
    main()
