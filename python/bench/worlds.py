"""Many worlds (BENCHMARKS.md "Many worlds"): agent-steps a second of the batched dispersal task
against a loop over one Sim per world, the batch's build time and memory, and reset(mask).

    python3 python/bench/worlds.py [--quick] [--workers N] [--json PATH]

Random actions are drawn as one array; one action is 0.1 s simulated (0.1 x 1 or 0.01 x 10).
Each figure is the median of `rounds` rounds. Release build; write down the machine.
"""

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np

import ssx
from ssx import envs


def rss_mib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def median(f, rounds):
    return statistics.median(f() for _ in range(rounds))


def batch_rates(agents, worlds, timestep, spa, actions, rounds, workers):
    """(env, raw, commanded) agent-steps/s of the batched task: env is `SwarmBatch.step`, raw
    `Worlds.step` alone, commanded `Worlds.command_many` and `Worlds.step` with the env's
    actions. The task's drivers drop a command 1 s after it came, so raw's robots are at rest
    for most of a round; commanded moves them as the env does, and env/commanded is what the
    env layer (observations, reward, the arrays) costs."""
    b = envs.dispersal(agents=agents, worlds=worlds, timestep=timestep, steps_per_action=spa,
                       max_cycles=10**9, workers=workers)
    b.reset(seed=1)
    rng = np.random.default_rng(0)
    high = b.action_space.high
    acts = rng.uniform(-high, high, size=(actions, worlds, agents) + b.action_space.shape)

    def env():
        t0 = time.perf_counter()
        for a in acts:
            b.step(a)
        return actions * worlds * agents / (time.perf_counter() - t0)

    def raw():
        w = b.worlds
        t0 = time.perf_counter()
        for _ in range(actions):
            w.step(spa)
        return actions * worlds * agents / (time.perf_counter() - t0)

    def commanded():
        w, names = b.worlds, b.names
        t0 = time.perf_counter()
        for a in acts:
            w.command_many(names, np.clip(a, -high, high))
            w.step(spa)
        return actions * worlds * agents / (time.perf_counter() - t0)

    env_rate, raw_rate, cmd_rate = [], [], []
    for _ in range(rounds):  # interleaved
        env_rate.append(env())
        raw_rate.append(raw())
        cmd_rate.append(commanded())
    b.close()
    return statistics.median(env_rate), statistics.median(raw_rate), statistics.median(cmd_rate)


def sim_loop_rate(agents, worlds, timestep, spa, actions, rounds):
    """Agent-steps/s of a Python loop over one single-world env (ParallelSwarmEnv) a world."""
    es = [envs.dispersal(agents=agents, seed=1 + k, timestep=timestep, steps_per_action=spa,
                         max_cycles=10**9, workers=1) for k in range(worlds)]
    for e in es:
        e.reset()
    rng = np.random.default_rng(0)
    high = es[0].action_space(es[0].agents[0]).high
    acts = rng.uniform(-high, high, size=(actions, worlds, agents, len(high)))

    def once():
        t0 = time.perf_counter()
        for a in acts:
            for k, e in enumerate(es):
                e.step({n: a[k, i] for i, n in enumerate(e.agents)})
        return actions * worlds * agents / (time.perf_counter() - t0)

    return median(once, rounds)


def build_and_memory(agents, worlds, workers):
    with tempfile.TemporaryDirectory() as d:
        scene = envs.dispersal_scene(agents, directory=d, timestep=0.1)
        before = rss_mib()
        t0 = time.perf_counter()
        w = ssx.Worlds(scene, worlds, workers=workers)
        took = time.perf_counter() - t0
        grown = rss_mib() - before
        w.step(10)
        after_steps = rss_mib()
        mask = np.zeros(worlds, dtype=bool)
        mask[::8] = True
        resets = []
        for i in range(20):
            t0 = time.perf_counter()
            w.reset(np.roll(mask, i))
            resets.append(time.perf_counter() - t0)
        w.close()
        return took, grown, after_steps, statistics.median(resets)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--json")
    p.add_argument("--scale", type=int, default=1, help="multiply every batch size")
    p.add_argument("--skip-loop", action="store_true", help="leave out the loop over one Sim a world")
    o = p.parse_args()
    rounds, actions = (3, 20) if o.quick else (5, 50)
    workers = o.workers or os.cpu_count()
    s = o.scale
    rows = {}
    took, grown, after, reset = build_and_memory(4, 1024 * s, workers)
    rows["build"] = {"seconds": took, "rss_mib": grown, "rss_after_steps_mib": after, "reset_eighth_ms": reset * 1e3}
    print(f"{1024 * s} worlds of 4 robots: built in {took:.2f} s, RSS +{grown:.0f} MiB "
          f"(process {after:.0f} MiB after 10 steps); reset of 1/8: {reset * 1e3:.2f} ms", flush=True)
    for agents, worlds, timestep, spa in [(4, 1024 * s, 0.1, 1), (10, 256 * s, 0.1, 1), (100, 16 * s, 0.1, 1),
                                          (4, 1024 * s, 0.01, 10), (10, 256 * s, 0.01, 10)]:
        env_rate, raw_rate, cmd_rate = batch_rates(agents, worlds, timestep, spa, actions, rounds, workers)
        key = f"{agents} robots x {worlds} worlds, {timestep} x {spa}"
        rows[key] = {"env": env_rate, "raw": raw_rate, "env/raw": env_rate / raw_rate,
                     "commanded": cmd_rate, "env/commanded": env_rate / cmd_rate}
        print(f"{key:40s} env {env_rate:12,.0f}  raw Worlds.step {raw_rate:12,.0f}  env/raw {env_rate / raw_rate:.2f}"
              f"  commanded {cmd_rate:12,.0f}  env/commanded {env_rate / cmd_rate:.2f}", flush=True)
    for agents, timestep, spa in [] if o.skip_loop else [(4, 0.1, 1), (10, 0.1, 1)]:
        loop = sim_loop_rate(agents, 32, timestep, spa, 10 if o.quick else 20, rounds)
        key = f"{agents} robots, {timestep} x {spa}"
        batch = rows[f"{agents} robots x {1024 * s if agents == 4 else 256 * s} worlds, {timestep} x {spa}"]["env"]
        rows[f"sim loop {key}"] = {"loop": loop, "batch/loop": batch / loop}
        print(f"loop over Sims, {key:28s} {loop:12,.0f}  batch/loop {batch / loop:.1f}x", flush=True)
    if workers > 1:
        one, one_raw, _ = batch_rates(4, 1024 * s, 0.1, 1, actions, rounds, 1)
        many = rows[f"4 robots x {1024 * s} worlds, 0.1 x 1"]
        rows["workers"] = {"1": one, str(workers): many["env"], "ratio": many["env"] / one,
                           "raw 1": one_raw, f"raw {workers}": many["raw"], "raw ratio": many["raw"] / one_raw}
        print(f"4 robots x {1024 * s}: env 1 worker {one:,.0f}, {workers} workers {many['env']:,.0f}: "
              f"{many['env'] / one:.2f}x; raw {one_raw:,.0f} -> {many['raw']:,.0f}: {many['raw'] / one_raw:.2f}x",
              flush=True)
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
