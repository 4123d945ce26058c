#!/bin/sh
# check-slurm.sh QGPU SRCDIR: qgpu batch under a real Slurm (doc/batch.md,
# "Slurm"). Installs Debian's slurmctld, slurmd, slurm-client and munge
# with apt-get when they are missing (root, network to Debian's mirrors),
# starts munged, slurmctld and slurmd on this host alone (one node, up to 2
# CPUs, a private state directory), submits a job array of 3 tasks each
# running `qgpu batch --shard slurm` over the bundled pairs (fate/pairs.txt),
# merges, and checks that every log and every pooled score equals the
# single-process run's. The daemons it started are stopped on exit;
# every wait is bounded. Last line: "N passed, N failed".
set -u
QGPU=$(realpath "$1")
SRC=$(realpath "$2")
TASKS=3
WORK=$(mktemp -d /tmp/qgpu-slurm.XXXXXX)
PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }
finish() {
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" = 0 ]
    exit $?
}

# ------------------------------------------------------------ clean-up
stop_pidfile() {
    [ -f "$1" ] || return 0
    pid=$(cat "$1")
    kill "$pid" 2>/dev/null || return 0
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
    if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
        timeout 20 scancel --quiet -u root 2>/dev/null || true
    fi
    stop_pidfile "$WORK/slurmd.pid"
    stop_pidfile "$WORK/slurmctld.pid"
    stop_pidfile "$WORK/munged.pid"
    if [ "$FAIL" != 0 ] || [ "${KEEP:-}" ]; then
        echo "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'bad "interrupted"; exit 1' INT TERM HUP

show_logs() {
    for f in "$WORK"/slurmctld.log "$WORK"/slurmd.log "$WORK"/munge/munged.log "$WORK"/out/slurm-*.txt; do
        [ -f "$f" ] || continue
        echo "---- $f (last 40 lines)"
        tail -n 40 "$f"
    done
}

# ------------------------------------------------------------ packages
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
   ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    if [ "$(id -u)" != 0 ]; then
        bad "slurmctld, slurmd, sbatch and munged are not installed, and installing them needs root"
        finish
    fi
    export DEBIAN_FRONTEND=noninteractive
    # no service starts during the installation (no init system in CI): we
    # start the daemons ourselves, on our own configuration
    added_policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        added_policy=1
    fi
    timeout 600 apt-get update </dev/null >"$WORK/apt.log" 2>&1
    timeout 900 apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge \
        </dev/null >>"$WORK/apt.log" 2>&1
    rc=$?
    [ "$added_policy" ] && rm -f /usr/sbin/policy-rc.d
    if [ $rc != 0 ]; then
        tail -n 30 "$WORK/apt.log"
        bad "apt-get install slurmctld slurmd slurm-client munge (status $rc)"
        finish
    fi
fi
ok "slurm $(slurmctld -V | cut -d' ' -f2) and munge installed"

# --------------------------------------------------------------- munge
# munged as its own user with a socket of ours, so that a munged of the
# host (if any) is left alone
MUNGE_SOCKET="$WORK/munge/munge.socket"
mkdir -p "$WORK/munge"
chown munge:munge "$WORK/munge" 2>/dev/null
chmod 0755 "$WORK"
if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key >/dev/null 2>&1 ||
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
fi
if ! timeout 20 runuser -u munge -- munged --socket="$MUNGE_SOCKET" \
        --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/munge/munged.log" \
        --seed-file="$WORK/munge/seed" >/dev/null 2>&1; then
    show_logs
    bad "munged did not start"
    finish
fi
cp "$WORK/munge/munged.pid" "$WORK/munged.pid" 2>/dev/null
if timeout 10 munge -S "$MUNGE_SOCKET" -n </dev/null | timeout 10 unmunge -S "$MUNGE_SOCKET" >/dev/null; then
    ok "munged runs (credentials encode and decode)"
else
    show_logs
    bad "munge -n | unmunge"
    finish
fi

# --------------------------------------------------------------- slurm
HOST=$(hostname -s)
# at most the machine's CPUs (a node configured with more is drained)
CPUS=$(nproc)
[ "$CPUS" -gt 2 ] && CPUS=2
mkdir -p "$WORK/state" "$WORK/spool" "$WORK/out"
export SLURM_CONF="$WORK/slurm.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=qgputest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=batch Nodes=$HOST Default=YES MaxTime=30 State=UP
EOF
if ! timeout 30 slurmctld -i -f "$SLURM_CONF" || ! timeout 30 slurmd -f "$SLURM_CONF"; then
    show_logs
    bad "slurmctld/slurmd did not start"
    finish
fi
i=0
until timeout 10 sinfo -h -N -o '%T' 2>/dev/null | grep -q '^idle'; do
    i=$((i + 1))
    if [ $i -ge 60 ]; then
        timeout 10 sinfo -N 2>&1
        show_logs
        bad "the node did not become idle within 60 s"
        finish
    fi
    sleep 1
done
ok "slurmctld and slurmd run, node $HOST idle"

# ------------------------------------------------------------ the jobs
# Every bundled pair, twice: once for the array (out/), once for the
# single process (single/).
cd "$WORK" || exit 1
{
    echo "ref,dis,output"
    grep -v '^#' "$SRC/fate/pairs.txt" | while read -r name r d rest; do
        [ -n "$name" ] && echo "$SRC/fate/$r,$SRC/fate/$d,out/$name.json"
    done
} > jobs.csv
sed 's|,out/|,single/|' jobs.csv > single.csv
NJOBS=$(($(wc -l < jobs.csv) - 1))
mkdir -p single
OPTS="--frame_cnt 10 --feature psnr"

cat > task.sh <<EOF
#!/bin/sh
cd "$WORK" && exec "$QGPU" batch jobs.csv --shard slurm --jobs 1 -q -- $OPTS
EOF
chmod +x task.sh
start=$(date +%s)
# --wait: sbatch returns when every task has ended, with their worst status
timeout 900 sbatch --wait --array=0-$((TASKS - 1)) --cpus-per-task=1 -J qgpu-batch \
    -o "$WORK/out/slurm-%A_%a.txt" task.sh > sbatch.txt 2>&1
rc=$?
cat sbatch.txt
if [ $rc = 0 ]; then
    ok "sbatch --array=0-$((TASKS - 1)): every task ended with status 0 ($(($(date +%s) - start)) s)"
else
    show_logs
    bad "sbatch --array=0-$((TASKS - 1)) --wait: status $rc"
fi
shards=$(cat out/*.done 2>/dev/null | grep -o '"shard":"[0-9]*\\/[0-9]*"' | sort -u | wc -l)
if [ "$shards" = "$TASKS" ]; then
    ok "the $NJOBS jobs were done by $TASKS different shards"
else
    bad "the jobs' done-markers name $shards shards, not $TASKS"
fi
if timeout 120 "$QGPU" batch-merge jobs.csv -o merged.jsonl -- $OPTS; then
    ok "batch-merge: every job done once"
else
    bad "batch-merge"
fi

# ---------------------------------------------- the single-process run
if timeout 900 "$QGPU" batch single.csv -q -- $OPTS && \
   timeout 120 "$QGPU" batch-merge single.csv -o single.jsonl -q -- $OPTS; then
    ok "the single-process batch"
else
    bad "the single-process batch"
fi
same=0
for f in out/*.json; do
    g="single/${f#out/}"
    # the logs differ only in their fps field (a timing)
    sed '/"fps"/d' "$f" > a.nofps
    sed '/"fps"/d' "$g" > b.nofps
    if cmp -s a.nofps b.nofps; then
        same=$((same + 1))
    else
        echo "differs: $f $g"
    fi
done
if [ "$same" = "$NJOBS" ]; then
    ok "all $NJOBS logs of the array equal the single-process run's"
else
    bad "$same of $NJOBS logs equal the single-process run's"
fi
pooled() { sed -n 's/.*"output":"[a-z]*\/\([^"]*\)".*"pooled":\({[^}]*}\).*/\1 \2/p' "$1"; }
if [ "$(pooled merged.jsonl | wc -l)" = "$NJOBS" ] &&
   [ "$(pooled merged.jsonl)" = "$(pooled single.jsonl)" ]; then
    ok "the merged summary's pooled scores equal the single-process run's"
else
    pooled merged.jsonl | head -3
    pooled single.jsonl | head -3
    bad "merged pooled scores differ from the single-process run's"
fi
finish
