#!/usr/bin/env bash
# A sweep on a real single-node Slurm: tests/slurm/single-node.sh SSXD
# Debian's slurm-wlm and munge (installed by .ci/run): starts munged when it is not running, and
# slurmctld and slurmd with a slurm.conf generated here for this host (free ports, state under a
# temporary directory); writes the exploration scene's 2 × 3 sweep as a job array of three tasks
# with `ssxd sweep --slurm --chunk 2`, submits it with `sbatch --wait`, collects it with
# `ssxd sweep --summary` and checks that all six runs ran, in three tasks, and succeeded. Stops the
# daemons it started. Needs root (the daemons run as root here).
set -euo pipefail
ssxd=$(realpath "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/ssx-slurm-XXXXXX)
fail() { echo "FAIL: $*" >&2; exit 1; }
cleanup() {
    for p in "$work"/run/*.pid; do
        [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
    done
    sleep 0.5
    rm -rf "$work"
}
trap cleanup EXIT

if ! munge -n >/dev/null 2>&1; then
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    [ -f /etc/munge/munge.key ] || mungekey --create
    munged --force
    sleep 0.5
    munge -n >/dev/null || fail "munged does not answer"
fi

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
mkdir -p "$work"/{state,spool,run,log}
export SLURM_CONF="$work/slurm.conf"
cat > "$SLURM_CONF" <<CONF
ClusterName=ssxtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ssxtest Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 100); do
    [ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ] && break
    sleep 0.2
done
[ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ] || fail "the node did not come up: $(tail -n 5 "$work"/log/*.log)"

cat > "$work/sweep.json" <<SWEEP
{ "scene": "$repo/artifacts/scenes/exploration.json",
  "parameters": [ { "path": "artifacts[1].replicate.grid.count", "values": [2, 4] },
                  { "path": "map.building.seed", "values": [1, 2, 3] },
                  { "path": "watch", "values": [[]] } ],
  "duration": 2, "keep": ["explore.explored"] }
SWEEP
"$ssxd" sweep "$work/sweep.json" --out "$work/out" --slurm --chunk 2
timeout 300 sbatch --wait --quiet "$work/out/sweep.sbatch" || fail "the job array failed: $(cat "$work"/out/slurm-*.out | tail -n 20)"
"$ssxd" sweep --summary "$work/out" > "$work/summary.txt"
rows=$(tail -n +2 "$work/out/results.csv" | wc -l)
[ "$rows" -eq 6 ] || fail "results.csv has $rows rows, not 6"
ok=$(tail -n +2 "$work/out/results.csv" | awk -F, '$7 == 0' | wc -l)
[ "$ok" -eq 6 ] || fail "$ok of 6 runs succeeded: $(cat "$work/out/results.csv")"
tasks=$(ls "$work"/out/slurm-*.out | wc -l)
[ "$tasks" -eq 3 ] || fail "$tasks task outputs, not 3"
grep -q "6 runs in 6 configurations" "$work/summary.txt" || fail "summary: $(cat "$work/summary.txt")"
echo "summary: Slurm $(sinfo --version | awk '{print $2}') ran the sweep's 6 runs in $tasks array tasks; all succeeded"
