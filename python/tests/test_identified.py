"""ssx's Crazyflie against drone-models' identified first-principles model (python/bench/identified.py):
the same rotor speeds from hover give the same flight. Skipped without drone-models."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

if importlib.util.find_spec("drone_models") is None:
    pytest.skip("drone-models is not installed (pip install drone-models)", allow_module_level=True)

BENCH = os.path.join(os.path.dirname(__file__), "..", "bench", "identified.py")


def test_the_same_rotor_speeds_fly_the_crazyflie_as_drone_models_first_principles_model():
    out = subprocess.run([sys.executable, BENCH, "--rotors-json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    step = results["rotor thrust step (+5 % rpm at 0.5 s)"]["ssx vs first_principles"]
    pulse = results["rotor roll pulse (±1 % rpm, 0.5 to 0.6 s)"]["ssx vs first_principles"]
    # A 5 % faster climb for 2.5 s: within 2 cm (ssx's thrust acts from the step after it is
    # asked: about 5 mm of free fall in the first step's worth over 0.5 s).
    for t in ("0.5", "1.0", "3.0"):
        assert step[t][0] < 0.02 and step[t][1] < 1e-6, (t, step[t])
    # A roll pulse: the vehicle tumbles (open loop, about 3 rad in 3 s); within 1 cm and 2 mrad at
    # 1 s, 6 cm and 5 mrad at 3 s.
    assert pulse["1.0"][0] < 0.01 and pulse["1.0"][1] < 0.002, pulse
    assert pulse["3.0"][0] < 0.06 and pulse["3.0"][1] < 0.005, pulse
