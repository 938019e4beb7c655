#!/usr/bin/env python3
"""Latency from a pose published here to the daemon's published state reflecting it.

Publishes poses at --rate on <prefix>/artifacts/<robot>/pose (x advancing by --spacing per
message), listens to <prefix>/artifacts/<robot>/state, and for each pose the state first shows,
records the time from its publication. Prints one JSON object: the latencies in microseconds and
how many poses never showed (superseded by a newer one within the same step). The scene must
publish the robot's state every step. Used by `cargo bench -p ssx-tests --bench zenoh`.
"""

import argparse
import json
import sys
import threading
import time

from common import open_session


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", default="tcp/127.0.0.1:7447")
    ap.add_argument("--prefix", default="ssx/lab")
    ap.add_argument("--robot", default="robot")
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--spacing", type=float, default=1e-4, help="m between consecutive poses")
    ap.add_argument("--start", type=float, default=-2.0, help="first x (m)")
    ap.add_argument("--express", action="store_true", help="publish with Zenoh's express flag")
    a = ap.parse_args()

    session = open_session(a.endpoint)
    sent = {}
    latencies = []
    lock = threading.Lock()

    def on_state(sample):
        now = time.perf_counter()
        x = json.loads(sample.payload.to_string())["position"][0]
        k = round((x - a.start) / a.spacing)
        with lock:
            t = sent.pop(k, None)
            if t is not None and abs(x - (a.start + k * a.spacing)) < a.spacing / 4:
                latencies.append((now - t) * 1e6)

    sub = session.declare_subscriber(f"{a.prefix}/artifacts/{a.robot}/state", on_state)
    # express: sent at once, not held back to fill a batch
    pub = session.declare_publisher(f"{a.prefix}/artifacts/{a.robot}/pose", express=a.express)
    time.sleep(0.5)  # let the subscription reach the daemon
    n = int(a.duration * a.rate)
    start = time.perf_counter()
    for k in range(1, n + 1):
        payload = json.dumps({"position": [a.start + k * a.spacing, -1.0, 0.12]})
        with lock:
            sent[k] = time.perf_counter()
        pub.put(payload)
        delay = start + k / a.rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    time.sleep(0.2)
    sub.undeclare()
    session.close()
    with lock:
        print(json.dumps({"sent": n, "latencies_us": latencies, "superseded": n - len(latencies)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
