#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make install into the running system (no DESTDIR) as root runs
# ldconfig once, after the library is in place, so that the dynamic
# linker finds libflushlog.so.1 at once, as a package's installation
# would; into a DESTDIR (a package's tree), or as a user, it does not.
# ldconfig and id are stand-ins on PATH, and the prefix is a folder of
# the test's: nothing of the host's changes.
# asan: no
. "$FLUSHLOG_TOP/tests/common.sh"

bin=$TEST_TMP/bin
mkdir -p "$bin"
cat >"$bin/ldconfig" <<'EOS'
#!/bin/sh
# the stand-in: says when it ran, and whether the library was there
echo "ldconfig $* (library installed: $([ -e "$LIB" ] && echo yes || echo no))" >>"$CALLS"
EOS
cat >"$bin/id" <<'EOS'
#!/bin/sh
if [ "$1" = -u ]; then
	echo "$FAKE_UID"
	exit 0
fi
exec /usr/bin/id "$@"
EOS
chmod +x "$bin/ldconfig" "$bin/id"

# make_install UID WHERE [make variables]: make install as user UID; the
# stand-in's calls in $TEST_TMP/WHERE.calls
make_install() {
	local uid=$1 where=$2
	shift 2
	: >"$TEST_TMP/$where.calls"
	env -u LDCONFIG -u DESTDIR PATH="$bin:$PATH" FAKE_UID="$uid" \
		CALLS="$TEST_TMP/$where.calls" LIB="$TEST_TMP/$where/lib/libflushlog.so.1" \
		make -s -C "$FLUSHLOG_TOP" BUILD="$FLUSHLOG_BUILD" "$@" install \
		>"$TEST_TMP/$where.out" 2>&1 ||
		_fail "make install $* failed: $(cat "$TEST_TMP/$where.out")"
}

make_install 0 system PREFIX="$TEST_TMP/system"
[ -e "$TEST_TMP/system/lib/libflushlog.so.1" ] || _fail "libflushlog.so.1 not installed"
[ "$(cat "$TEST_TMP/system.calls")" = "ldconfig  (library installed: yes)" ] ||
	_fail "as root with no DESTDIR, ldconfig ran as: '$(cat "$TEST_TMP/system.calls")', expected once, after the library"
echo "as root into the system: ldconfig, once, after the library"

make_install 0 staged PREFIX=/usr DESTDIR="$TEST_TMP/staged"
[ -e "$TEST_TMP/staged/usr/lib/libflushlog.so.1" ] || _fail "nothing installed into DESTDIR"
[ ! -s "$TEST_TMP/staged.calls" ] ||
	_fail "into a DESTDIR, ldconfig ran: $(cat "$TEST_TMP/staged.calls")"
echo "into a DESTDIR: no ldconfig"

make_install 1000 user PREFIX="$TEST_TMP/user"
[ ! -s "$TEST_TMP/user.calls" ] || _fail "as a user, ldconfig ran: $(cat "$TEST_TMP/user.calls")"
echo "as a user: no ldconfig"
