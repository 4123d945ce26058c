#!/bin/sh
# run.sh: per-frame parity of qgpu against a libvmaf CPU build on long clips
# (600 frames, scene cuts, 1080p and 2160p, 8 and 10 bits). See README.md
# beside this file.
#
#   bench/long-parity/run.sh [CASE...]        CASE: 1080p8 1080p10 2160p8 2160p10
#                                               (default: all four)
#
# The reference libvmaf is, in this order:
#   VMAF_CLI=path          a `vmaf` CLI (libvmaf's tools/vmaf)
#   LIBVMAF_SRC=dir        libvmaf's source tree (Netflix/vmaf checkout): built
#                          here with meson + ninja into $WORK/libvmaf-build,
#                          then its `vmaf` CLI is used
#   FFMPEG_VMAF=path       an ffmpeg with the libvmaf filter (e.g. a static
#                          FFmpeg 8 build: libvmaf git 2b2cf9c)
# qgpu side: QGPU (the qgpu tool, default build/qgpu of this checkout),
# QGPU_DEVICE as usual.
#
# Clips: made once in $WORK (default ${TMPDIR:-/tmp}/long-parity) with
# FFMPEG_GEN (default: FFMPEG_VMAF if set, else `ffmpeg`), from the bundled
# flower photo and seeking clip (fate/refs) plus lavfi sources; reference:
# lossless FFV1, distorted: x264 (crf CRF, default 32) of the reference.
# FRAMES (600) sets the length. THREADS (nproc) is libvmaf's thread count.
# MODEL (vmaf_v0.6.1) is the model both sides compute; qgpu runs it twice:
# as is (libvmaf >= 3.2 arithmetic) and with motion.motion_legacy=true
# (libvmaf <= 3.0 / git 2b2cf9c arithmetic); the comparison says which one
# the reference matches. Results: $WORK/<case>/*.json, a summary on stdout
# and in $OUT/long_parity.md when OUT is set.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=${WORK:-${TMPDIR:-/tmp}/long-parity}
frames=${FRAMES:-600}
crf=${CRF:-32}
model=${MODEL:-vmaf_v0.6.1}
threads=${THREADS:-$(nproc 2>/dev/null || echo 4)}
qgpu=${QGPU:-$top/build/qgpu}
cases=${*:-"1080p8 1080p10 2160p8 2160p10"}
mkdir -p "$work" || exit 1

die() { echo "run.sh: $*" >&2; exit 1; }
say() { echo "run.sh: $*" >&2; }

# --- tools ---------------------------------------------------------------
ffgen=${FFMPEG_GEN:-${FFMPEG_VMAF:-ffmpeg}}
"$ffgen" -hide_banner -version >/dev/null 2>&1 || die "cannot run $ffgen (FFMPEG_GEN)"
[ -x "$qgpu" ] || die "no qgpu tool at $qgpu (QGPU)"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the comparison"

vmaf_cli=${VMAF_CLI:-}
if [ -z "$vmaf_cli" ] && [ -n "${LIBVMAF_SRC:-}" ]; then
    # libvmaf's own build: meson + ninja (+ nasm for its x86 SIMD, xxd for the
    # built-in models); the CLI lands in build/tools/vmaf.
    bdir=$work/libvmaf-build
    if [ ! -x "$bdir/tools/vmaf" ]; then
        for t in meson ninja; do
            command -v $t >/dev/null 2>&1 || die "building libvmaf needs $t (apt-get install meson ninja-build nasm xxd)"
        done
        say "building libvmaf from $LIBVMAF_SRC"
        meson setup "$bdir" "$LIBVMAF_SRC/libvmaf" --buildtype=release -Denable_float=true \
            >"$work/libvmaf-build.log" 2>&1 &&
            ninja -C "$bdir" >>"$work/libvmaf-build.log" 2>&1 ||
            die "libvmaf build failed: see $work/libvmaf-build.log"
    fi
    vmaf_cli=$bdir/tools/vmaf
fi
if [ -n "$vmaf_cli" ]; then
    [ -x "$vmaf_cli" ] || die "cannot run $vmaf_cli"
    refdesc="vmaf CLI $vmaf_cli"
elif [ -n "${FFMPEG_VMAF:-}" ]; then
    "$FFMPEG_VMAF" -hide_banner -h filter=libvmaf >/dev/null 2>&1 ||
        die "$FFMPEG_VMAF has no libvmaf filter"
    refdesc="libvmaf filter of $FFMPEG_VMAF"
else
    die "give the reference: VMAF_CLI, LIBVMAF_SRC or FFMPEG_VMAF (README.md)"
fi

