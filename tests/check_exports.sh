#!/bin/sh
# check_exports.sh LIBQGPU_SO HEADER... : libqgpu.so must export every
# function its public headers declare, and nothing else (no internal
# qgpu_* helper, no json-c or other symbol leaking out). The library is
# built with -fvisibility=hidden and the headers mark each function
# QGPU_API: a declaration without it fails here. Prints "N passed, N
# failed" like the test binaries. QGPU_EXPORT_PREFIX (default qgpu_): the
# prefix of the public names (vmaf_ for libvmaf-qgpu's libvmaf.so.3).
so=$1
shift
pass=0
fail=0
public=$(sed -e '/^[[:space:]]*\/\?\*/d' "$@" | grep -o "${QGPU_EXPORT_PREFIX:-qgpu_}[a-z0-9_]*(" | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtDdBbRrWwVv]$/ {print $3}' |
           sed 's/@.*//' | sort -u)

# each_in NAMES LIST MESSAGE: every name of NAMES must be in LIST; MESSAGE
# (with %s for the name) says what is wrong when one is not.
each_in() {
    for n in $1; do
        if echo "$2" | grep -qx "$n"; then
            pass=$((pass + 1))
        else
            printf "FAIL: $3\n" "$n"
            fail=$((fail + 1))
        fi
    done
}
each_in "$public" "$exported" "%s is declared in the public headers but not exported by $so"
each_in "$exported" "$public" "$so exports %s, which no public header declares"
[ -n "$public" ] || { echo "FAIL: no public functions found"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
