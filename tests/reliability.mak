# Reliability targets (doc/reliability.md); included by the top-level
# Makefile. None of them is part of `make check`.
#
#   make check-asan      ASan + UBSan build of library, tool and tests in
#                        $(BUILD)/asan, then its `make check`
#   make check-valgrind  the qgpu tool under valgrind (leaks and errors) on a
#                        fate pair with a VMAF model and every feature
#                        (tests/check-valgrind.sh)
#   make fuzz            builds the libFuzzer harnesses (clang) in
#                        $(BUILD)/fuzz and runs each for FUZZ_SECONDS
#   make fuzz-ci         fuzz-regress, then each harness FUZZ_CI_SECONDS (CI)
#   make fuzz-regress    runs the harnesses once over fuzz/corpus/ (fast)
#   make soak            >= SOAK_FRAMES frames through one context; resident
#                        memory must stay flat

# Options for the sanitizer runs, and why:
# - detect_leaks=1: our leaks must fail the run. On PoCL no leak
#   suppression is needed (measured: zero reports); on a driver with its
#   own leaks pass RELIABILITY_LSAN_OPTIONS=suppressions=FILE.
# - protect_shadow_gap=0 is NOT needed with PoCL (measured); GPU drivers
#   that map memory at fixed low addresses (CUDA-based ones are known to)
#   may need it: pass RELIABILITY_ASAN_OPTIONS=...:protect_shadow_gap=0.
# - halt_on_error / -fno-sanitize-recover=undefined: the first report fails
#   the test binary, run-tests.sh reports it.
RELIABILITY_ASAN_OPTIONS ?= detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0
RELIABILITY_LSAN_OPTIONS ?= print_suppressions=0
RELIABILITY_UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1

ASAN_BUILD := $(BUILD)/asan

$(ASAN_BUILD)/config.mak: $(S)/configure
	@mkdir -p $(ASAN_BUILD)
	cd $(ASAN_BUILD) && $(abspath $(S))/configure --enable-sanitizers

# ASAN_SKIP="parity": leave tests out (the parity test is most of the time
# under ASan: 450 s of 8 min here); passed to the sub-make as SKIP.
ASAN_SKIP ?=

check-asan: $(ASAN_BUILD)/config.mak
	$(MAKE) -C $(ASAN_BUILD) all tests SKIP='$(ASAN_SKIP)'
	ASAN_OPTIONS='$(RELIABILITY_ASAN_OPTIONS)' LSAN_OPTIONS='$(RELIABILITY_LSAN_OPTIONS)' \
	UBSAN_OPTIONS='$(RELIABILITY_UBSAN_OPTIONS)' $(MAKE) -C $(ASAN_BUILD) check SKIP='$(ASAN_SKIP)'

# ---- valgrind ----
# tests/check-valgrind.sh: the qgpu tool under memcheck on a real pair big
# enough for every metric (CAMBI needs >= 216 pixels), 10-bit, decoded by
# FFmpeg, VALGRIND_FRAMES frames, a VMAF model and whatever `qgpu
# --list-features` lists (new metrics are covered automatically); three
# runs (libqgpu's binary cache empty, then filled, then the device lost at
# the second frame: exit 4 expected). PoCL's kernel cache is first
# warmed natively for the CPU valgrind presents (VALGRIND_WARM=no: don't;
# then every kernel compiles under memcheck, 39 min here). Passed through:
# VALGRIND, VALGRIND_FLAGS (replaces the memcheck options), POCL_CACHE_DIR.
VALGRIND ?= valgrind
VALGRIND_FRAMES ?= 2
VALGRIND_WARM ?= yes
VALGRIND_REF ?= $(S)/fate/refs/nf_sparks_480x270_10b_5f.mkv
VALGRIND_DIST ?= $(S)/fate/pairs/nf_sparks_480x270_10b_nfdis/dis.mkv

check-valgrind: $(BUILD)/qgpu
	@if [ "$(SANITIZERS)" = yes ]; then echo "check-valgrind needs a build without --enable-sanitizers"; exit 1; fi
	VALGRIND='$(VALGRIND)' VALGRIND_WARM='$(VALGRIND_WARM)' $(S)/tests/check-valgrind.sh \
	    $(BUILD)/qgpu $(VALGRIND_REF) $(VALGRIND_DIST) $(VALGRIND_FRAMES) $(S)/tests/valgrind.supp

# ---- libFuzzer ----
# The harnesses need no device. The library is rebuilt with clang,
# ASan + UBSan and coverage (fuzzer-no-link) in $(BUILD)/fuzz.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES := model options y4m log
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_LIB_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_BINS := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_HARNESSES))

$(FUZZ_BUILD)/config.mak: $(S)/configure
	@mkdir -p $(FUZZ_BUILD)
	cd $(FUZZ_BUILD) && CC=$(FUZZ_CC) $(abspath $(S))/configure --enable-sanitizers --disable-tool

