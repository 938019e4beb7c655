#!/usr/bin/env python3
"""Stand-in for a real robot under motion capture, for `virtual-obstacles.json`.

It publishes the robot's pose at 100 Hz on <prefix>/artifacts/robot/pose while driving it
straight towards the simulated north wall (+y), prints the virtual range readings it gets back
on <prefix>/artifacts/robot/sensors/range, then stops and prints the last reading's ray towards
the wall beside the distance the geometry says.

    python3 extensions/zenoh/clients/robot_pose.py --duration 6
"""

import argparse
import json
import math
import sys
import threading
import time

from common import open_session

WALL_FACE_Y = 2.45  # the north wall's centre line is y = 2.5, 0.1 m thick


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", default="tcp/127.0.0.1:7447")
    ap.add_argument("--prefix", default="ssx/lab")
    ap.add_argument("--duration", type=float, default=6.0, help="seconds of driving")
    ap.add_argument("--speed", type=float, default=0.25, help="m/s towards the wall")
    a = ap.parse_args()

    session = open_session(a.endpoint)
    lock = threading.Lock()
    ranges = {"count": 0, "last": None}

    def on_range(sample):
        msg = json.loads(sample.payload.to_string())
        with lock:
            ranges["count"] += 1
            ranges["last"] = msg

    sub = session.declare_subscriber(f"{a.prefix}/artifacts/robot/sensors/range", on_range)
    pub = session.declare_publisher(f"{a.prefix}/artifacts/robot/pose")
    start = time.monotonic()
    y, n = 0.0, 0
    while True:
        t = time.monotonic() - start
        if t >= a.duration + 0.5:
            break
        y = a.speed * min(t, a.duration)  # drive, then stand still for half a second
        pub.put(json.dumps({"position": [0.0, y, 0.12], "orientation": [1.0, 0.0, 0.0, 0.0]}))
        n += 1
        if n % 50 == 0:
            with lock:
                last = ranges["last"]
            if last is not None:
                v = last["values"]
                k = min(range(len(v)), key=v.__getitem__)
                print(f"t={t:4.1f} s  robot y={y:.2f} m  nearest {v[k]:.2f} m on ray {k} "
                      f"({360 * k / len(v):.0f} deg)  ahead {v[4]:.2f} m", flush=True)
        time.sleep(max(0.0, start + n / 100.0 - time.monotonic()))
    sub.undeclare()
    with lock:
        last, count = ranges["last"], ranges["count"]
    session.close()
    if last is None:
        print("summary: no range readings received", flush=True)
        return 1
    ahead = last["values"][4]
    expected = WALL_FACE_Y - y
    print(f"summary: sent {n} poses, received {count} range readings; robot at y={y:.3f} m, "
          f"ray ahead reads {ahead:.3f} m, wall is {expected:.3f} m away", flush=True)
    return 0 if abs(ahead - expected) < 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