# --- clips ---------------------------------------------------------------
# Six shots, cut hard: the flower photo panned (real motion over fine
# texture), testsrc2 (synthetic motion, sharp edges), the seeking clip
# looped (a jump every 30 frames), a mandelbrot zoom, a frozen frame
# (motion 0) and a fade to black (near-black frames: ADM's special case).
make_clips() { # W H PIXFMT DIR
    w=$1 h=$2 pf=$3 d=$4
    n1=$((frames / 4)) n2=$((frames / 4)) n3=$((frames / 5)) n4=$((frames / 6))
    n5=$((frames / 15)) n6=$((frames - n1 - n2 - n3 - n4 - n5))
    common="fps=25,setsar=1,format=$pf"
    bw=$((w * 6 / 5 / 2 * 2)) bh=$((h * 6 / 5 / 2 * 2))
    graph="[0:v]loop=loop=-1:size=12,trim=end_frame=$n1,setpts=N/25/TB,scale=$bw:$bh:flags=bicubic,crop=$w:$h:x='n*($bw-$w)/$n1':y='n*($bh-$h)/(2*$n1)',$common[a];
testsrc2=size=${w}x$h:rate=25,trim=end_frame=$n2,$common[b];
[1:v]scale=$w:$h:flags=bicubic,loop=loop=-1:size=30,trim=end_frame=$n3,setpts=N/25/TB,$common[c];
mandelbrot=size=${w}x$h:rate=25:maxiter=400,trim=end_frame=$n4,$common[e];
[2:v]trim=end_frame=1,scale=$w:$h:flags=bicubic,loop=loop=-1:size=1,trim=end_frame=$n5,setpts=N/25/TB,$common[f];
[3:v]loop=loop=-1:size=12,trim=end_frame=$n6,setpts=N/25/TB,scale=$w:$h:flags=bicubic,fade=t=out:st=0:d=$(echo "$n6" | awk '{printf "%.2f", $1 * 0.6 / 25}'),$common[g];
[a][b][c][e][f][g]concat=n=6:v=1:a=0[out]"
    flower=$top/fate/refs/flowerpan_1920x1080_12f.mkv
    seeking=$top/fate/refs/seeking_720x480_f000-029.mkv
    [ -f "$flower" ] && [ -f "$seeking" ] || die "missing fate/refs inputs"
    if [ ! -s "$d/ref.mkv" ]; then
        say "writing $d/ref.mkv ($frames frames ${w}x$h $pf, FFV1)"
        "$ffgen" -v error -y -i "$flower" -i "$seeking" -i "$flower" -i "$flower" \
            -filter_complex "$graph" -map '[out]' -frames:v "$frames" \
            -c:v ffv1 -level 3 -slices 16 -g 1 "$d/ref.tmp.mkv" &&
            mv "$d/ref.tmp.mkv" "$d/ref.mkv" || die "cannot write $d/ref.mkv"
    fi
    if [ ! -s "$d/dis.mp4" ]; then
        say "writing $d/dis.mp4 (x264 crf $crf)"
        "$ffgen" -v error -y -i "$d/ref.mkv" -c:v libx264 -preset veryfast -crf "$crf" \
            -pix_fmt "$pf" "$d/dis.tmp.mp4" && mv "$d/dis.tmp.mp4" "$d/dis.mp4" ||
            die "cannot write $d/dis.mp4"
    fi
}

# --- scoring -------------------------------------------------------------
score_reference() { # DIR
    d=$1
    [ -s "$d/libvmaf.json" ] && return 0
    say "scoring $d with $refdesc"
    start=$(date +%s)
    if [ -n "$vmaf_cli" ]; then
        # decoded to y4m through FIFOs (no multi-GB files)
        rm -f "$d/r.fifo" "$d/d.fifo"
        mkfifo "$d/r.fifo" "$d/d.fifo" || die "mkfifo"
        "$ffgen" -v error -y -i "$d/ref.mkv" -f yuv4mpegpipe -strict -1 "$d/r.fifo" &
        "$ffgen" -v error -y -i "$d/dis.mp4" -f yuv4mpegpipe -strict -1 "$d/d.fifo" &
        "$vmaf_cli" -r "$d/r.fifo" -d "$d/d.fifo" --model "version=$model" --threads "$threads" \
            --json -o "$d/libvmaf.json" >"$d/libvmaf.log" 2>&1 || die "vmaf failed: $d/libvmaf.log"
        wait
        rm -f "$d/r.fifo" "$d/d.fifo"
    else
        "$FFMPEG_VMAF" -v error -i "$d/dis.mp4" -i "$d/ref.mkv" -lavfi \
            "[0:v][1:v]libvmaf=model=version=$model:n_threads=$threads:log_fmt=json:log_path=$d/libvmaf.json" \
            -f null - >"$d/libvmaf.log" 2>&1 || die "ffmpeg libvmaf failed: $d/libvmaf.log"
    fi
    say "  $(($(date +%s) - start)) s"
}

score_qgpu() { # DIR TAG MODEL-SPEC
    d=$1
    [ -s "$d/qgpu_$2.json" ] && return 0
    say "scoring $d with qgpu ($3)"
    start=$(date +%s)
    "$qgpu" -q -r "$d/ref.mkv" -d "$d/dis.mp4" -m "$3" --json -o "$d/qgpu_$2.json" \
        >"$d/qgpu_$2.log" 2>&1 || die "qgpu failed: $d/qgpu_$2.log"
    say "  $(($(date +%s) - start)) s"
}

summary=$work/summary.md
: >"$summary"
status=0
for c in $cases; do
    case $c in
    1080p8) w=1920 h=1080 pf=yuv420p ;;
    1080p10) w=1920 h=1080 pf=yuv420p10le ;;
    2160p8) w=3840 h=2160 pf=yuv420p ;;
    2160p10) w=3840 h=2160 pf=yuv420p10le ;;
    *) die "unknown case $c (1080p8 1080p10 2160p8 2160p10)" ;;
    esac
    d=$work/$c
    mkdir -p "$d" || exit 1
    make_clips $w $h $pf "$d"
    score_reference "$d"
    score_qgpu "$d" current "version=$model"
    score_qgpu "$d" legacy "version=$model:motion.motion_legacy=true"
    echo "## $c: $frames frames ${w}x$h $pf, x264 crf $crf; reference: $refdesc" >>"$summary"
    python3 "$here/compare.py" "$d/libvmaf.json" "$d/qgpu_current.json" "$d/qgpu_legacy.json" \
        >>"$summary" || status=1
    echo >>"$summary"
done
cat "$summary"
[ -n "${OUT:-}" ] && cp "$summary" "$OUT/long_parity.md"
exit $status
