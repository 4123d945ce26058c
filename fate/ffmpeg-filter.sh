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
. "$(dirname "$0")/golden.sh"
fate_init qgpu-fate

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

# metadata_values FILE METRIC: values of lavfi.qgpu.METRIC from metadata=print:file=
metadata_values() {
    sed -n "s/^lavfi\.qgpu\.$2=//p" "$1"
}

# vmaf_scores LOG: the values of the "VMAF score: X" lines of an ffmpeg log.
vmaf_scores() {
    sed -n 's/^\[Parsed_[a-z]*_[0-9]* @ 0x[0-9a-f]*\] VMAF score: \([0-9.]*\)$/\1/p' "$1"
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
        "$pre;[d][1:v]qgpu=model=:feature=psnr:log_path=$log:log_fmt=json,metadata=print:file=$md" -f null -; then
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

# ---- 3. n_subsample, as libvmaf: every pair is scored (temporal features
# see every frame), the log and the metadata list frames 0, 2, 4... with
# their own frame numbers, and pooling covers those frames ----
if want subsample; then
    if run_ffmpeg "$WORK/sub.log" -i "$DIS" -i "$REF" -lavfi \
        "[0:v][1:v]qgpu=feature=psnr:n_subsample=2:log_path=$WORK/sub.json:log_fmt=json,metadata=print:file=$WORK/sub.md" -f null -; then
        METRICS="psnr_y vmaf integer_motion2" check_scores "n_subsample=2" "$WORK/sub.md" "$WORK/sub.json" "$GOLD" 2
        # metadata=print skips frames without metadata: count ffmpeg's output frames
        n=$(tr '\r' '\n' <"$WORK/sub.log" | sed -n 's/^frame= *\([0-9]*\) .*/\1/p' | tail -n 1)
        if [ "$n" = 48 ]; then pass "n_subsample=2 passes every frame through ($n)"
        else fail "n_subsample=2 frames out" "$n, expected 48"; fi
        nums=$(sed -n 's/.*"frameNum": \([0-9]*\).*/\1/p' "$WORK/sub.json" | tr '\n' ' ')
        expect=$(seq 0 2 46 | tr '\n' ' ')
        if [ "$nums" = "$expect" ]; then pass "n_subsample=2 log frame numbers 0 2 ... 46"
        else fail "n_subsample=2 log frame numbers" "$nums"; fi
        golden_values "$GOLD" vmaf 2 | awk '{ s += $1 } END { printf "%.6f\n", s / NR }' >"$WORK/golden.txt"
        vmaf_scores "$WORK/sub.log" >"$WORK/score.txt"
        if r=$(compare "$WORK/score.txt" "$WORK/golden.txt"); then pass "n_subsample=2 VMAF score: mean of frames 0, 2... ($r)"
        else fail "n_subsample=2 VMAF score" "$r"; fi
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
# NV12 and P010 OpenCL frames (two images: luma, Cb Cr pairs; what VAAPI
# surfaces mapped to OpenCL are) against the planar software path. FFmpeg
# needs two-channel images for them: PoCL's CPU device has none (skipped).
if "$FFMPEG" -nostdin -hide_banner -loglevel error $HWDEV -i "$REF" -frames:v 1 \
    -vf format=nv12,hwupload,hwdownload,format=nv12 -f null - >"$WORK/nv12probe.log" 2>&1; then
    hw_case hwupload/nv12 "$DIS" "$REF" 48 nv12 "model=version=vmaf_v0.6.1:feature=psnr|ciede" \
        "$GOLD" "vmaf integer_motion2 psnr_y psnr_cb ciede2000"
    hw_case hwupload/p010 "$FATE/pairs/$P10/dis.mkv" "$FATE/refs/nf_sparks_480x270_10b_5f.mkv" 5 \
        p010 "model=version=vmaf_v0.6.1:feature=psnr" "$FATE/pairs/$P10/$P10.vmaf.json" \
        "vmaf integer_adm2 psnr_y psnr_cr" yuv420p10le
else
    want hwupload/nv12 && echo "SKIP hwupload/nv12, hwupload/p010: FFmpeg's OpenCL device here cannot hold nv12 frames ($(head -c 200 "$WORK/nv12probe.log" | tr '\n' ' '))"
fi
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
# issue #20 round two, the filter's share: a log that cannot be written is
# refused before any frame (a missing directory, a directory) or fails the
# run (a full disk), never exit 0 without the log; full range against
# limited is refused, never scored as if equal.
expect_error log_path_missing_dir "log_path '$WORK/no/such/dir/x.json': cannot write: No such file" \
    -i "$DIS" -i "$REF" -lavfi "[0:v][1:v]qgpu=feature=psnr:log_path=$WORK/no/such/dir/x.json" -f null -
expect_error log_path_directory "cannot write: Is a directory" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=psnr:log_path=$WORK" -f null -
expect_error log_path_full_disk "error writing log /dev/full: No space left on device" \
    -i "$DIS" -i "$REF" -lavfi "[0:v][1:v]qgpu=feature=psnr:log_path=/dev/full:log_fmt=json" -f null -
{ head -n 1 "$REF" | sed 's/$/ XCOLORRANGE=FULL/'; tail -n +2 "$REF"; } >"$WORK/ref_full_range.y4m"
expect_error range_mismatch "the reference is full range and the distorted input limited range" \
    -i "$DIS" -i "$WORK/ref_full_range.y4m" -lavfi "[0:v][1:v]qgpu=feature=psnr" -f null -
expect_error sample_depth_software "sample_depth is for OpenCL frames" -i "$DIS" -i "$REF" -lavfi \
    "[0:v]format=yuv420p16[d];[1:v]format=yuv420p16[r];[d][r]qgpu=feature=psnr:sample_depth=10" -f null -
expect_error sample_depth_range "sample_depth 8" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]qgpu=feature=psnr:sample_depth=8" -f null -

