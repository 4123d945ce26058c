# libvmaf-qgpu: libvmaf 3.x's API and ABI (soname libvmaf.so.3) served by
# libqgpu (doc/libvmaf-abi.md). Included by the top-level Makefile.
#
#   make libvmaf            $(BUILD)/libvmaf-qgpu/: libvmaf.so.3.0.0 (+ soname links),
#                           static/libvmaf.a, pkgconfig/libvmaf.pc (uninstalled: the
#                           build's files) and pkgconfig-static/ (the .a, for static
#                           programs such as FFmpeg's)
#   make install-libvmaf    LIBDIR/libvmaf.so.3*, INCLUDEDIR/libvmaf/*.h,
#                           LIBDIR/pkgconfig/libvmaf.pc (PREFIX, LIBDIR, DESTDIR as
#                           for make install)
#   make uninstall-libvmaf

VMAF_ABI_VERSION := 3.0.0
VMAF_ABI_DIR := $(BUILD)/libvmaf-qgpu
VMAF_ABI_SHLIB := libvmaf.so.$(VMAF_ABI_VERSION)
VMAF_ABI_SONAME := libvmaf.so.3
VMAF_ABI_HEADERS := $(sort $(wildcard $(S)/libvmaf-abi/include/libvmaf/*.h))
VMAF_ABI_SRCS := $(sort $(wildcard $(S)/libvmaf-abi/src/*.c))
VMAF_ABI_OBJS := $(patsubst $(S)/%.c,$(BUILD)/%.o,$(VMAF_ABI_SRCS))
VMAF_ABI_CFLAGS := $(LIB_CFLAGS) -I$(S)/libvmaf-abi/include \
                   -DVMAF_QGPU_VERSION='"$(VMAF_ABI_VERSION)-qgpu-$(VERSION)"'
VMAF_ABI_PRIVATE_LIBS := $(OPENCL_LIBS) $(JSON_LIBS) -lm -lpthread

$(BUILD)/libvmaf-abi/%.o: $(S)/libvmaf-abi/%.c config.mak | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(VMAF_ABI_CFLAGS) -c $< -o $@

$(VMAF_ABI_DIR)/$(VMAF_ABI_SHLIB): $(VMAF_ABI_OBJS) $(LIB_OBJS) $(S)/libvmaf-abi/libvmaf.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(VMAF_ABI_SONAME) -Wl,--version-script=$(S)/libvmaf-abi/libvmaf.map \
	    $(LDFLAGS) -o $@ $(VMAF_ABI_OBJS) $(LIB_OBJS) $(LIB_LIBS)
	ln -sf $(VMAF_ABI_SHLIB) $(VMAF_ABI_DIR)/$(VMAF_ABI_SONAME)
	ln -sf $(VMAF_ABI_SONAME) $(VMAF_ABI_DIR)/libvmaf.so

$(VMAF_ABI_DIR)/static/libvmaf.a: $(VMAF_ABI_OBJS) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# vmaf_pc DIR LIBDIR PRIVATE_LIBS: a libvmaf.pc in DIR
vmaf_pc = mkdir -p $(1) && sed -e 's|@PREFIX@|$(abspath $(VMAF_ABI_DIR))|' -e 's|@LIBDIR@|$(2)|' \
    -e 's|@INCLUDEDIR@|$(abspath $(S)/libvmaf-abi/include)|' -e 's|@VMAF_VERSION@|$(VMAF_ABI_VERSION)|' \
    -e 's|@QGPU_VERSION@|$(VERSION)|' -e 's|@PRIVATE_LIBS@|$(3)|' $(S)/libvmaf-abi/libvmaf.pc.in > $(1)/libvmaf.pc

$(VMAF_ABI_DIR)/pkgconfig/libvmaf.pc: $(S)/libvmaf-abi/libvmaf.pc.in $(S)/libvmaf-abi/abi.mak
	$(call vmaf_pc,$(dir $@),$(abspath $(VMAF_ABI_DIR)),$(VMAF_ABI_PRIVATE_LIBS))

# Static programs: json-c from its .a when there is one (as the static tools).
$(VMAF_ABI_DIR)/pkgconfig-static/libvmaf.pc: $(S)/libvmaf-abi/libvmaf.pc.in $(S)/libvmaf-abi/abi.mak
	$(call vmaf_pc,$(dir $@),$(abspath $(VMAF_ABI_DIR)/static),$(OPENCL_LIBS) \
	    $(if $(wildcard $(shell pkg-config --variable=libdir json-c 2>/dev/null)/libjson-c.a),-l:libjson-c.a,$(JSON_LIBS)) \
	    -lm -lpthread)

libvmaf: $(VMAF_ABI_DIR)/$(VMAF_ABI_SHLIB) $(VMAF_ABI_DIR)/static/libvmaf.a \
         $(VMAF_ABI_DIR)/pkgconfig/libvmaf.pc $(VMAF_ABI_DIR)/pkgconfig-static/libvmaf.pc

# The test program is built against the libvmaf headers alone and linked
# with the shared library, as a libvmaf program is.
$(BUILD)/tests/test_libvmaf_abi.o: $(S)/tests/test_libvmaf_abi.c config.mak | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEP_CFLAGS) -I$(S)/libvmaf-abi/include -I$(S)/bench -I$(S)/libqgpu/include \
	    -I$(BUILD)/gen -c $< -o $@

$(BUILD)/tests/test_libvmaf_abi: $(BUILD)/tests/test_libvmaf_abi.o $(BUILD)/bench/y4m.o \
                                 $(VMAF_ABI_DIR)/$(VMAF_ABI_SHLIB)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/bench/y4m.o -L$(VMAF_ABI_DIR) -lvmaf -lm \
	    -Wl,-rpath,$(abspath $(VMAF_ABI_DIR))

# libvmaf.so.3's exports against the libvmaf headers (tests/check_exports.sh).
$(BUILD)/tests/check_libvmaf_exports: $(S)/tests/check_exports.sh $(VMAF_ABI_DIR)/$(VMAF_ABI_SHLIB)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nQGPU_EXPORT_PREFIX=vmaf_ exec %s %s %s\n' "$(abspath $<)" \
	    "$(abspath $(VMAF_ABI_DIR)/$(VMAF_ABI_SHLIB))" "$(abspath $(VMAF_ABI_HEADERS))" > $@
	chmod +x $@

install-libvmaf: libvmaf
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/libvmaf
	install -m 755 $(VMAF_ABI_DIR)/$(VMAF_ABI_SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(VMAF_ABI_SHLIB) $(DESTDIR)$(LIBDIR)/$(VMAF_ABI_SONAME)
	ln -sf $(VMAF_ABI_SONAME) $(DESTDIR)$(LIBDIR)/libvmaf.so
	install -m 644 $(VMAF_ABI_HEADERS) $(DESTDIR)$(INCLUDEDIR)/libvmaf/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VMAF_VERSION@|$(VMAF_ABI_VERSION)|' -e 's|@QGPU_VERSION@|$(VERSION)|' \
	    -e 's|@PRIVATE_LIBS@|$(VMAF_ABI_PRIVATE_LIBS)|' $(S)/libvmaf-abi/libvmaf.pc.in \
	    > $(DESTDIR)$(LIBDIR)/pkgconfig/libvmaf.pc

uninstall-libvmaf:
	rm -f $(DESTDIR)$(LIBDIR)/$(VMAF_ABI_SHLIB) $(DESTDIR)$(LIBDIR)/$(VMAF_ABI_SONAME) \
	      $(DESTDIR)$(LIBDIR)/libvmaf.so $(DESTDIR)$(LIBDIR)/pkgconfig/libvmaf.pc \
	      $(addprefix $(DESTDIR)$(INCLUDEDIR)/libvmaf/,$(notdir $(VMAF_ABI_HEADERS)))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/libvmaf

.PHONY: libvmaf install-libvmaf uninstall-libvmaf
