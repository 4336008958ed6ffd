#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# libflushlog is a library other tools can link: make install puts the
# shared library (soname libflushlog.so.1, exporting exactly the functions
# flushlog.h declares), its headers (the format's under include/flushlog,
# not include/linux), a pkg-config file and the man pages under
# DESTDIR/PREFIX; a C program built with $(pkg-config --cflags --libs
# libflushlog) against that tree links and reads a log, and so does Python
# through ctypes; fl_log_open_fd reads the same log from a descriptor;
# make uninstall takes every file away again.  Users' builds do not use
# -Werror; make test's do.
# asan: no
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd pkg-config
_require_cmd readelf

root=$TEST_TMP/root
make -s -C "$FLUSHLOG_TOP" BUILD="$FLUSHLOG_BUILD" DESTDIR="$root" PREFIX=/usr \
	install >"$TEST_TMP/install.out" 2>&1 ||
	_fail "make install failed: $(cat "$TEST_TMP/install.out")"
for f in usr/bin/flushlog usr/lib/libflushlog.so.1 usr/lib/libflushlog.so \
	 usr/lib/libflushlog.a usr/include/flushlog.h \
	 usr/include/flushlog/linux/dm-flushlog.h usr/lib/pkgconfig/libflushlog.pc \
	 usr/share/man/man1/flushlog.1 usr/share/man/man3/libflushlog.3 \
	 usr/share/man/man5/flushlog-format.5; do
	[ -e "$root/$f" ] || _fail "make install did not install $f"
done
[ ! -e "$root/usr/include/linux" ] || _fail "make install wrote into include/linux"
readelf -d "$root/usr/lib/libflushlog.so.1" | grep -q 'SONAME.*\[libflushlog\.so\.1\]' ||
	_fail "no soname libflushlog.so.1: $(readelf -d "$root/usr/lib/libflushlog.so.1" | grep SONAME)"
echo "installed: $(cd "$root" && find . -type f -o -type l | sort | tr '\n' ' ')"

# exported: the functions flushlog.h declares, nothing more or less
"${CC:-cc}" -E -P -I"$root/usr/include/flushlog" "$root/usr/include/flushlog.h" |
	grep -oE '\bfl_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u >"$TEST_TMP/declared"
nm -D --defined-only "$root/usr/lib/libflushlog.so.1" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$TEST_TMP/exported"
diff "$TEST_TMP/declared" "$TEST_TMP/exported" ||
	_fail "exported symbols (>) differ from flushlog.h's functions (<)"
echo "exports the $(wc -l <"$TEST_TMP/declared") functions of flushlog.h and nothing else"

# man pages: libflushlog(3) documents every function, each has a man3
# name of its own; flushlog-format(5) is made from docs/log-format.md
while read -r f; do
	grep -q "^\.BI \"[^\"]*\b$f(" "$root/usr/share/man/man3/libflushlog.3" ||
		_fail "libflushlog(3) does not document $f"
	[ "$(cat "$root/usr/share/man/man3/$f.3" 2>/dev/null)" = ".so man3/libflushlog.3" ] ||
		_fail "no man3 page $f.3 leading to libflushlog(3)"
done <"$TEST_TMP/declared"
for page in man3/libflushlog.3 man5/flushlog-format.5; do
	warnings=$(groff -k -man -z -W break "$root/usr/share/man/$page" 2>&1) ||
		_fail "groff cannot format $page: $warnings"
	[ -z "$warnings" ] || _fail "groff warns about $page: $warnings"
done
man -l "$root/usr/share/man/man5/flushlog-format.5" 2>/dev/null | grep -q 'FLUSHLOG_SF_DATA_XXH64' ||
	_fail "flushlog-format(5) lacks what docs/log-format.md says (FLUSHLOG_SF_DATA_XXH64)"
echo "man pages: every function in libflushlog(3), flushlog-format(5) from docs/log-format.md"

# a program of someone else's, built the way its README would say
cat >"$TEST_TMP/reader.c" <<'EOF'
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <flushlog.h>

/*
 * The ABI's rules for growing (flushlog.h): what a program built against
 * an older or a newer flushlog.h meets.  Prints what it counted.
 */
