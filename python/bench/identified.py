"""ssx's Crazyflie against utiasDSL drone-models' identified Crazyflie 2.x models (docs/robots.md,
"Checked against identified models").

The same command sequences, from hover at 20 m, go through ssx's ``crazyflie.json`` (sensor noise
off) and through drone-models' ``cf2x_L250`` models, integrated here with explicit Euler at 1 ms:

- attitude commands ``[roll, pitch, yaw, thrust]`` (the firmware's attitude mode) into
  ``so_rpy``, ``so_rpy_rotor`` and ``so_rpy_rotor_drag`` and into ssx's inner loop;
- rotor speeds into ``first_principles`` (rpm) and into ssx's motors (rad/s), no controller.

For each sequence it reports the position and attitude divergence at 0.5, 1 and 3 s between ssx
and each model, and between drone-models' own variants (the yardstick: ssx should be no further
from each model than the models are from one another).

    pip install drone-models
    python3 python/bench/identified.py            # the Markdown tables
    python3 python/bench/identified.py --controller pid --motor-tau 0.02

``--controller`` flies ssx's Crazyflie with another of its flight controllers (``cascaded``, the
artifact's, by default; ``pid`` and ``mellinger`` run the firmware's attitude mode on the attitude
sequences); ``--motor-tau`` replaces the artifact's identified motor response with a symmetric
first-order lag of that many seconds.
"""

import json
import math
import os
import sys
import tempfile

import drone_models  # noqa: F401  (sets SCIPY_ARRAY_API before scipy is imported)
import numpy as np
from scipy.spatial.transform import Rotation
from drone_models.core import parametrize
from drone_models.first_principles import dynamics as first_principles
from drone_models.so_rpy import dynamics as so_rpy
from drone_models.so_rpy_rotor import dynamics as so_rpy_rotor
from drone_models.so_rpy_rotor_drag import dynamics as so_rpy_rotor_drag

import ssx

DRONE = "cf2x_L250"
DT = 0.001
DURATION = 3.0
TIMES = (0.5, 1.0, 3.0)
# 20 m up: nothing comes near the ground plane ssx's ground effect assumes at z = 0.
START = np.array([0.0, 0.0, 20.0])
MASS = 0.0319
G = 9.81
RPM = 2 * math.pi / 60  # rad/s per rpm
# drone-models' motors m1..m4 at (+x, −y), (−x, −y), (−x, +y), (+x, +y) (its mixing matrix);
# ssx's X layout's rotors 0..3 at (+x, −y), (+x, +y), (−x, +y), (−x, −y): ssx rotor i is model motor
# TO_MODEL[i].
TO_MODEL = (0, 3, 2, 1)
RPM2THRUST = (0.0, -5.382196214637237e-7, 2.4582929831265485e-10)


def hover_rpm():
    """The motor speed (rpm) at which four motors carry the Crazyflie."""
    c0, c1, c2 = RPM2THRUST
    f = MASS * G / 4
    return (-c1 + math.sqrt(c1 * c1 - 4 * c2 * (c0 - f))) / (2 * c2)


def attitude_sequences():
    """Name -> rows [t, roll, pitch, yaw, thrust]."""
    mg = MASS * G
    chirp = []
    for k in range(301):
        t = k * 0.01
        # 0.5 Hz rising to 3 Hz over 3 s, 0.1 rad.
        phase = 2 * math.pi * (0.5 * t + 0.5 * (2.5 / 3.0) * t * t)
        chirp.append([t, 0.0, 0.1 * math.sin(phase), 0.0, mg])
    return {
        "thrust step (+20 % at 0.5 s)": [[0.0, 0, 0, 0, mg], [0.5, 0, 0, 0, 1.2 * mg]],
        "roll step (0.2 rad at 0.5 s)": [[0.0, 0, 0, 0, mg], [0.5, 0.2, 0, 0, mg / math.cos(0.2)]],
        "pitch chirp (0.1 rad, 0.5 to 3 Hz)": chirp,
    }


def rotor_sequences():
    """Name -> rows [t, rpm of model motors m1..m4]."""
    h = hover_rpm()
    up = [h * (1 + 0.01), h * (1 - 0.01)]  # +y motors faster, −y slower: a roll about +x
    return {
        "rotor thrust step (+5 % rpm at 0.5 s)": [[0.0, h, h, h, h], [0.5] + [1.05 * h] * 4],
        "rotor roll pulse (±1 % rpm, 0.5 to 0.6 s)": [
            [0.0, h, h, h, h],
            [0.5, up[1], up[1], up[0], up[0]],
            [0.6, h, h, h, h],
        ],
    }


def at(rows, t):
    """The row in force at time t (held from its time until the next row's)."""
    i = max(k for k, r in enumerate(rows) if r[0] <= t + 1e-9) if t >= rows[0][0] else 0
    return np.array(rows[i][1:], dtype=float)


def integrate(fn, rows, rotor_state):
    """Explicit Euler at DT of a drone-models dynamics function: states at TIMES (pos, quat xyzw).
    The orientation turns by the body rate over each step (drone-models warns against adding its
    quaternion derivative to the quaternion)."""
    pos, vel, ang = START.copy(), np.zeros(3), np.zeros(3)
    quat = np.array([0.0, 0.0, 0.0, 1.0])
    rotor = None if rotor_state is None else np.array(rotor_state, dtype=float)
    out = {}
    steps = int(round(DURATION / DT))
    for k in range(steps):
        t = k * DT
        cmd = at(rows, t)
        dp, _, dv, dw, dr = fn(pos=pos, quat=quat, vel=vel, ang_vel=ang, cmd=cmd, rotor_vel=rotor)
        quat = (Rotation.from_quat(quat) * Rotation.from_rotvec(ang * DT)).as_quat()
        pos, vel, ang = pos + dp * DT, vel + dv * DT, ang + dw * DT
        if rotor is not None:
            rotor = rotor + dr * DT
        done = round((k + 1) * DT, 6)
        if done in TIMES:
            out[done] = (pos.copy(), quat.copy())
    return out


