#!/bin/sh
# check_install.sh SRC MAKEDIR VERSION : `make install` as a distribution
# package does it, into a scratch DESTDIR: the library configured out of
# tree with --prefix=/usr/local --libdir=/usr/lib/<multiarch> (the tool
# left out) and installed with PREFIX=/usr. Checks the files and the
# symlink chain libqgpu.so -> libqgpu.so.MAJOR -> libqgpu.so.VERSION, the
# soname, qgpu.pc (prefix, libdir, version), and that a small program
# builds with `pkg-config --cflags --libs qgpu` against the installed tree
# and runs with the installed library; the same for `make install-libvmaf`
# (libvmaf.so.3, libvmaf/*.h, libvmaf.pc). Then `make install PREFIX=/usr` of
# the build under test (MAKEDIR, when configured without --libdir): libdir
# /usr/lib.
# Prints "N passed, N failed" like the test binaries.
src=$1
makedir=$2
version=$3
# independent of the make that runs the tests
unset MAKEFLAGS MFLAGS MAKELEVEL
major=${version%%.*}
pass=0
fail=0

check() { # check CONDITION-EXIT-STATUS MESSAGE
    if [ "$1" = 0 ]; then
        pass=$((pass + 1))
    else
        echo "FAIL: $2"
        fail=$((fail + 1))
    fi
}

# build_and_run PACKAGE NAME BUILDS RUNS SONAME: $tmp/NAME.c built with
# pkg-config's flags for PACKAGE, run (its output in $out) and loading
# SONAME from the installed tree $lib; a check each.
build_and_run() {
    flags=$(pkg-config --cflags --libs "$1" 2>"$tmp/pkg-config.log")
    check $? "pkg-config --cflags --libs $1: $(cat "$tmp/pkg-config.log")"
    # shellcheck disable=SC2086
    ${CC:-cc} -o "$tmp/$2" "$tmp/$2.c" $flags >"$tmp/cc.log" 2>&1
    check $? "$3: $flags $(cat "$tmp/cc.log")"
    out=$(LD_LIBRARY_PATH="$lib" "$tmp/$2" 2>&1)
    check $? "$4: $out"
    LD_LIBRARY_PATH="$lib" ldd "$tmp/$2" 2>/dev/null | grep -q "$5 => $lib/$5"
    check $? "it loads $5 from the installed tree"
}

