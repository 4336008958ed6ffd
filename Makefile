# SPDX-License-Identifier: GPL-2.0
#
# flushlog: make builds the library and CLI; make test runs the suite;
# make bench measures.  Kernel trees and guest images live in $(CACHE),
# outside the repository.

CC	?= cc
CFLAGS	?= -O2 -g
CPPFLAGS ?=
LDFLAGS	?=
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
LIBDIR	?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR	?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR	?=
BUILD	?= build
# -Werror in development and CI (make test sets it), never for users,
# whose newer compilers may warn about what ours does not
WERROR	?=
SAN	?=
CACHE	?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/flushlog
VERSION	:= 0.1

# libflushlog's version: flushlog.h says it, the soname follows its major
LIB_VERSION := $(shell sed -n 's/^\#define FL_LIB_VERSION_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*\([0-9]*\).*/\2/p' userspace/lib/flushlog.h | paste -sd.)
LIB_MAJOR := $(firstword $(subst ., ,$(LIB_VERSION)))
LIB_SONAME := libflushlog.so.$(LIB_MAJOR)

FL_CFLAGS := -std=gnu11 -Wall -Wextra $(if $(WERROR),-Werror) -D_GNU_SOURCE -pthread \
	     -Idrivers/uapi -Iuserspace/lib $(CPPFLAGS) \
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
MAN3 := $(wildcard userspace/man/*.3)
# every function of the API gets a man3 name that leads to libflushlog(3)
API_FUNCS = $(shell sed -n 's/^[[:space:]]*\(fl_[a-z0-9_]*\);$$/\1/p' userspace/lib/libflushlog.sym)

Q := $(if $(V),,@)

all: $(BUILD)/flushlog $(BUILD)/flushlog-replay-log $(BUILD)/libflushlog.a $(BUILD)/$(LIB_SONAME) $(SHIP)

# Every build first gets what it builds with (make, make crashtest, matrix,
# bench, test): when the compiler or a library is missing, as root on
# Debian scripts/install-deps installs them, and otherwise the build stops
# saying what to install.  Nothing runs apt when nothing is missing (an
# offline box, make install over a build).  An order-only prerequisite of
# every compile, so it runs once, first.
deps:
	$(Q)if ! command -v $(CC) >/dev/null || ! pkg-config --exists $(CLI_PKGS) 2>/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v dpkg-query >/dev/null; then \
			scripts/install-deps build; \
		else \
			echo "make: the build needs $(CC), pkg-config and the development files of $(CLI_PKGS)" \
			     "(Debian: scripts/install-deps build, as root)" >&2; \
			exit 1; \
		fi; \
	fi

# The library's objects serve the archive and the shared library alike,
# position independent; the shared one exports only what
# userspace/lib/libflushlog.sym names (the API of flushlog.h), as
# libdevmapper and libblkid do, its other symbols local.
$(LIB_OBJS): FL_CFLAGS += -fPIC

# The CLI writes JSON through json-c and XML through libxml2.  Asked of
# pkg-config when a recipe runs, not when make reads this file: on a fresh
# machine they are installed in between (deps).
CLI_PKGS := json-c libxml-2.0
$(CLI_OBJS): PKG_CFLAGS = $(shell pkg-config --cflags $(CLI_PKGS))

$(BUILD)/%.o: %.c $(HEADERS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) -Iuserspace/cli -c $< -o $@

$(BUILD)/libflushlog.a: $(LIB_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/$(LIB_SONAME): $(LIB_OBJS) userspace/lib/libflushlog.sym
	@echo "  LD      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=userspace/lib/libflushlog.sym -Wl,-z,defs \
		-o $@ $(LIB_OBJS)
	$(Q)ln -sf $(LIB_SONAME) $(BUILD)/libflushlog.so

# flushlog-format(5) is docs/log-format.md, the one text of the format,
# made a man page by go-md2man, its tables made to fit 80 columns
$(BUILD)/man/flushlog-format.5: docs/log-format.md userspace/man/md2man-tables.awk
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q){ printf '%% FLUSHLOG-FORMAT 5 "" "flushlog $(VERSION)" "File Formats"\n\n# NAME\n\nflushlog-format - the dm-flushlog log format\n\n'; \
	      sed '1d' $<; } | go-md2man >$@.roff && \
		awk -f userspace/man/md2man-tables.awk $@.roff >$@.tmp && mv $@.tmp $@ && rm -f $@.roff

# Without go-md2man (a build dependency, not a user's) the page is left
# out, and install says so.
FORMAT_MAN := $(if $(shell command -v go-md2man 2>/dev/null),$(BUILD)/man/flushlog-format.5)
man: $(FORMAT_MAN)

# The CLI links the archive: one file to install, and it uses nothing but
# flushlog.h, which test 046 holds the exported symbols to.
$(BUILD)/flushlog: $(CLI_OBJS) $(BUILD)/libflushlog.a
	@echo "  LD      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs $(CLI_PKGS))

# Called so, flushlog is 'flushlog replay-log', fstests' replay-log:
# fstests' LOGWRITES_REPLAY (patches/fstests) points here.
$(BUILD)/flushlog-replay-log: $(BUILD)/flushlog
	$(Q)ln -sf flushlog $@

# The shipped tools write their files by the CLI's output rule and exit
# by its table (cli.h).
$(BUILD)/%: userspace/tools/%.c $(BUILD)/userspace/cli/output.o $(HEADERS) | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(FL_CFLAGS) $(CFLAGS) -Iuserspace/cli $(LDFLAGS) -o $@ $< \
		$(BUILD)/userspace/cli/output.o

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
	     $(BUILD)/fuzz/spec-failed.log $(BUILD)/fuzz/spec-resize.log \
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
# the debug kernel.  scripts/install-deps brings what a fresh Debian 12
# lacks.  TESTS="NNN ..." runs only the tests whose names hold one of them.
test:
	$(Q)scripts/install-deps test
	$(Q)$(MAKE) -s WERROR=1 test-progs
	$(Q)$(MAKE) -s WERROR=1 BUILD=$(BUILD)/asan CFLAGS="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		test-progs
	$(Q)tests/run --build $(BUILD) --asan-build $(BUILD)/asan --kernels "6.1 6.12 debug" $(TESTS)

# The host tests alone: no root, no QEMU, a few minutes.  As root it
# installs what they use; as anyone else a test that lacks a tool says
# "skipped: why".
check-host:
	$(Q)! command -v dpkg-query >/dev/null || scripts/install-deps host || [ "$$(id -u)" != 0 ]
	$(Q)$(MAKE) -s WERROR=1 test-progs
	$(Q)tests/run --build $(BUILD) --host-only $(TESTS)

# KERNEL=6.1|6.12|debug|DIR|FILE: the guest kernel of make bench, crashtest
# and matrix (matrix: a list, one column group each; default "6.1 6.12").
KERNEL	?=
KERNEL_ENV := $(if $(KERNEL),FLUSHLOG_KERNEL="$(KERNEL)")

bench: all test-progs bench-progs
	$(Q)scripts/install-deps bench
	$(Q)$(KERNEL_ENV) bench/run --build $(BUILD) --out bench/results.md

# The main job: trace a filesystem workload in QEMU and check every point;
# OPTS="--ops 500 --states epoch ..." for crashtest's other options.
crashtest: all
	$(Q)$(KERNEL_ENV) scripts/crashtest --fs $(or $(FS),ext4) $(OPTS)

# fstests' own crash tests (generic/455 457 482 ..., btrfs/...) run on
# dm-log-writes and on dm-flushlog, side by side (scripts/fstests, the
# table docs/fstests.md): FSTESTS=DIR, an fstests checkout (built in the
# cache, never written); FS="ext4 xfs", TESTS="generic/482", OPTS="...".
empty :=
space := $(empty) $(empty)
comma := ,
fstests: all
	$(Q)$(KERNEL_ENV) scripts/fstests $(if $(FSTESTS),--fstests "$(FSTESTS)") $(if $(FS),--fs "$(subst $(space),$(comma),$(strip $(FS)))") $(OPTS) $(TESTS)

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

# Installs the CLI, libflushlog (shared, with its soname links, and the
# archive), its headers (the format's under a folder of the project's own,
# not include/linux, which is linux-libc-dev's), its pkg-config file, the
# man pages and the CLI's bash completion.  Every directory is a variable:
# PREFIX, BINDIR, LIBDIR, INCLUDEDIR, MANDIR, PKGCONFIGDIR, BASHCOMPDIR,
# under DESTDIR.
INSTALLED_LIB := $(LIBDIR)/libflushlog.so.$(LIB_VERSION) $(LIBDIR)/$(LIB_SONAME) \
		 $(LIBDIR)/libflushlog.so $(LIBDIR)/libflushlog.a
INSTALLED := $(BINDIR)/flushlog $(BINDIR)/flushlog-replay-log $(SHIP:$(BUILD)/%=$(BINDIR)/%) $(INSTALLED_LIB) \
	     $(INCLUDEDIR)/flushlog.h $(INCLUDEDIR)/flushlog/linux/dm-flushlog.h \
	     $(PKGCONFIGDIR)/libflushlog.pc $(MANS:userspace/man/%=$(MANDIR)/man1/%) \
	     $(MAN3:userspace/man/%=$(MANDIR)/man3/%) $(API_FUNCS:%=$(MANDIR)/man3/%.3) \
	     $(MANDIR)/man5/flushlog-format.5 $(BASHCOMPDIR)/flushlog

# The dynamic linker finds a new library in a system folder only once
# ldconfig has rebuilt its cache: a package runs it when it is installed
# (Debian's libc trigger), and make install does, as root, into the
# running system (no DESTDIR).  Into a DESTDIR, a package's tree, the
# package's own installation will; as a user, there is no cache to write.
LDCONFIG ?= ldconfig
LDCONFIG_STEP = $(if $(DESTDIR),,[ "$$(id -u)" != 0 ] || $(LDCONFIG))

install: all man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/flushlog/linux $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(BUILD)/flushlog $(SHIP) $(DESTDIR)$(BINDIR)/
	ln -sf flushlog $(DESTDIR)$(BINDIR)/flushlog-replay-log
	install -m 755 $(BUILD)/$(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libflushlog.so.$(LIB_VERSION)
	ln -sf libflushlog.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libflushlog.so
	install -m 644 $(BUILD)/libflushlog.a $(DESTDIR)$(LIBDIR)/
	$(LDCONFIG_STEP)
	install -m 644 userspace/lib/flushlog.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 drivers/uapi/linux/dm-flushlog.h $(DESTDIR)$(INCLUDEDIR)/flushlog/linux/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(LIB_VERSION)|; /^#/d' userspace/lib/libflushlog.pc.in \
		>$(DESTDIR)$(PKGCONFIGDIR)/libflushlog.pc
	install -m 644 $(MANS) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	for f in $(API_FUNCS); do \
		echo '.so man3/libflushlog.3' >$(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; \
	done
	$(if $(FORMAT_MAN),install -m 644 $(FORMAT_MAN) $(DESTDIR)$(MANDIR)/man5/,\
		@echo "install: no go-md2man: flushlog-format(5) not made, not installed")
	install -D -m 644 userspace/completion/flushlog $(DESTDIR)$(BASHCOMPDIR)/flushlog

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rmdir $(DESTDIR)$(INCLUDEDIR)/flushlog/linux $(DESTDIR)$(INCLUDEDIR)/flushlog 2>/dev/null || true

clean:
	rm -rf $(BUILD)

.PHONY: all deps test check-host test-progs bench-progs fuzz fuzz-progs bench crashtest fstests matrix patches debug-kernel man install uninstall clean
