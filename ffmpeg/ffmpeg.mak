# FFmpeg with the qgpu filter, and the tools linked against static FFmpeg
# libraries. Included by the top-level Makefile (after models/models.mak).
#
#   make ffmpeg                  fetch Debian's FFmpeg 5.1.9 source (apt-get source;
#                                adds a deb-src entry when run as root and none exists),
#                                register filter/vf_qgpu.c, build a minimal static
#                                FFmpeg linked with libqgpu.a in $(BUILD)/ffmpeg-5.1.9/
#                                (incremental when run again)
#   make ffmpeg FFMPEG_VERSION=8.1.2     another Debian version (7.1.x: trixie, 8.x: sid;
#                                fetched through a private apt state)
#   make ffmpeg FFMPEG_SOURCE=DIR        build against your own FFmpeg tree
#   make ffmpeg FFMPEG_LIBVMAF_NAME=1    the filter ALSO registered as `libvmaf` (FFmpeg's
#                                --enable-libvmaf served by libqgpu), in
#                                $(BUILD)/ffmpeg-VERSION-libvmaf/; fate, fate-smoke and
#                                fate-clients take the same variable
#   make ffmpeg FFMPEG_WITH_LIBVMAF_ABI=1   an UNMODIFIED FFmpeg (the pristine upstream
#                                tarball) with --enable-libvmaf, linked with libvmaf-qgpu
#                                (make libvmaf; its static libvmaf.a), in
#                                $(BUILD)/ffmpeg-VERSION-vmafabi/; `make fate-libvmaf-abi`
#                                checks its -lavfi libvmaf logs against the goldens
#   make static-tools            $(BUILD)/static/qgpu and $(BUILD)/static/test_parity
#                                linked against those static libraries: they need
#                                only libc, libm, libz, libOpenCL and libdav1d
#   make fate                    the filter's FATE-style tests (fate/ffmpeg-filter.sh;
#                                `make check` runs them too once the ffmpeg exists)
#   make fate-smoke              a few of them (psnr and VMAF, 8 and 10 bits, the
#                                hwupload path, framesync, an error): CI's check of
#                                other FFmpeg versions, e.g. FFMPEG_VERSION=8.1.2
#   make fate-clients            real VMAF clients (fate/clients.py): ffmpeg-quality-metrics
#                                from PyPI (into $(BUILD)/fqm-venv, once), ab-av1's and
#                                Av1an's filter strings and parsers; needs
#                                FFMPEG_LIBVMAF_NAME=1 and FFmpeg >= 7.1 (CI: 8.1.2)
#   make ffmpeg-clean            remove the FFmpeg build and the static tools

# Included before the Makefile's first rule: keep `all` the default goal.
all:

FFMPEG_VERSION ?= 5.1.9
FFMPEG_SOURCE ?=
ifneq ($(FFMPEG_SOURCE),)
FFMPEG_VERSION := $(shell cat $(FFMPEG_SOURCE)/RELEASE 2>/dev/null || echo custom)
endif
FFMPEG_LIBVMAF_NAME ?=
FFMPEG_WITH_LIBVMAF_ABI ?=
FFMPEG_BUILD := $(BUILD)/ffmpeg-$(FFMPEG_VERSION)$(if $(FFMPEG_LIBVMAF_NAME),-libvmaf)$(if $(FFMPEG_WITH_LIBVMAF_ABI),-vmafabi)
FFMPEG_PREFIX := $(FFMPEG_BUILD)/install
FFMPEG_BIN := $(FFMPEG_BUILD)/ffmpeg

ffmpeg: $(BUILD)/libqgpu.a $(if $(FFMPEG_WITH_LIBVMAF_ABI),libvmaf)
	$(S)/ffmpeg/build-ffmpeg.sh --build-root=$(BUILD) --qgpu-src=$(S) \
	    --qgpu-lib=$(BUILD)/libqgpu.a --version=$(FFMPEG_VERSION) \
	    $(if $(FFMPEG_SOURCE),--ffmpeg-source=$(FFMPEG_SOURCE)) \
	    $(if $(FFMPEG_LIBVMAF_NAME),--as-libvmaf) \
	    $(if $(FFMPEG_WITH_LIBVMAF_ABI),--libvmaf-abi=$(abspath $(VMAF_ABI_DIR))/pkgconfig-static)

