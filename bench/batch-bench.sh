#!/bin/sh
# batch-bench.sh QGPU JOBS [DEVICE] [JOBS_PER_DEVICE...]: aggregate
# throughput of `qgpu batch` on a job list (doc/batch.md), one job at a time
# against several at a time, with each device's kernel-busy fraction
# (QGPU_PROFILE=1). Every run re-scores every job (--force) into the list's
# outputs. DEVICE: a --device value (default all); JOBS_PER_DEVICE: the
# --jobs values to try (default 1 2 3 4; 1 is the one-at-a-time baseline).
# Extra tool options for every job: QGPU_BATCH_OPTS (e.g. "--hwdec cuda");
# QGPU_BATCH_ISOLATE: thread (default: the jobs in threads of one process)
# or process (a qgpu process per job); QGPU_PROFILE=0 in the environment
# leaves the kernels untimed (no busy fraction, no profiling overhead).
# Prints one line per run: isolation, jobs per device, wall seconds, frames,
# pairs/s, speed-up over the first count, and per device "spec: frames,
# busy" (kernel time over wall time: over 1 when jobs' kernels overlap).
set -u
qgpu=${1:?usage: $0 QGPU JOBS [DEVICE] [JOBS_PER_DEVICE...]}
jobs=${2:?usage: $0 QGPU JOBS [DEVICE] [JOBS_PER_DEVICE...]}
device=${3:-all}
[ $# -ge 3 ] && shift 3 || shift $#
counts=${*:-1 2 3 4}
out=${OUT:-.}
base=
isolate=${QGPU_BATCH_ISOLATE:-thread}
export QGPU_PROFILE=${QGPU_PROFILE:-1}
for n in $counts; do
    log="$out/batch-bench-$isolate-$n.jsonl"
    # shellcheck disable=SC2086
    "$qgpu" batch "$jobs" --device "$device" --jobs "$n" --isolate "$isolate" --force -q \
        --log-stream "$log" -- ${QGPU_BATCH_OPTS:-} 2>"$out/batch-bench-$isolate-$n.stderr"
    rc=$?
    line=$(grep '"event":"batch"' "$log" | tail -n 1)
    num() { echo "$line" | sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" | head -n 1; }
    pps=$(num pairs_per_s)
    [ -z "$base" ] && base=$pps
    devs=$(echo "$line" | grep -o '{"device":"[^"]*","name":"[^"]*","jobs":[0-9]*,"frames":[0-9]*[^}]*}' |
        sed 's/{"device":"\([^"]*\)".*"frames":\([0-9]*\)\(,"device_ms":[0-9.e+-]*,"busy":\([0-9.e+-]*\)\)\{0,1\}}/\1: \2 frames, busy \4/')
    printf '%s, %s jobs/device: exit %s, %s s, %s frames, %s pairs/s, x%s; %s\n' "$isolate" "$n" "$rc" \
        "$(num seconds)" "$(num frames)" "$pps" \
        "$(awk -v a="$pps" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')" \
        "$(echo "$devs" | tr '\n' ';')"
done
