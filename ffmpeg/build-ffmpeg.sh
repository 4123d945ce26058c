#!/bin/sh
# build-ffmpeg.sh: build a minimal static FFmpeg with the qgpu filter.
# Called by `make ffmpeg` (ffmpeg/ffmpeg.mak); can be run by hand:
#
#   ffmpeg/build-ffmpeg.sh --build-root=DIR --qgpu-lib=DIR/libqgpu.a
#       [--qgpu-src=SRC] [--version=5.1.9] [--ffmpeg-source=TREE]
#       [--without-filter] [--as-libvmaf] [--jobs=N] [--fetch-only] [--with-nvdec]
#       [--libvmaf-abi=PKGCONFIG_DIR]
#
# 1. Source: --ffmpeg-source=TREE uses that tree (a checkout or an unpacked
#    release; it is modified by ffmpeg/register-filter.sh). Otherwise Debian's
#    source package of FFmpeg VERSION is fetched with `apt-get source` into
#    BUILD_ROOT/ffmpeg-src/ (once). 5.1.x comes from bookworm (a deb-src entry
#    is added to apt's sources when there is none: needs root); newer versions
#    (7.1.x from trixie, 8.x from sid) come through a private apt state in
#    BUILD_ROOT/ffmpeg-src/apt/ that leaves the system's apt configuration alone.
# 2. The filter is registered in the tree (register-filter.sh).
# 3. FFmpeg is configured out of tree in BUILD_ROOT/ffmpeg-VERSION/ (only when
#    the configure line changed) and built with make: static libav* archives
#    and the ffmpeg and ffprobe binaries, linked against libqgpu.a. Run again,
#    it rebuilds only what changed (the filter source, libqgpu.a).
# --as-libvmaf: the filter is ALSO registered under the name `libvmaf`
#    (FFmpeg's own --enable-libvmaf switch and ff_vf_libvmaf symbol, served by
#    libqgpu: register-filter.sh --as-libvmaf), for tools that look for
#    libvmaf in `ffmpeg -filters` or `-buildconf`. Its own build directory:
#    BUILD_ROOT/ffmpeg-VERSION-libvmaf/.
# --libvmaf-abi=DIR: an UNMODIFIED FFmpeg (no qgpu filter; its own
#    vf_libvmaf.c) configured with --enable-libvmaf against the libvmaf.pc
#    in DIR: libvmaf-qgpu (libvmaf-abi/, make libvmaf). The source is the
#    pristine upstream tarball (BUILD_ROOT/ffmpeg-src/ffmpeg_VERSION.orig.tar.xz,
#    which apt-get source fetches) unpacked in BUILD_ROOT/ffmpeg-pristine/, as
#    the Debian tree may carry the qgpu filter; or --ffmpeg-source=TREE, used
#    as it is. Build directory: BUILD_ROOT/ffmpeg-VERSION-vmafabi/.
set -e

here=$(cd "$(dirname "$0")" && pwd)
qgpu_src=$(cd "$here/.." && pwd)
build_root=
qgpu_lib=
version=5.1.9
ffsrc=
with_filter=yes
as_libvmaf=no
fetch_only=no
with_nvdec=no
libvmaf_abi=
jobs=$(nproc 2>/dev/null || echo 2)

for opt in "$@"; do
    case "$opt" in
    --build-root=*) build_root=${opt#*=} ;;
    --qgpu-lib=*) qgpu_lib=${opt#*=} ;;
    --qgpu-src=*) qgpu_src=${opt#*=} ;;
    --version=*) version=${opt#*=} ;;
    --ffmpeg-source=*) ffsrc=${opt#*=} ;;
    --without-filter) with_filter=no ;;
    --as-libvmaf) as_libvmaf=yes ;;
    --fetch-only) fetch_only=yes ;;
    --with-nvdec) with_nvdec=yes ;;
    --libvmaf-abi=*) libvmaf_abi=${opt#*=}; with_filter=no ;;
    --jobs=*) jobs=${opt#*=} ;;
    *) echo "build-ffmpeg.sh: unknown option $opt" >&2; exit 1 ;;
    esac