tmp=$(mktemp -d /tmp/qgpu-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
multiarch=$(${CC:-cc} -print-multiarch 2>/dev/null)
[ -n "$multiarch" ] || multiarch=x86_64-linux-gnu
libdir=/usr/lib/$multiarch
dest=$tmp/dest

mkdir -p "$tmp/build"
(cd "$tmp/build" && "$src/configure" --prefix=/usr/local --libdir="$libdir" --disable-tool \
     >"$tmp/configure.log" 2>&1)
check $? "configure --libdir=$libdir (see $tmp/configure.log)"
grep -q "^LIBDIR=$libdir\$" "$tmp/build/config.mak"
check $? "configure writes LIBDIR=$libdir to config.mak"
make -C "$tmp/build" -j2 install DESTDIR="$dest" PREFIX=/usr >"$tmp/make.log" 2>&1
status=$?
[ $status = 0 ] || tail -n 20 "$tmp/make.log"
check $status "make install DESTDIR=... PREFIX=/usr"

lib=$dest$libdir
[ -f "$lib/libqgpu.so.$version" ] && [ ! -L "$lib/libqgpu.so.$version" ]
check $? "$libdir/libqgpu.so.$version is the library file"
[ "$(readlink "$lib/libqgpu.so.$major")" = "libqgpu.so.$version" ]
check $? "libqgpu.so.$major -> libqgpu.so.$version"
[ "$(readlink "$lib/libqgpu.so")" = "libqgpu.so.$major" ]
check $? "libqgpu.so -> libqgpu.so.$major"
objdump -p "$lib/libqgpu.so.$version" 2>/dev/null | grep -q "SONAME *libqgpu.so.$major\$"
check $? "soname libqgpu.so.$major"
[ -f "$lib/libqgpu.a" ]
check $? "libqgpu.a in $libdir"
for h in qgpu.h qgpu_opencl.h version.h; do
    [ -f "$dest/usr/include/qgpu/$h" ]
    check $? "/usr/include/qgpu/$h"
done
grep -q "^#define QGPU_VERSION \"$version\"" "$dest/usr/include/qgpu/version.h"
check $? "version.h says $version"

pc=$lib/pkgconfig/qgpu.pc
grep -q '^prefix=/usr$' "$pc"
check $? "qgpu.pc: prefix=/usr (from make install PREFIX=/usr)"
grep -q "^libdir=$libdir\$" "$pc"
check $? "qgpu.pc: libdir=$libdir"
grep -q "^Version: $version\$" "$pc"
check $? "qgpu.pc: Version: $version"

cat >"$tmp/hello.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <qgpu/qgpu.h>
int main(void)
{
    printf("%s %s\n", qgpu_version(), QGPU_VERSION);
    return strcmp(qgpu_version(), QGPU_VERSION) != 0;
}
EOF
export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH="$lib/pkgconfig"
build_and_run qgpu hello "a program builds with pkg-config's flags" \
    "it runs with the installed library" "libqgpu.so.$major"
[ "$out" = "$version $version" ]
check $? "qgpu_version() and QGPU_VERSION are $version: $out"

# libvmaf-qgpu (doc/libvmaf-abi.md): make install-libvmaf in the same tree.
make -C "$tmp/build" -j2 install-libvmaf DESTDIR="$dest" PREFIX=/usr >"$tmp/make-vmaf.log" 2>&1
status=$?
[ $status = 0 ] || tail -n 20 "$tmp/make-vmaf.log"
check $status "make install-libvmaf DESTDIR=... PREFIX=/usr"
[ "$(readlink "$lib/libvmaf.so")" = libvmaf.so.3 ] &&
    [ "$(readlink "$lib/libvmaf.so.3")" = libvmaf.so.3.0.0 ] && [ -f "$lib/libvmaf.so.3.0.0" ]
check $? "libvmaf.so -> libvmaf.so.3 -> libvmaf.so.3.0.0"
objdump -p "$lib/libvmaf.so.3.0.0" 2>/dev/null | grep -q "SONAME *libvmaf.so.3\$"
check $? "soname libvmaf.so.3"
for h in libvmaf.h picture.h model.h feature.h; do
    [ -f "$dest/usr/include/libvmaf/$h" ]
    check $? "/usr/include/libvmaf/$h"
done
grep -q '^Version: 3\.' "$lib/pkgconfig/libvmaf.pc" && grep -q "^libdir=$libdir\$" "$lib/pkgconfig/libvmaf.pc"
check $? "libvmaf.pc: Version 3.x, libdir=$libdir"
cat >"$tmp/vmaf.c" <<'EOF'
#include <stdio.h>
#include <libvmaf.h>
int main(void)
{
    VmafModel *model = NULL;
    VmafModelConfig cfg = { .name = "vmaf" };
    int err = vmaf_model_load(&model, &cfg, "vmaf_v0.6.1");
    printf("%s %d\n", vmaf_version(), err);
    vmaf_model_destroy(model);
    return err != 0;
}
EOF
build_and_run libvmaf vmaf "a program including <libvmaf.h> (as FFmpeg) builds" \
    "it runs with the installed libvmaf.so.3 and loads a model" libvmaf.so.3
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH

# The build under test: its make install with PREFIX=/usr (no --libdir).
if ! grep -q '^LIBDIR=' "$makedir/config.mak"; then
    make -C "$makedir" install DESTDIR="$tmp/dest2" PREFIX=/usr >"$tmp/make2.log" 2>&1
    status=$?
    [ $status = 0 ] || tail -n 20 "$tmp/make2.log"
    check $status "make install PREFIX=/usr of the build under test"
    pc=$tmp/dest2/usr/lib/pkgconfig/qgpu.pc
    grep -q '^prefix=/usr$' "$pc" && grep -q '^libdir=/usr/lib$' "$pc"
    check $? "its qgpu.pc: prefix=/usr, libdir=/usr/lib"
    [ -f "$tmp/dest2/usr/lib/libqgpu.so.$version" ]
    check $? "its library in /usr/lib"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
