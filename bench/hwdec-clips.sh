#!/bin/sh
# hwdec-clips.sh DIR: the 1080p pairs bench/hwdec-run.sh scores, made with
# Debian's ffmpeg (libx264, libx265) from fate/refs/flowerpan (12 frames,
# played forward and back): reference and distorted encoded from the same
# frames at two qualities.
#   h264_*.mp4      600 frames, x264 veryfast, CRF 20 / 34 (easy content)
#   hevc_*.mp4      48 frames x265 ultrafast CRF 22 / 34, looped to 600
#   hevc10_*.mp4    the same in 10 bits (yuv420p10le; NVDEC gives P010)
#   seg_noisy_*.ts  50 frames with film-grain-like noise, x264 CRF 19 / 24
#                   (about 34 and 3 Mbit/s): hwdec-run.sh puts 13 copies end
#                   to end (high-bitrate clips that travel small)
set -e
out=${1:?usage: $0 DIR}
src=$(cd "$(dirname "$0")/.." && pwd)/fate/refs/flowerpan_1920x1080_12f.mkv
mkdir -p "$out"
cd "$out"
pingpong="[0:v]split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0"
x265="-c:v libx265 -preset ultrafast -tag:v hvc1"
for q in ref:20 dist:34; do
    ffmpeg -v error -y -i "$src" -filter_complex \
        "$pingpong,loop=loop=-1:size=24,trim=end_frame=600,setpts=N/25/TB,format=yuv420p" \
        -r 25 -c:v libx264 -preset veryfast -crf ${q#*:} h264_${q%%:*}.mp4
done
for pf in yuv420p:hevc yuv420p10le:hevc10; do
    for q in ref:22 dist:34; do
        seg=seg_${pf#*:}_${q%%:*}.mp4
        # shellcheck disable=SC2086
        ffmpeg -v error -y -i "$src" -filter_complex \
            "$pingpong,loop=loop=1:size=24,setpts=N/25/TB,format=${pf%%:*}" -r 25 $x265 \
            -crf ${q#*:} -x265-params log-level=error:keyint=48 "$seg"
        ffmpeg -v error -y -stream_loop 12 -i "$seg" -c copy -frames:v 600 ${pf#*:}_${q%%:*}.mp4
        rm -f "$seg"
    done
done
for q in ref:19 dist:24; do
    ffmpeg -v error -y -i "$src" -filter_complex \
        "$pingpong,loop=loop=1:size=24,trim=end_frame=50,setpts=N/25/TB,noise=alls=7:allf=t,format=yuv420p" \
        -r 25 -c:v libx264 -preset veryfast -crf ${q#*:} -g 50 -keyint_min 50 -sc_threshold 0 \
        -f mpegts seg_noisy_${q%%:*}.ts
done
ls -l
