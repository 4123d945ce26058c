#!/usr/bin/env python3
"""compare.py LIBVMAF.json QGPU.json [QGPU2.json ...]

Per-frame comparison of libvmaf JSON logs (libvmaf's own layout, which qgpu
writes too): for every score the reference log has, the largest and mean
|qgpu - libvmaf| over the frames, the frame of the largest, and whether it is
within the precision contract (1e-6 for the bit-exact integer features, as
tests/test_parity.c; 5e-5 for everything else). Prints a markdown table per
qgpu log; exits 0 when at least one qgpu log matches on every score.
Standard library only.
"""
import json
import sys

EXACT_PREFIXES = ("integer_", "VMAF_integer_")


def frames_of(path):
    with open(path) as f:
        log = json.load(f)
    return log.get("version", "?"), [fr["metrics"] for fr in log["frames"]]


def bound(name):
    return 1e-6 if name.startswith(EXACT_PREFIXES) else 5e-5


def compare(ref, ours):
    rows = []
    names = [n for n in ref[0] if n in ours[0]] if ref and ours else []
    for name in names:
        worst, worst_at, total = 0.0, 0, 0.0
        for i, (a, b) in enumerate(zip(ref, ours)):
            if a.get(name) is None or b.get(name) is None:
                continue
            d = abs(a[name] - b[name])
            total += d
            if d > worst:
                worst, worst_at = d, i
        rows.append((name, worst, worst_at, total / max(1, min(len(ref), len(ours)))))
    return rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ref_version, ref = frames_of(sys.argv[1])
    any_match = False
    for path in sys.argv[2:]:
        version, ours = frames_of(path)
        rows = compare(ref, ours)
        ok = len(ref) == len(ours) and rows and all(w <= bound(n) for n, w, _, _ in rows)
        any_match |= bool(ok)
        print(f"{path.rsplit('/', 1)[-1]} (qgpu {version}) vs libvmaf {ref_version}: "
              f"{len(ours)} / {len(ref)} frames: {'MATCH' if ok else 'DIFFERS'}")
        print()
        print("| score | max abs diff | at frame | mean abs diff | bound |")
        print("|---|---|---|---|---|")
        for name, worst, at, mean in rows:
            flag = "" if worst <= bound(name) else " **over**"
            print(f"| {name} | {worst:.3g}{flag} | {at} | {mean:.3g} | {bound(name):g} |")
        print()
    return 0 if any_match else 1


if __name__ == "__main__":
    sys.exit(main())
