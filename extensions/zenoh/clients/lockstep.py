#!/usr/bin/env python3
"""Drives a paused daemon in lockstep: a command, then `step 1` observing the robot, N times.

For each step the client publishes a velocity command on <prefix>/artifacts/<robot>/cmd, then
sends `step 1 <robot>` and waits for the answer, which carries the robot's state after the step:
by default as a message on <prefix>/control/in, answered on <prefix>/control/out (one message
each way); with --query as a query on <prefix>/control. Prints one JSON object: steps per second, the round trip of each step
(publish + query + answer) in microseconds at the 50th, 99th and 100th percentile, and whether
every answer's step count was exact. Run against `ssxd run artifacts/scenes/lockstep.json`
(BENCHMARKS.md, "Lockstep over Zenoh").
"""

import argparse
import json
import math
import sys
import time

from common import control, open_session


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", default="tcp/127.0.0.1:7447")
    ap.add_argument("--prefix", default="ssx/lab")
    ap.add_argument("--robot", default="rover")
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--query", action="store_true", help="use the control queryable, not the topics")
    a = ap.parse_args()

    session = open_session(a.endpoint)
    paused = control(session, a.prefix, "pause")
    step = paused["step"]
    cmd = session.declare_publisher(f"{a.prefix}/artifacts/{a.robot}/cmd", express=True)
    query = f"step 1 {a.robot}"
    if a.query:
        querier = session.declare_querier(f"{a.prefix}/control", express=True, timeout=5.0)

        def ask():
            for reply in querier.get(payload=query):
                return json.loads(reply.ok.payload.to_string())
            return None
    else:
        out = session.declare_subscriber(f"{a.prefix}/control/out")
        send = session.declare_publisher(f"{a.prefix}/control/in", express=True)
        time.sleep(0.5)  # let the subscription reach the daemon

        def ask():
            send.put(query)
            return json.loads(out.recv().payload.to_string())

    rtts = []
    exact = True
    start = None
    for k in range(a.warmup + a.steps):
        if k == a.warmup:
            start = time.perf_counter()
        t0 = time.perf_counter()
        cmd.put(json.dumps({"linear": 0.5, "angular": 0.5 * math.sin(k / 500.0)}))
        answer = ask()
        t1 = time.perf_counter()
        step += 1
        if answer is None or answer.get("step") != step or a.robot not in answer.get("observe", {}):
            exact = False
            print(f"step {step}: unexpected answer {answer}", file=sys.stderr)
            break
        if k >= a.warmup:
            rtts.append((t1 - t0) * 1e6)
    elapsed = time.perf_counter() - start
    control(session, a.prefix, "resume")
    rtts.sort()
    pct = lambda q: rtts[min(len(rtts) - 1, int(q * len(rtts)))]
    print(json.dumps({
        "steps": len(rtts),
        "steps_per_s": round(len(rtts) / elapsed, 1),
        "rtt_p50_us": round(pct(0.50), 1),
        "rtt_p99_us": round(pct(0.99), 1),
        "rtt_max_us": round(rtts[-1], 1),
        "exact": exact,
        "last_state": answer["observe"][a.robot] if answer else None,
    }))
    session.close()
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
