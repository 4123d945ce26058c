#!/bin/sh
# hwdec-run.sh DIR: --hwdec cuda against --hwdec none on a GPU machine.
# Modes ($HWS, default all): cuda (NVDEC, frames kept on the GPU: the
# zero-copy path), cudahost (NVDEC with QGPU_HWDEC_ZERO_COPY=0: each frame
# through host memory), none (the CPU), mixed (--hwdec cuda,none: NVDEC
# decodes the reference while the CPU decodes the distorted).
# DIR holds the static qgpu from `make static-tools-nvdec` (FFmpeg with the
# h264/hevc NVDEC hwaccels), Debian's libdav1d.so.6 and the pairs
# NAME_ref.mp4 / NAME_dist.mp4 and seg_NAME_*.ts (bench/hwdec-clips.sh makes
# them). For each
# pair and decoder: the decode-only floor (--decode-only) and a scoring run
# (VMAF v0.6.1 + psnr + ciede, JSON log), each twice, and checksums of
# the decoded samples (--hash-frames) of each decoder; everything in
# $OUT/hwdec.tar.gz and a summary on stdout. Every step runs under timeout.
# Optional: DIR/clext, a program printing the OpenCL devices' extensions.
set -u
dir=${1:?usage: $0 DIR}
out=${OUT:-$dir/out}
work=${TMPDIR:-/tmp}/hwdec   # outside $OUT: only the tarball goes back
rm -rf "$work"
mkdir -p "$out" "$work" /etc/OpenCL/vendors 2>/dev/null
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export QGPU_DEVICE=${QGPU_DEVICE:-gpu}
q=$dir/qgpu
{
    date -u
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    nproc
    ldconfig -p | grep -E 'libcuda\.so|libnvcuvid|libnvidia-opencl' 
    ls /usr/local/nvidia/lib64 2>/dev/null | grep -E 'nvcuvid|libcuda' 
} >"$work/machine.txt" 2>&1
[ -x "$dir/clext" ] && timeout -k 5 30 "$dir/clext" >"$work/clext.txt" 2>&1
grep -E 'external_memory|external_semaphore|^[0-9]' "$work/clext.txt" >>"$work/machine.txt"
cat "$work/machine.txt"
# seg_NAME_ref.ts / seg_NAME_dist.ts (MPEG-TS of 50 frames opening with an
# IDR frame): 13 copies end to end make the pair NAME (over 600 frames: the
# demuxer drops 2 frames at each seam), so that high-bitrate clips travel
# small
clips=$work/clips
mkdir -p "$clips"
for f in "$dir"/*_ref.mp4 "$dir"/*_dist.mp4; do
    [ -f "$f" ] && ln -sf "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$clips/"
done
for f in "$dir"/seg_*.ts; do
    [ -f "$f" ] || continue
    n=$(basename "$f" | sed 's/^seg_//')
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do cat "$f"; done >"$clips/$n"
done
# kernels compiled once (cache), outside the timings
timeout -k 5 120 "$q" -r "$dir/h264_ref.mp4" -d "$dir/h264_dist.mp4" --frame_cnt 5 \
    --feature psnr --feature ciede --hwdec none -q >"$work/warmup.txt" 2>&1
echo "warm-up rc=$?"
for pair in ${PAIRS:-noisy h264 hevc hevc10}; do
    r=$(ls "$clips/${pair}_ref".* 2>/dev/null | head -n 1)
    d=$(ls "$clips/${pair}_dist".* 2>/dev/null | head -n 1)
    [ -n "$r" ] && [ -n "$d" ] || continue
    for rep in 1 2; do
        for hw in ${HWS:-cuda cudahost none mixed}; do
            tag=${pair}_${hw}_$rep
            zc=1 arg=$hw
            [ $hw = cudahost ] && zc=0 arg=cuda
            [ $hw = mixed ] && arg=cuda,none
            QGPU_HWDEC_ZERO_COPY=$zc QGPU_FFMPEG_LOG=1 timeout -k 5 120 "$q" -r "$r" -d "$d" --hwdec $arg --decode-only >"$work/$tag.decode.txt" 2>&1
            echo "$tag decode-only rc=$?: $(tail -n 1 "$work/$tag.decode.txt")"
            QGPU_HWDEC_ZERO_COPY=$zc timeout -k 5 180 "$q" -r "$r" -d "$d" --hwdec $arg --feature psnr --feature ciede --json -o "$work/$tag.json" \
                >"$work/$tag.score.txt" 2>&1
            rc=$?
            if [ $rc = 0 ]; then
                echo "$tag score rc=0: $(grep -h 'frames in' "$work/$tag.score.txt") |" \
                     "$(grep -h 'decoders:' "$work/$tag.score.txt") |" \
                     "$(grep -h 'zero-copy\|host memory' "$work/$tag.score.txt" | tr '\n' ' ')"
            else
                echo "$tag score rc=$rc: $(tail -n 1 "$work/$tag.score.txt")"
            fi
        done
    done
    # identical pictures? (checksums of the decoded samples; not timed)
    for hw in cuda none; do
        timeout -k 5 120 "$q" -r "$r" -d "$d" --hwdec $hw --decode-only --hash-frames >"$work/${pair}_${hw}.hash.txt" 2>&1
        echo "$pair $hw rc=$?: $(tail -n 1 "$work/${pair}_${hw}.hash.txt")"
    done
    # identical scores? (the logs differ in their decoder and fps fields only)
    for rep in 1 2; do
        for hw in cuda cudahost mixed; do
            a=$work/${pair}_${hw}_$rep.json
            b=$work/${pair}_none_$rep.json
            [ -f "$a" ] && [ -f "$b" ] || continue
            sed -n '/"frames"/,$p' "$a" >"$work/a.frames"
            sed -n '/"frames"/,$p' "$b" >"$work/b.frames"
            if cmp -s "$work/a.frames" "$work/b.frames"; then
                echo "$pair rep $rep: $hw and none logs identical from \"frames\" on"
            else
                echo "$pair rep $rep: $hw LOGS DIFFER: $(diff "$work/a.frames" "$work/b.frames" | head -n 6 | tr '\n' ' ')"
            fi
        done
    done
done
# auto picks the GPU's decoder?
timeout -k 5 120 "$q" -r "$dir/h264_ref.mp4" -d "$dir/h264_dist.mp4" --decode-only \
    >"$work/auto.txt" 2>&1
echo "auto rc=$?: $(tail -n 1 "$work/auto.txt")"
rm -rf "$work/a.frames" "$work/b.frames" "$clips"
tar -C "$(dirname "$work")" -czf "$out/hwdec.tar.gz" hwdec && rm -rf "$work"
