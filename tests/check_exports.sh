#!/bin/sh
# check_exports.sh LIBQGPU_SO HEADER... : libqgpu.so must export every
# function its public headers declare, and nothing else (no internal
# qgpu_* helper, no json-c or other symbol leaking out). Prints
# "N passed, N failed" like the test binaries.
so=$1
shift
pass=0
fail=0
public=$(sed -e '/^[[:space:]]*\/\?\*/d' "$@" | grep -o 'qgpu_[a-z0-9_]*(' | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtDdBbRrWwVv]$/ {print $3}' |
           sed 's/@.*//' | grep -v '^QGPU_0$' | sort -u)
for n in $public; do
    if echo "$exported" | grep -qx "$n"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $n is declared in the public headers but not exported by $so"
        fail=$((fail + 1))
    fi
done
for n in $exported; do
    if echo "$public" | grep -qx "$n"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $so exports $n, which no public header declares"
        fail=$((fail + 1))
    fi
done
[ -n "$public" ] || { echo "FAIL: no public functions found"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
