#!/bin/bash
# Issue 60's 16-core figures (BENCHMARKS.md "Issue 60 at its close", "On 16 cores"): the Python
# batch bench on every core, whole runs of this build against the issue's starting build, and 16
# single-worker ssxd processes of a small world. Figures to $OUT (the log, worlds16.json and
# runs.tar.gz with each run's stats). What it reads, under .dev/ (ignored: `/.dev/` in
# .git/info/exclude; carried to the device machine):
#   py.tar.gz    the `ssx` package: pip install --no-deps --target DIR ./python, then
#                tar czf .dev/py.tar.gz -C DIR --exclude=libssx_zenoh.so --exclude=__pycache__ ssx
#   whl/*.whl    gymnasium, pettingzoo and farama-notifications (the machine has no index):
#                python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12
#                --platform manylinux_2_17_x86_64 -d .dev/whl gymnasium==1.4.0 pettingzoo==1.27.0
#                farama-notifications==0.0.6
#   new.tar.gz, base.tar.gz   new/ and base/, each ssxd with libssx_driver_ground.so and
#                libssx_sensors.so beside it, stripped (strip -o new/ssxd target/release/ssxd ...;
#                tar czf .dev/new.tar.gz new): this build, and fa2e2f9's (the landed code before
#                issue 60's work, built in a worktree)
#   bash tests/device/worlds.sh          # SHORT=1: a tenth of everything, to try the script

set -u
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
D=$PWD/.dev
F=1; [ -n "${SHORT:-}" ] && F=10   # SHORT=1 divides every run's length by 10
X=$(mktemp -d)   # new/, base/ and the wheels unpacked
W=$(mktemp -d)   # each run's stats and log; packed into $OUT/runs.tar.gz at the end
echo "cores: $(nproc); $(lscpu | grep 'Model name' | sed 's/  */ /g'); $(date -u +%FT%TZ)"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$X/site" "$D"/whl/*.whl || exit 1
P=$(mktemp -d) && tar xzf "$D/py.tar.gz" -C "$P" || exit 1
for b in new base; do tar xzf "$D/$b.tar.gz" -C "$X" || exit 1; done
export PYTHONPATH=$P:$X/site PYTHONUNBUFFERED=1
python3 -c 'import ssx.envs' || exit 1

# 1. The batch from Python on every core, four times the VM's batches.
timeout 330 python3 python/bench/worlds.py --workers "$(nproc)" --scale $((4 / (F > 1 ? 4 : 1))) ${SHORT:+--quick} --skip-loop --json "$OUT/worlds16.json"
echo "python bench rc=$?"

# 2. Whole runs, one worker, kinematic, fast: this build (new) against fa2e2f9 (base), in turn.
one() { # label build scene duration
    local label=$1 b=$2 scene=$3 dur=$4
    local start=$(date +%s.%N)
    SSX_PLUGIN_PATH=$X/$b timeout 120 "$X/$b/ssxd" run "$scene" --engine kinematic --mode fast --workers 1 \
        --duration "$(python3 -c "print($dur / $F)")" --quiet --stats-json "$W/$label.json" > "$W/$label.log" 2>&1
    local rc=$? end=$(date +%s.%N)
    python3 - "$W/$label.json" "$label" "$rc" "$start" "$end" <<'PY'
import json, sys
path, label, rc, a, b = sys.argv[1:]
try:
    s = json.load(open(path))
    ph = s["phase_time_us"]
    means = " ".join(f"{k}={v['mean']:.0f}" for k, v in ph.items() if isinstance(v, dict) and "mean" in v)
    print(f"{label:24s} rc={rc} rtf={s['achieved_rt_factor']:.2f} wall={float(b) - float(a):.2f}s mean us: {means}")
except Exception as e:
    print(f"{label}: rc={rc} no stats ({e})")
PY
}
for i in 1 2 3; do
    one d1000-base-$i base artifacts/scenes/dispersal-1000.json 60
    one d1000-new-$i new artifacts/scenes/dispersal-1000.json 60
done
for i in 1 2; do
    one d100-base-$i base artifacts/scenes/dispersal.json 600
    one d100-new-$i new artifacts/scenes/dispersal.json 600
    one d10000-base-$i base artifacts/scenes/dispersal-10000.json 5
    one d10000-new-$i new artifacts/scenes/dispersal-10000.json 5
done

# 3. 16 single-worker processes, each one 4-robot world (the dispersal task's scene, timestep 0.1,
# a 12-ray ring every step), 1,000,000 steps each: agent-steps a second of the whole machine.
# The robots stand on a 2 x 2 grid 0.6 m apart (fa2e2f9 knows no seeded start), at rest.
SCENE=$(python3 - "$W" <<'PY'
import json, sys
import ssx.envs as e
path = e.dispersal_scene(4, timestep=0.1, directory=sys.argv[1])
s = json.load(open(path))
robot = next(a for a in s["artifacts"] if a["name"] == "robot")
robot["pose"]["position"] = [-0.3, -0.3, 0.12]
robot["replicate"] = {"grid": {"count": 4, "columns": 2, "spacing": [0.6, 0.6]}}
json.dump(s, open(path, "w"), indent=1)
print(path)
PY
)
for b in base new; do
    start=$(date +%s.%N)
    for k in $(seq 1 "$(nproc)"); do
        SSX_PLUGIN_PATH=$X/$b timeout 120 "$X/$b/ssxd" run "$SCENE" --mode fast --workers 1 --steps $((1000000 / F)) --quiet \
            > "$W/procs-$b-$k.log" 2>&1 &
    done
    wait
    end=$(date +%s.%N)
    python3 -c "import sys; n=$(nproc); w=$end-$start; print(f'$b: {n} processes x 4 robots x {1e6/$F:.0f} steps in {w:.2f} s: {n*4e6/$F/w:,.0f} agent-steps/s')"
done
tar czf "$OUT/runs.tar.gz" -C "$W" .
