#!/bin/sh
# run.sh: times libvmaf on the CPU, metric by metric, with THREADS threads
# (16) and with 1 thread for reference, at 1080p and 2160p 8-bit 4:2:0, on
# the same content as qgpu-bench: the first 8 frames of the small r.y4m/d.y4m
# pair, tiled to size by y4m-tile, then cycled from memory by ffmpeg's loop
# filter (frame i = frame i % 8, as qgpu-bench's round robin), so no run reads
# a large file. See README.md beside this file for what the bundle holds.
#
#   ./run.sh            (in the bundle folder; results go to stdout and to
#                        $OUT/cpu_baseline.md when OUT is set)
#
# Each case is first run on a few frames (CAL_1080/CAL_2160 frames at THREADS
# threads, 4 frames at 1 thread; 4 times more while that run takes under
# TARGET / 4); that run sets the frame count (at most
# MAX_1080/MAX_2160) for which one run takes
# about TARGET seconds, and RUNS runs of that length give the median. A case
# whose calibration run already took over 2 x TARGET is reported from that
# single run.
#
# Settings (environment): THREADS (16), RUNS (3), TARGET (1.0), SIZES
# ("1080 2160"), REF_SIZES ("1080": sizes also timed with 1 thread; "" for
# none), MAX_1080 (960), MAX_2160 (240), CAL_1080 (48), CAL_2160 (32), BUDGET
# (200: seconds after which the 1-thread rows are skipped), CASES (labels to
# run, default all), FFMPEG (the ffmpeg to use), WORK (scratch folder,
# ${TMPDIR:-/tmp}/cpubase-work; the clips are deleted at the end unless
# KEEP_WORK is set), FF_TIMEOUT (120: seconds before one ffmpeg run is killed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
threads=${THREADS:-16}
runs=${RUNS:-3}
target=${TARGET:-1.0}
ref_sizes=${REF_SIZES-1080}
budget=${BUDGET:-200}
sizes=${SIZES:-"1080 2160"}
work=${WORK:-${TMPDIR:-/tmp}/cpubase-work}
start=$(date +%s)
mkdir -p "$work" || exit 1

die() { echo "run.sh: $*" >&2; exit 1; }

# --- tools -------------------------------------------------------------------
unxz_to() { # FILE.xz DEST
    if [ -x "$here/busybox" ]; then "$here/busybox" unxz -c "$1" >"$2"
    else xz -dc "$1" >"$2"; fi
}
ffmpeg=${FFMPEG:-}
if [ -z "$ffmpeg" ]; then
    if [ -x "$here/ffmpeg" ]; then ffmpeg=$here/ffmpeg
    elif [ -f "$here/ffmpeg.xz" ]; then
        ffmpeg=$work/ffmpeg
        if [ ! -x "$ffmpeg" ] || [ "$here/ffmpeg.xz" -nt "$ffmpeg" ]; then
            unxz_to "$here/ffmpeg.xz" "$ffmpeg.tmp" && chmod +x "$ffmpeg.tmp" &&
                mv "$ffmpeg.tmp" "$ffmpeg" || die "cannot unpack ffmpeg.xz"
        fi
    else ffmpeg=ffmpeg; fi
fi
tiler=$here/y4m-tile
if [ ! -x "$tiler" ]; then
    tiler=$work/y4m-tile
    cc -std=c11 -O2 -o "$tiler" "$here/y4m_tile.c" || die "no y4m-tile and cannot build it"
fi
for n in r d; do
    src=${SRC_DIR:-$here}/$n.y4m
    if [ ! -f "$src" ] && [ -f "$src.xz" ]; then
        unxz_to "$src.xz" "$work/$n.y4m" || die "cannot unpack $src.xz"
        src=$work/$n.y4m
    fi
    [ -f "$src" ] || die "missing $src"
    eval "src_$n=\$src"
done
"$ffmpeg" -hide_banner -version >/dev/null 2>&1 || die "cannot run $ffmpeg"
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout -s KILL ${FF_TIMEOUT:-120}"

# --- inputs ------------------------------------------------------------------
make_pair() { # W H FRAMES TAG
    for pn in r d; do
        eval "psrc=\$src_$pn"
        pf=$work/$pn.$4.y4m
        if [ ! -f "$pf" ]; then
            "$tiler" "$psrc" "$pf.tmp" "$1" "$2" "$3" && mv "$pf.tmp" "$pf" || die "cannot make $pf"
        fi
    done
}

