"""Remote lockstep with each step's round trip (issue 49): RUNS daemons, one after the other, each
driven for ROUNDS rounds of STEPS steps (a velocity command and `step(1)` with the rover observed,
`ssx.connect` on `lockstep.json`). Prints one JSON line a round: steps a second and the round
trip's percentiles (µs), and how many steps took over 1 ms.

    python3 python/bench/lockstep.py target/release/ssxd RUNS ROUNDS STEPS
"""
import json, os, socket, subprocess, sys, tempfile, time
import ssx

SSXD = sys.argv[1]
runs, rounds, steps = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = []
for run in range(runs):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    scene = json.load(open(ssx.scene("lockstep.json")))
    scene["extensions"][0]["descriptor"]["listen"] = [f"tcp/127.0.0.1:{port}"]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lockstep.json"); json.dump(scene, open(path, "w"))
        proc = subprocess.Popen([SSXD, "run", path, "--scene-dir", os.path.dirname(ssx.scene("lockstep.json")),
                                 "--paused", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            rig = ssx.connect(f"tcp/127.0.0.1:{port}", prefix="ssx/lab", timeout=20)
            rig.observe(["rover"]); rig.step(1)
            for r in range(rounds):
                lat = []
                t0 = time.perf_counter()
                for _ in range(steps):
                    a = time.perf_counter()
                    rig.command("rover", {"linear": 0.3, "angular": 0.0})
                    rig.step(1)
                    lat.append(time.perf_counter() - a)
                rate = steps / (time.perf_counter() - t0)
                lat.sort()
                pct = lambda p: lat[int(p * (len(lat) - 1))] * 1e6
                slow = sum(x for x in lat if x > 1e-3)
                out.append(dict(run=run, round=r, rate=rate, p50=pct(.5), p90=pct(.9), p99=pct(.99), p999=pct(.999), max=lat[-1]*1e6,
                                over1ms=sum(1 for x in lat if x > 1e-3), time_over1ms=slow, total=sum(lat)))
                print(json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in out[-1].items()}), flush=True)
            rig.close()
        finally:
            proc.terminate(); proc.wait(20)
