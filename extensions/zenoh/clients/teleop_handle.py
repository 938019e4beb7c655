#!/usr/bin/env python3
"""Stand-in for a haptic device: a handle moving on a circle at 1 kHz, for `teleop.json`.

It publishes the handle's position and velocity on <prefix>/teleop/handle, prints the force
feedback it feels (<prefix>/teleop/force) ten times a second, and at the end a summary: samples
sent, feedback received, and how far the group's leader moved.

    python3 extensions/zenoh/clients/teleop_handle.py --duration 10
"""

import argparse
import json
import math
import sys
import threading
import time

from common import open_session


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", default="tcp/127.0.0.1:7447")
    ap.add_argument("--prefix", default="ssx/teleop")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds to run")
    ap.add_argument("--rate", type=float, default=1000.0, help="handle samples per second")
    ap.add_argument("--radius", type=float, default=0.05, help="circle radius (m)")
    ap.add_argument("--period", type=float, default=6.0, help="seconds per turn")
    ap.add_argument("--leader", default="uav_lead", help="artifact whose state is followed")
    a = ap.parse_args()

    session = open_session(a.endpoint)
    lock = threading.Lock()
    feedback = {"count": 0, "last": None}
    leader = {"first": None, "last": None}

    def on_force(sample):
        msg = json.loads(sample.payload.to_string())
        with lock:
            feedback["count"] += 1
            feedback["last"] = msg

    def on_state(sample):
        msg = json.loads(sample.payload.to_string())
        with lock:
            if leader["first"] is None:
                leader["first"] = msg["position"]
            leader["last"] = msg["position"]

    subs = [
        session.declare_subscriber(f"{a.prefix}/teleop/force", on_force),
        session.declare_subscriber(f"{a.prefix}/artifacts/{a.leader}/state", on_state),
    ]
    pub = session.declare_publisher(f"{a.prefix}/teleop/handle")
    w = 2 * math.pi / a.period
    start = time.monotonic()
    sent, next_print = 0, 0.1
    while True:
        t = time.monotonic() - start
        if t >= a.duration:
            break
        pos = [a.radius * math.cos(w * t), a.radius * math.sin(w * t), 0.0]
        vel = [-a.radius * w * math.sin(w * t), a.radius * w * math.cos(w * t), 0.0]
        pub.put(json.dumps({"position": pos, "velocity": vel}))
        sent += 1
        if t >= next_print:
            next_print += 0.1
            with lock:
                last = feedback["last"]
            if last is not None:
                f = last["force"]
                print(f"t={t:5.2f} s  handle=({pos[0]:+.3f}, {pos[1]:+.3f})  "
                      f"force=({f[0]:+.2f}, {f[1]:+.2f}, {f[2]:+.2f}) N  step={last['step']}",
                      flush=True)
        sleep = start + sent / a.rate - time.monotonic()
        if sleep > 0:
            time.sleep(sleep)
    for s in subs:
        s.undeclare()
    with lock:
        first, last, count = leader["first"], leader["last"], feedback["count"]
    moved = math.dist(first, last) if first and last else 0.0
    print(f"summary: sent {sent} handle samples, received {count} force messages, "
          f"leader moved {moved:.2f} m", flush=True)
    session.close()
    return 0 if count > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