done

die() { echo "build-ffmpeg.sh: error: $*" >&2; exit 1; }
say() { echo "build-ffmpeg.sh: $*"; }

[ -n "$build_root" ] || die "--build-root is required"
mkdir -p "$build_root"
build_root=$(cd "$build_root" && pwd)
qgpu_src=$(cd "$qgpu_src" && pwd)

# ---------------------------------------------------------------- source
debian_suite_for() {
    case "$1" in
    5.1.*) echo bookworm ;;
    7.1.*) echo trixie ;;
    *) echo sid ;;
    esac
}

fetch_debian_source() {
    ver=$1
    dest=$build_root/ffmpeg-src
    mkdir -p "$dest"
    suite=$(debian_suite_for "$ver")
    aptopt=
    if [ "$suite" = bookworm ]; then
        if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
            [ "$(id -u)" = 0 ] || die "apt has no deb-src entry; as root, add one (see doc/filter.md) or use --ffmpeg-source=DIR"
            say "adding /etc/apt/sources.list.d/debian-src.sources (deb-src for bookworm)"
            cat >/etc/apt/sources.list.d/debian-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
            apt-get update -qq || die "apt-get update failed"
        fi
    else
        # private apt state: the system's lists and sources stay untouched
        a=$dest/apt
        mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
        cat >"$a/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
EOF
        aptopt="-o Dir::Etc::sourcelist=$a/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$a/lists -o Dir::Cache=$a/cache"
        # shellcheck disable=SC2086
        apt-get $aptopt update -qq || die "apt-get update (private, $suite) failed"
    fi
    # The Debian version string for upstream $ver (e.g. 7:5.1.9-0+deb12u1).
    # shellcheck disable=SC2086
    debver=$(apt-cache $aptopt showsrc ffmpeg 2>/dev/null | sed -n "s/^Version: \(.*:$ver-.*\)/\1/p" | head -n 1)
    if [ -z "$debver" ] && [ "$suite" = bookworm ] && [ "$(id -u)" = 0 ]; then
        apt-get update -qq || true
        debver=$(apt-cache showsrc ffmpeg 2>/dev/null | sed -n "s/^Version: \(.*:$ver-.*\)/\1/p" | head -n 1)
    fi
    [ -n "$debver" ] || die "Debian ($suite) has no ffmpeg source package of version $ver; use --ffmpeg-source=DIR"
    say "fetching Debian's ffmpeg $debver source ($suite) into $dest"
    # shellcheck disable=SC2086
    (cd "$dest" && apt-get $aptopt source -qq "ffmpeg=$debver") || die "apt-get source ffmpeg=$debver failed"
    [ -f "$dest/ffmpeg-$ver/configure" ] || die "apt-get source did not unpack ffmpeg-$ver (is dpkg-dev installed?)"
}

if [ -n "$ffsrc" ]; then
    [ -f "$ffsrc/configure" ] && [ -d "$ffsrc/libavfilter" ] || die "$ffsrc is not an FFmpeg source tree"
    ffsrc=$(cd "$ffsrc" && pwd)
    version=$(cat "$ffsrc/RELEASE" 2>/dev/null || echo custom)
    [ -f "$ffsrc/config.h" ] && die "$ffsrc was configured in tree (config.h); run 'make distclean' there first"
else
    ffsrc=$build_root/ffmpeg-src/ffmpeg-$version
    [ -f "$ffsrc/configure" ] || fetch_debian_source "$version"
    if [ -n "$libvmaf_abi" ]; then
        tarball=$build_root/ffmpeg-src/ffmpeg_$version.orig.tar.xz
        ffsrc=$build_root/ffmpeg-pristine/ffmpeg-$version
        if [ ! -f "$ffsrc/configure" ]; then
            [ -f "$tarball" ] || die "no $tarball (apt-get source keeps it; or use --ffmpeg-source=DIR)"
            mkdir -p "$build_root/ffmpeg-pristine"
            tar xJf "$tarball" -C "$build_root/ffmpeg-pristine" || die "cannot unpack $tarball"
            [ -f "$ffsrc/configure" ] || die "$tarball did not unpack into $ffsrc"
        fi
    fi
