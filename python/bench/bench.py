"""The Python package's benchmarks (BENCHMARKS.md "Python"): release build, this machine.

    python3 python/bench/bench.py [--quick]

Each figure is the median of `rounds` rounds; printed as one table.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ssx
from ssx import envs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SSXD = os.path.join(ROOT, "target", "release", "ssxd")


def median(f, rounds):
    return statistics.median(f() for _ in range(rounds))


def loop_rate(scene, steps, batched, rounds, **kw):
    """Steps a second of a Python loop: step(1), states(), a batched command."""
    sim = ssx.Sim(scene, **kw)
    sim.step(10)
    names = [n for n in sim.artifact_names if sim.command_fields(f"artifacts/{n}/cmd")]
    cmd = np.tile([[0.3, 0.1]], (len(names), 1))
    out = np.empty((len(sim.body_names), 13))

    def once():
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step(1)
            sim.states(out=out)
            if batched and names:
                sim.command_many(names, cmd)
        return steps / (time.perf_counter() - t0)

    return median(once, rounds), len(names)


def step_n_vs_ssxd(scene, steps, rounds, engine):
    """Simulated steps a second: sim.step(n) in Python against ssxd run --mode fast."""
    sim = ssx.Sim(scene, engine=engine, workers=2)

    def inproc():
        sim.reset()
        t0 = time.perf_counter()
        sim.step(steps)
        return steps / (time.perf_counter() - t0)

    def daemon():
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([SSXD, "run", scene, "--mode", "fast", "--steps", str(steps), "--engine", engine,
                            "--workers", "2", "--quiet", "--stats-json", f.name], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            s = json.load(open(f.name))
            return s["steps"] / s["wall_time_s"]

    a, b = [], []
    for _ in range(rounds):  # interleaved
        a.append(inproc())
        b.append(daemon())
    return statistics.median(a), statistics.median(b)


def reset_ms(scene, rounds, **kw):
    sim = ssx.Sim(scene, **kw)
    sim.step(100)

    def once():
        sim.step(10)
        t0 = time.perf_counter()
        sim.reset()
        return (time.perf_counter() - t0) * 1e3

    return median(once, rounds)


def env_rate(agents, cycles, rounds):
    env = envs.dispersal(agents=agents, workers=2, max_cycles=10**9)
    high = env.action_space("robot_0").high

    def once():
        env.reset(seed=3)
        acts = {a: high * 0.5 for a in env.agents}
        t0 = time.perf_counter()
        for _ in range(cycles):
            env.step(acts)
        return cycles / (time.perf_counter() - t0)

    return median(once, rounds)


def remote_rate(steps, rounds):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    scene = json.load(open(ssx.scene("lockstep.json")))
    scene["extensions"][0]["descriptor"]["listen"] = [f"tcp/127.0.0.1:{port}"]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lockstep.json")
        json.dump(scene, open(path, "w"))
        proc = subprocess.Popen([SSXD, "run", path, "--scene-dir", os.path.dirname(ssx.scene("lockstep.json")),
                                 "--paused", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            rig = ssx.connect(f"tcp/127.0.0.1:{port}", prefix="ssx/lab", timeout=20)
            rig.observe(["rover"])
            rig.step(1)

            def once():
                t0 = time.perf_counter()
                for _ in range(steps):
                    rig.command("rover", {"linear": 0.3, "angular": 0.0})
                    rig.step(1)
                return steps / (time.perf_counter() - t0)

            r = median(once, rounds)
            rig.close()
            return r
        finally:
            proc.terminate()
            proc.wait(20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    rounds = 3
    k = 0.2 if a.quick else 1.0
    rows = []
    files = tempfile.TemporaryDirectory(prefix="ssx-bench-")
    os.makedirs(os.path.join(files.name, "100")), os.makedirs(os.path.join(files.name, "1000"))
    d100 = envs.dispersal_scene(100, directory=os.path.join(files.name, "100"))
    d1000 = envs.dispersal_scene(1000, directory=os.path.join(files.name, "1000"))
    r, n = loop_rate(ssx.scene("lockstep.json"), int(20000 * k), True, rounds, workers=2)
    rows.append(("loop step(1)+states()+command_many, lockstep.json (quickstart + rover), 2 workers", f"{r:,.0f} steps/s", f"{n} commanded"))
    r, n = loop_rate(d100, int(5000 * k), True, rounds, workers=2)
    rows.append(("loop step(1)+states()+command_many, dispersal 100 (kinematic), 2 workers", f"{r:,.0f} steps/s", f"{n} commanded"))
    # The shipped scenes (robots on their own behaviour): ssxd runs exactly the same world.
    for scene, name, engine in [(ssx.scene("dispersal.json"), "dispersal.json 100", "kinematic"),
                                (ssx.scene("dispersal-1000.json"), "dispersal-1000.json", "kinematic"),
                                (ssx.scene("dispersal.json"), "dispersal.json 100", "rapier"),
                                (ssx.scene("dispersal-1000.json"), "dispersal-1000.json", "rapier")]:
        steps = int((3000 if "1000" in name else 10000) * k * (0.3 if engine == "rapier" else 1))
        p, q = step_n_vs_ssxd(scene, steps, rounds, engine)
        rows.append((f"sim.step({steps}) vs ssxd run --mode fast, {name} ({engine}), 2 workers",
                     f"{p:,.0f} vs {q:,.0f} steps/s", f"overhead {100 * (q / p - 1):+.1f}%"))
    rows.append(("reset(), dispersal 1000 (kinematic)", f"{reset_ms(d1000, 5, workers=2):.1f} ms", ""))
    rows.append(("reset(), dispersal-1000.json (kinematic)", f"{reset_ms(ssx.scene('dispersal-1000.json'), 5, engine='kinematic', workers=2):.1f} ms", ""))
    rows.append(("reset(), exploration.json", f"{reset_ms(ssx.scene('exploration.json'), 5, workers=2):.1f} ms", ""))
    for agents in (10, 100, 1000):
        rows.append((f"PettingZoo dispersal env.step, {agents} agents (10 sim steps each)",
                     f"{env_rate(agents, int(200 * k) if agents < 1000 else int(50 * k), rounds):,.0f} env steps/s", ""))
    rows.append(("remote lockstep (ssx.connect), command + step(1)", f"{remote_rate(int(3000 * k), rounds):,.0f} steps/s", ""))
    width = max(len(r[0]) for r in rows)
    for r in rows:
        print(f"{r[0]:<{width}}  {r[1]:>26}  {r[2]}")


if __name__ == "__main__":
    sys.exit(main())