# ---- 8. libvmaf's filter options (doc/filter.md, "libvmaf's options"):
# one case per row of the table. Each runs qgpu on the 8-bit pair with
# OPTIONS and checks the "VMAF score:" lines, the log and the metadata ----
# opt_run NAME OPTIONS [LOGLEVEL]: runs [0:v][1:v]qgpu=OPTIONS; the ffmpeg
# log is $WORK/NAME.log, the metadata $WORK/NAME.md
opt_run() {
    "$FFMPEG" -nostdin -hide_banner -loglevel "${3:-info}" -y -i "$DIS" -i "$REF" -lavfi \
        "[0:v][1:v]qgpu=$2,metadata=print:file=$WORK/$1.md" -f null - >"$WORK/$1.log" 2>&1 ||
        { fail "libvmaf/$1" "ffmpeg failed: $(tail -n 3 "$WORK/$1.log" | tr '\n' ' ')"; return 1; }
}
# expect_scores NAME GOLDEN...: the "VMAF score:" lines of NAME's log, in
# order, against the given values
expect_scores() {
    name=$1; shift
    vmaf_scores "$WORK/$name.log" >"$WORK/score.txt"
    printf '%s\n' "$@" >"$WORK/golden.txt"
    if r=$(compare "$WORK/score.txt" "$WORK/golden.txt"); then pass "libvmaf/$name: VMAF score ($r)"
    else fail "libvmaf/$name: VMAF score" "$r: $(tr '\n' ' ' <"$WORK/score.txt")"; fi
}
# has_metric NAME METRIC yes|no: lavfi.qgpu.METRIC in NAME's metadata or not
has_metric() {
    if grep -q "^lavfi\.qgpu\.$2=" "$WORK/$1.md"; then got=yes; else got=no; fi
    if [ "$got" = "$3" ]; then pass "libvmaf/$1: $2 present: $3"
    else fail "libvmaf/$1: $2 present" "$got, expected $3"; fi
}
GMEAN=$(golden_pooled "$GOLD" vmaf mean)
if want libvmaf/; then
    # model: default vmaf_v0.6.1, also when only feature= is given (libvmaf's option default)
    if opt_run feature_only 'feature=name=psnr'; then
        expect_scores feature_only "$GMEAN"
        has_metric feature_only vmaf yes
        METRICS="vmaf psnr_y" check_scores "libvmaf/feature_only" "$WORK/feature_only.md" "" "$GOLD"
        # the VMAF score line is the filter's last line, after the pooled lines
        last=$(grep '^\[Parsed_qgpu_0' "$WORK/feature_only.log" | tail -n 1)
        case "$last" in *"] VMAF score: "*) pass "libvmaf/feature_only: VMAF score is the filter's last line" ;;
            *) fail "libvmaf/feature_only: VMAF score last" "last line: $last" ;; esac
    fi
    # model: a '|' list with name=, in any key order; one VMAF score line per model, in order
    if opt_run models 'model=name=v1\\:version=vmaf_v0.6.1|version=vmaf_float_v0.6.1\\:name=vf'; then
        expect_scores models "$GMEAN" "$(golden_pooled "$FATE/pairs/$P/$P.vmaf_float.json" vmaf mean)"
        has_metric models v1 yes
        has_metric models vf yes
        has_metric models vmaf no
    fi
    # model= (empty): no model, only the features
    if opt_run no_model 'model=:feature=name=psnr'; then
        has_metric no_model vmaf no
        has_metric no_model psnr_y yes
        if [ -z "$(vmaf_scores "$WORK/no_model.log")" ]; then pass "libvmaf/no_model: no VMAF score line"
        else fail "libvmaf/no_model" "a VMAF score line without a model"; fi
    fi
    # feature: options before name=, and '|' lists
    if opt_run feature_order 'model=:feature=enable_chroma=false\\:name=psnr|name=float_ssim'; then
        has_metric feature_order psnr_y yes
        has_metric feature_order psnr_cb no
        METRICS="psnr_y float_ssim" check_scores "libvmaf/feature_order" "$WORK/feature_order.md" "" "$GOLD"
    fi
    # log_path, log_fmt: xml by default, and libvmaf's four layouts
    for f in default:'<VMAF version=' xml:'<VMAF version=' json:'"frames": \[' csv:'^Frame,' sub:'^{0}{1}frame: 0|'; do
        fmt=${f%%:*} pat=${f#*:}
        o="model=:feature=psnr:log_path=$WORK/log.$fmt"
        [ "$fmt" = default ] || o="$o:log_fmt=$fmt"
        if opt_run "log_fmt_$fmt" "$o"; then
            if grep -q -- "$pat" "$WORK/log.$fmt" && grep -q 'psnr_y' "$WORK/log.$fmt"; then pass "libvmaf/log_fmt $fmt"
            else fail "libvmaf/log_fmt $fmt" "no '$pat' in $(head -c 200 "$WORK/log.$fmt")"; fi
        fi
    done
    # pool: the VMAF score line pooled as asked (libvmaf's pooled stats)
    for pool in mean min max harmonic_mean; do
        opt_run "pool_$pool" "pool=$pool" && expect_scores "pool_$pool" "$(golden_pooled "$GOLD" vmaf $pool)"
    done
    # n_threads: accepted, no effect on the numbers
    opt_run n_threads 'n_threads=4' && expect_scores n_threads "$GMEAN"
    # FFmpeg 5.1's model_path: the model file, as model='path=...'
    opt_run model_path "model_path=$SRC/models/vmaf_v0.6.1.json" && expect_scores model_path "$GMEAN"
    # enable_transform / phone_model: the model's transform, as model='...:enable_transform=true'
    if opt_run transform_model 'model=version=vmaf_v0.6.1\\:enable_transform=true' &&
       opt_run enable_transform 'enable_transform=1' && opt_run phone_model 'phone_model=1'; then
        t=$(vmaf_scores "$WORK/transform_model.log")
        expect_scores enable_transform "$t"
        expect_scores phone_model "$t"
        if awk -v a="$t" -v b="$GMEAN" 'BEGIN { exit !(a - b > 1) }'; then pass "libvmaf/phone_model: transform raises the score ($GMEAN -> $t)"
        else fail "libvmaf/phone_model: transform" "$t against $GMEAN without"; fi
    fi
    # psnr / ssim: FFmpeg 5.1's switches (psnr: luma only, as 5.1 asks libvmaf)
    if opt_run psnr_switch 'model=:psnr=1:ssim=1'; then
        has_metric psnr_switch psnr_cb no
        METRICS="psnr_y float_ssim" check_scores "libvmaf/psnr_ssim" "$WORK/psnr_switch.md" "" "$GOLD"
    fi
fi
# ms_ssim: on the 480x270 pair (libvmaf's MS-SSIM needs 176x176 or more)
if want libvmaf/ms_ssim; then
    if run_ffmpeg "$WORK/ms_ssim.log" -i "$FATE/pairs/$P10/dis.mkv" -i "$FATE/refs/nf_sparks_480x270_10b_5f.mkv" \
        -lavfi "[0:v][1:v]qgpu=model=:ms_ssim=1,metadata=print:file=$WORK/ms_ssim.md" -f null -; then
        METRICS=float_ms_ssim check_scores "libvmaf/ms_ssim" "$WORK/ms_ssim.md" "" "$FATE/pairs/$P10/$P10.vmaf.json"
    else
        fail "libvmaf/ms_ssim" "ffmpeg failed: $(tail -n 3 "$WORK/ms_ssim.log" | tr '\n' ' ')"
    fi
fi
if want libvmaf/; then
    # the VMAF score line is at info level, as libvmaf's: gone at -loglevel warning
    if opt_run quiet 'n_threads=0' warning; then
        if [ -z "$(vmaf_scores "$WORK/quiet.log")" ]; then pass "libvmaf/quiet: no VMAF score at -loglevel warning"
        else fail "libvmaf/quiet" "VMAF score printed at -loglevel warning"; fi
    fi
fi
if want libvmaf/conf_interval; then
    # enable_conf_interval with a bootstrap model: the interval on every frame,
    # with lo <= bagging <= hi
    if opt_run conf_interval 'model=version=vmaf_b_v0.6.3:enable_conf_interval=1'; then
        for m in vmaf_bagging vmaf_stddev vmaf_ci_p95_lo vmaf_ci_p95_hi; do has_metric conf_interval $m yes; done
        if awk -F= '/lavfi.qgpu.vmaf_ci_p95_lo=/ { lo = $2 } /lavfi.qgpu.vmaf_ci_p95_hi=/ { hi = $2 }
                    /lavfi.qgpu.vmaf_bagging=/ { b = $2 }
                    /^frame:/ && NR > 1 { if (!(lo <= b && b <= hi)) bad++; n++ }
                    END { if (!(lo <= b && b <= hi)) bad++; exit !(n > 0 && !bad) }' "$WORK/conf_interval.md"
        then pass "libvmaf/conf_interval: lo <= bagging <= hi on every frame"
        else fail "libvmaf/conf_interval" "interval out of order in $WORK/conf_interval.md"; fi
    fi
fi
expect_error libvmaf/enable_conf_interval "enable_conf_interval: model 'vmaf' gives no confidence interval" \
    -i "$DIS" -i "$REF" -lavfi "[0:v][1:v]qgpu=enable_conf_interval=1" -f null -
expect_error libvmaf/model_path_and_model "model_path and model are both set" -i "$DIS" -i "$REF" \
    -lavfi "[0:v][1:v]qgpu=model_path=$SRC/models/vmaf_v0.6.1.json:model=version=vmaf_4k_v0.6.1" -f null -
expect_error libvmaf/feature_without_name "nosuch" -i "$DIS" -i "$REF" \
    -lavfi "[0:v][1:v]qgpu=feature=nosuch=1" -f null -

# ---- 9. the filter registered as libvmaf (make ffmpeg FFMPEG_LIBVMAF_NAME=1) ----
if "$FFMPEG" -hide_banner -h filter=libvmaf 2>/dev/null | grep -q sample_depth && want as_libvmaf; then
    if "$FFMPEG" -hide_banner -buildconf 2>&1 | grep -q -- '--enable-libvmaf'; then pass "as_libvmaf: -buildconf shows --enable-libvmaf"
    else fail "as_libvmaf: -buildconf" "no --enable-libvmaf"; fi
    if "$FFMPEG" -hide_banner -filters 2>/dev/null | awk '{ print $2 }' | grep -qx libvmaf; then pass "as_libvmaf: -filters lists libvmaf"
    else fail "as_libvmaf: -filters" "no libvmaf"; fi
    if run_ffmpeg "$WORK/asl.log" -i "$DIS" -i "$REF" -lavfi \
        "[0:v][1:v]libvmaf=feature=name=psnr,metadata=print:file=$WORK/asl.md" -f null -; then
        vmaf_scores "$WORK/asl.log" >"$WORK/score.txt"
        echo "$GMEAN" >"$WORK/golden.txt"
        if r=$(compare "$WORK/score.txt" "$WORK/golden.txt"); then pass "as_libvmaf: VMAF score ($r)"
        else fail "as_libvmaf: VMAF score" "$r"; fi
        sed -n 's/^lavfi\.vmaf\.vmaf=//p' "$WORK/asl.md" >"$WORK/md.txt"
        golden_values "$GOLD" vmaf >"$WORK/golden.txt"
        if r=$(compare "$WORK/md.txt" "$WORK/golden.txt"); then pass "as_libvmaf: lavfi.vmaf.vmaf metadata ($r)"
        else fail "as_libvmaf: lavfi.vmaf.vmaf metadata" "$r"; fi
    else
        fail "as_libvmaf" "ffmpeg failed: $(tail -n 3 "$WORK/asl.log" | tr '\n' ' ')"
    fi
fi

# ---- 10. decoders and demuxers a user expects (prores, dnxhd, vp8, mpeg4,
# h263, rawvideo; mov, mxf, nut, avi): Debian's ffmpeg (a test dependency)
# encodes 5 frames of the 8-bit reference, this ffmpeg decodes them and
# scores them against the reference ----
if want containers; then
    for spec in prores_ks:mov:160x90 dnxhd:mxf:256x144:-profile,dnxhr_lb,-pix_fmt,yuv422p \
                mpeg4:avi:160x90 h263:avi:176x144 libvpx:nut:160x90 rawvideo:nut:160x90 \
                mpeg4:mkv:160x90; do
        codec=${spec%%:*} rest=${spec#*:}
        ext=${rest%%:*} rest=${rest#*:}
        size=${rest%%:*} opts=
        [ "$rest" = "$size" ] || opts=$(echo "${rest#*:}" | tr "," " ")
        clip=$WORK/clip_$codec.$ext
        # shellcheck disable=SC2086
        if ! ffmpeg -nostdin -loglevel error -y -i "$REF" -frames:v 5 -s "$size" -c:v "$codec" $opts "$clip" >"$WORK/enc.log" 2>&1; then
            fail "containers/$codec.$ext" "Debian's ffmpeg could not write it: $(tail -n 2 "$WORK/enc.log" | tr '\n' ' ')"
            continue
        fi
        if run_ffmpeg "$WORK/cont.log" -i "$clip" -i "$REF" -lavfi \
            "[0:v]scale=160:90:flags=bicubic,format=yuv420p[d];[d][1:v]qgpu=model=:feature=psnr,metadata=print:file=$WORK/cont.md" -f null -; then
            metadata_values "$WORK/cont.md" psnr_y >"$WORK/md.txt"
            if [ "$(wc -l <"$WORK/md.txt")" = 5 ] && awk '$1 < 20 { bad = 1 } END { exit bad }' "$WORK/md.txt"; then
                pass "containers/$codec.$ext: 5 frames decoded and scored (psnr_y $(head -n 1 "$WORK/md.txt"))"
            else
                fail "containers/$codec.$ext" "scores: $(tr '\n' ' ' <"$WORK/md.txt")"
            fi
        else
            fail "containers/$codec.$ext" "ffmpeg failed: $(tail -n 3 "$WORK/cont.log" | tr '\n' ' ')"
        fi
    done
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