# --- timing ------------------------------------------------------------------
now() { date +%s.%N; }
# run_ff TAG THREADS FRAMES ARGS: one timed ffmpeg run on the first FRAMES
# frames; sets secs and scored (frames in the JSON log, or FRAMES for "io")
# and json_fps. Returns 1 if ffmpeg failed.
run_ff() {
    log=$work/log.json
    rm -f "$log"
    # the 8 frames, repeated (finite, so that both inputs end)
    loop="loop=loop=$(( $3 / 8 + 2 )):size=8"
    if [ "$4" = io ]; then
        graph="[0:v]$loop[a];[1:v]$loop,nullsink"
        set -- "$1" "$2" "$3" "$4" -map "[a]"
    else
        graph="[0:v]$loop[d];[1:v]$loop[r];[d][r]libvmaf=$4:n_threads=$2:log_fmt=json:log_path=$log"
    fi
    ff_tag=$1; ff_frames=$3; ff_args=$4
    shift 4
    t0=$(now)
    $limit "$ffmpeg" -nostdin -hide_banner -v error -i "$work/d.$ff_tag.y4m" -i "$work/r.$ff_tag.y4m" \
        -filter_complex "$graph" "$@" -frames:v "$ff_frames" -f null - >"$work/ff.err" 2>&1
    rc=$?
    t1=$(now)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    json_fps=-
    scored=$ff_frames
    if [ "$ff_args" != io ]; then
        scored=0
        if [ -f "$log" ]; then
            json_fps=$(sed -n 's/^ *"fps": *\([0-9.]*\).*/\1/p' "$log" | head -n 1)
            scored=$(grep -c '"frameNum"' "$log")
            v=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$log" | head -n 1)
            [ -n "$v" ] && echo "$v" >"$work/version"
        fi
    fi
    [ $rc -eq 0 ] && [ "$scored" -gt 0 ] && return 0
    sed -n 1,3p "$work/ff.err" >&2
    return 1
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# io_model TAG NMAX: times reading+decoding both clips (no metric) on 2 and
# NMAX frames; writes "startup per_frame" (seconds) to $work/io.TAG.
io_model() {
    for nf in 2 "$2"; do
        t=
        for i in 0 1 2 3; do  # the first run only warms up
            run_ff "$1" 1 "$nf" io || die "ffmpeg cannot read the clips"
            [ $i -gt 0 ] && t="$t $secs"
        done
        eval "io_$nf=\$(echo \"\$t\" | median)"
    done
    eval "big=\$io_$2"
    awk -v a="$io_2" -v b="$big" -v n="$2" 'BEGIN {
        p = (b - a) / (n - 2); if (p < 0) p = 0; printf "%.4f %.6f\n", a - 2 * p, p }' >"$work/io.$1"
}

# Cases: label|libvmaf filter arguments
all_cases="vmaf_v0.6.1|model=version=vmaf_v0.6.1
vmaf_float_v0.6.1|model=version=vmaf_float_v0.6.1
psnr|model=:feature=name=psnr
float_psnr|model=:feature=name=float_psnr
float_ssim|model=:feature=name=float_ssim
float_ms_ssim|model=:feature=name=float_ms_ssim
ciede|model=:feature=name=ciede
psnr_hvs|model=:feature=name=psnr_hvs
cambi|model=:feature=name=cambi
vif|model=:feature=name=vif
adm|model=:feature=name=adm
motion|model=:feature=name=motion
float_vif|model=:feature=name=float_vif
float_adm|model=:feature=name=float_adm
float_motion|model=:feature=name=float_motion
float_ansnr|model=:feature=name=float_ansnr
float_moment|model=:feature=name=float_moment
speed_chroma|model=:feature=name=speed_chroma
vmaf_v1.0.16_3d0h|model=version=vmaf_v1.0.16_3d0h"

wanted() { [ -z "${CASES:-}" ] && return 0; case " $CASES " in *" $1 "*) return 0;; esac; return 1; }

emit() { echo "$1"; echo "$1" >>"$table"; }

