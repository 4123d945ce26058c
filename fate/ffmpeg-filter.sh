#!/bin/sh
# FATE-style tests of the FFmpeg filter `qgpu` (filter/vf_qgpu.c).
#
#   make ffmpeg && make fate          (or: fate/ffmpeg-filter.sh build/ffmpeg-5.1.9/ffmpeg)
#
# Runs an ffmpeg built with the filter on the committed pairs of fate/pairs.txt
# and compares the per-frame scores -- from `metadata=print` and from the
# filter's JSON log -- with the golden values from libvmaf in
# fate/pairs/PAIR/PAIR.vmaf.json, within 5e-5 (the precision contract).
# Also: the hwupload (OpenCL frames, scored in place) path, n_subsample, framesync's
# shortest option, libvmaf's name= feature syntax and error cases.
# `make check` runs it when `make ffmpeg` has built the ffmpeg; `make
# fate-smoke` runs a few cases (CI, other FFmpeg versions).
#
# Environment: QGPU_SRC (source tree, default: this script's parent),
# QGPU_DEVICE (OpenCL device for the filter's software path, default auto),
# QGPU_FATE_OPENCL_DEVICE=P.D (FFmpeg's OpenCL device for hwupload, as in
# -init_hw_device opencl=ocl:P.D; default: FFmpeg's choice),
# QGPU_FATE_ONLY="SUBSTRING..." (run only the tests whose name contains one
# of them), QGPU_FATE_KEEP=1 (keep the work directory).
# Last line: "N passed, N failed"; exit status 1 when a test failed.

FFMPEG=${1:?usage: $0 PATH/TO/ffmpeg}
SRC=${QGPU_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
FATE=$SRC/fate
TOL=5e-5
WORK=$(mktemp -d "${TMPDIR:-/tmp}/qgpu-fate-XXXXXX")
[ -n "$QGPU_FATE_KEEP" ] || trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1: $2"; }
want() {
    [ -n "$QGPU_FATE_ONLY" ] || return 0
    for only in $QGPU_FATE_ONLY; do
        case "$1" in *"$only"*) return 0 ;; esac
    done
    return 1
}

[ -x "$FFMPEG" ] || { echo "no ffmpeg at $FFMPEG (run make ffmpeg)"; echo "0 passed, 1 failed"; exit 1; }
if ! "$FFMPEG" -hide_banner -h filter=qgpu 2>/dev/null | grep -q 'Filter qgpu'; then
    echo "$FFMPEG has no qgpu filter"; echo "0 passed, 1 failed"; exit 1
fi

# golden_values JSON METRIC [EVERY]: the per-frame values of METRIC in a
# libvmaf-layout JSON log (one metric per line), every EVERY-th frame.
golden_values() {
    awk -v m="\"$2\":" -v every="${3:-1}" '
        /"pooled_metrics"/ { exit }
        $1 == m { v = $2; sub(/,$/, "", v); if (n++ % every == 0) print v }' "$1"
}

# metadata_values FILE METRIC: values of lavfi.qgpu.METRIC from metadata=print:file=
metadata_values() {
    sed -n "s/^lavfi\.qgpu\.$2=//p" "$1"
}

# compare A B: one value per line in each; prints the max |a-b| and the
# number of values, fails when the counts differ or a difference is > TOL.
compare() {
    paste "$1" "$2" | awk -v tol="$TOL" -v na="$(wc -l <"$1")" -v nb="$(wc -l <"$2")" '
        { d = $1 - $2; if (d < 0) d = -d; if (d > max) max = d; n++ }
        END {
            if (na != nb || na == 0) { printf "%d values against %d golden\n", na, nb; exit 1 }
            printf "%d frames, max |diff| %.3g\n", n, max; exit (max > tol) }'
}

# check_scores NAME METADATA_FILE LOG_JSON GOLDEN_JSON [EVERY]: compares the
# scores named in $METRICS (default: psnr_y psnr_cb psnr_cr).
check_scores() {
    name=$1 md=$2 log=$3 golden=$4 every=${5:-1}
    for metric in ${METRICS:-psnr_y psnr_cb psnr_cr}; do
        golden_values "$golden" $metric "$every" >"$WORK/golden.txt"
        metadata_values "$md" $metric >"$WORK/md.txt"
        if r=$(compare "$WORK/md.txt" "$WORK/golden.txt"); then
            pass "$name metadata $metric ($r)"
        else
            fail "$name metadata $metric" "$r"
        fi
        if [ -n "$log" ]; then
            golden_values "$log" $metric >"$WORK/log.txt"
            if r=$(compare "$WORK/log.txt" "$WORK/golden.txt"); then
                pass "$name log $metric ($r)"
            else
                fail "$name log $metric" "$r"
            fi
        fi
    done
}