$(FUZZ_BUILD)/libqgpu.a: $(FUZZ_BUILD)/config.mak $(LIB_SRCS) $(KERNELS) \
                         $(wildcard $(S)/libqgpu/src/*.h $(S)/libqgpu/src/feature/*.h)
	$(MAKE) -C $(FUZZ_BUILD) libqgpu.a CFLAGS='$(FUZZ_LIB_CFLAGS)'

$(FUZZ_BUILD)/fuzz_%: $(S)/fuzz/fuzz_%.c $(S)/fuzz/fuzz_common.h $(FUZZ_BUILD)/libqgpu.a \
                      $(S)/bench/y4m.c $(S)/bench/y4m.h
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer -I$(S)/libqgpu/include -I$(FUZZ_BUILD)/gen -I$(S)/libqgpu/src \
	    -I$(S)/bench $(JSON_CFLAGS) -o $@ $< $(if $(filter fuzz_y4m,$(notdir $@)),$(S)/bench/y4m.c) \
	    $(FUZZ_BUILD)/libqgpu.a $(OPENCL_LIBS) $(JSON_LIBS) -lm -lpthread

fuzz-build: $(FUZZ_BINS)

# Each harness runs FUZZ_SECONDS on a copy of its corpus (new inputs go to
# $(FUZZ_BUILD)/corpus-<name>, the committed fuzz/corpus/ is only read),
# after fuzz-regress. A finding (crash, sanitizer report, leak, timeout over
# 10 s, RSS over 2 GiB) fails the target once every harness has run: the
# input is kept as $(FUZZ_BUILD)/findings/<name>-<kind>-<sha1>, and the
# target prints its path and the command that replays it. Once fixed, copy
# it to fuzz/corpus/<name>/regress-<what>: fuzz-regress replays it ever
# after. `make fuzz-ci` is the CI run: FUZZ_CI_SECONDS each.
FUZZ_CI_SECONDS ?= 40

fuzz: fuzz-regress
	@mkdir -p $(FUZZ_BUILD)/findings; failed=""; for h in $(FUZZ_HARNESSES); do \
	    mkdir -p $(FUZZ_BUILD)/corpus-$$h; \
	    echo "fuzz_$$h: $(FUZZ_SECONDS) s"; \
	    if ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) \
	        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	        -artifact_prefix=$(abspath $(FUZZ_BUILD))/findings/$$h- \
	        $(FUZZ_BUILD)/corpus-$$h $(S)/fuzz/corpus/$$h >$(FUZZ_BUILD)/fuzz_$$h.log 2>&1; then \
	        grep -E 'stat::number_of_executed_units|stat::new_units_added' $(FUZZ_BUILD)/fuzz_$$h.log | \
	            sed "s/^/    /"; \
	    else \
	        tail -n 60 $(FUZZ_BUILD)/fuzz_$$h.log; \
	        unit=$$(sed -n 's/.*Test unit written to \(.*\)$$/\1/p' $(FUZZ_BUILD)/fuzz_$$h.log | tail -n 1); \
	        echo "fuzz_$$h: FINDING, input kept as $${unit:-(none written: see $(FUZZ_BUILD)/fuzz_$$h.log)}"; \
	        [ -n "$$unit" ] && echo "fuzz_$$h: replay with: $(abspath $(FUZZ_BUILD))/fuzz_$$h $$unit"; \
	        failed="$$failed fuzz_$$h"; \
	    fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed"; exit 1; fi; echo "fuzz: no finding"

fuzz-ci: FUZZ_SECONDS = $(FUZZ_CI_SECONDS)
fuzz-ci: fuzz

# Every committed corpus file (earlier findings included) through its
# harness once: the regression test of the fuzzers' finds.
fuzz-regress: $(FUZZ_BINS)
	@set -e; mkdir -p $(FUZZ_BUILD)/findings; for h in $(FUZZ_HARNESSES); do \
	    ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz_$$h -runs=0 \
	        -artifact_prefix=$(abspath $(FUZZ_BUILD))/findings/regress-$$h- $(S)/fuzz/corpus/$$h \
	        >$(FUZZ_BUILD)/fuzz_$$h-regress.log 2>&1 || \
	        { tail -n 40 $(FUZZ_BUILD)/fuzz_$$h-regress.log; \
	          echo "fuzz_$$h: a fuzz/corpus/$$h input fails (log: $(FUZZ_BUILD)/fuzz_$$h-regress.log)"; \
	          exit 1; }; \
	    echo "fuzz_$$h: $$(ls $(S)/fuzz/corpus/$$h | wc -l) corpus inputs ok"; \
	done

# ---- soak ----
SOAK_FRAMES ?= 20000
SOAK_BIN := $(BUILD)/tests/soak

# (this file is included before TEST_SUPPORT_OBJS is set: name test_util.o)
$(SOAK_BIN): $(S)/tests/soak.c $(BUILD)/tests/test_util.o $(BUILD)/libqgpu.a
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/tests/test_util.o $(BUILD)/libqgpu.a \
	    $(TEST_LIBS)

soak: $(SOAK_BIN)
	QGPU_SOAK_FRAMES=$(SOAK_FRAMES) $(SOAK_BIN)

.PHONY: check-asan check-valgrind fuzz fuzz-ci fuzz-build fuzz-regress soak
