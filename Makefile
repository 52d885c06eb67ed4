# slab: GNU Makefile. `make help` lists the targets.
#
# The library is built in layers, one folder each; a layer sees the headers of the layers
# below it and its own, never those above (the include paths are per layer, so a violation
# does not compile):
#
#   lib/slab.h    the public API: the one header every layer sees, and the one installed
#   lib/common/   errors, I/O, CRC-32C                              sees common
#   lib/dataset/  the format, tar in and out, JPEG, plans, plan     sees common, dataset
#                 following, the page cache
#   lib/machine/  sysfs and procfs under a root, topology, memory   sees common, machine
#                 benchmarks, perf counters
#   lib/fe/       the tools' front end: options, messages, JSON,    sees every layer
#                 tables, SVG, reports
#   tools/ scripts/ tests/                                          see every layer
#
# common/, dataset/ and machine/ never print and never exit: they return 0 or a negative
# SLAB_ERR_* and keep the detail on their context (`make layers`, part of `make test`,
# checks their objects call nothing that prints or exits). libslab.a and libslab.so hold
# common/ and dataset/ and export only what slab.h declares; machine/ and fe/ make
# libslab-tools.a, which only the tools link.

CC      ?= cc
AR      ?= ar
PKG_CONFIG ?= pkg-config
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
DESTDIR ?=
# Run after install and uninstall into the system itself (no DESTDIR), so that the run-time
# linker finds libslab.so.0 in LIBDIR (/usr/local/lib is searched through its cache only);
# LDCONFIG= skips it. Its failure (not root) is not install's.
LDCONFIG ?= ldconfig

