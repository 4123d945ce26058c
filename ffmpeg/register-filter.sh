#!/bin/sh
# register-filter.sh: add the libqgpu filter `qgpu` to an FFmpeg source tree
# (FFmpeg 5.1 to 8.x; Debian's source packages or a git checkout).
#
#   ffmpeg/register-filter.sh [--as-libvmaf] FFMPEG_SRC_DIR [VF_QGPU_C]
#
# VF_QGPU_C defaults to filter/vf_qgpu.c next to this script. The script is
# idempotent: run it again after editing the filter and it only refreshes
# libavfilter/vf_qgpu.c (keeping its time stamp when nothing changed, so
# make does not rebuild it needlessly).
#
# What it changes in the tree:
#   libavfilter/vf_qgpu.c      a copy of the filter source
#   libavfilter/allfilters.c   `extern const AVFilter ff_vf_qgpu;` (FFFilter on
#                              8.0+: the type is copied from the ff_vf_psnr line,
#                              as configure only sees lines of exactly that shape)
#   libavfilter/Makefile       OBJS-$(CONFIG_QGPU_FILTER) += vf_qgpu.o framesync.o
#   configure                  --enable-libqgpu (external library list, help text),
#                              qgpu_filter_deps="libqgpu", and the pkg-config
#                              check of qgpu.pc (module "qgpu") for qgpu_open()
# Then configure FFmpeg with --enable-libqgpu (and, with --disable-everything,
# --enable-filter=qgpu), with PKG_CONFIG_PATH pointing at qgpu.pc.
#
# --as-libvmaf (run after the plain registration): FFmpeg's own `libvmaf`
# filter becomes libqgpu's, for tools that look for libvmaf by name:
#   libavfilter/vf_qgpu_libvmaf.c  #define QGPU_AS_LIBVMAF 1, #include "vf_qgpu.c"
#                              (the same filter, as ff_vf_libvmaf named libvmaf)
#   libavfilter/Makefile       OBJS-$(CONFIG_LIBVMAF_FILTER) builds vf_qgpu_libvmaf.o
#                              instead of vf_libvmaf.o
#   configure                  --enable-libvmaf requires qgpu.pc (qgpu_open)
#                              instead of libvmaf.pc (vmaf_init)
# Then configure with --enable-libvmaf --enable-filter=libvmaf (and
# --enable-libqgpu --enable-filter=qgpu to keep `qgpu` too). The tree can no
# longer build the real libvmaf filter; `ffmpeg -buildconf` shows
# --enable-libvmaf, which is what such tools check.
set -e

die() { echo "register-filter.sh: $*" >&2; exit 1; }

# patch_once FILE DONE ANCHOR SED: runs sed -i SED on FILE unless a line
# matches DONE (already patched); a line must match ANCHOR.
patch_once() {
    grep -q "$2" "$1" && return 0
    grep -q "$3" "$1" || die "no line matching '$3' in $1"
    sed -i "$4" "$1"
}

as_libvmaf=no
if [ "$1" = --as-libvmaf ]; then
    as_libvmaf=yes
    shift