# ---- static tools ----
STATIC_DIR := $(BUILD)/static
STATIC_AV_MODULES := libavformat libavcodec libswscale libavutil
STATIC_PC = PKG_CONFIG_PATH=$(FFMPEG_PREFIX)/lib/pkgconfig pkg-config --static
STATIC_SRCS := $(sort $(wildcard $(S)/tool/*.c)) $(S)/tests/test_parity.c $(S)/tests/test_util.c
STATIC_OBJS := $(patsubst $(S)/%.c,$(STATIC_DIR)/obj/%.o,$(STATIC_SRCS))
STATIC_TOOL_OBJS := $(filter $(STATIC_DIR)/obj/tool/%,$(STATIC_OBJS))
STATIC_PARITY_OBJS := $(filter-out $(STATIC_DIR)/obj/tool/qgpu.o,$(STATIC_OBJS))
STATIC_AV_ARCHIVES := $(foreach m,$(STATIC_AV_MODULES),$(FFMPEG_PREFIX)/lib/$(m).a)
# Everything static except glibc, zlib, the OpenCL ICD loader and dav1d
# (Debian ships no libdav1d.a); json-c from its .a.
STATIC_LIBS = $(shell $(STATIC_PC) --libs $(STATIC_AV_MODULES)) \
              -l:libjson-c.a $(OPENCL_LIBS) -lm -lpthread
STATIC_CFLAGS = $(CFLAGS) -I$(S)/libqgpu/include -I$(BUILD)/gen -I$(S)/libqgpu/src -I$(BUILD) \
                -I$(S)/tool -I$(S)/tests -I$(S)/tests/ref $(OPENCL_CFLAGS) $(JSON_CFLAGS) \
                $(shell $(STATIC_PC) --cflags $(STATIC_AV_MODULES))
# Shared objects a static tool may need (checked with ldd after linking).
STATIC_ALLOWED_SO := linux-vdso|ld-linux|libc\.so|libm\.so|libz\.so|libOpenCL\.so|libdav1d\.so

static-tools: ffmpeg
	@$(MAKE) --no-print-directory static-tools-link

static-tools-link: $(STATIC_DIR)/qgpu $(STATIC_DIR)/test_parity
	@for b in $^; do echo "$$b:"; ldd $$b; \
	    if ldd $$b | grep -v -E '$(STATIC_ALLOWED_SO)' | grep -q .; then \
	        echo "error: $$b needs a shared library other than libc, libm, libz, libOpenCL, libdav1d" >&2; \
	        exit 1; fi; done

$(STATIC_DIR)/obj/%.o: $(S)/%.c $(wildcard $(S)/tool/*.h $(S)/tests/*.h) \
                       $(S)/libqgpu/include/qgpu/qgpu.h $(FFMPEG_PREFIX)/lib/libavutil.a
	@mkdir -p $(dir $@)
	$(CC) $(STATIC_CFLAGS) -c $< -o $@

$(STATIC_DIR)/qgpu: $(STATIC_TOOL_OBJS) $(BUILD)/libqgpu.a $(STATIC_AV_ARCHIVES)
	$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $(STATIC_TOOL_OBJS) $(BUILD)/libqgpu.a $(STATIC_LIBS)

$(STATIC_DIR)/test_parity: $(STATIC_PARITY_OBJS) $(BUILD)/libqgpu.a $(STATIC_AV_ARCHIVES)
	$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $(STATIC_PARITY_OBJS) $(BUILD)/libqgpu.a $(STATIC_LIBS)

# ---- FATE-style tests of the filter (minutes of FFmpeg build: not in `make check`) ----
fate: ffmpeg
	QGPU_SRC=$(abspath $(S)) $(S)/fate/ffmpeg-filter.sh $(abspath $(FFMPEG_BIN))

FATE_SMOKE := psnr/nf_src01 vmaf/nf_sparks hwupload/psnr hwupload/10bit_vmaf shortest error/size \
              libvmaf/feature_only libvmaf/models as_libvmaf
fate-smoke: ffmpeg
	QGPU_SRC=$(abspath $(S)) QGPU_FATE_ONLY="$(FATE_SMOKE)" $(S)/fate/ffmpeg-filter.sh $(abspath $(FFMPEG_BIN))

# FFmpeg's own libvmaf filter on libvmaf-qgpu against the goldens (fate/libvmaf-abi.sh).
fate-libvmaf-abi:
	@$(MAKE) --no-print-directory ffmpeg FFMPEG_WITH_LIBVMAF_ABI=1
	QGPU_SRC=$(abspath $(S)) $(S)/fate/libvmaf-abi.sh \
	    $(abspath $(BUILD)/ffmpeg-$(FFMPEG_VERSION)-vmafabi/ffmpeg)

# ffmpeg-quality-metrics, pinned, in a venv (Debian 12's pip refuses system
# installs); the install is the only step that needs the network (PyPI).
FQM_VERSION := 3.13.0
FQM_VENV := $(BUILD)/fqm-venv
FQM_BIN := $(FQM_VENV)/bin/ffmpeg-quality-metrics

$(FQM_BIN):
	python3 -m venv $(FQM_VENV)
	$(FQM_VENV)/bin/pip install --quiet --disable-pip-version-check ffmpeg-quality-metrics==$(FQM_VERSION)

fate-clients: ffmpeg $(BUILD)/qgpu $(FQM_BIN)
	@[ -n "$(FFMPEG_LIBVMAF_NAME)" ] || { echo "fate-clients: use FFMPEG_LIBVMAF_NAME=1 (the clients call libvmaf)"; exit 1; }
	QGPU_SRC=$(abspath $(S)) python3 $(S)/fate/clients.py $(abspath $(FFMPEG_BIN)) \
	    $(abspath $(BUILD)/qgpu) $(abspath $(FQM_BIN))

ffmpeg-clean:
	rm -rf $(FFMPEG_BUILD) $(STATIC_DIR)

.PHONY: fate-libvmaf-abi ffmpeg static-tools static-tools-link fate fate-smoke fate-clients ffmpeg-clean
