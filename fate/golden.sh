# Shell helpers of the FATE scripts that compare logs with libvmaf's golden
# JSON logs (fate/ffmpeg-filter.sh, fate/libvmaf-abi.sh); sourced, then
# fate_init.

# fate_init NAME: SRC (QGPU_SRC, else the tree of the sourcing script),
# FATE, the tolerance TOL (the precision contract), the counters `passed`
# and `failed`, and a work directory WORK (/tmp/NAME-XXXXXX, removed at
# exit unless QGPU_FATE_KEEP is set).
fate_init() {
    SRC=${QGPU_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
    FATE=$SRC/fate
    TOL=5e-5
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1-XXXXXX")
    [ -n "$QGPU_FATE_KEEP" ] || trap 'rm -rf "$WORK"' EXIT
    passed=0
    failed=0
}

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# golden_values JSON METRIC [EVERY]: the per-frame values of METRIC in a
# libvmaf-layout JSON log (one metric per line), every EVERY-th frame.
golden_values() {
    awk -v m="\"$2\":" -v every="${3:-1}" '
        /"pooled_metrics"/ { exit }
        $1 == m { v = $2; sub(/,$/, "", v); if (n++ % every == 0) print v }' "$1"
}

# golden_pooled JSON METRIC STAT: a pooled value (mean, min...) of a libvmaf JSON log.
golden_pooled() {
    awk -v m="\"$2\":" -v st="\"$3\":" '/"pooled_metrics"/ { p = 1 }
        p && $1 == m { q = 1 } q && $1 == st { v = $2; sub(/,$/, "", v); print v; exit }' "$1"
}

# compare A B: one value per line in each; prints the max |a-b| and the
# number of values, fails when the counts differ or a difference is > TOL.
compare() {
    paste "$1" "$2" | awk -v tol="$TOL" -v na="$(wc -l <"$1")" -v nb="$(wc -l <"$2")" '
        { d = $1 - $2; if (d < 0) d = -d; if (d > max) max = d; n++ }
        END {
            if (na != nb || na == 0) { printf "%d values against %d golden\n", na, nb; exit 1 }
            printf "%d frames, max |diff| %.3g\n", n, max; exit (max > tol) }'
}