# run_ffmpeg LOGFILE ARGS...: ffmpeg's stderr goes to LOGFILE.
run_ffmpeg() {
    out=$1; shift
    "$FFMPEG" -nostdin -hide_banner -loglevel info -y "$@" >"$out" 2>&1
}

# ---- 1. psnr on every pair: metadata and JSON log against libvmaf ----
grep -v '^#' "$FATE/pairs.txt" | while read -r pair ref dis w h fmt frames; do
    [ -n "$pair" ] || continue
    echo "$pair $ref $dis $w $h $fmt $frames"
done >"$WORK/pairs"
while read -r pair ref dis w h fmt frames; do
    want "psnr/$pair" || continue
    pre="[0:v]null[d]"
    # the distorted video of a scaled pair is scaled to the reference as the
    # golden run did (fate/README, corpus commands): bicubic
    dw=$(run_ffmpeg "$WORK/probe.log" -i "$FATE/$dis" -frames:v 1 -f null - ; \
         sed -n 's/.*Video: .*, \([0-9]*\)x\([0-9]*\)[, ].*/\1x\2/p' "$WORK/probe.log" | head -n 1)
    [ "$dw" = "${w}x$h" ] || pre="[0:v]scale=$w:$h:flags=bicubic[d]"
    md=$WORK/$pair.md log=$WORK/$pair.json
    if run_ffmpeg "$WORK/$pair.log" -i "$FATE/$dis" -i "$FATE/$ref" -lavfi \
        "$pre;[d][1:v]qgpu=feature=psnr:log_path=$log:log_fmt=json,metadata=print:file=$md" -f null -; then
        check_scores "psnr/$pair" "$md" "$log" "$FATE/pairs/$pair/$pair.vmaf.json"
        n=$(grep -c '^lavfi\.qgpu\.psnr_y=' "$md")
        if [ "$n" = "$frames" ]; then pass "psnr/$pair frame count ($n)"
        else fail "psnr/$pair frame count" "$n frames scored, expected $frames"; fi
    else
        fail "psnr/$pair" "ffmpeg failed: $(tail -n 3 "$WORK/$pair.log" | tr '\n' ' ')"
    fi
done <"$WORK/pairs"

# ---- 1b. VMAF (the default model, as in libvmaf's filter): the score and
# its features, including motion, whose look-ahead makes the filter hold
# frames until they are final ----
VMAF_METRICS="vmaf integer_adm2 integer_adm_scale0 integer_adm_scale3 integer_vif_scale0 integer_vif_scale3 integer_motion2 integer_motion3 VMAF_integer_feature_motion_sad_score"
while read -r pair ref dis w h fmt frames; do
    want "vmaf/$pair" || continue
    pre="[0:v]null[d]"
    dw=$(run_ffmpeg "$WORK/probe.log" -i "$FATE/$dis" -frames:v 1 -f null - ; \
         sed -n 's/.*Video: .*, \([0-9]*\)x\([0-9]*\)[, ].*/\1x\2/p' "$WORK/probe.log" | head -n 1)
    [ "$dw" = "${w}x$h" ] || pre="[0:v]scale=$w:$h:flags=bicubic[d]"
    md=$WORK/$pair.vmaf.md log=$WORK/$pair.vmaf.json
    if run_ffmpeg "$WORK/$pair.vmaf.log" -i "$FATE/$dis" -i "$FATE/$ref" -lavfi \
        "$pre;[d][1:v]qgpu=log_path=$log:log_fmt=json,metadata=print:file=$md" -f null -; then
        METRICS=$VMAF_METRICS check_scores "vmaf/$pair" "$md" "$log" "$FATE/pairs/$pair/$pair.vmaf.json"
    else
        fail "vmaf/$pair" "ffmpeg failed: $(tail -n 3 "$WORK/$pair.vmaf.log" | tr '\n' ' ')"
    fi
done <"$WORK/pairs"

P=nf_src01_160x90_nfdis
DIS=$FATE/pairs/$P/dis.y4m
REF=$FATE/refs/nf_src01_160x90_48f.y4m
GOLD=$FATE/pairs/$P/$P.vmaf.json

