# SPDX-License-Identifier: GPL-2.0
#
# flushlog: make builds the library and CLI; make test runs the suite;
# make bench measures.  Kernel trees and guest images live in $(CACHE),
# outside the repository.

CC	?= cc
CFLAGS	?= -O2 -g
PREFIX	?= /usr/local
DESTDIR	?=
BUILD	?= build
SAN	?=
CACHE	?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/flushlog
VERSION	:= 0.1

FL_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread \
	     -Idrivers/uapi -Iuserspace/lib \
	     -DFLUSHLOG_VERSION_STRING='"$(VERSION)"' $(SAN)

LIB_SRCS := $(wildcard userspace/lib/*.c)
CLI_SRCS := $(wildcard userspace/cli/*.c)
SHIP_SRCS := $(wildcard userspace/tools/*.c)
TOOL_SRCS := $(wildcard tests/tools/*.c)
UNIT_SRCS := $(wildcard tests/unit/*.c)
BENCH_SRCS := $(wildcard bench/*.c)
HEADERS := $(wildcard drivers/uapi/linux/*.h userspace/lib/*.h userspace/cli/*.h tests/unit/*.h)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
SHIP := $(SHIP_SRCS:userspace/tools/%.c=$(BUILD)/%)
TOOLS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/%)
UNITS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_PROGS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
MANS := $(wildcard userspace/man/*.1)

Q := $(if $(V),,@)

all: $(BUILD)/flushlog $(BUILD)/libflushlog.a $(SHIP)

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) -Iuserspace/cli -c $< -o $@

$(BUILD)/libflushlog.a: $(LIB_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/flushlog: $(CLI_OBJS) $(BUILD)/libflushlog.a
	@echo "  LD      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) -o $@ $^

$(BUILD)/%: userspace/tools/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) -o $@ $<

$(BUILD)/tests/%: tests/tools/%.c $(BUILD)/libflushlog.a $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libflushlog.a

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libflushlog.a $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libflushlog.a

$(BUILD)/bench/%: bench/%.c $(BUILD)/libflushlog.a $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libflushlog.a

test-progs: all $(TOOLS) $(UNITS)

# the bench's own tools (bench/*.c): its yardsticks
bench-progs: all $(BENCH_PROGS)

# libFuzzer harnesses (tests/fuzz/*.c), built by clang with ASan and UBSan
# against the library's sources into $(BUILD)/fuzz; the spec harness reads
# logs made from tests/data.  make fuzz SECONDS=N runs each for N seconds.
FUZZ_CC	?= clang
SECONDS	?= 60
FUZZ_CFLAGS := $(filter-out $(SAN),$(FL_CFLAGS)) -O1 -g -fno-omit-frame-pointer \
	       -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/*.c))
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_LOGS := $(BUILD)/fuzz/spec-basic.log $(BUILD)/fuzz/spec-concurrent.log \
	     $(BUILD)/fuzz/spec-lw-logwrites.log

$(BUILD)/fuzz/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_LIB_OBJS)
	@echo "  CC      $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer \
		-DFUZZ_LOG_DIR='"$(abspath $(BUILD)/fuzz)"' -o $@ $< $(FUZZ_LIB_OBJS)

$(BUILD)/fuzz/spec-lw-%.log: tests/data/%.fls $(BUILD)/tests/fl-mklog
	$(Q)$(BUILD)/tests/fl-mklog -f log-writes -o $@ $<

$(BUILD)/fuzz/spec-%.log: tests/data/%.fls $(BUILD)/tests/fl-mklog
	$(Q)$(BUILD)/tests/fl-mklog -o $@ $<

# built through a pattern rule, yet kept: the next link needs them
.SECONDARY: $(FUZZ_LIB_OBJS)

fuzz-progs: $(FUZZ) $(FUZZ_LOGS) $(BUILD)/tests/fl-mklog

fuzz: fuzz-progs
	$(Q)tests/fuzz/run --build $(BUILD) --seconds $(SECONDS)

# The suite: the debug kernel (built once into the cache), host tests with
# the normal build, again under ASan and UBSan, and the guest tests again on
# the debug kernel.  scripts/install-deps brings what a fresh Debian 12 lacks.
test:
	$(Q)scripts/install-deps test
	$(Q)$(MAKE) -s test-progs
	$(Q)$(MAKE) -s BUILD=$(BUILD)/asan CFLAGS="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		test-progs
	$(Q)tests/run --build $(BUILD) --asan-build $(BUILD)/asan --kernels "6.1 6.12 debug"

# KERNEL=6.1|6.12|debug|DIR|FILE: the guest kernel of make bench, crashtest
# and matrix (matrix: a list, one column group each; default "6.1 6.12").
KERNEL	?=
KERNEL_ENV := $(if $(KERNEL),FLUSHLOG_KERNEL="$(KERNEL)")

bench: all test-progs bench-progs
	$(Q)scripts/install-deps bench
	$(Q)$(KERNEL_ENV) bench/run --build $(BUILD) --out bench/results.md

# The main job: trace a filesystem workload in QEMU and check every point.
crashtest: all
	$(Q)$(KERNEL_ENV) scripts/crashtest --fs $(or $(FS),ext4)

# Every filesystem with its ordering on and off (scripts/matrix): the
# table docs/matrix.md.  FS="gfs2 f2fs" for some of them.
matrix: all
	$(Q)scripts/matrix $(if $(FS),--fs "$(FS)") $(if $(KERNEL),--kernel "$(KERNEL)")

# The kernel patch series, regenerated from drivers/ (scripts/make-patches).
patches:
	$(Q)scripts/install-deps kernel
	$(Q)scripts/make-patches

# The debug guest kernel (qemu/run-guest --kernel debug), into $(CACHE).
debug-kernel:
	$(Q)scripts/install-deps kernel
	$(Q)scripts/build-debug-kernel

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/include/linux $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/flushlog $(SHIP) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libflushlog.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 userspace/lib/flushlog.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 drivers/uapi/linux/dm-flushlog.h \
		$(DESTDIR)$(PREFIX)/include/linux/
	install -m 644 $(MANS) $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -rf $(BUILD)

.PHONY: all test test-progs bench-progs fuzz fuzz-progs bench crashtest matrix patches debug-kernel install clean
