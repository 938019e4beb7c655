#!/bin/bash
# Issue 50/51 figures on a many-core machine (BENCHMARKS.md, "Rapier's parallel feature on 16
# cores"): ssxd as built in target/device/a/ (with the plugin libraries beside it) and built with
# `--features rapier-parallel` in target/device/b/; fast mode, one run each; figures to $OUT.
#   bash tests/device/rapier-parallel.sh first|second|third
set -u
OUT=${OUT:-$(mktemp -d)}
D=$PWD/target/device
export SSX_PLUGIN_PATH=$D/a
echo "cores: $(nproc); $(lscpu | grep 'Model name' | sed 's/  */ /g')"
one() { # label build scene workers duration
    local label=$1 bin=$D/$2/ssxd scene=$3 w=$4 dur=$5
    local start=$(date +%s.%N)
    timeout 150 "$bin" run "$scene" --engine rapier --mode fast --duration "$dur" --workers "$w" --quiet \
        --stats-json "$OUT/$label.json" > "$OUT/$label.log" 2>&1
    local rc=$? end=$(date +%s.%N)
    python3 - "$OUT/$label.json" "$label" "$rc" "$start" "$end" <<'PY'
import json, sys
path, label, rc, a, b = sys.argv[1:]
try:
    s = json.load(open(path))
    st, ph = s["step_time_us"], s["phase_time_us"]["physics"]
    print(f"{label:34s} rc={rc} rtf={s['achieved_rt_factor']:.2f} step p50={st['p50']:.0f} p99={st['p99']:.0f} physics p50={ph['p50']:.0f} faults={s['plugin_faults']} wall={float(b)-float(a):.1f}s")
except Exception as e:
    print(f"{label}: rc={rc} no stats ({e})")
PY
}
TB3=artifacts/scenes/turtlebot3-swarm.json
D1=artifacts/scenes/dispersal-1000.json
D10=artifacts/scenes/dispersal-10000.json
case "${1:-first}" in
first)
one tb3-a-w1 a $TB3 1 20
one tb3-a-w2 a $TB3 2 20
one tb3-a-w16 a $TB3 16 20
one tb3-b-w2 b $TB3 2 20
one tb3-b-w16 b $TB3 16 20
for w in 4 16; do
    one disp1000-a-w$w a $D1 $w 10
    one disp1000-b-w$w b $D1 $w 10
done
one disp10000-a-w16 a $D10 16 2
one disp10000-b-w16 b $D10 16 2
;;
second)
for w in 1 4 8; do one tb3-b-w$w b $TB3 $w 20; done
RAYON_NUM_THREADS=8 one tb3-b-w8-rayon8 b $TB3 8 20
for w in 1 2 4; do one disp1000-b-w$w b $D1 $w 10; one disp1000-a-w$w a $D1 $w 10; done
for w in 1 4 8; do one disp10000-b-w$w b $D10 $w 2; done
one disp10000-a-w1 a $D10 1 2
one disp10000-a-w4 a $D10 4 2
RAYON_NUM_THREADS=8 one disp10000-b-w8-rayon8 b $D10 8 2
;;
third)
# c/: the `rapier-parallel` build whose idle workers park through the physics (own_threads),
# against b/, the same build before that change; interleaved.
for w in 2 4 8 16; do one tb3-b-w$w b $TB3 $w 20; one tb3-c-w$w c $TB3 $w 20; done
for w in 4 16; do one disp10000-b-w$w b $D10 $w 2; one disp10000-c-w$w c $D10 $w 2; done
for w in 2 16; do one disp1000-b-w$w b $D1 $w 10; one disp1000-c-w$w c $D1 $w 10; done
;;
esac