# ---- 2. libvmaf's feature syntax (name=...) and the pooled log line ----
if want syntax; then
    if run_ffmpeg "$WORK/syntax.log" -i "$DIS" -i "$REF" -lavfi \
        "[0:v][1:v]qgpu=feature=name=psnr,metadata=print:file=$WORK/syntax.md" -f null -; then
        check_scores "syntax name=psnr" "$WORK/syntax.md" "" "$GOLD"
        mean=$(sed -n 's/.*psnr_y mean: \([0-9.]*\).*/\1/p' "$WORK/syntax.log")
        # golden pooled mean of psnr_y
        gmean=$(awk '/"pooled_metrics"/ { p = 1 } p && /"psnr_y"/ { q = 1 } q && /"mean"/ { v = $2; sub(/,$/, "", v); print v; exit }' "$GOLD")
        if [ -n "$mean" ] && awk -v a="$mean" -v b="$gmean" -v t="$TOL" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
            pass "syntax pooled psnr_y mean ($mean, golden $gmean)"
        else
            fail "syntax pooled psnr_y mean" "logged '$mean', golden $gmean"
        fi
    else
        fail "syntax" "ffmpeg failed: $(tail -n 3 "$WORK/syntax.log" | tr '\n' ' ')"
    fi
fi

# ---- 3. n_subsample: every other frame scored ----
if want subsample; then
    if run_ffmpeg "$WORK/sub.log" -i "$DIS" -i "$REF" -lavfi \
        "[0:v][1:v]qgpu=feature=psnr:n_subsample=2,metadata=print:file=$WORK/sub.md" -f null -; then
        check_scores "n_subsample=2" "$WORK/sub.md" "" "$GOLD" 2
        # metadata=print skips frames without metadata: count ffmpeg's output frames
        n=$(tr '\r' '\n' <"$WORK/sub.log" | sed -n 's/^frame= *\([0-9]*\) .*/\1/p' | tail -n 1)
        if [ "$n" = 48 ]; then pass "n_subsample=2 passes every frame through ($n)"
        else fail "n_subsample=2 frames out" "$n, expected 48"; fi
    else
        fail "n_subsample" "ffmpeg failed: $(tail -n 3 "$WORK/sub.log" | tr '\n' ' ')"
    fi
fi

