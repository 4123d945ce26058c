#!/bin/sh
# FFmpeg's own libvmaf filter (its unmodified vf_libvmaf.c), linked with
# libvmaf-qgpu (libvmaf-abi/) instead of libvmaf, on the committed pairs of
# fate/pairs.txt: the per-frame scores of its JSON log against libvmaf's
# golden logs (fate/pairs/PAIR/PAIR.vmaf.json) within 5e-5, the pooled
# "VMAF score:" line, n_subsample, the XML log and an error.
#
#   make fate-libvmaf-abi [FFMPEG_VERSION=8.1.2]
#   fate/libvmaf-abi.sh build/ffmpeg-5.1.9-vmafabi/ffmpeg
#
# Environment: QGPU_SRC (source tree), QGPU_DEVICE (the OpenCL device
# libvmaf-qgpu opens), QGPU_FATE_KEEP=1 (keep the work directory).
# Last line: "N passed, N failed"; exit status 1 when a test failed.

FFMPEG=${1:?usage: $0 PATH/TO/ffmpeg}
. "$(dirname "$0")/golden.sh"
fate_init qgpu-vmafabi

[ -x "$FFMPEG" ] || { echo "no ffmpeg at $FFMPEG (make ffmpeg FFMPEG_WITH_LIBVMAF_ABI=1)"; echo "0 passed, 1 failed"; exit 1; }
if ! "$FFMPEG" -hide_banner -h filter=libvmaf 2>/dev/null | grep -q 'Filter libvmaf' ||
   "$FFMPEG" -hide_banner -h filter=libvmaf 2>/dev/null | grep -q sample_depth; then
    echo "$FFMPEG has no libvmaf filter of its own"; echo "0 passed, 1 failed"; exit 1
fi

# check NAME LOG GOLDEN EVERY METRIC...
check() {
    name=$1 log=$2 golden=$3 every=$4
    shift 4
    for metric in "$@"; do
        golden_values "$log" "$metric" >"$WORK/got.txt"
        golden_values "$golden" "$metric" "$every" >"$WORK/want.txt"
        if r=$(compare "$WORK/got.txt" "$WORK/want.txt"); then pass "$name $metric ($r)"
        else fail "$name $metric" "$r"; fi
    done
}

run_ffmpeg() {
    out=$1; shift
    "$FFMPEG" -nostdin -hide_banner -loglevel info -y "$@" >"$out" 2>&1
}

METRICS="vmaf integer_adm2 integer_adm_scale0 integer_adm_scale3 integer_vif_scale0 integer_vif_scale3 integer_motion2 integer_motion3 psnr_y psnr_cb psnr_cr"

# FFmpeg 5.1's vf_libvmaf copies w bytes of each row of a > 8-bit frame
# (half the row: copy_picture_data's memcpy of sizeof(uint8_t) * w), so
# its scores of 10-bit video are wrong with libvmaf too; 8.1 copies the
# whole row. Those pairs are left out on 5.x.
major=$("$FFMPEG" -hide_banner -version | sed -n 's/^ffmpeg version n\{0,1\}\([0-9]*\)\..*/\1/p')