fi
if [ "$fetch_only" = yes ]; then
    say "FFmpeg $version source in $ffsrc"
    exit 0
fi
bdir=$build_root/ffmpeg-$version

# ---------------------------------------------------------------- nvdec (opt-in)
# --with-nvdec: a variant build in BUILD_ROOT/ffmpeg-VERSION-nvdec/ with
# NVIDIA's decoders as hwaccels (h264_nvdec, hevc_nvdec; the qgpu tool's
# --hwdec cuda). Needs only nv-codec-headers (Debian: libffmpeg-nvenc-dev,
# ffnvcodec.pc) at build time: FFmpeg dlopens the driver's libcuda and
# libnvcuvid at run time, so the binaries link nothing more.
[ "$with_nvdec" = no ] || bdir=$bdir-nvdec
[ "$as_libvmaf" = no ] || bdir=$bdir-libvmaf
[ -z "$libvmaf_abi" ] || bdir=$bdir-vmafabi
mkdir -p "$bdir"
say "FFmpeg $version: source $ffsrc, build $bdir"

# ---------------------------------------------------------------- filter
extra=
if [ "$with_filter" = yes ]; then
    [ -n "$qgpu_lib" ] && [ -f "$qgpu_lib" ] || die "--qgpu-lib=.../libqgpu.a missing (build libqgpu first)"
    sh "$here/register-filter.sh" "$ffsrc" "$qgpu_src/filter/vf_qgpu.c"
    [ "$as_libvmaf" = no ] || sh "$here/register-filter.sh" --as-libvmaf "$ffsrc" "$qgpu_src/filter/vf_qgpu.c"
    # An uninstalled qgpu.pc: the static libqgpu.a (alone in its directory,
    # so that -lqgpu can't pick up libqgpu.so), the source tree's headers
    # and the build's generated qgpu/version.h.
    # json-c is linked statically too when its .a exists, so that the
    # binaries need only libc, libm, libz, libOpenCL and libdav1d.
    mkdir -p "$bdir/qgpu/lib"
    if ! cmp -s "$qgpu_lib" "$bdir/qgpu/lib/libqgpu.a"; then
        cp "$qgpu_lib" "$bdir/qgpu/lib/libqgpu.a"
        rm -f "$bdir/ffmpeg" "$bdir/ffmpeg_g" "$bdir/ffprobe" "$bdir/ffprobe_g"   # relink against the new library
    fi
    jsonc_dir=$(pkg-config --variable=libdir json-c 2>/dev/null || true)
    if [ -n "$jsonc_dir" ] && [ -f "$jsonc_dir/libjson-c.a" ]; then
        ln -sf "$jsonc_dir/libjson-c.a" "$bdir/qgpu/lib/libjson-c.a"
    fi
    cat >"$bdir/qgpu/qgpu.pc.new" <<EOF
Name: qgpu
Description: video quality metrics on OpenCL (uninstalled, for the FFmpeg build)
Version: $(cat "$qgpu_src/VERSION")
Libs: -L$bdir/qgpu/lib -lqgpu
Libs.private: -ljson-c $(pkg-config --libs OpenCL) -lm -lpthread
Cflags: -I$qgpu_src/libqgpu/include -I$build_root/gen
EOF
    cmp -s "$bdir/qgpu/qgpu.pc.new" "$bdir/qgpu/qgpu.pc" || mv "$bdir/qgpu/qgpu.pc.new" "$bdir/qgpu/qgpu.pc"
    rm -f "$bdir/qgpu/qgpu.pc.new"
    extra="--enable-libqgpu --enable-filter=qgpu"
    [ "$as_libvmaf" = no ] || extra="$extra --enable-libvmaf --enable-filter=libvmaf"