fi
[ $# -ge 1 ] || die "usage: $0 [--as-libvmaf] FFMPEG_SRC_DIR [VF_QGPU_C]"
src=$1
here=$(cd "$(dirname "$0")" && pwd)
filter_c=${2:-$here/../filter/vf_qgpu.c}

[ -f "$src/libavfilter/allfilters.c" ] && [ -f "$src/configure" ] ||
    die "$src does not look like an FFmpeg source tree"
[ -f "$filter_c" ] || die "filter source $filter_c not found"

# --as-libvmaf: FFmpeg's libvmaf switch and symbol, served by libqgpu
if [ "$as_libvmaf" = yes ]; then
    grep -q 'CONFIG_QGPU_FILTER' "$src/libavfilter/Makefile" ||
        die "--as-libvmaf: register the qgpu filter first (run without --as-libvmaf)"
    cmp -s "$filter_c" "$src/libavfilter/vf_qgpu.c" || cp "$filter_c" "$src/libavfilter/vf_qgpu.c"
    wrap=$src/libavfilter/vf_qgpu_libvmaf.c
    printf '%s\n' '/* libqgpu'"'"'s filter registered as libvmaf (ffmpeg/register-filter.sh --as-libvmaf) */' \
        '#define QGPU_AS_LIBVMAF 1' '#include "vf_qgpu.c"' >"$wrap.new"
    if cmp -s "$wrap.new" "$wrap"; then rm -f "$wrap.new"; else mv "$wrap.new" "$wrap"; fi
    mk=$src/libavfilter/Makefile
    patch_once "$mk" '^OBJS-$(CONFIG_LIBVMAF_FILTER) .*vf_qgpu_libvmaf.o' \
        '^OBJS-$(CONFIG_LIBVMAF_FILTER) .*vf_libvmaf.o' \
        '/^OBJS-$(CONFIG_LIBVMAF_FILTER) /s/vf_libvmaf\.o/vf_qgpu_libvmaf.o/'
    cf=$src/configure
    patch_once "$cf" '^enabled libvmaf .*require_pkg_config libvmaf "qgpu' \
        '^enabled libvmaf .*require_pkg_config libvmaf "libvmaf' \
        '/^enabled libvmaf .*require_pkg_config libvmaf "libvmaf/s/require_pkg_config libvmaf "libvmaf [^"]*" libvmaf\.h vmaf_init/require_pkg_config libvmaf "qgpu >= 0.3.0" qgpu\/qgpu.h qgpu_open/'
    grep -q '^enabled libvmaf .*require_pkg_config libvmaf "qgpu' "$cf" &&
        grep -q 'vf_qgpu_libvmaf.o' "$mk" || die "libvmaf registration incomplete in $src"
    echo "register-filter.sh: libqgpu's filter registered as libvmaf in $src"
    exit 0
fi

# 1. the source file
dst=$src/libavfilter/vf_qgpu.c
if ! cmp -s "$filter_c" "$dst"; then
    cp "$filter_c" "$dst"
fi

# 2. allfilters.c: same declaration type as the psnr filter's line
af=$src/libavfilter/allfilters.c
if ! grep -q '^extern const [A-Za-z]* ff_vf_qgpu;' "$af"; then
    type=$(sed -n 's/^extern const \([A-Za-z]*\) ff_vf_psnr;$/\1/p' "$af")
    [ -n "$type" ] || die "no ff_vf_psnr line in $af to anchor on"
    sed -i "/^extern const $type ff_vf_psnr;\$/a extern const $type ff_vf_qgpu;" "$af"
fi

# 3. libavfilter/Makefile
mk=$src/libavfilter/Makefile
patch_once "$mk" 'CONFIG_QGPU_FILTER' '^OBJS-$(CONFIG_PSNR_FILTER)' \
    '/^OBJS-$(CONFIG_PSNR_FILTER)/a OBJS-$(CONFIG_QGPU_FILTER)                   += vf_qgpu.o framesync.o'

# 4. configure (the anchors are the libvmaf lines, unchanged from 5.1 to 8.x)
cf=$src/configure
if ! grep -q 'qgpu_filter_deps' "$cf"; then
    for anchor in '^    libvmaf$' '^libvmaf_filter_deps=' '^enabled libvmaf ' '^  --enable-libvmaf '; do
        grep -q "$anchor" "$cf" || die "configure anchor '$anchor' not found in $cf"
    done
    # each insertion at the first match only (8.x has two 'enabled libvmaf' lines)
    sed -i \
        -e '0,/^    libvmaf$/{/^    libvmaf$/i\    libqgpu
}' \
        -e '0,/^libvmaf_filter_deps=/{/^libvmaf_filter_deps=/a qgpu_filter_deps="libqgpu"
}' \
        -e '0,/^enabled libvmaf /{/^enabled libvmaf /i enabled libqgpu           \&\& require_pkg_config libqgpu "qgpu >= 0.3.0" qgpu/qgpu.h qgpu_open
}' \
        -e '0,/^  --enable-libvmaf /{/^  --enable-libvmaf /i\  --enable-libqgpu         enable qgpu filter via libqgpu (video quality metrics on OpenCL) [no]
}' \
        "$cf"
fi

grep -q '^    libqgpu$' "$cf" && grep -q 'ff_vf_qgpu;' "$af" && grep -q CONFIG_QGPU_FILTER "$mk" ||
    die "registration incomplete in $src"
echo "register-filter.sh: qgpu registered in $src"
