#!/bin/sh
# batch-clips.sh DIR [JOBS]: the batch bench's inputs (bench/batch-bench.sh),
# made with Debian's ffmpeg (libx264) from fate/refs/flowerpan (12 frames,
# played forward and back): one 1080p H.264 pair of 150 frames (x264
# veryfast, CRF 20 reference / CRF 34 distorted, 25 fps, yuv420p), and
# DIR/jobs.csv: JOBS jobs (default 64) over that pair, each into its own
# log DIR/logs/N.json. Small enough to carry to a GPU machine; the decoders
# and the device do the same work whichever file a job names.
set -e
out=${1:?usage: $0 DIR [JOBS]}
n=${2:-64}
src=$(cd "$(dirname "$0")/.." && pwd)/fate/refs/flowerpan_1920x1080_12f.mkv
mkdir -p "$out"
cd "$out"
pingpong="[0:v]split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0"
for q in ref:20 dis:34; do
    [ -s b_${q%%:*}.mp4 ] && continue
    ffmpeg -v error -y -i "$src" -filter_complex \
        "$pingpong,loop=loop=-1:size=24,trim=end_frame=150,setpts=N/25/TB,format=yuv420p" \
        -r 25 -c:v libx264 -preset veryfast -crf ${q#*:} b_${q%%:*}.mp4
done
echo "ref,dis,output" >jobs.csv
i=0
while [ $i -lt "$n" ]; do
    echo "b_ref.mp4,b_dis.mp4,logs/$i.json" >>jobs.csv
    i=$((i + 1))
done