elif [ "$as_libvmaf" = yes ]; then
    die "--as-libvmaf needs the filter (drop --without-filter)"
fi
if [ -n "$libvmaf_abi" ]; then
    [ "$as_libvmaf" = no ] || die "--libvmaf-abi and --as-libvmaf exclude each other"
    [ -f "$libvmaf_abi/libvmaf.pc" ] || die "no libvmaf.pc in $libvmaf_abi (make libvmaf)"
    grep -q 'qgpu' "$ffsrc/libavfilter/allfilters.c" &&
        die "$ffsrc carries the qgpu filter: --libvmaf-abi needs an unmodified FFmpeg tree"
    libvmaf_abi=$(cd "$libvmaf_abi" && pwd)
    # relink when the library changed
    for f in "$libvmaf_abi"/../static/libvmaf.a "$libvmaf_abi"/../libvmaf.so.3; do
        [ -f "$f" ] && [ -f "$bdir/ffmpeg" ] && [ "$f" -nt "$bdir/ffmpeg" ] &&
            rm -f "$bdir/ffmpeg" "$bdir/ffmpeg_g" "$bdir/ffprobe" "$bdir/ffprobe_g"
    done
    extra="--enable-libvmaf --enable-filter=libvmaf"
fi

# ---------------------------------------------------------------- tools
# nasm (FFmpeg's x86 assembly) and libdav1d-dev (AV1 decoding): installed
# when running as root on Debian, else nasm is optional (slower decoding).
apt_install() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
    say "installing $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1; }
}
asm=
if ! command -v nasm >/dev/null 2>&1 && ! apt_install nasm; then
    say "warning: nasm not found (Debian: apt-get install nasm); building without x86 assembly"
    asm=--disable-x86asm
fi
if ! pkg-config --exists dav1d && ! apt_install libdav1d-dev; then
    die "dav1d not found by pkg-config (Debian: apt-get install libdav1d-dev)"
fi

# ---------------------------------------------------------------- configure
# `-i -` (standard input, as Av1an and ab-av1 feed the reference) is the
# fd protocol from FFmpeg 7.1 (the pipe protocol before).
fd_protocol=
grep -q 'ff_fd_protocol;' "$ffsrc/libavformat/protocols.c" && fd_protocol=,fd
# Minimal: the decoders, demuxers and filters the corpus and the docs use,
# and those that VMAF tools (ab-av1, Av1an, ffmpeg-quality-metrics) put
# around libvmaf (doc/filter.md). scale2ref exists in every version built
# (deprecated from 7.1, where scale takes 2 inputs).
set -- \
    --prefix="$bdir/install" \
    --disable-everything --disable-doc --disable-programs --enable-ffmpeg --enable-ffprobe \
    --enable-static --disable-shared --disable-autodetect \
    --enable-zlib --enable-libdav1d --enable-opencl \
    --pkg-config-flags=--static \
    --enable-decoder=h264,hevc,mpeg2video,vp9,av1,libdav1d,ffv1,rawvideo,mjpeg,png,prores,dnxhd,vp8,mpeg4,h263 \
    --enable-demuxer=mov,matroska,mpegts,yuv4mpegpipe,rawvideo,image2,nut,avi,mxf \
    --enable-parser=h264,hevc,av1,vp9,mpegvideo,mjpeg,png,dnxhd,vp8,mpeg4video,h263 \
    --enable-bsf=null,h264_mp4toannexb,hevc_mp4toannexb,vp9_superframe_split,av1_frame_split,extract_extradata \
    --enable-protocol=file,pipe$fd_protocol \
    --enable-filter=scale,format,metadata,null,hwupload,hwdownload,setpts,trim,copy,psnr,ssim,split \
    --enable-filter=settb,setsar,select,extractplanes,scale2ref,fps,crop,pad \
    --enable-muxer=null,rawvideo,yuv4mpegpipe \
    --enable-encoder=wrapped_avframe,rawvideo \
    $asm $extra