# BUILD is the object folder: build/ normally, build/asan for the sanitizer run.
BUILD   ?= build
# Compiles at once in make check and make asan (the suites themselves run one at a time).
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# The bats files run side by side (GNU parallel, which install-deps installs), each file's
# tests in order; BATS_JOBS= runs them one after the other. BATS_FLAGS: more options (.ci/run
# asks for --tap).
BATS_JOBS  ?= --jobs $(JOBS) --no-parallelize-within-files
BATS_FLAGS ?=
# The files in the order they start: the longest first (each takes 20 s or more in one pass
# or the other), so that the last to finish are short ones and no job sits idle at the end;
# then every other file. BATS_TESTS=tests/x.bats runs one.
BATS_FIRST = deb remote oom servers video restart webp prefetch python png bombs planspeed
BATS_TESTS ?= $(BATS_FIRST:%=tests/%.bats) \
	$(filter-out $(BATS_FIRST:%=tests/%.bats),$(sort $(wildcard tests/*.bats)))

# The library's version, from slab.h.
version_part = $(shell sed -n 's/^\#define SLAB_VERSION_$(1) *\([0-9]*\).*/\1/p' lib/slab.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION_MINOR := $(call version_part,MINOR)
VERSION_PATCH := $(call version_part,PATCH)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
CFLAGS  ?= -O2 -g
BASE_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -pthread
# FFmpeg's libraries (the video pipeline, lib/dataset/video.c): their headers at build time,
# through pkg-config (Debian puts them under the multiarch include folder, which the compiler
# searches anyway); at run time video.c loads the libraries itself (dlopen) when a video is
# first read, so nothing links them but the tests that make videos (tests/unit/videogen.h).
FFMPEG_PKGS   = libavformat libavcodec libswscale libavutil
FFMPEG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(FFMPEG_PKGS) 2>/dev/null)
FFMPEG_LIBS   := $(shell $(PKG_CONFIG) --libs $(FFMPEG_PKGS) 2>/dev/null)
LDLIBS  = -larchive -lz -lturbojpeg -ljpeg -lspng -ldeflate -lwebp -lcurl -lnettle -lm -pthread
ALL_LDFLAGS = $(LDFLAGS) $(EXTRA_LDFLAGS)

# Include paths per layer (see the top of this file).
INC_common  = -Ilib -Ilib/common
INC_dataset = $(INC_common) -Ilib/dataset
INC_machine = $(INC_common) -Ilib/machine
INC_fe      = $(INC_common) -Ilib/dataset -Ilib/machine -Ilib/fe
INC_all     = $(INC_fe)
# The layer of a source file under lib/, or "all" outside it.
layer_of = $(if $(filter lib/%,$(1)),$(word 2,$(subst /, ,$(1))),all)
# Library objects go into libslab.so too: position independent, symbols hidden unless slab.h
# marks them SLAB_API.
LIB_CFLAGS = -fPIC -fvisibility=hidden

# Per-file extras. The image resize's row loops are worth vectorising even with a scalar
# tail, which GCC's -O2 very cheap cost model declines (clang, as make fuzz uses, has no such
# option and vectorises at -O2 anyway).
CC_IS_CLANG := $(shell $(CC) --version 2>/dev/null | grep -q clang && echo 1)
OBJ_CFLAGS_lib/dataset/image.c = $(if $(CC_IS_CLANG),,-ftree-vectorize -fvect-cost-model=dynamic)
# The same for PNG's unfiltering and pixel widening (image_png.c).
OBJ_CFLAGS_lib/dataset/image_png.c = $(OBJ_CFLAGS_lib/dataset/image.c)
OBJ_CFLAGS_lib/dataset/video.c = $(FFMPEG_CFLAGS)

SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

ifeq ($(V),1)
Q =
else
Q = @
endif

layer_srcs = $(sort $(wildcard lib/$(1)/*.c))
SLAB_SRCS  := $(call layer_srcs,common) $(call layer_srcs,dataset)
TLIB_SRCS  := $(call layer_srcs,machine) $(call layer_srcs,fe)
LIB_SRCS   := $(SLAB_SRCS) $(TLIB_SRCS)
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
SLAB_OBJS  := $(SLAB_SRCS:%.c=$(BUILD)/%.o)
TLIB_OBJS  := $(TLIB_SRCS:%.c=$(BUILD)/%.o)
# libslab.a / libslab.so: the public library. libslab-tools.a: machine/ and fe/, for the tools.
LIB       := $(BUILD)/libslab.a
TLIB      := $(BUILD)/libslab-tools.a
SONAME    := libslab.so.$(VERSION_MAJOR)
SHLIB     := $(BUILD)/libslab.so.$(VERSION)
TOOL_SRCS := $(sort $(wildcard tools/*.c))
TOOLS     := $(TOOL_SRCS:tools/%.c=$(BUILD)/bin/%)
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNITS     := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%) $(BUILD)/unit/test_image-scalar
SCRIPT_SRCS := $(sort $(wildcard scripts/*.c))
SCRIPT_BINS := $(SCRIPT_SRCS:scripts/%.c=$(BUILD)/bin/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
MANPAGES  := $(sort $(wildcard man/*.1 man/*.3 man/*.5))
# The allocation-failure shim of tests/oom.bats and the truncate-while-opening one of
# tests/hardening.bats (LD_PRELOAD libraries). Not in sanitizer builds: their runtime must
# come first, and the tests skip there.
SHIMS := $(if $(findstring -fsanitize,$(CFLAGS) $(EXTRA_CFLAGS)),,$(BUILD)/lib/failmalloc.so \
	$(BUILD)/lib/truncmap.so)

.PHONY: all help deps check test layers asan asan-check tsan demo bench fuzz install uninstall \
	clean
# Keep the objects of tools and tests: make would delete them as intermediates and rebuild
# them every time.
.SECONDARY:

## all: build the library (static and shared), the tools and the test programs (default)
all: $(TOOLS) $(UNITS) $(SCRIPT_BINS) $(SHIMS) $(BUILD)/libslab.so completions

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## deps: install missing Debian packages (scripts/install-deps)
deps:
	$(Q)scripts/install-deps

# Before the first compile: are the libraries' headers there? One line saying what is
# missing and what installs it, rather than a compiler error.
$(BUILD)/.deps-ok: scripts/check-deps
	$(Q)PKG_CONFIG=$(PKG_CONFIG) scripts/check-deps
	@mkdir -p $(dir $@)
	@touch $@

$(BUILD)/lib/%.o: lib/%.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) $(LIB_CFLAGS) $(OBJ_CFLAGS_$<) $(INC_$(call layer_of,$<)) -MMD -MP -c -o $@ $<

$(BUILD)/%.o: %.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASE_CFLAGS) $(INC_all) -MMD -MP -c -o $@ $<

$(LIB): $(SLAB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(TLIB): $(TLIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# -Bsymbolic-functions: the library's calls to its own exported functions stay its own, so
# that another libslab loaded into the process globally (another version: a wheel's copy beside
# the system's) cannot take them over (and they skip the PLT).
$(SHLIB): $(SLAB_OBJS) lib/libslab.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script,lib/libslab.map -Wl,--no-undefined -Wl,-Bsymbolic-functions \
		-o $@ $(SLAB_OBJS) $(LDLIBS)

$(BUILD)/libslab.so: $(SHLIB)
	$(Q)ln -sf $(notdir $(SHLIB)) $(BUILD)/$(SONAME) && ln -sf $(SONAME) $@

$(BUILD)/bin/%: $(BUILD)/tools/%.o $(TLIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(TLIB) $(LIB) $(LDLIBS)

# Generators for tests and benchmarks (scripts/*.c), built beside the tools.
$(SCRIPT_BINS): $(BUILD)/bin/%: $(BUILD)/scripts/%.o $(TLIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(TLIB) $(LIB) $(LDLIBS)

$(BUILD)/unit/%: $(BUILD)/tests/unit/%.o $(TLIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(TLIB) $(LIB) $(LDLIBS)

# test_video makes its videos with libavcodec's encoder (videogen.h).
$(BUILD)/unit/test_video: LDLIBS += $(FFMPEG_LIBS)

# The image pipeline's portable path (what builds without SSE2, as on ARM servers), tested too:
# test_image linked with image.c built -DSLAB_NO_SSE2 ahead of the library's own copy.
$(BUILD)/lib/dataset/image-scalar.o: lib/dataset/image.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (SLAB_NO_SSE2)")
	$(Q)$(CC) $(BASE_CFLAGS) $(LIB_CFLAGS) $(OBJ_CFLAGS_$<) $(INC_dataset) -DSLAB_NO_SSE2 -MMD -MP \
		-c -o $@ $<

$(BUILD)/unit/test_image-scalar: $(BUILD)/tests/unit/test_image.o $(BUILD)/lib/dataset/image-scalar.o \
		$(TLIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(TLIB) $(LIB) $(LDLIBS)

$(BUILD)/lib/%.so: tests/fault/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(ALL_LDFLAGS) -fPIC -shared -o $@ $< -ldl

## layers: check that common/, dataset/ and machine/ call nothing that prints or exits, and
## that libslab.so exports only slab_ symbols
layers: $(LIB_OBJS) $(BUILD)/libslab.so
	$(Q)scripts/check-layers $(BUILD)

## test: run the bats suite against $(BUILD) (no dependency install, no sanitizers);
## BATS_TESTS=tests/png.bats runs those files only
test: all layers
	$(Q)SLAB_BUILD=$(abspath $(BUILD)) bats $(BATS_JOBS) $(BATS_FLAGS) $(BATS_TESTS)

## check: install missing packages, build with -Werror, run every test, then again under ASan+UBSan,
## and the threaded unit tests under ThreadSanitizer
check: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) EXTRA_CFLAGS=-Werror all layers
	$(Q)$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror test
	$(Q)$(MAKE) --no-print-directory asan
	$(Q)$(MAKE) --no-print-directory tsan

## asan: build with AddressSanitizer + UndefinedBehaviorSanitizer into build/asan, run the suite
ASAN_VARS = BUILD=build/asan EXTRA_CFLAGS="-Werror $(SANITIZE)" EXTRA_LDFLAGS="$(SANITIZE)" \
	CFLAGS="-O1 -g"
asan asan-check:
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(ASAN_VARS) all layers
	$(Q)$(MAKE) --no-print-directory $(ASAN_VARS) test

## tsan: build with ThreadSanitizer into build/tsan and run the threaded unit tests (loader,
## plan following) under it (the last step of check)
TSAN = -fsanitize=thread -fno-omit-frame-pointer
TSAN_VARS = BUILD=build/tsan EXTRA_CFLAGS="-Werror $(TSAN)" EXTRA_LDFLAGS="$(TSAN)" CFLAGS="-O1 -g"
tsan:
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(TSAN_VARS) build/tsan/unit/test_loader \
		build/tsan/unit/test_follow
	@echo "  TSAN    test_loader, test_follow"
	$(Q)TSAN_OPTIONS=halt_on_error=1 build/tsan/unit/test_loader
	$(Q)TSAN_OPTIONS=halt_on_error=1 build/tsan/unit/test_follow

## demo: install missing packages, build, make a small WebDataset of JPEGs, pack and inspect it
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) scripts/demo

## bench: benchmarks (scripts/bench/), printing ratios against baselines run alongside
bench:
	$(Q)scripts/install-deps --bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(abspath $(BUILD)) scripts/bench/run

## fuzz: build the libFuzzer targets with clang and run each for FUZZ_SECONDS (default 60);
## FUZZ_TARGETS="fuzz_video fuzz_png" runs those only
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
FUZZ_FLAGS  ?=
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang CFLAGS="-O1 -g" \
		EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SANITIZE)" build/fuzz/libslab.a \
		build/fuzz/libslab-tools.a
	$(Q)for src in $(if $(FUZZ_TARGETS),$(FUZZ_TARGETS:%=tests/fuzz/%.c),$(FUZZ_SRCS)); do \
		name=$$(basename $$src .c); \
		echo "  FUZZ    $$name ($(FUZZ_SECONDS) s)"; \
		clang -std=c11 -D_GNU_SOURCE $(WARN) -O1 -g $(INC_all) -fsanitize=fuzzer $(FUZZ_SANITIZE) \
			-o build/fuzz/$$name $$src build/fuzz/libslab-tools.a build/fuzz/libslab.a $(LDLIBS) \
			$(FFMPEG_LIBS) || exit 1; \
		mkdir -p build/fuzz/corpus-$$name build/fuzz/artifacts-$$name; \
		build/fuzz/$$name -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=build/fuzz/artifacts-$$name/ $(FUZZ_FLAGS) \
			build/fuzz/corpus-$$name tests/fuzz/seeds/$$name || exit 1; \
	done

# Installed, the tools are slab-pack, slab-inspect ... beside the front, slab (as git-* beside
# git): short names such as pack or inspect are anyone's. The build tree keeps the short names,
# and so do the man pages' sources: install rewrites the installed copies (a tool's page's .TH
# and NAME; in every page but slab(1), `.B pack`, `.BR pack:` and `.B "pack: ...`, the command
# and its messages, and in examples (.EX to .EE) the name as a word wherever a command or a
# message can start: after a blank, `(`, `|`, `;`, `&` or a quote, and before a colon, the
# line's end or one blank and an argument (in a loop, after `$ `, `&& `, `$(`, `VAR=value `,
# xargs, parallel or cron's fields alike; `"tool": "pack 0.1.0"` and a table's column stay);
# in every page, `pack (1)`, the page).
INST_TOOLS := $(filter-out slab,$(notdir $(TOOLS)))
TOOL_PAGES := $(filter $(INST_TOOLS:%=man/%.1),$(MANPAGES))
OTHER_PAGES := $(filter-out $(TOOL_PAGES),$(MANPAGES))
# The pages as installed, under MANDIR.
INST_PAGES := $(TOOL_PAGES:man/%.1=man1/slab-%.1) \
	$(foreach p,$(OTHER_PAGES),man$(subst .,,$(suffix $(p)))/$(notdir $(p)))
# A tool's name as a page may write it (its hyphen plain or \-), and its installed name in roff.
man_re   = $(subst -,\\\?-,$(1))
man_slab = slab\\-$(subst -,\\-,$(1))
open_paren := (
close_paren := )
MAN_NAME_SED = -e 's/^\.TH /.TH SLAB\\-/' -e '/^\.SH NAME/{n;s/^/slab\\-/;}'
MAN_CMD_SED  = $(foreach t,$(INST_TOOLS),\
	-e 's/^\(\.BR\? "\?\)$(call man_re,$(t))\([ :]\|$$\)/\1$(call man_slab,$(t))\2/' \
	-e '/^\.EX/,/^\.EE/s/\(^\|[ $(open_paren)|;&]\|\\$(open_paren)aq\)$(call man_re,$(t))\(:\| [^ ]\|$$\)/\1$(call man_slab,$(t))\2/g')
MAN_XREF_SED = $(foreach t,$(INST_TOOLS),\
	-e 's/\(^\|[ $(open_paren)]\)$(call man_re,$(t))\( \?$(open_paren)1$(close_paren)\)/\1$(call man_slab,$(t))\2/g')
# slab.pc gives libdir and includedir from ${prefix} when they are under PREFIX (as zstd's and
# libarchive's do), so that pkg-config --define-variable=prefix=DIR finds a staged tree.
pc_dir = $(if $(filter $(PREFIX),$(1)),$${prefix},$(if $(filter $(PREFIX)/%,$(1)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(1)),$(1)))

# The places install and uninstall write to: none may have a space or a character the shell,
# sed or make reads as its own (mk/places.mk). The parts (install-completions,
# install-python) check them all too, so that nothing is done when one has.
INSTALL_PLACES = DESTDIR PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR BASHCOMPDIR PYTHON_SITE

# ldconfig after a change to the system's libraries: not into a DESTDIR (a package build's
# staging tree: the package's own trigger runs it where it is installed).
run_ldconfig = $(if $(DESTDIR),,$(if $(LDCONFIG),$(LDCONFIG) 2>/dev/null || true))

## install: install the tools (as slab-pack ...), the front slab, slab-capture-sysfs, the man pages, slab.h,
## libslab.so*, libslab.a and slab.pc under DESTDIR/PREFIX (LIBDIR, INCLUDEDIR, BINDIR, MANDIR
## override the places), then ldconfig when there is no DESTDIR (LDCONFIG= skips it)
install: $(TOOLS) $(LIB) $(BUILD)/libslab.so install-completions install-python
	$(call safe_places,$(INSTALL_PLACES))
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(BUILD)/bin/slab $(DESTDIR)$(BINDIR)
	install -m 755 scripts/capture-sysfs $(DESTDIR)$(BINDIR)/slab-capture-sysfs
	for t in $(INST_TOOLS); do \
		install -m 755 $(BUILD)/bin/$$t $(DESTDIR)$(BINDIR)/slab-$$t || exit 1; \
	done
	install -m 644 lib/slab.h $(DESTDIR)$(INCLUDEDIR)
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libslab.so
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
		lib/slab.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/slab.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/slab.pc
	@echo "  MAN     $(INST_PAGES)"
	$(Q)for t in $(TOOL_PAGES:man/%.1=%); do \
		sed $(MAN_NAME_SED) $(MAN_CMD_SED) $(MAN_XREF_SED) man/$$t.1 \
			> $(DESTDIR)$(MANDIR)/man1/slab-$$t.1 || exit 1; \
	done
	$(Q)sed $(MAN_XREF_SED) man/slab.1 > $(DESTDIR)$(MANDIR)/man1/slab.1
	$(Q)for p in $(filter-out man/slab.1,$(OTHER_PAGES)); do \
		sed $(MAN_CMD_SED) $(MAN_XREF_SED) $$p > $(DESTDIR)$(MANDIR)/man$${p##*.}/$${p##*/} || \
			exit 1; \
	done
	chmod 644 $(addprefix $(DESTDIR)$(MANDIR)/,$(INST_PAGES))
	$(run_ldconfig)

## uninstall: remove what install put there
uninstall: uninstall-completions uninstall-python
	$(call safe_places,$(INSTALL_PLACES))
	rm -f $(DESTDIR)$(BINDIR)/slab $(addprefix $(DESTDIR)$(BINDIR)/slab-,$(INST_TOOLS)) \
		$(DESTDIR)$(BINDIR)/slab-capture-sysfs
	rm -f $(DESTDIR)$(INCLUDEDIR)/slab.h $(DESTDIR)$(LIBDIR)/libslab.a \
		$(DESTDIR)$(LIBDIR)/libslab.so $(DESTDIR)$(LIBDIR)/$(SONAME) \
		$(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/pkgconfig/slab.pc
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/,$(INST_PAGES))
	$(run_ldconfig)

# Bash completions, generated from each tool's --help (mk/completion.mk).
include mk/completion.mk
# The Python package, where the system python3 imports it (mk/python.mk).
include mk/python.mk
# Debian packages (mk/deb.mk): make deb.
include mk/deb.mk

## clean: remove build/
clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TOOL_SRCS:%.c=$(BUILD)/%.d) $(UNIT_SRCS:%.c=$(BUILD)/%.d) \
	$(SCRIPT_SRCS:%.c=$(BUILD)/%.d) $(BUILD)/lib/dataset/image-scalar.d
