# The tool's tests: tests/test_tool.c (unit tests of tool/pairing.c and runs
# of the built qgpu binary on inputs it writes with libavformat),
# tests/test_tool_errors.c (the bad-input table tests/tool_bad_inputs.txt,
# with tests/tool_oom_hook.so preloaded for the device out-of-memory row) and
# tests/test_tool_cli.c (libvmaf's vmaf command lines, doc/compat-cli.md),
# tests/test_batch.c (qgpu batch and batch-merge, doc/batch.md),
# all with tests/tool_run.c (finding and running the binary, writing
# encoded clips). They link FFmpeg (test_tool also the tool's objects), so
# they exist only when the tool is built. Also installs the man page doc/qgpu.1.
ifeq ($(BUILD_TOOL),yes)
TOOL_TEST_OBJS = $(BUILD)/tests/tool_run.o $(TEST_SUPPORT_OBJS)

$(BUILD)/tests/test_tool: $(BUILD)/tests/test_tool.o $(TOOL_TEST_OBJS) $(TOOL_LIB_OBJS) \
                          $(BUILD)/libqgpu.a $(BUILD)/qgpu
	$(CC) $(LDFLAGS) -o $@ $< $(TOOL_TEST_OBJS) $(TOOL_LIB_OBJS) $(BUILD)/libqgpu.a \
	      $(AV_LIBS) $(TEST_LIBS)

$(BUILD)/tests/test_tool_errors: $(BUILD)/tests/test_tool_errors.o $(TOOL_TEST_OBJS) \
                                 $(BUILD)/libqgpu.a $(BUILD)/qgpu $(BUILD)/tests/tool_oom_hook.so
	$(CC) $(LDFLAGS) -o $@ $< $(TOOL_TEST_OBJS) $(BUILD)/libqgpu.a $(AV_LIBS) $(TEST_LIBS)

$(BUILD)/tests/test_tool_cli: $(BUILD)/tests/test_tool_cli.o $(TOOL_TEST_OBJS) \
                              $(BUILD)/libqgpu.a $(BUILD)/qgpu
	$(CC) $(LDFLAGS) -o $@ $< $(TOOL_TEST_OBJS) $(BUILD)/libqgpu.a $(AV_LIBS) $(TEST_LIBS)

$(BUILD)/tests/test_batch: $(BUILD)/tests/test_batch.o $(TOOL_TEST_OBJS) $(BUILD)/libqgpu.a \
                           $(BUILD)/qgpu
	$(CC) $(LDFLAGS) -o $@ $< $(TOOL_TEST_OBJS) $(BUILD)/libqgpu.a $(AV_LIBS) $(TEST_LIBS)

# qgpu batch under a real Slurm (tests/check-slurm.sh; root: it installs
# slurmctld, slurmd and munge with apt-get when missing). Not part of make
# check; .ci/run runs it.
check-slurm: $(BUILD)/qgpu
	$(S)/tests/check-slurm.sh $(BUILD)/qgpu $(S)

.PHONY: check-slurm

# Preloaded into the tool: built without sanitizers, which want their
# runtime first in the process.
$(BUILD)/tests/tool_oom_hook.so: $(S)/tests/tool_oom_hook.c config.mak
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS)) -fPIC -shared -o $@ $< -ldl

MAN_DIR = $(DESTDIR)$(PREFIX)/share/man/man1

install: install-man
uninstall: uninstall-man

# The version in the page's header comes from VERSION.
install-man:
	install -d $(MAN_DIR)
	sed '1s/"libqgpu [0-9.]*"/"libqgpu $(VERSION)"/' $(S)/doc/qgpu.1 > $(MAN_DIR)/qgpu.1
	chmod 644 $(MAN_DIR)/qgpu.1

uninstall-man:
	rm -f $(MAN_DIR)/qgpu.1

.PHONY: install-man uninstall-man
else
TEST_BINS := $(filter-out $(BUILD)/tests/test_tool $(BUILD)/tests/test_tool_errors \
                          $(BUILD)/tests/test_tool_cli $(BUILD)/tests/test_batch,$(TEST_BINS))
endif

# The static tools with NVDEC (--hwdec cuda) for an NVIDIA machine without
# FFmpeg: FFmpeg built by ffmpeg/build-ffmpeg.sh --with-nvdec (h264_nvdec,
# hevc_nvdec; nv-codec-headers from Debian's libffmpeg-nvenc-dev, installed
# when missing and run as root) in $(BUILD)/ffmpeg-VERSION-nvdec, without
# the filter; qgpu and test_parity linked as `make static-tools` links them,
# in $(BUILD)/static-nvdec/. FFmpeg loads the driver's libcuda and
# libnvcuvid at run time: the binaries need no more shared libraries.
static-tools-nvdec: $(BUILD)/libqgpu.a
	$(S)/ffmpeg/build-ffmpeg.sh --build-root=$(BUILD) --qgpu-src=$(S) --without-filter \
	    --with-nvdec --version=$(FFMPEG_VERSION) \
	    $(if $(FFMPEG_SOURCE),--ffmpeg-source=$(FFMPEG_SOURCE))
	@$(MAKE) --no-print-directory static-tools-link FFMPEG_BUILD=$(FFMPEG_BUILD)-nvdec \
	    FFMPEG_PREFIX=$(FFMPEG_BUILD)-nvdec/install STATIC_DIR=$(BUILD)/static-nvdec

.PHONY: static-tools-nvdec
