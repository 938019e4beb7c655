"""The Crazyflie's hover with every effect on (docs/robots.md "Hover with every effect on"): the
library's `crazyflie.json` (identified motors, drag, ground effect, battery, IMU and
motion-capture noise and latency) taking off from the ground to 0.5 m, with each of its flight
controllers; the root mean square and the largest distance from the hover point over the last
10 s of 30 s, sampled every 10 ms, for three seeds (the sensors' noise).

    SSX_PLUGIN_PATH=target/release python3 python/bench/hover.py

The same with a symmetric 20 ms motor lag in place of the identified motors, and Mellinger's
controller told the vehicle's mass (`"mellinger": {"mass": 0.0319}`), as rows of their own.
Every row keeps the artifact's rotor inertia (the reaction torque of the motors' speed changes).
"""

import json
import os
import tempfile

import numpy as np

import ssx

HEIGHT = 0.5
SECONDS = 30
SEEDS = (1, 2, 3)


def fly(controller, motor_tau=None, mass=None, seed=1):
    """(rms, max) distance from the hover point over the last 10 s."""
    library = os.path.join(ssx.data_dir(), "library", "crazyflie.json")
    with open(library) as f:
        flight = json.load(f)["driver"]["descriptor"]["flight"]
    flight["controller"] = controller
    if motor_tau is not None:
        for k in ("spin_up", "spin_down"):
            flight["airframe"].pop(k, None)
        flight["airframe"]["motor_tau"] = motor_tau
    if mass is not None:
        flight["mellinger"] = {"mass": mass}
    scene = {
        "timestep": 0.001,
        "seed": seed,
        "artifacts": [
            {"name": "ground", "artifact": os.path.join(ssx.data_dir(), "library", "ground.json")},
            {
                "name": "cf",
                "artifact": library,
                "pose": {"position": [0, 0, 0.03]},
                "overrides": {"driver": {"trajectory": {"hover": {"position": [0, 0, HEIGHT]}}, "flight": flight}},
            },
        ],
    }
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "hover.json")
        with open(path, "w") as f:
            json.dump(scene, f)
        with ssx.Sim(path, workers=1) as sim:
            sim.step((SECONDS - 10) * 1000)
            errors = []
            for _ in range(1000):
                sim.step(10)
                errors.append(np.linalg.norm(sim.states(["cf"])[0][:3] - [0, 0, HEIGHT]))
    e = np.array(errors)
    return float(np.sqrt((e**2).mean())), float(e.max())


def main():
    rows = [
        ("cascaded (the artifact's)", dict(controller="cascaded")),
        ("firmware PID", dict(controller="pid")),
        ("firmware Mellinger", dict(controller="mellinger")),
        ("firmware Mellinger, told the mass", dict(controller="mellinger", mass=0.0319)),
        ("cascaded, 20 ms motor lag", dict(controller="cascaded", motor_tau=0.02)),
        ("firmware PID, 20 ms motor lag", dict(controller="pid", motor_tau=0.02)),
        ("firmware Mellinger, 20 ms motor lag", dict(controller="mellinger", motor_tau=0.02)),
        ("firmware Mellinger, 20 ms motor lag, told the mass", dict(controller="mellinger", motor_tau=0.02, mass=0.0319)),
    ]
    print(f"{'controller':52s} {'rms (cm)':>14s} {'max (cm)':>14s}   seeds {SEEDS}")
    for label, kw in rows:
        runs = [fly(seed=s, **kw) for s in SEEDS]
        rms = [r for r, _ in runs]
        mx = [m for _, m in runs]
        print(f"{label:52s} {min(rms) * 100:6.2f}–{max(rms) * 100:6.2f} {min(mx) * 100:6.2f}–{max(mx) * 100:6.2f}", flush=True)


if __name__ == "__main__":
    main()
