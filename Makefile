# libqgpu. Targets: all (library + tool), check (every test), bench,
# install, uninstall, clean. Build outputs go to build/ for an in-tree
# build, or to the directory configure ran in for an out-of-tree build.

SRC_PATH ?= .
-include config.mak

ifeq ($(abspath $(SRC_PATH)),$(CURDIR))
BUILD := build
else
BUILD := .
endif

S := $(SRC_PATH)
# The one version number: VERSION. qgpu/version.h (qgpu_version()), qgpu.pc
# and the shared library's names come from it.
VERSION := $(shell cat $(S)/VERSION)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
SHLIB := libqgpu.so.$(VERSION)
SONAME := libqgpu.so.$(SOVERSION)
# Install directories (configure writes PREFIX, and LIBDIR when --libdir is
# given); `make install PREFIX=/usr` moves all of them but an explicit LIBDIR.
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin

# SKIP="a b": leave libqgpu/src/a.c, b.c and tests/test_a.c, test_b.c out
# (for building while someone else's new file is half-written).
SKIP_FILES := $(foreach n,$(SKIP),$(S)/libqgpu/src/$(n).c $(S)/libqgpu/src/feature/$(n).c \
                $(S)/tests/test_$(n).c $(S)/tests/ref/$(n)_ref.c)
