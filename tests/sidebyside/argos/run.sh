#!/usr/bin/env bash
# ssx against ARGoS 3 on the dispersal scenes, side by side (BENCHMARKS.md "ssx and ARGoS side by
# side"). Builds ARGoS 3 from a source tree (github.com/ilpincy/argos3; the foot-bot's proximity
# ring patched to ssx's 12 rays of 2 m, footbot-ring.patch; no Qt, no Lua, no Bullet engine),
# this controller, and times both simulators on the same scene with farm-bench, in turn.
#
#   tests/sidebyside/argos/run.sh ARGOS_SOURCE [SECONDS] [RUNS] [SCENE ...]
#
# SSX_ARGOS_INDEX=hash gives dynamics2d the spatial hash instead of its default tree, and
# SSX_ARGOS_ITERATIONS=1 one physics step a tick instead of its default 10 (scene.py).
# SSX_SIDEBYSIDE_WARMUP is farm-bench's runs not counted (default 1).
# ssx runs its kinematic engine in fast mode on 2 workers; ARGoS runs dynamics2d on 2 threads.
# Both sense every step (100 Hz): the ssx scene is rewritten with the range ring's rate divider
# at 1 (the shipped scenes read it at 10 Hz, staggered; ARGoS has no such setting).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src=$(cd "$1" && pwd)
seconds=${2:-60}
runs=${3:-5}
shift $(($# < 3 ? $# : 3))
scenes=("$@")
[ ${#scenes[@]} -gt 0 ] || scenes=(dispersal dispersal-1000 dispersal-10000)
build=$src/build
out=${SSX_SIDEBYSIDE_OUT:-/tmp/ssx-argos}
mkdir -p "$out"

if [ ! -x "$build/core/argos3" ]; then
    grep -q "ssx benchmark" "$src/src/plugins/robots/foot-bot/simulator/footbot_entity.cpp" \
        || patch -d "$src" -p1 < "$here/footbot-ring.patch"
    # Only what the foot-bot needs: no other robots, no Bullet, no ARGoS tests.
    printf 'add_subdirectory(generic)\nadd_subdirectory(foot-bot)\n' > "$src/src/plugins/robots/CMakeLists.txt"
    sed -i 's/^add_subdirectory(dynamics3d)/#&/' "$src/src/plugins/simulator/physics_engines/CMakeLists.txt"
    sed -i 's/^  add_subdirectory(testing)/  #&/' "$src/src/CMakeLists.txt"
    mkdir -p "$build"
    (cd "$build" && cmake ../src -DCMAKE_BUILD_TYPE=Release -DARGOS_DOCUMENTATION=OFF \
        -DARGOS_INSTALL_LDSOCONF=OFF >/dev/null && make -j"$(nproc)" >/dev/null)
fi
# ARGoS's plugin and library paths (its script reads LD_LIBRARY_PATH unset or not).
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
# shellcheck disable=SC1091
. "$build/setup_env.sh"
g++ -O2 -std=c++17 -fPIC -shared -o "$out/libssx_dispersal.so" "$here/dispersal.cpp" \
    -I"$src/src" -I"$build" -L"$build/core" -L"$build/plugins/robots/generic" \
    -L"$build/plugins/robots/foot-bot" -largos3core_simulator \
    -largos3plugin_simulator_genericrobot -largos3plugin_simulator_footbot

[ -x "$root/target/release/ssxd" ] || cargo build --release -p ssxd --manifest-path "$root/Cargo.toml"
for s in "${scenes[@]}"; do
    python3 - "$root/artifacts/scenes/$s.json" "$out/$s.json" <<'PY'
import json, sys
scene = json.load(open(sys.argv[1]))
for a in scene["artifacts"]:
    ring = a.get("overrides", {}).get("sensors", {}).get("range")
    if ring:
        ring.update(rate_divider=1, stagger=False)
# Its library paths stay those of the shipped scene's folder.
scene["artifacts"] = [dict(a, artifact=a["artifact"].replace("../", sys.argv[1].rsplit("/", 2)[0] + "/", 1)) for a in scene["artifacts"]]
json.dump(scene, open(sys.argv[2], "w"), indent=1)
PY
    python3 "$here/scene.py" "$out/$s.json" "$out/libssx_dispersal.so" "$seconds" 2 "${SSX_ARGOS_INDEX:-bbtree}" ${SSX_ARGOS_ITERATIONS:+"$SSX_ARGOS_ITERATIONS"} > "$out/$s.argos"
    echo "== $s, $seconds simulated s: A = ssx (kinematic, 2 workers), B = ARGoS 3 (dynamics2d, ${SSX_ARGOS_INDEX:-bbtree}, ${SSX_ARGOS_ITERATIONS:-10} iterations a tick, 2 threads)"
    farm-bench -n "$runs" --warmup "${SSX_SIDEBYSIDE_WARMUP:-1}" --timeout 3600 \
        --vs "sh -c 'exec $build/core/argos3 -n -c $out/$s.argos >>$out/$s-argos.log 2>&1'" \
        -- sh -c "exec $root/target/release/ssxd run $out/$s.json --engine kinematic --mode fast --workers 2 --duration $seconds --quiet --stats-json $out/$s-ssx-stats.json >>$out/$s-ssx.log 2>&1"
done