# ---- 4. framesync: shortest=1 by default, shortest=0 on request ----
if want shortest; then
    for opt in default:10 shortest=0:48; do
        o=${opt%%:*} expect=${opt#*:}
        arg=feature=psnr
        [ "$o" = default ] || arg="$arg:$o"
        if run_ffmpeg "$WORK/short.log" -i "$DIS" -i "$REF" -lavfi \
            "[0:v]trim=end_frame=10[d];[d][1:v]qgpu=$arg,metadata=print:file=$WORK/short.md" -f null -; then
            n=$(grep -c '^lavfi\.qgpu\.psnr_y=' "$WORK/short.md")
            if [ "$n" = "$expect" ]; then pass "shortest ($o): $n frames scored"
            else fail "shortest ($o)" "$n frames scored, expected $expect"; fi
            if [ "$o" = default ]; then
                golden_values "$GOLD" psnr_y | head -n 10 >"$WORK/golden.txt"
                metadata_values "$WORK/short.md" psnr_y >"$WORK/md.txt"
                if r=$(compare "$WORK/md.txt" "$WORK/golden.txt"); then pass "shortest: first 10 frames ($r)"
                else fail "shortest: first 10 frames" "$r"; fi
            fi
        else
            fail "shortest ($o)" "ffmpeg failed: $(tail -n 3 "$WORK/short.log" | tr '\n' ' ')"
        fi
    done
fi

# ---- 4b. pipeline depth: same scores with 1 and 4 frames in flight ----
if want depth; then
    for d in 1 4; do
        if run_ffmpeg "$WORK/depth.log" -i "$DIS" -i "$REF" -lavfi \
            "[0:v][1:v]qgpu=feature=psnr:depth=$d,metadata=print:file=$WORK/depth.md" -f null -; then
            METRICS=psnr_y check_scores "depth=$d" "$WORK/depth.md" "" "$GOLD"
        else
            fail "depth=$d" "ffmpeg failed: $(tail -n 3 "$WORK/depth.log" | tr '\n' ' ')"
        fi
    done
fi

# ---- 4c. output stopped early (-frames:v): frames still held are dropped
# cleanly, and the log holds every frame that was scored ----
if want early_stop; then
    if run_ffmpeg "$WORK/early.log" -i "$DIS" -i "$REF" -lavfi \
        "[0:v][1:v]qgpu=feature=psnr:log_path=$WORK/early.json:log_fmt=json" -frames:v 5 -f null -; then
        golden_values "$WORK/early.json" psnr_y >"$WORK/log.txt"
        n=$(wc -l <"$WORK/log.txt")
        golden_values "$GOLD" psnr_y | head -n "$n" >"$WORK/golden.txt"
        if [ "$n" -ge 5 ] && r=$(compare "$WORK/log.txt" "$WORK/golden.txt"); then
            pass "early stop: log of the scored frames ($r)"
        else
            fail "early stop" "log has $n frames: $(compare "$WORK/log.txt" "$WORK/golden.txt")"
        fi
    else
        fail "early stop" "ffmpeg failed: $(tail -n 3 "$WORK/early.log" | tr '\n' ' ')"
    fi
fi

# ---- 5. timestamps: a distorted clip starting later is paired by time with -copyts ----
if want ts_sync; then
    # frames 5.. of the distorted clip, keeping their timestamps
    if run_ffmpeg "$WORK/late.log" -copyts -i "$DIS" -i "$REF" -lavfi \
        "[0:v]trim=start_frame=5[d];[d][1:v]qgpu=feature=psnr,metadata=print:file=$WORK/late.md" -f null -; then
        golden_values "$GOLD" psnr_y | tail -n +6 >"$WORK/golden.txt"
        metadata_values "$WORK/late.md" psnr_y >"$WORK/md.txt"
        if r=$(compare "$WORK/md.txt" "$WORK/golden.txt"); then pass "ts_sync: late start paired by timestamp ($r)"
        else fail "ts_sync: late start paired by timestamp" "$r"; fi
    else
        fail "ts_sync" "ffmpeg failed: $(tail -n 3 "$WORK/late.log" | tr '\n' ' ')"
    fi
fi

# ---- 6. OpenCL frames (hwupload) are scored in place, in FFmpeg's OpenCL
# context (no host copy), with the software path's scores to the last digit:
# psnr and the default VMAF model, 8-bit and 10-bit (10-bit goes up as
# yuv420p16 -- OpenCL frames can't hold yuv420p10le -- with sample_depth=10) ----
HWDEV="-init_hw_device opencl=ocl${QGPU_FATE_OPENCL_DEVICE:+:$QGPU_FATE_OPENCL_DEVICE} -filter_hw_device ocl"
# hw_case NAME DIS REF FRAMES UPLOAD_FMT QGPU_OPTS GOLDEN METRICS [SW_FMT]: runs
# the software path (on SW_FMT when given) and the hwupload path, compares
# every lavfi.qgpu line, checks the zero-copy log, and the hwupload scores
# named in METRICS against GOLDEN. sample_depth=, when in QGPU_OPTS, comes
# last (the software run drops it).
hw_case() {
    name=$1 dis=$2 ref=$3 frames=$4 upfmt=$5 opts=$6 golden=$7 metrics=$8 swfmt=$9
    want "$name" || return 0
    swgraph="[0:v][1:v]"
    [ -z "$swfmt" ] || swgraph="[0:v]format=${swfmt}[sd];[1:v]format=${swfmt}[sr];[sd][sr]"
    if ! run_ffmpeg "$WORK/hwsw.log" -i "$dis" -i "$ref" -lavfi \
        "${swgraph}qgpu=${opts%%:sample_depth=*},metadata=print:file=$WORK/hwsw.md" -f null -; then
        fail "$name" "software run failed: $(tail -n 3 "$WORK/hwsw.log" | tr '\n' ' ')"
        return
    fi
    # shellcheck disable=SC2086
    if ! "$FFMPEG" -nostdin -hide_banner -loglevel verbose -y $HWDEV -i "$dis" -i "$ref" -lavfi \
        "[0:v]format=$upfmt,hwupload[d];[1:v]format=$upfmt,hwupload[r];[d][r]qgpu=$opts,hwdownload,format=$upfmt,metadata=print:file=$WORK/hw.md" \
        -f null - >"$WORK/hw.log" 2>&1; then
        if grep -q -i 'Device creation failed\|No OpenCL\|Failed to set value' "$WORK/hw.log"; then
            echo "SKIP $name: no OpenCL device for FFmpeg here ($(grep -i -m 1 'opencl\|device' "$WORK/hw.log"))"
        else
            fail "$name" "ffmpeg failed: $(tail -n 3 "$WORK/hw.log" | tr '\n' ' ')"
        fi
        return
    fi
    grep '^lavfi\.qgpu\.' "$WORK/hwsw.md" >"$WORK/sw.lines"
    grep '^lavfi\.qgpu\.' "$WORK/hw.md" >"$WORK/hw.lines"
    n=$(grep -c '^lavfi\.qgpu\.psnr_y=' "$WORK/hw.lines")
    if [ "$n" = "$frames" ] && cmp -s "$WORK/sw.lines" "$WORK/hw.lines"; then
        pass "$name: $(wc -l <"$WORK/hw.lines") scores of $n frames equal the software path's"
    else
        fail "$name" "$n frames; differs from the software path: $(diff "$WORK/sw.lines" "$WORK/hw.lines" | head -n 3 | tr '\n' ' ')"
    fi
    # no host copy: the library counted every pair as copied on the device
    if grep -q "zero-copy OpenCL input: $frames frame pairs copied on the device, 0 through host memory" "$WORK/hw.log"; then
        pass "$name: zero-copy ($frames pairs copied on the device, 0 through host memory)"
    else
        fail "$name: zero-copy" "$(grep -m 2 'zero-copy\|qgpu.*error' "$WORK/hw.log" | tr '\n' ' ')"
    fi
    METRICS=$metrics check_scores "$name golden" "$WORK/hw.md" "" "$golden"
}
P10=nf_sparks_480x270_10b_nfdis
hw_case hwupload/psnr "$DIS" "$REF" 48 yuv420p feature=psnr "$GOLD" "psnr_y psnr_cb psnr_cr"
hw_case hwupload/vmaf "$DIS" "$REF" 48 yuv420p "model=version=vmaf_v0.6.1:feature=psnr" "$GOLD" \
    "vmaf integer_motion2 psnr_y"
hw_case hwupload/10bit_psnr "$FATE/pairs/$P10/dis.mkv" "$FATE/refs/nf_sparks_480x270_10b_5f.mkv" 5 \
    yuv420p16 feature=psnr:sample_depth=10 "$FATE/pairs/$P10/$P10.vmaf.json" "psnr_y psnr_cb psnr_cr"
hw_case hwupload/10bit_vmaf "$FATE/pairs/$P10/dis.mkv" "$FATE/refs/nf_sparks_480x270_10b_5f.mkv" 5 \
    yuv420p16 "model=version=vmaf_v0.6.1:feature=psnr:sample_depth=10" \
    "$FATE/pairs/$P10/$P10.vmaf.json" "vmaf integer_adm2 integer_vif_scale0 integer_motion2"
# FFmpeg 8's planar formats with the samples in the top bits: read with no
# option (against yuv444p10le software frames; luma is the 4:2:0 golden's)
if "$FFMPEG" -hide_banner -pix_fmts 2>/dev/null | grep -q ' yuv444p10msble '; then
    hw_case hwupload/10bit_444msb "$FATE/pairs/$P10/dis.mkv" "$FATE/refs/nf_sparks_480x270_10b_5f.mkv" 5 \
        yuv444p10msb "model=version=vmaf_v0.6.1:feature=psnr" "$FATE/pairs/$P10/$P10.vmaf.json" \
        "psnr_y" yuv444p10le
fi

# ---- 7. errors: each must make ffmpeg fail with a clear message ----
expect_error() {
    name=$1 pattern=$2; shift 2
    want "error/$name" || return 0
    if run_ffmpeg "$WORK/err.log" "$@"; then
        fail "error/$name" "ffmpeg succeeded"
    elif grep -q -- "$pattern" "$WORK/err.log"; then
        pass "error/$name"
    else
        fail "error/$name" "no '$pattern' in: $(grep -i -m 2 'qgpu\|error' "$WORK/err.log" | tr '\n' ' ')"
    fi
}
expect_error size "scale=160:90:flags=bicubic" -i "$DIS" -i "$REF" -lavfi \
    "[0:v]scale=80:46[d];[d][1:v]qgpu=feature=psnr" -f null -
expect_error unknown_feature "nosuchmetric" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=nosuchmetric" -f null -
expect_error bad_feature_option "enable_chroma" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=name=psnr\\\\:enable_chroma=maybe" -f null -
expect_error log_fmt "log_fmt 'yaml' unknown" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=psnr:log_fmt=yaml:log_path=$WORK/x.log" -f null -
expect_error pool "pool 'median' unknown" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=psnr:pool=median" -f null -
expect_error device "cannot open the OpenCL device" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=psnr:device=no-such-device-xyz" -f null -
expect_error sample_depth_software "sample_depth is for OpenCL frames" -i "$DIS" -i "$REF" -lavfi \
    "[0:v]format=yuv420p16[d];[1:v]format=yuv420p16[r];[d][r]qgpu=feature=psnr:sample_depth=10" -f null -
expect_error sample_depth_range "sample_depth 8" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=psnr:sample_depth=8" -f null -

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