# Each metric is one libqgpu/src/feature/<name>.c (its class) beside its
# <name>.cl; the table of classes and the embedded kernels are generated
# from the files there, so adding a metric is adding its files.
FEATURE_SRCS := $(filter-out $(SKIP_FILES),$(sort $(wildcard $(S)/libqgpu/src/feature/*.c)))
LIB_SRCS := $(filter-out $(SKIP_FILES),$(sort $(wildcard $(S)/libqgpu/src/*.c))) $(FEATURE_SRCS)
# OpenCL kernels sit beside the C that launches them: the pipeline's in
# libqgpu/src, each metric's in libqgpu/src/feature (common.cl: the prelude
# of every program).
KERNELS := $(sort $(wildcard $(S)/libqgpu/src/*.cl $(S)/libqgpu/src/feature/*.cl))
LIB_OBJS := $(patsubst $(S)/%.c,$(BUILD)/%.o,$(LIB_SRCS)) $(BUILD)/gen/kernels_embedded.o \
            $(BUILD)/gen/feature_table.o
# Header dependencies are written by the compiler (-MMD, build/**/*.d).
# The library exports only what carries QGPU_API (the public headers).
DEP_CFLAGS := -MMD -MP
LIB_CFLAGS := $(CFLAGS) $(DEP_CFLAGS) -I$(S)/libqgpu/include -I$(BUILD)/gen -I$(S)/libqgpu/src \
              -I$(BUILD) $(OPENCL_CFLAGS) $(JSON_CFLAGS) -fvisibility=hidden
LIB_LIBS := $(OPENCL_LIBS) $(JSON_LIBS) -lm -lpthread
# Test and bench binaries link json-c statically, so that the ones without
# FFmpeg depend only on libOpenCL and libc and run on GPU machines that lack
# json-c (see doc/testing.md).
STATIC_LIB_LIBS := $(OPENCL_LIBS) -Wl,-Bstatic $(JSON_LIBS) -Wl,-Bdynamic -lm -lpthread

-include $(S)/models/models.mak
-include $(S)/ffmpeg/ffmpeg.mak
-include $(S)/tests/reliability.mak
-include $(S)/libvmaf-abi/abi.mak

TOOL_SRCS := $(sort $(wildcard $(S)/tool/*.c))
TOOL_LIB_SRCS := $(filter-out $(S)/tool/qgpu.c,$(TOOL_SRCS))
TOOL_LIB_OBJS := $(patsubst $(S)/%.c,$(BUILD)/%.o,$(TOOL_LIB_SRCS))
TOOL_CFLAGS := $(CFLAGS) $(DEP_CFLAGS) -I$(S)/libqgpu/include -I$(BUILD)/gen -I$(S)/tool \
               $(AV_CFLAGS) $(JSON_CFLAGS)

TEST_SRCS := $(filter-out $(SKIP_FILES) $(S)/tests/test_util.c,$(sort $(wildcard $(S)/tests/test_*.c)))
ifneq ($(BUILD_TOOL),yes)
TEST_SRCS := $(filter-out $(S)/tests/test_parity.c,$(TEST_SRCS))
endif
TEST_BINS := $(patsubst $(S)/tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
# Every test links the references (tests/ref), test_util.c, driver.c
# (the table-driven harness of the kernel tests, doc/testing.md) and cl_env.c.
TEST_SUPPORT_SRCS := $(filter-out $(SKIP_FILES),$(sort $(wildcard $(S)/tests/ref/*.c))) \
                     $(S)/tests/test_util.c $(S)/tests/driver.c $(S)/tests/cl_env.c
TEST_SUPPORT_OBJS := $(patsubst $(S)/%.c,$(BUILD)/%.o,$(TEST_SUPPORT_SRCS))
TEST_CFLAGS := $(LIB_CFLAGS) -I$(S)/libqgpu/src/feature -I$(S)/tests -I$(S)/tests/ref -I$(S)/tool \
               $(AV_CFLAGS)
TEST_LIBS := $(STATIC_LIB_LIBS)
-include $(S)/tool/tool.mak

PROGRAMS := $(BUILD)/libqgpu.a $(BUILD)/$(SHLIB)
ifeq ($(BUILD_TOOL),yes)
PROGRAMS += $(BUILD)/qgpu
endif

all: $(PROGRAMS)

config.mak: $(S)/configure
	@if [ -f config.mak ]; then echo "configure changed: re-run ./configure" >&2; \
	else echo "no config.mak: running ./configure with defaults"; $(S)/configure; fi

# Changes when a kernel or feature file is added or removed, so that the
# generated files follow (their prerequisites alone miss a removal).
SOURCE_LIST := $(BUILD)/gen/sources.list
SOURCE_LIST_TEXT := $(notdir $(KERNELS) $(FEATURE_SRCS))
$(shell mkdir -p $(BUILD)/gen && (echo '$(SOURCE_LIST_TEXT)' | cmp -s - $(SOURCE_LIST) || \
        echo '$(SOURCE_LIST_TEXT)' > $(SOURCE_LIST)))

$(BUILD)/gen/kernels_embedded.c: $(KERNELS) $(S)/build-aux/embed.sh $(SOURCE_LIST)
	@mkdir -p $(dir $@)
	$(S)/build-aux/embed.sh qgpu_kernel_source $@ $(KERNELS)

$(BUILD)/gen/feature_table.c: $(FEATURE_SRCS) $(S)/build-aux/feature-table.sh $(SOURCE_LIST)
	@mkdir -p $(dir $@)
	$(S)/build-aux/feature-table.sh $@ $(FEATURE_SRCS)

VERSION_H := $(BUILD)/gen/qgpu/version.h

$(VERSION_H): $(S)/VERSION
	@mkdir -p $(dir $@)
	$(S)/build-aux/version.sh $< $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c config.mak | $(VERSION_H)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/libqgpu/%.o: $(S)/libqgpu/%.c config.mak | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

# speed_chroma's host statistics: -O3 vectorises their loops, each sum
# still one chain in its order (the same floats; speed_linalg.c)
$(BUILD)/libqgpu/src/feature/speed_linalg.o: LIB_CFLAGS += -O3

$(BUILD)/libqgpu.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

# The shared library exports what the public headers mark QGPU_API (the
# objects are built with -fvisibility=hidden); tests/check_exports.sh
# checks that this is exactly what they declare. libqgpu.so.X.Y.Z is the
# file, libqgpu.so.X (the soname) and libqgpu.so link to it.
PUBLIC_HEADERS := $(sort $(wildcard $(S)/libqgpu/include/qgpu/*.h))

$(BUILD)/$(SHLIB): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(SONAME) $(LDFLAGS) -o $@ $(LIB_OBJS) $(LIB_LIBS)
	ln -sf $(SHLIB) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libqgpu.so

$(BUILD)/tool/%.o: $(S)/tool/%.c config.mak | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -c $< -o $@

# The tool links the static library: one self-contained binary.
$(BUILD)/qgpu: $(BUILD)/tool/qgpu.o $(TOOL_LIB_OBJS) $(BUILD)/libqgpu.a
	$(CC) $(LDFLAGS) -o $@ $^ $(AV_LIBS) $(LIB_LIBS)

$(BUILD)/tests/%.o: $(S)/tests/%.c config.mak | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJS) $(BUILD)/libqgpu.a
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(BUILD)/libqgpu.a $(TEST_LIBS)

# Only the parity test decodes video (FFmpeg); the others need just OpenCL.
$(BUILD)/tests/test_parity: $(BUILD)/tests/test_parity.o $(TEST_SUPPORT_OBJS) $(TOOL_LIB_OBJS) \
                            $(BUILD)/libqgpu.a
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(TOOL_LIB_OBJS) $(BUILD)/libqgpu.a \
	      $(AV_LIBS) $(TEST_LIBS)

# test_model_refs reads the bundled y4m pairs with bench's reader (libc only).
$(BUILD)/tests/test_model_refs: $(BUILD)/tests/test_model_refs.o $(TEST_SUPPORT_OBJS) \
                                $(BUILD)/bench/y4m.o $(BUILD)/libqgpu.a
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(BUILD)/bench/y4m.o $(BUILD)/libqgpu.a \
	      $(TEST_LIBS)

tests: $(TEST_BINS)

# After `make ffmpeg`, make check also runs the filter's FATE tests
# (fate/ffmpeg-filter.sh) on the ffmpeg built with the filter.
FATE_FILTER := $(if $(wildcard $(FFMPEG_BIN)),$(BUILD)/tests/fate_filter)

$(BUILD)/tests/fate_filter: $(S)/fate/ffmpeg-filter.sh $(S)/fate/golden.sh $(FFMPEG_BIN)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath $<)" "$(abspath $(FFMPEG_BIN))" > $@
	chmod +x $@

# libqgpu.so's exported symbols against the public headers.
$(BUILD)/tests/check_exports: $(S)/tests/check_exports.sh $(BUILD)/$(SHLIB)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec %s %s %s\n' "$(abspath $<)" "$(abspath $(BUILD)/$(SHLIB))" \
	    "$(abspath $(PUBLIC_HEADERS))" > $@
	chmod +x $@

# `make install` into a scratch DESTDIR, PREFIX=/usr with a multiarch
# LIBDIR: the .pc file, the soname links, a program built with pkg-config.
$(BUILD)/tests/check_install: $(S)/tests/check_install.sh $(BUILD)/$(SHLIB)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec %s %s %s %s\n' "$(abspath $<)" "$(abspath $(S))" "$(CURDIR)" \
	    "$(VERSION)" > $@
	chmod +x $@

# Every test binary; the last line sums them up: "N passed, N failed".
check: all $(TEST_BINS) $(BUILD)/tests/check_exports $(BUILD)/tests/check_libvmaf_exports \
       $(BUILD)/tests/check_install $(FATE_FILTER)
	@QGPU_SRC=$(abspath $(S)) $(S)/build-aux/run-tests.sh $(TEST_BINS) $(BUILD)/tests/check_exports \
	    $(BUILD)/tests/check_libvmaf_exports $(BUILD)/tests/check_install $(FATE_FILTER)

BENCH_OBJS := $(BUILD)/bench/qgpu_bench.o $(BUILD)/bench/y4m.o

$(BUILD)/bench/%.o: $(S)/bench/%.c config.mak | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -I$(S)/bench -c $< -o $@

# qgpu-bench links only libqgpu (static), libOpenCL and libc.
$(BUILD)/qgpu-bench: $(BENCH_OBJS) $(BUILD)/libqgpu.a
	$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJS) $(BUILD)/libqgpu.a $(STATIC_LIB_LIBS)

bench: $(BUILD)/qgpu-bench
	@echo "built $(BUILD)/qgpu-bench; e.g.: $(BUILD)/qgpu-bench -r REF.y4m -d DIST.y4m (doc/performance.md)"

# The .pc file is written at install time, with the directories installed
# to (make install PREFIX=/usr gives prefix=/usr).
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/qgpu
	install -m 644 $(BUILD)/libqgpu.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/$(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libqgpu.so
	install -m 644 $(PUBLIC_HEADERS) $(VERSION_H) $(DESTDIR)$(INCLUDEDIR)/qgpu/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' $(S)/libqgpu/qgpu.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/qgpu.pc
ifeq ($(BUILD_TOOL),yes)
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(BUILD)/qgpu $(DESTDIR)$(BINDIR)/
endif

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libqgpu.a $(DESTDIR)$(LIBDIR)/libqgpu.so \
	      $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SHLIB) \
	      $(addprefix $(DESTDIR)$(INCLUDEDIR)/qgpu/,$(notdir $(PUBLIC_HEADERS) $(VERSION_H))) \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/qgpu.pc \
	      $(DESTDIR)$(BINDIR)/qgpu
	-rmdir $(DESTDIR)$(INCLUDEDIR)/qgpu

clean:
	rm -rf $(BUILD)/libqgpu $(BUILD)/tool $(BUILD)/tests $(BUILD)/gen $(BUILD)/bench \
	       $(BUILD)/libqgpu.a $(BUILD)/libqgpu.so* $(BUILD)/qgpu \
	       $(BUILD)/qgpu-bench $(BUILD)/libvmaf-abi $(BUILD)/libvmaf-qgpu

# Header dependencies found by the compiler at the last build.
-include $(wildcard $(BUILD)/libqgpu/src/*.d $(BUILD)/libqgpu/src/feature/*.d $(BUILD)/gen/*.d \
                    $(BUILD)/tool/*.d $(BUILD)/libvmaf-abi/src/*.d $(BUILD)/tests/*.d $(BUILD)/tests/ref/*.d $(BUILD)/bench/*.d)

.PHONY: all bench check tests install uninstall clean
.SECONDARY:
