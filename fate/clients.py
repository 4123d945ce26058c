#!/usr/bin/env python3
"""Real VMAF clients against an ffmpeg whose `libvmaf` filter is libqgpu's
(make ffmpeg FFMPEG_LIBVMAF_NAME=1, FFmpeg >= 7.1 for FQM's 2-input scale).

    fate/clients.py FFMPEG QGPU_TOOL [FQM]

- ffmpeg-quality-metrics (FQM), the real program from PyPI, run unchanged
  (FQM: path to its `ffmpeg-quality-metrics` script; make fate-clients
  installs it in build/fqm-venv): `-m vmaf psnr ssim`, then
  `-m vmaf --vmaf-features psnr float_ssim`. Every VMAF-side value it
  reports (each key of its "vmaf" frames) must equal the qgpu tool's for
  the same pair within 1e-6.
- ab-av1 and Av1an cannot be installed here (Rust programs): their exact
  filter strings run through this ffmpeg, and their parsers, reproduced
  below with the source they come from, read the results.

The qgpu tool (build/qgpu) is the reference: the same library, reading the
files directly. Python 3 standard library only. Last line:
"N passed, N failed"; exit status 1 when a check failed.
"""

import json
import os
import subprocess
import sys
import tempfile

TOL = 1e-6
SRC = os.environ.get("QGPU_SRC") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FATE = os.path.join(SRC, "fate")
PAIR = "nf_src01_160x90_nfdis"
REF = os.path.join(FATE, "refs", "nf_src01_160x90_48f.y4m")
DIS = os.path.join(FATE, "pairs", PAIR, "dis.y4m")
FRAMES = 48

passed = 0
failed = 0


def check(name, ok, detail=""):
    """Counts and prints a check; detail is printed on failure only."""
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")
    return ok


