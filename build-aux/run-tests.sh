#!/bin/sh
# run-tests.sh TEST... : runs each test binary, reads its closing
# "N passed, N failed" line, and prints the sum as the last line. Exits
# non-zero when any test fails, crashes or prints no such line.
total_pass=0
total_fail=0
status=0
# A run whose only fault is LeakSanitizer's own tracer crashing at exit
# ("LeakSanitizer has encountered a fatal error", no leak reported: seen
# in about half of test_api's sanitizer runs on a Debian 12 host, with
# every check passed) is run again, four times at most; a leak report or a
# failed check is never retried.
tracer_crashed() {
    grep -q 'LeakSanitizer has encountered a fatal error' "$1" &&
        ! grep -q 'detected memory leaks' "$1" &&
        grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 | grep -q ', 0 failed$'
}
for t in "$@"; do
    name=$(basename "$t")
    log=$(mktemp)
    start=$(date +%s)
    "$t" >"$log" 2>&1
    rc=$?
    tries=1
    while [ "$rc" != 0 ] && [ "$tries" -lt 5 ] && tracer_crashed "$log"; do
        echo "note $name: LeakSanitizer's tracer crashed at exit (no leak reported); run again"
        "$t" >"$log" 2>&1
        rc=$?
        tries=$((tries + 1))
    done
    secs=$(( $(date +%s) - start ))
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$last" ]; then
        echo "FAIL $name: no result line (exit $rc)"
        tail -n 30 "$log"
        total_fail=$((total_fail + 1))
        status=1
    else
        p=$(echo "$last" | sed 's/^\([0-9]*\) passed.*/\1/')
        f=$(echo "$last" | sed 's/.* \([0-9]*\) failed.*/\1/')
        total_pass=$((total_pass + p))
        total_fail=$((total_fail + f))
        if [ "$rc" != 0 ] || [ "$f" != 0 ]; then
            echo "FAIL $name: $last (exit $rc, ${secs}s)"
            grep -E 'FAIL' "$log" | head -n 40
            status=1
        else
            echo "ok   $name: $last (${secs}s)"
        fi
    fi
    rm -f "$log"
done
echo "$total_pass passed, $total_fail failed"
exit $status