static int growth(struct fl_log *log)
{
	struct { struct fl_state_opts o; uint64_t later; } newer = {
		.o = { .models = FL_STATES_EPOCH | FL_STATES_TORN },
	};
	/* a size no flushlog.h ever had, say sizeof of a pointer */
	size_t too_small = offsetof(struct fl_state_opts, models);
	struct fl_states *states, *states_zero_tail;
	struct fl_points *points, *flushes;
	struct fl_error err = { 0 };
	const struct fl_entry *e;
	uint64_t n, candidates;
	char path[1024];
	int ret;

	for (n = 0; (e = fl_log_entry(log, n)); n++)
		if (e->seq >= fl_log_info(log)->nr_entries)
			return 3;
	if (fl_log_points(log, &points, &err) ||
	    fl_points_select(points, FL_POINT_BIT(FL_POINT_FLUSH), 0, UINT64_MAX,
			     &flushes, &err) ||
	    fl_log_states(log, points, &newer.o, sizeof(newer.o), &states,
			  &candidates, &err) ||
	    fl_log_states(log, points, &newer.o, sizeof(newer),
			  &states_zero_tail, &candidates, &err)) {
		fprintf(stderr, "reader: %s\n", err.msg);
		return 4;
	}
	printf("entries %" PRIu64 " points %zu flushes %zu states %zu %zu\n", n,
	       fl_points_count(points), fl_points_count(flushes),
	       fl_states_count(states), fl_states_count(states_zero_tail));
	if (fl_points_get(points, fl_points_count(points)) ||
	    fl_states_get(states, fl_states_count(states)))
		return 5;
	/* a newer program's field, or flag, this library does not know: refused */
	newer.later = 1;
	ret = fl_log_states(log, points, &newer.o, sizeof(newer), &states,
			    &candidates, &err);
	if (ret != -E2BIG || err.source != FL_ERR_ARG || candidates)
		return 6;
	printf("unknown options: %s\n", err.msg);
	newer.later = 0;
	newer.o.flags = 1U << 31;
	if (fl_log_states(log, points, &newer.o, sizeof(newer), &states,
			  &candidates, &err) != -E2BIG)
		return 6;
	if (fl_log_states(log, points, &newer.o, too_small, &states,
			  &candidates, &err) != -EINVAL)
		return 6;
	fl_states_free(states_zero_tail);
	fl_points_free(flushes);
	fl_points_free(points);
	/* a message longer than msg: cut at a character, ending in "..." */
	strcpy(path, "/nonexistent/");
	for (int i = 0; i < 300; i++)
		strcat(path, "\xc3\xa9");
	if (fl_log_open(path, 0, &log, &err) >= 0)
		return 7;
	printf("%s\n", err.msg);
	return 0;
}

int main(int argc, char **argv)
{
	struct fl_error err = { 0 };
	struct fl_log *log, *log_fd;
	int fd, ret;

	if (argc != 2 || fl_log_open(argv[1], 0, &log, &err)) {
		fprintf(stderr, "reader: %s\n", err.msg);
		return 1;
	}
	fd = open(argv[1], O_RDONLY);
	if (fl_log_open_fd(fd, 0, &log_fd, &err)) {
		fprintf(stderr, "reader: from fd: %s\n", err.msg);
		return 1;
	}
	close(fd);	/* the library holds its own */
	printf("%s %d %" PRIu64 " %" PRIu64 "\n", fl_version(), FL_LIB_VERSION,
	       fl_log_info(log)->nr_entries, fl_log_info(log_fd)->nr_entries);
	ret = growth(log);
	if (ret)
		return ret;
	fl_log_close(log);
	fl_log_close(log_fd);
	if (fl_log_open("/nonexistent", 0, &log, &err) != -ENOENT ||
	    err.source != FL_ERR_IO)
		return 2;
	return 0;
}
EOF
export PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
flags=$(pkg-config --cflags --libs libflushlog) || _fail "pkg-config does not know libflushlog"
# shellcheck disable=SC2086 # the flags are words
"${CC:-cc}" -Wall -Werror -o "$TEST_TMP/reader" "$TEST_TMP/reader.c" $flags ||
	_fail "a program built with pkg-config's flags ($flags) does not compile or link"
ldd "$TEST_TMP/reader" 2>/dev/null | grep -q 'libflushlog.so.1' ||
	LD_LIBRARY_PATH=$root/usr/lib ldd "$TEST_TMP/reader" | grep -q 'libflushlog.so.1' ||
	_fail "the program is not linked against libflushlog.so.1"