# time_cases TAG HEIGHT THREADS CAL_FRAMES MAX_FRAMES RUNS
time_cases() {
    read -r io_a io_b <"$work/io.$1"
    echo "$all_cases" | while IFS='|' read -r label args; do
        wanted "$label" || continue
        pre="| $label | ${2}p | $3 |"
        if [ "$3" -lt "$threads" ] && [ $(( $(date +%s) - start )) -gt "$budget" ]; then
            emit "$pre | skipped (time budget) | | | | | |"
            continue
        fi
        if ! run_ff "$1" "$3" "$4" "$args"; then
            emit "$pre | not in this libvmaf build | | | | | |"
            continue
        fi
        # a calibration run under TARGET / 4 is redone on 4 times the frames
        nc=$4
        while [ "$nc" -lt "$5" ] && awk -v t="$secs" -v tg="$target" 'BEGIN { exit !(t < tg / 4) }'; do
            nc=$((nc * 4)); [ "$nc" -gt "$5" ] && nc=$5
            run_ff "$1" "$3" "$nc" "$args" || break
        done
        nf=$scored; times=$secs; jfps=$json_fps
        nf=$(awk -v t="$secs" -v n="$scored" -v a="$io_a" -v tg="$target" -v mx="$5" 'BEGIN {
            p = (t - a) / n; if (p < 1e-5) p = 1e-5
            if (t > 2 * tg) { print 0; exit }
            m = int(tg / p); if (m < n) m = n; if (m > mx) m = mx; print m }')
        if [ "$nf" -eq 0 ]; then
            nf=$scored
        else
            times=; jfps=; i=0
            while [ $i -lt "$6" ]; do
                run_ff "$1" "$3" "$nf" "$args" || { times=; break; }
                times="$times $secs"; jfps="$jfps $json_fps"; nf=$scored
                i=$((i + 1))
            done
            [ -n "$times" ] || { emit "$pre | failed | | | | | |"; continue; }
        fi
        med=$(echo "$times" | median)
        emit "$(awk -v pre="$pre" -v f="$nf" -v r="$times" -v m="$med" -v a="$io_a" -v b="$io_b" \
            -v j="$(echo "$jfps" | median)" 'BEGIN {
                gsub(/^ /, "", r); gsub(/ /, ", ", r)
                io = a + b * f
                net = m - io > 0.001 ? sprintf("%.1f", f / (m - io)) : "-"
                printf "%s %d | %s | %.3f | %.1f | %.3f | %s | %s |", pre, f, r, m, f / m, io, net, j }')"
    done
}

size_of() { # HEIGHT -> sets w h nmax ncal
    case $1 in
    1080) w=1920; h=1080; nmax=${MAX_1080:-960}; ncal=${CAL_1080:-48};;
    2160) w=3840; h=2160; nmax=${MAX_2160:-240}; ncal=${CAL_2160:-32};;
    *) die "size $1: use 1080 or 2160";;
    esac
    [ "$ncal" -le "$nmax" ] || ncal=$nmax
}

rm -f "$work/version" "$work"/io.*
table=$work/table.md
cpu=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
{
    echo "CPU: ${cpu:-?}, $(nproc 2>/dev/null || echo ?) logical CPUs; $("$ffmpeg" -hide_banner -version 2>/dev/null | head -n 1 | cut -d' ' -f1-3)"
    echo
    echo "| metric | size | threads | frames | runs (s) | median (s) | wall fps | io floor (s) | fps net of io | JSON fps |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$table"
cat "$table"

for s in $sizes; do
    size_of "$s"
    make_pair $w $h 8 "$s"
    io_model "$s" $nmax
    time_cases "$s" $h "$threads" $ncal $nmax "$runs"
done
for s in $ref_sizes; do
    size_of "$s"
    make_pair $w $h 8 "$s"
    [ -f "$work/io.$s" ] || io_model "$s" $nmax
    time_cases "$s" $h 1 4 $nmax 1
done
{
    echo
    echo "libvmaf $(cat "$work/version" 2>/dev/null || echo ?) (ffmpeg's libvmaf filter, n_threads = threads). Wall clock of the whole"
    echo "ffmpeg process: start-up, reading the 8-frame clips, cycling them (loop filter), libvmaf, JSON"
    echo "log. io floor = the same process with no metric, for that many frames; fps net of io ="
    echo "frames / (median - io floor)."
    echo "JSON fps = libvmaf's own figure, frames / process CPU time (clock()), summed over threads."
    echo "Total time: $(( $(date +%s) - start )) s."
} >>"$table"
tail -n 6 "$table"
[ -n "${OUT:-}" ] && cp "$table" "$OUT/cpu_baseline.md"
[ -n "${KEEP_WORK:-}" ] || rm -f "$work"/*.y4m "$work"/*.y4m.tmp
exit 0
