#!/bin/sh
# check-valgrind.sh QGPU REF DIST FRAMES SUPPRESSIONS
#
# `make check-valgrind` (tests/reliability.mak, doc/reliability.md): the qgpu
# tool under valgrind memcheck on a real pair with a VMAF model and every
# feature `qgpu --list-features` prints. Fails on any memcheck error and on
# any definite, indirect or possible leak the suppression file does not name.
#
# Three memcheck runs of the same command: the first with an empty libqgpu
# binary cache (XDG_CACHE_HOME in a fresh directory), so that building every
# program from source and storing it run under memcheck; the second loads
# what the first stored (the cache-hit path); the third loses the device at
# the second frame (QGPU_TEST_FAIL_AFTER=2): exit status 4, and still no
# error and no leak.
#
# Kernel compiles. valgrind hides AVX-512, so under valgrind PoCL picks
# another kernel library and CPU ("haswell" instead of "skylake-avx512" on
# the development machine) and finds nothing in its kernel cache: cold,
# every kernel would be compiled by LLVM under memcheck (39 min there).
# Unless VALGRIND_WARM=no, the same two runs are first made natively with
# POCL_KERNELLIB_NAME set to the kernel library PoCL picks under valgrind
# (found by comparing device names: `valgrind --tool=none` presents the same
# CPU as memcheck), which fills PoCL's kernel cache with exactly the builds
# the memcheck runs look up. The memcheck runs then execute the same code
# of libqgpu, the tool, FFmpeg and PoCL's runtime; what no longer runs under
# memcheck is LLVM compiling kernels inside PoCL, whose findings are PoCL's
# (and all suppressed: see tests/valgrind.supp). When no kernel library
# matches (a PoCL built for one CPU, a GPU driver), the warm-up is skipped.
#
# Environment: VALGRIND (valgrind), VALGRIND_FLAGS (replaces the memcheck
# options below), VALGRIND_WARM (yes), POCL_CACHE_DIR (PoCL's kernel cache;
# default PoCL's own, ~/.cache/pocl/kcache), VALGRIND_KEEP (keep the run's
# directory).
set -eu

qgpu=$1 ref=$2 dist=$3 frames=$4 supp=$5
valgrind=${VALGRIND:-valgrind}
flags=${VALGRIND_FLAGS:-"--leak-check=full --show-leak-kinds=definite,indirect,possible
    --errors-for-leak-kinds=definite,indirect,possible --num-callers=40 --error-exitcode=99"}
command -v "$valgrind" >/dev/null || { echo "valgrind not installed (apt-get install valgrind)"; exit 1; }

feats=$("$qgpu" --list-features |
    awk '/^features/{f=1;next} /^built-in/{f=0} f{printf "--feature %s ", $1}')
out=$(mktemp -d)
start=$(date +%s)
# PoCL keeps its cache under $XDG_CACHE_HOME, which the runs below change
# for libqgpu: pin it where it is now
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl/kcache}"

native_run() { # native_run CACHE_HOME LOG: the scored command, without valgrind
    # shellcheck disable=SC2086 # $feats: one word per option
    XDG_CACHE_HOME="$1" "$qgpu" -q -r "$ref" -d "$dist" --model version=vmaf_v0.6.1 $feats \
        --frame-cnt "$frames" --json -o "$2"
}

kernellib=none
if [ "${VALGRIND_WARM:-yes}" = yes ]; then
    vgdevices=$("$valgrind" --tool=none -q "$qgpu" --list-devices 2>/dev/null || true)
    for k in "" avx512 avx2 avx_f16c avx_fma4 avx sse41 ssse3 sse2 GENERIC; do
        if [ -z "$k" ]; then
            native=$("$qgpu" --list-devices 2>/dev/null || true)
        else
            native=$(POCL_KERNELLIB_NAME=$k "$qgpu" --list-devices 2>/dev/null || true)
        fi
        if [ -n "$vgdevices" ] && [ "$native" = "$vgdevices" ]; then
            kernellib=$k
            break
        fi
    done
fi
[ -n "$kernellib" ] && [ "$kernellib" != none ] && export POCL_KERNELLIB_NAME="$kernellib"

echo "valgrind: qgpu --model version=vmaf_v0.6.1 ${feats}($frames frames)"
if [ "$kernellib" != none ]; then
    echo "valgrind: warming PoCL's kernel cache natively (POCL_KERNELLIB_NAME=${kernellib:-unset})"
    mkdir "$out/warm"
    for run in 1 2; do
        native_run "$out/warm" "$out/warm.json" ||
            { echo "valgrind: the native warm-up run failed"; exit 1; }
    done
    echo "valgrind: warm-up done in $(($(date +%s) - start)) s"
else
    echo "valgrind: no warm-up (VALGRIND_WARM=${VALGRIND_WARM:-yes}, or no PoCL kernel library" \
         "matches the CPU valgrind presents): kernels compile under memcheck"
fi

# memcheck_run RUN FAIL_AFTER EXPECTED_STATUS DESCRIPTION
memcheck_run() {
    t0=$(date +%s)
    log="$out/valgrind-$1.log"
    status=0
    # HWLOC_COMPONENTS=-x86: hwloc's x86 backend turns itself off under
    # valgrind anyway, with a notice on stderr
    # shellcheck disable=SC2086 # $flags, $feats: one word per option
    XDG_CACHE_HOME="$out/cache" HWLOC_COMPONENTS=-x86 QGPU_TEST_FAIL_AFTER="$2" "$valgrind" \
        $flags --suppressions="$supp" --log-file="$log" "$qgpu" -q -r "$ref" -d "$dist" \
        --model version=vmaf_v0.6.1 $feats --frame-cnt "$frames" --json -o "$out/log-$1.json" \
        2>"$out/stderr-$1.txt" || status=$?
    if [ "$status" != "$3" ]; then
        cat "$log" "$out/stderr-$1.txt"
        echo "valgrind: run $1 FAILED: exit status $status, expected $3 (99: memcheck" \
             "errors or leaks; log above, kept in $out)"
        exit 1
    fi
    grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|suppressed:' "$log" |
        sed 's/^==[0-9]*== */    /'
    echo "valgrind: run $1 ($4): clean, $(($(date +%s) - t0)) s"
}

mkdir "$out/cache"
memcheck_run 1 0 0 "empty libqgpu cache: programs built from source and stored"
memcheck_run 2 0 0 "libqgpu cache filled by run 1: programs loaded"
for run in 1 2; do
    grep -q '"vmaf"' "$out/log-$run.json" ||
        { echo "valgrind: run $run: no vmaf score in the log"; exit 1; }
done
# the device lost at the second frame wait (libqgpu/src/fault.c): the tool
# exits 4 and frees everything, frames still in flight included
if [ "$frames" -ge 2 ]; then
    memcheck_run 3 2 4 "device lost at the second frame: exit 4"
    grep -q CL_DEVICE_NOT_AVAILABLE "$out/stderr-3.txt" ||
        { cat "$out/stderr-3.txt"; echo "valgrind: run 3: not the device error"; exit 1; }
else
    echo "valgrind: run 3 (device lost at the second frame) needs 2 frames: skipped"
fi
if [ -n "${VALGRIND_KEEP:-}" ]; then echo "valgrind: kept $out"; else rm -rf "$out"; fi
echo "valgrind: clean ($(($(date +%s) - start)) s in all)"