# ---- every pair: VMAF v0.6.1 (the filter's default model) and psnr ----
grep -v '^#' "$FATE/pairs.txt" | while read -r pair ref dis w h fmt frames; do
    [ -n "$pair" ] || continue
    case $fmt in yuvj*) continue ;; esac # vf_libvmaf takes no yuvj: FFmpeg would convert the range
    case $major/$fmt in 5/*p1[0-6]*) echo "SKIP vmaf/$pair: $fmt on FFmpeg 5.x (its filter's row copy)"; continue ;; esac
    pre="[0:v]null[d]"
    dw=$(run_ffmpeg "$WORK/probe.log" -i "$FATE/$dis" -frames:v 1 -f null - ; \
         sed -n 's/.*Video: .*, \([0-9]*\)x\([0-9]*\)[, ].*/\1x\2/p' "$WORK/probe.log" | head -n 1)
    [ "$dw" = "${w}x$h" ] || pre="[0:v]scale=$w:$h:flags=bicubic[d]"
    log=$WORK/$pair.json gold=$FATE/pairs/$pair/$pair.vmaf.json
    if run_ffmpeg "$WORK/$pair.log" -i "$FATE/$dis" -i "$FATE/$ref" -lavfi \
        "$pre;[d][1:v]libvmaf=log_path=$log:log_fmt=json:feature=name=psnr" -f null -; then
        check "vmaf/$pair" "$log" "$gold" 1 $METRICS
        got=$(sed -n 's/.*VMAF score: \([0-9.]*\)$/\1/p' "$WORK/$pair.log")
        want=$(golden_pooled "$gold" vmaf mean)
        if awk -v a="$got" -v b="$want" -v t="$TOL" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'
        then pass "vmaf/$pair VMAF score: $got (golden mean $want)"
        else fail "vmaf/$pair VMAF score" "'$got', golden mean $want"; fi
        n=$(golden_values "$log" vmaf | wc -l)
        if [ "$n" = "$frames" ]; then pass "vmaf/$pair frame count ($n)"
        else fail "vmaf/$pair frame count" "$n frames logged, expected $frames"; fi
    else
        fail "vmaf/$pair" "ffmpeg failed: $(tail -n 3 "$WORK/$pair.log" | tr '\n' ' ')"
    fi
done >"$WORK/results.txt"
cat "$WORK/results.txt"
passed=$(grep -c '^PASS' "$WORK/results.txt")
failed=$(grep -c '^FAIL' "$WORK/results.txt")

P=nf_src01_160x90_nfdis
DIS=$FATE/pairs/$P/dis.y4m
REF=$FATE/refs/nf_src01_160x90_48f.y4m
GOLD=$FATE/pairs/$P/$P.vmaf.json

# ---- n_subsample: every 3rd frame logged ----
if run_ffmpeg "$WORK/sub.log" -i "$DIS" -i "$REF" -lavfi \
    "[0:v][1:v]libvmaf=n_subsample=3:log_path=$WORK/sub.json:log_fmt=json" -f null -; then
    check "n_subsample=3" "$WORK/sub.json" "$GOLD" 3 vmaf integer_motion2
else
    fail n_subsample "ffmpeg failed: $(tail -n 3 "$WORK/sub.log" | tr '\n' ' ')"
fi

# ---- FFmpeg 5.x's deprecated options: model_path= (a second model named
# vmaf beside the default one) and psnr=1 ----
if [ "$major" = 5 ]; then
    if run_ffmpeg "$WORK/dep.log" -i "$DIS" -i "$REF" -lavfi \
        "[0:v][1:v]libvmaf=model_path=$SRC/models/vmaf_v0.6.1.json:psnr=1:log_path=$WORK/dep.json:log_fmt=json" \
        -f null -; then
        check "5.x model_path psnr=1" "$WORK/dep.json" "$GOLD" 1 vmaf integer_adm2 psnr_y
    else
        fail "5.x model_path psnr=1" "ffmpeg failed: $(tail -n 3 "$WORK/dep.log" | tr '\n' ' ')"
    fi
fi

# ---- the XML log (FFmpeg's default log_fmt): one frame element per frame ----
if run_ffmpeg "$WORK/xml.log" -i "$DIS" -i "$REF" -lavfi "[0:v][1:v]libvmaf=log_path=$WORK/x.xml" \
    -f null - && [ "$(grep -c '<frame frameNum=' "$WORK/x.xml")" = 48 ] &&
    grep -q '<VMAF version=' "$WORK/x.xml"; then
    pass "xml log (48 frames)"
else
    fail "xml log" "$(tail -n 3 "$WORK/xml.log" | tr '\n' ' ')"
fi

# ---- an unknown model: libvmaf-qgpu's message, ffmpeg fails ----
if run_ffmpeg "$WORK/err.log" -i "$DIS" -i "$REF" -lavfi "[0:v][1:v]libvmaf=model=version=nosuch" \
    -f null -; then
    fail "unknown model" "ffmpeg succeeded"
elif grep -q "no built-in model 'nosuch'" "$WORK/err.log"; then
    pass "unknown model (error)"
else
    fail "unknown model" "$(tail -n 3 "$WORK/err.log" | tr '\n' ' ')"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
