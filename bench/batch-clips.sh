#!/bin/sh
# batch-clips.sh DIR [JOBS] [FRAMES]: the batch bench's inputs
# (bench/batch-bench.sh), made with Debian's ffmpeg (libx264) from
# fate/refs/flowerpan (12 frames, played forward and back): one 1080p H.264
# pair of FRAMES frames (default 150; x264 veryfast, CRF 20 reference / CRF
# 34 distorted, 25 fps, yuv420p), b_ref.mp4 and b_dis.mp4 (bF_ref.mp4 and
# bF_dis.mp4 for another F), and DIR/jobs.csv (jobsF.csv): JOBS jobs
# (default 64) over that pair, each into its own log DIR/logs/N.json. Small enough to carry to a GPU machine; the decoders
# and the device do the same work whichever file a job names.
set -e
out=${1:?usage: $0 DIR [JOBS]}
n=${2:-64}
frames=${3:-150}
name=b
list=jobs.csv
[ "$frames" = 150 ] || { name=b$frames; list=jobs$frames.csv; }
src=$(cd "$(dirname "$0")/.." && pwd)/fate/refs/flowerpan_1920x1080_12f.mkv
mkdir -p "$out"
cd "$out"
pingpong="[0:v]split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0"
for q in ref:20 dis:34; do
    [ -s ${name}_${q%%:*}.mp4 ] && continue
    ffmpeg -v error -y -i "$src" -filter_complex \
        "$pingpong,loop=loop=-1:size=24,trim=end_frame=$frames,setpts=N/25/TB,format=yuv420p" \
        -r 25 -c:v libx264 -preset veryfast -crf ${q#*:} ${name}_${q%%:*}.mp4
done
echo "ref,dis,output" >$list
i=0
while [ $i -lt "$n" ]; do
    echo "${name}_ref.mp4,${name}_dis.mp4,logs/$i.json" >>$list
    i=$((i + 1))
done