def run(cmd, **kw):
    """Runs cmd; returns (exit status, stdout, stderr) as text."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return p.returncode, p.stdout, p.stderr


def qgpu_frames(tool, work, *args):
    """Per-frame metrics (list indexed by frame) and pooled metrics of a qgpu
    tool run on the pair, with extra tool options."""
    out = os.path.join(work, "qgpu.json")
    rc, _, err = run([tool, "-q", "-r", REF, "-d", DIS, "--json", "-o", out, *args])
    if rc != 0:
        raise RuntimeError(f"qgpu {' '.join(args)} failed: {err.strip()}")
    with open(out) as f:
        log = json.load(f)
    return [fr["metrics"] for fr in log["frames"]], log["pooled_metrics"]


def max_diff(ours, theirs, keys):
    """Largest |difference| over the frames and keys; raises KeyError when a
    key is missing on our side."""
    worst = 0.0
    for a, b in zip(ours, theirs):
        for k in keys:
            worst = max(worst, abs(a[k] - b[k]))
    return worst


# ---------------------------------------------------------------- FQM
def fqm_case(name, fqm, ffmpeg, tool, work, fqm_args, tool_args, want_keys, ffmpeg_metrics=()):
    rc, out, err = run([fqm, DIS, REF, "--ffmpeg-path", ffmpeg, *fqm_args], cwd=work)
    if not check(f"fqm/{name}: runs", rc == 0, err.strip()[-400:]):
        return
    data = json.loads(out)
    frames = data.get("vmaf", [])
    check(f"fqm/{name}: {len(frames)} VMAF frames", len(frames) == FRAMES, f"expected {FRAMES}")
    theirs = []
    for i, fr in enumerate(frames):
        if fr.get("n") != i + 1:
            check(f"fqm/{name}: frame numbers", False, f"frame {i} has n={fr.get('n')}")
            return
        theirs.append({k: v for k, v in fr.items() if k != "n"})
    keys = sorted(set().union(*(t.keys() for t in theirs))) if theirs else []
    missing = [k for k in want_keys if k not in keys]
    check(f"fqm/{name}: reports {' '.join(want_keys)}", not missing, f"missing {missing}")
    ours, _ = qgpu_frames(tool, work, *tool_args)
    try:
        d = max_diff(ours, theirs, keys)
        check(f"fqm/{name}: {len(keys)} VMAF-side values x {len(theirs)} frames equal qgpu's "
              f"(max |diff| {d:.3g})", d <= TOL)
    except KeyError as e:
        check(f"fqm/{name}: keys", False, f"FQM reports {e}, the qgpu tool does not")
    for metric in ffmpeg_metrics:
        check(f"fqm/{name}: FFmpeg's own {metric} filter ran", len(data.get(metric, [])) == FRAMES)


# ---------------------------------------------------------------- ab-av1
# ab-av1's VMAF score parser, src/vmaf.rs (alexheretic/ab-av1, commit
# 09e3f9e0, VmafOut::try_from_chunk, lines 52-62): in each chunk of
# ffmpeg's stderr, the text after "VMAF score: ", trimmed, parsed as f32.
# Chunks are taken here as lines (ffmpeg writes each log line at once).
def ab_av1_parse(stderr):
    scores = []
    for chunk in stderr.splitlines():
        idx = chunk.find("VMAF score: ")
        if idx >= 0:
            try:
                scores.append(float(chunk[idx + len("VMAF score: "):].strip()))
            except ValueError:
                pass  # ab-av1: .parse().ok()? -> no score from this chunk
    return scores


# The lavfi strings of ab-av1's Vmaf::ffmpeg_lavfi, src/command/args/vmaf.rs
# (commit 011145b7; fn ffmpeg_lavfi at lines 59-112, counted by hand, the
# libvmaf options at line 77), as its own unit tests spell them:
# vmaf_lavfi_default (n_threads = the machine's threads, pix_fmt
# yuv420p10le) and vmaf_lavfi (--vmaf n_threads=5 --vmaf n_subsample=4).
AB_AV1_LAVFI = {
    "default": "[0:v]format=yuv420p10le,setpts=PTS-STARTPTS,settb=AVTB[dis];"
               "[1:v]format=yuv420p10le,setpts=PTS-STARTPTS,settb=AVTB[ref];"
               "[dis][ref]libvmaf=shortest=true:ts_sync_mode=nearest:n_threads=%d" % (os.cpu_count() or 1),
    "subsample": "[0:v]format=yuv420p,setpts=PTS-STARTPTS,settb=AVTB[dis];"
                 "[1:v]format=yuv420p,setpts=PTS-STARTPTS,settb=AVTB[ref];"
                 "[dis][ref]libvmaf=shortest=true:ts_sync_mode=nearest:n_threads=5:n_subsample=4",
}


def ab_av1_case(name, ffmpeg, tool, work, tool_args):
    # ab-av1's command (src/command/vmaf.rs): ffmpeg -i DISTORTED -i REFERENCE -lavfi LAVFI -f null -
    rc, _, err = run([ffmpeg, "-i", DIS, "-i", REF, "-lavfi", AB_AV1_LAVFI[name], "-f", "null", "-"])
    if not check(f"ab-av1/{name}: runs", rc == 0, err.strip()[-400:]):
        return
    scores = ab_av1_parse(err)
    if not check(f"ab-av1/{name}: one VMAF score line", len(scores) == 1, f"parsed {scores}"):
        return
    _, pooled = qgpu_frames(tool, work, *tool_args)
    want = pooled["vmaf"]["mean"]
    check(f"ab-av1/{name}: VMAF score {scores[0]:.6f} equals qgpu's {want:.6f}",
          abs(scores[0] - want) <= TOL)


# ---------------------------------------------------------------- Av1an
# Av1an, av1an-core/src/vmaf.rs (master-of-zen/Av1an, commit db89817b;
# line numbers counted by hand, within a few lines): validate_libvmaf
# (lines 102-116) looks for "--enable-libvmaf" in the stderr of
# `ffmpeg -h`; plot (lines 132-148) pipes the reference as y4m
# (`ffmpeg -i REF -strict -1 -f yuv4mpegpipe -`) into run_vmaf's
# `ffmpeg ... -r 60 -i ENCODED -r 60 -i - -filter_complex ...` (lines
# 218-232), whose graph is built at lines 191-205 (libvmaf, with
# model_path= when a model is given) and 234-238 (scale to --vmaf-res,
# here 160x90, the pair's own size; sample_rate 1, no --vmaf-filter);
# read_vmaf_file (after run_vmaf) reads frames[].metrics.vmaf of the log.
def av1an_filter(res, stat_file, model=None, threads=2):
    distorted = ("[0:v]scale=%s:flags=bicubic:force_original_aspect_ratio=decrease,"
                 "setpts=PTS-STARTPTS[distorted];" % res)
    reference = ("[1:v]scale=%s:flags=bicubic:force_original_aspect_ratio=decrease,"
                 "setpts=PTS-STARTPTS[ref];" % res)
    if model:
        vmaf = ("[distorted][ref]libvmaf=log_fmt='json':eof_action=endall:log_path=%s:"
                "model_path=%s:n_threads=%d" % (stat_file, model, threads))
    else:
        vmaf = ("[distorted][ref]libvmaf=log_fmt='json':eof_action=endall:log_path=%s:"
                "n_threads=%d" % (stat_file, threads))
    return distorted + reference + vmaf


def av1an_read_vmaf_file(path):
    with open(path) as f:
        return [fr["metrics"]["vmaf"] for fr in json.load(f)["frames"]]


def av1an_case(name, ffmpeg, tool, work, model=None):
    stat = os.path.join(work, f"av1an_{name}.json")
    pipe = subprocess.Popen([ffmpeg, "-i", REF, "-strict", "-1", "-f", "yuv4mpegpipe", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p = subprocess.run([ffmpeg, "-loglevel", "error", "-hide_banner", "-y", "-thread_queue_size",
                        "1024", "-hide_banner", "-r", "60", "-i", DIS, "-r", "60", "-i", "-",
                        "-filter_complex", av1an_filter("160x90", stat, model), "-f", "null", "-"],
                       stdin=pipe.stdout, capture_output=True, text=True)
    pipe.stdout.close()
    pipe.wait()
    if not check(f"av1an/{name}: runs", p.returncode == 0, p.stderr.strip()[-400:]):
        return
    scores = av1an_read_vmaf_file(stat)
    ours, _ = qgpu_frames(tool, work)
    d = max(abs(a - b["vmaf"]) for a, b in zip(scores, ours)) if scores else float("inf")
    check(f"av1an/{name}: {len(scores)} per-frame VMAF scores equal qgpu's (max |diff| {d:.3g})",
          len(scores) == FRAMES and d <= TOL)


def run_all(ffmpeg, tool, fqm, work):
    """Every check, in order."""
    _, _, err = run([ffmpeg, "-h"])
    check("av1an: validate_libvmaf (--enable-libvmaf in ffmpeg -h)", "--enable-libvmaf" in err)
    _, out, _ = run([ffmpeg, "-hide_banner", "-filters"])
    names = [line.split()[1] for line in out.splitlines() if len(line.split()) > 1]
    check("fqm: libvmaf in ffmpeg -filters", "libvmaf" in names)
    if fqm:
        fqm_case("vmaf_psnr_ssim", fqm, ffmpeg, tool, work, ["-m", "vmaf", "psnr", "ssim"], [],
                 ["vmaf", "integer_adm2", "integer_motion2", "integer_vif_scale0"],
                 ("psnr", "ssim"))
        fqm_case("vmaf_features", fqm, ffmpeg, tool, work,
                 ["-m", "vmaf", "--vmaf-features", "psnr", "float_ssim"],
                 ["--feature", "psnr", "--feature", "float_ssim"],
                 ["vmaf", "psnr_y", "psnr_cb", "float_ssim"])
    else:
        check("fqm: ffmpeg-quality-metrics given", False, "run through make fate-clients")
    ab_av1_case("default", ffmpeg, tool, work, ["-m", "version=vmaf_v0.6.1:bitdepth=10"])
    ab_av1_case("subsample", ffmpeg, tool, work, ["--subsample", "4"])
    av1an_case("default_model", ffmpeg, tool, work)
    av1an_case("model_path", ffmpeg, tool, work, os.path.join(SRC, "models", "vmaf_v0.6.1.json"))


def main():
    if len(sys.argv) < 3:
        print("usage: clients.py FFMPEG QGPU_TOOL [FQM]")
        print("0 passed, 1 failed")
        return 1
    ffmpeg, tool = sys.argv[1], sys.argv[2]
    fqm = sys.argv[3] if len(sys.argv) > 3 else ""
    with tempfile.TemporaryDirectory(prefix="qgpu-clients-") as work:
        try:
            run_all(ffmpeg, tool, fqm, work)
        except (OSError, RuntimeError, ValueError, KeyError) as e:
            check("clients", False, f"stopped: {e!r}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
