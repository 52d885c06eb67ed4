# slab: GNU Makefile. `make help` lists the targets.

CC      ?= cc
AR      ?= ar
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
DESTDIR ?=

# BUILD is the object folder: build/ normally, build/asan for the sanitizer run.
BUILD   ?= build

WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -Ilib -pthread
LDLIBS  = -larchive -lturbojpeg -lm -pthread
ALL_LDFLAGS = $(LDFLAGS) $(EXTRA_LDFLAGS)

SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

ifeq ($(V),1)
Q =
else
Q = @
endif

LIB_SRCS  := $(sort $(wildcard lib/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB       := $(BUILD)/libslab.a
TOOL_SRCS := $(sort $(wildcard tools/*.c))
TOOLS     := $(TOOL_SRCS:tools/%.c=$(BUILD)/bin/%)
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNITS     := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)
SCRIPT_SRCS := $(sort $(wildcard scripts/*.c))
SCRIPT_BINS := $(SCRIPT_SRCS:scripts/%.c=$(BUILD)/bin/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
MANPAGES  := $(sort $(wildcard man/*.1 man/*.5))
# The allocation-failure shim of tests/oom.bats (an LD_PRELOAD library). Not in sanitizer
# builds: their allocator cannot be interposed, and the test skips there.
FAILMALLOC := $(if $(findstring -fsanitize,$(CFLAGS) $(EXTRA_CFLAGS)),,$(BUILD)/lib/failmalloc.so)

.PHONY: all help deps check test asan asan-check demo bench fuzz install uninstall clean
# Keep the objects of tools and tests: make would delete them as intermediates and rebuild
# them every time.
.SECONDARY:

## all: build the library, the tools and the test programs (default)
all: $(TOOLS) $(UNITS) $(SCRIPT_BINS) $(FAILMALLOC)

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## deps: install missing Debian packages (scripts/install-deps)
deps:
	$(Q)scripts/install-deps

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/tools/%.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Generators for tests and benchmarks (scripts/*.c), built beside the tools.
$(SCRIPT_BINS): $(BUILD)/bin/%: $(BUILD)/scripts/%.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/unit/%: $(BUILD)/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/lib/failmalloc.so: tests/fault/failmalloc.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -fPIC -shared -o $@ $< -ldl

## test: run the bats suite against $(BUILD) (no dependency install, no sanitizers)
test: all
	$(Q)SLAB_BUILD=$(abspath $(BUILD)) bats $(BATS_FLAGS) tests

## check: install missing packages, build with -Werror, run every test, then again under ASan+UBSan
check: deps
	$(Q)$(MAKE) --no-print-directory EXTRA_CFLAGS=-Werror test
	$(Q)$(MAKE) --no-print-directory asan

## asan: build with AddressSanitizer + UndefinedBehaviorSanitizer into build/asan, run the suite
asan asan-check:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan EXTRA_CFLAGS="-Werror $(SANITIZE)" \
		EXTRA_LDFLAGS="$(SANITIZE)" CFLAGS="-O1 -g" test

## demo: install missing packages, build, make a small WebDataset of JPEGs, pack and inspect it
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) scripts/demo

## bench: benchmarks (scripts/bench/), printing ratios against baselines run alongside
bench:
	$(Q)scripts/install-deps --bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(abspath $(BUILD)) scripts/bench/run

## fuzz: build the libFuzzer targets with clang and run each for FUZZ_SECONDS (default 60)
FUZZ_SECONDS ?= 60
FUZZ_FLAGS  ?=
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang CFLAGS="-O1 -g" \
		EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SANITIZE)" build/fuzz/libslab.a
	$(Q)for src in $(FUZZ_SRCS); do \
		name=$$(basename $$src .c); \
		echo "  FUZZ    $$name ($(FUZZ_SECONDS) s)"; \
		clang -std=c11 -D_GNU_SOURCE $(WARN) -O1 -g -Ilib -fsanitize=fuzzer $(FUZZ_SANITIZE) \
			-o build/fuzz/$$name $$src build/fuzz/libslab.a $(LDLIBS) || exit 1; \
		mkdir -p build/fuzz/corpus-$$name build/fuzz/artifacts-$$name; \
		build/fuzz/$$name -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=build/fuzz/artifacts-$$name/ $(FUZZ_FLAGS) \
			build/fuzz/corpus-$$name tests/fuzz/seeds/$$name || exit 1; \
	done

## install: install the tools and man pages under DESTDIR/PREFIX
install: $(TOOLS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)
	install -m 644 $(filter %.1,$(MANPAGES)) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(filter %.5,$(MANPAGES)) $(DESTDIR)$(MANDIR)/man5

## uninstall: remove what install put there
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(TOOLS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MANPAGES))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(filter %.5,$(MANPAGES))))

## clean: remove build/
clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TOOL_SRCS:%.c=$(BUILD)/%.d) $(UNIT_SRCS:%.c=$(BUILD)/%.d) \
	$(SCRIPT_SRCS:%.c=$(BUILD)/%.d)