def option(name, default):
    """The value after `name` on the command line, else `default`."""
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args[:-1] else default


def fly_ssx(commands):
    """ssx's Crazyflie through `commands` (the driver's schedule): states at TIMES."""
    library = os.path.join(ssx.data_dir(), "library", "crazyflie.json")
    with open(library) as f:
        flight = json.load(f)["driver"]["descriptor"]["flight"]
    flight["controller"] = option("--controller", "cascaded")
    tau = option("--motor-tau", None)
    if tau is not None:
        for k in ("spin_up", "spin_down"):
            flight["airframe"].pop(k, None)
        flight["airframe"]["motor_tau"] = float(tau)
    if "rotors" in commands:
        flight["airframe"]["start_speed"] = commands["rotors"][0][1]
    else:
        flight["airframe"]["start_speed"] = hover_rpm() * RPM
    quiet_imu = {k: 0.0 for k in ("gyro_noise_density", "gyro_random_walk", "accel_noise_density", "accel_random_walk")}
    quiet_mocap = {"position_noise": 0.0, "orientation_noise": 0.0, "velocity_noise": 0.0}
    scene = {
        "timestep": DT,
        "seed": 1,
        "artifacts": [{
            "name": "cf",
            "artifact": library,
            "pose": {"position": START.tolist()},
            "overrides": {
                "driver": {"trajectory": None, "commands": commands, "flight": flight},
                "sensors": {"imu": quiet_imu, "mocap": quiet_mocap},
            },
        }],
    }
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scene.json")
        with open(path, "w") as f:
            json.dump(scene, f)
        with ssx.Sim(path, workers=1) as sim:
            for t in TIMES:
                sim.step(int(round(t / DT)) - sim.steps)
                s = sim.states(["cf"])[0]
                out[t] = (s[0:3].copy(), s[3:7].copy())
    return out


def angle(q1, q2):
    """The rotation between two unit quaternions (rad)."""
    return 2 * math.acos(min(1.0, abs(float(np.dot(q1, q2)))))


def divergence(a, b):
    """(position m, attitude rad) at each of TIMES between two runs."""
    return {t: (float(np.linalg.norm(a[t][0] - b[t][0])), angle(a[t][1], b[t][1])) for t in TIMES}


def attitude_comparison():
    """{sequence: {pair: {t: (m, rad)}}}: the attitude sequences, ssx against the so_rpy models and
    the models against one another."""
    results = {}
    models = {
        "so_rpy": (parametrize(so_rpy, DRONE), None),
        "so_rpy_rotor": (parametrize(so_rpy_rotor, DRONE), [MASS * G]),
        "so_rpy_rotor_drag": (parametrize(so_rpy_rotor_drag, DRONE), [MASS * G]),
    }
    for name, rows in attitude_sequences().items():
        runs = {m: integrate(fn, rows, r) for m, (fn, r) in models.items()}
        runs["ssx"] = fly_ssx({"attitude": rows})
        results[name] = pairs(runs)
    return results


def rotor_comparison():
    """{sequence: {pair: {t: (m, rad)}}}: the rotor sequences, ssx against first_principles."""
    results = {}
    fp = parametrize(first_principles, DRONE)
    for name, rows in rotor_sequences().items():
        model = integrate(fp, rows, [hover_rpm()] * 4)
        ssx_rows = [[r[0]] + [r[1 + TO_MODEL[i]] * RPM for i in range(4)] for r in rows]
        results[name] = pairs({"first_principles": model, "ssx": fly_ssx({"rotors": ssx_rows})})
    return results


def pairs(runs):
    names = [n for n in runs if n != "ssx"]
    out = {f"ssx vs {n}": divergence(runs["ssx"], runs[n]) for n in names}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            out[f"{a} vs {b}"] = divergence(runs[a], runs[b])
    return out


def within_spread(table):
    """Per time: whether ssx's largest divergence from a model is within the models' largest from
    one another, for position and for attitude (None where only one model takes the sequence)."""
    ours = [d for k, d in table.items() if k.startswith("ssx vs")]
    theirs = [d for k, d in table.items() if not k.startswith("ssx vs")]
    if not theirs:
        return None
    return {
        t: tuple(max(d[t][i] for d in ours) <= max(d[t][i] for d in theirs) for i in (0, 1))
        for t in TIMES
    }


def main():
    if "--rotors-json" in sys.argv:
        # For the test: the rotor comparison as JSON (its own process: drone-models must set
        # SCIPY_ARRAY_API before anything imports scipy).
        print(json.dumps({s: {p: {str(t): v for t, v in d.items()} for p, d in table.items()}
                          for s, table in rotor_comparison().items()}))
        return
    for seq, table in {**attitude_comparison(), **rotor_comparison()}.items():
        print(f"\n**{seq}**: position (m) / attitude (rad) divergence\n")
        print("| pair | " + " | ".join(f"{t} s" for t in TIMES) + " |")
        print("|---|" + "---:|" * len(TIMES))
        for pair, d in table.items():
            print(f"| {pair} | " + " | ".join(f"{d[t][0]:.4f} / {d[t][1]:.4f}" for t in TIMES) + " |")
        spread = within_spread(table)
        if spread:
            yes = lambda b: "yes" if b else "no"  # noqa: E731
            cells = " | ".join(f"{yes(p)} / {yes(a)}" for p, a in spread.values())
            print(f"| ssx within the models' spread | {cells} |")


if __name__ == "__main__":
    main()