if [ "$with_nvdec" = yes ]; then
    if ! pkg-config --exists ffnvcodec && ! apt_install libffmpeg-nvenc-dev; then
        die "ffnvcodec (nv-codec-headers) not found by pkg-config (Debian: apt-get install libffmpeg-nvenc-dev)"
    fi
    set -- "$@" --enable-ffnvcodec --enable-cuda --enable-nvdec \
        --enable-hwaccel=h264_nvdec,hevc_nvdec
fi
confline="$*"
if [ ! -f "$bdir/ffbuild/config.mak" ] || [ "$(cat "$bdir/.qgpu-configure-line" 2>/dev/null)" != "$ffsrc $confline" ]; then
    say "configuring FFmpeg (a full build follows: 3 to 5 minutes on 2 cores)"
    rm -f "$bdir/.qgpu-configure-line"
    pcpath=$bdir/qgpu
    [ -z "$libvmaf_abi" ] || pcpath=$libvmaf_abi
    (cd "$bdir" && PKG_CONFIG_PATH="$pcpath${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
        "$ffsrc/configure" "$@" >"$bdir/configure.log" 2>&1) ||
        { tail -n 20 "$bdir/configure.log" >&2; [ -f "$bdir/ffbuild/config.log" ] && tail -n 30 "$bdir/ffbuild/config.log" >&2; die "FFmpeg configure failed (log: $bdir/configure.log, $bdir/ffbuild/config.log)"; }
    echo "$ffsrc $confline" >"$bdir/.qgpu-configure-line"
fi

# ---------------------------------------------------------------- build
say "make -j$jobs in $bdir"
make -C "$bdir" -j"$jobs" >"$bdir/make.log" 2>&1 ||
    { grep -B2 -A6 -m 5 'error' "$bdir/make.log" >&2 || tail -n 30 "$bdir/make.log" >&2; die "FFmpeg build failed (log: $bdir/make.log)"; }
[ -x "$bdir/ffmpeg" ] && [ -x "$bdir/ffprobe" ] || die "no $bdir/ffmpeg or ffprobe after make"
# A private install (headers, static libraries, .pc files) in
# BUILD/ffmpeg-VERSION/install, for `make static-tools`.
# Only when a library changed, so that the static tools don't rebuild needlessly.
stamp=$bdir/install/.qgpu-installed
if [ ! -f "$stamp" ] || [ -n "$(find "$bdir" -path "$bdir/install" -prune -o -name '*.a' -newer "$stamp" -print)" ]; then
    make -C "$bdir" install >>"$bdir/make.log" 2>&1 || die "FFmpeg make install failed (log: $bdir/make.log)"
    touch "$stamp"
fi
say "built $bdir/ffmpeg ($("$bdir/ffmpeg" -hide_banner -version | head -n 1))"
if [ "$with_filter" = yes ]; then
    "$bdir/ffmpeg" -hide_banner -h filter=qgpu >/dev/null 2>&1 || die "the qgpu filter is not in $bdir/ffmpeg"
    say "the qgpu filter is in (ffmpeg -h filter=qgpu)"
fi
if [ -n "$libvmaf_abi" ]; then
    "$bdir/ffmpeg" -hide_banner -h filter=libvmaf 2>/dev/null | grep -q 'Filter libvmaf' ||
        die "no libvmaf filter in $bdir/ffmpeg"
    "$bdir/ffmpeg" -hide_banner -h filter=libvmaf 2>/dev/null | grep -q sample_depth &&
        die "the libvmaf filter in $bdir/ffmpeg is libqgpu's, not FFmpeg's own"
    say "FFmpeg's own libvmaf filter, linked with libvmaf-qgpu ($libvmaf_abi/libvmaf.pc)"
fi
if [ "$as_libvmaf" = yes ]; then
    "$bdir/ffmpeg" -hide_banner -h filter=libvmaf 2>/dev/null | grep -q sample_depth ||
        die "the libvmaf filter in $bdir/ffmpeg is not libqgpu's"
    say "libqgpu's filter is also registered as libvmaf (ffmpeg -h filter=libvmaf)"
fi