printf '%s\n' 'device 2048' 'write 0 8' 'flush' 'mark m' 'write 8 8 fua' >"$TEST_TMP/s.fls"
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/s.fls"
got=$(LD_LIBRARY_PATH=$root/usr/lib "$TEST_TMP/reader" "$TEST_TMP/log") ||
	_fail "the program failed (exit $?): $got"
version=$(sed -n 's/^#define FL_LIB_VERSION_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*\([0-9]*\).*/\2/p' \
	"$root/usr/include/flushlog.h" | paste -sd.)
first=$(sed -n 1p <<<"$got")
[ "$first" = "$version $(echo "$version" | awk -F. '{ print $1 * 10000 + $2 * 100 + $3 }') 4 4" ] ||
	_fail "the program printed '$first', expected version $version and 4 entries twice"
echo "a pkg-config build links libflushlog.so.1 and reads the log by path and by fd: $first"

# growing the ABI: the counts the CLI gives for the same log and options
nr_points=$("$FLUSHLOG" points "$TEST_TMP/log" | tail -n +2 | wc -l)
nr_flushes=$("$FLUSHLOG" points "$TEST_TMP/log" | awk '$2 == "flush"' | wc -l)
nr_states=$("$FLUSHLOG" check --states epoch,torn -K 1 --max-torn 1 -j 1 "$TEST_TMP/log" -- true 2>&1 |
	sed -n 's/^\([0-9]*\) states at .*/\1/p')
expected="entries 4 points $nr_points flushes $nr_flushes states $nr_states $nr_states"
[ "$(sed -n 2p <<<"$got")" = "$expected" ] ||
	_fail "through the API: '$(sed -n 2p <<<"$got")', expected '$expected'"
sed -n 3p <<<"$got" | grep -q "does not know" ||
	_fail "options with an unknown field set were not refused as such: $(sed -n 3p <<<"$got")"
long=$(sed -n 4p <<<"$got")
if [ "${#long}" -lt 200 ] || [[ $long != *... ]]; then
	_fail "a long message is not cut with '...': '$long'"
fi
printf '%s' "$long" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 ||
	_fail "a long message was cut inside a UTF-8 character: $(printf '%s' "$long" | tail -c 8 | od -An -tx1)"
echo "grows without breaking: entries one at a time, lists by index, options with"
echo "  their size (a newer program's unknown field or flag refused, a size below the"
echo "  first refused), a long message cut at a character: $(sed -n 2p <<<"$got")"

# Python through ctypes, as a test harness would
if command -v python3 >/dev/null; then
	py=$(python3 -c 'import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.fl_version.restype = ctypes.c_char_p
print(lib.fl_version().decode())' "$root/usr/lib/libflushlog.so.1") ||
		_fail "ctypes cannot load libflushlog.so.1"
	[ "$py" = "$version" ] || _fail "ctypes: fl_version() said '$py', expected $version"
	echo "ctypes loads it: fl_version() = $py"
fi

make -s -C "$FLUSHLOG_TOP" BUILD="$FLUSHLOG_BUILD" DESTDIR="$root" PREFIX=/usr \
	uninstall >"$TEST_TMP/uninstall.out" 2>&1 ||
	_fail "make uninstall failed: $(cat "$TEST_TMP/uninstall.out")"
left=$(cd "$root" && find . \( -type f -o -type l \) | sort)
[ -z "$left" ] || _fail "make uninstall left: $left"
echo "make uninstall removes every file"

# -Werror: not in a user's build, in make test's
make -n -B -C "$FLUSHLOG_TOP" BUILD="$TEST_TMP/b" V=1 all >"$TEST_TMP/plain" 2>/dev/null
grep -q -- '-Wall' "$TEST_TMP/plain" || _fail "make -n shows no compiler command"
grep -q -- '-Werror' "$TEST_TMP/plain" && _fail "a plain make builds with -Werror"
make -n -B -C "$FLUSHLOG_TOP" BUILD="$TEST_TMP/b" V=1 WERROR=1 all >"$TEST_TMP/dev" 2>/dev/null
grep -q -- '-Werror' "$TEST_TMP/dev" || _fail "make WERROR=1 does not build with -Werror"
grep -q 'WERROR=1' "$FLUSHLOG_TOP/Makefile" || _fail "make test does not ask for -Werror"
echo "-Werror only when asked (make test, CI)"
