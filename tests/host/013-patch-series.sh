#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# For each of Debian's kernel lines (6.1, 6.12): the patch series in
# patches/LINE is what scripts/make-patches makes from drivers/ today,
# with a cover letter ([PATCH 0/N]) for the N patches its series lists,
# applies to a fresh unpack of linux-source-LINE without offset or fuzz,
# passes that tree's checkpatch.pl --strict with no error or warning, holds
# no trace of the out-of-tree compat header, and the patched tree builds
# drivers/md/dm-flushlog.o with W=1 -Werror in the debug kernel's
# configuration.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
. "$FLUSHLOG_TOP/scripts/lib.sh"

# The CHECKs that stay, each for a reason: a uapi header cannot use BIT()
# or static_assert() (both kernel-internal), so it spells _Static_assert.
ALLOWED_CHECKS='Avoid CamelCase: <_Static_assert>'

for c in git patch perl bison flex bc unifdef; do _require_cmd $c; done
[ -f /usr/include/libelf.h ] || _skip "libelf-dev is not installed (scripts/install-deps kernel)"
for line in $FL_KERNEL_LINES; do
	dpkg-query -W -f='${Status}' "linux-source-$line" 2>/dev/null | grep -q 'ok installed' ||
		_skip "linux-source-$line is not installed (scripts/install-deps kernel)"
done

# 1. up to date with drivers/
"$FLUSHLOG_TOP/scripts/make-patches" --line 6.1 --out "$TEST_TMP/patches/6.1" >/dev/null
"$FLUSHLOG_TOP/scripts/make-patches" --line 6.12 --out "$TEST_TMP/patches/6.12" >/dev/null
# (patches/fstests is fstests' patch, made by hand: not drivers/')
diff -ru --exclude=fstests "$FLUSHLOG_TOP/patches" "$TEST_TMP/patches" >"$TEST_TMP/stale" ||
	{ head -n 40 "$TEST_TMP/stale"; _fail "patches/ differs from what drivers/ makes: run make patches"; }
echo "patches/ is what make-patches makes"

for line in $FL_KERNEL_LINES; do
	series=$FLUSHLOG_TOP/patches/$line
	# 1b. a cover letter for the patches the series file lists, and only those
	n=$(wc -l <"$series/series")
	cover=$series/0000-cover-letter.patch
	[ -f "$cover" ] || _fail "$line: no 0000-cover-letter.patch"
	grep -q "^Subject: \[PATCH 0/$n\] " "$cover" ||
		_fail "$line: the cover letter's subject is not [PATCH 0/$n] ($(grep '^Subject:' "$cover"))"
	! grep -n 'cover-letter' "$series/series" || _fail "$line: series lists the cover letter"
	[ "$(find "$series" -name '0*.patch' | wc -l)" = $((n + 1)) ] ||
		_fail "$line: patches in $series that series does not list"
	echo "$line: a cover letter for the $n patches of series"
	# 2. applies exactly to a fresh copy of the unpacked source
	src=$(fl_linux_source "$line")
	tree=$TEST_TMP/linux-$line
	cp -al "$src" "$tree"
	while read -r p; do
		out=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch <"$series/$p" 2>&1) ||
			_fail "$line/$p does not apply: $out"
		if grep -Ei 'offset|fuzz|hunk' <<<"$out"; then
			_fail "$line/$p applies only with offset or fuzz"
		fi
	done <"$series/series"
	echo "$line: the series applies to linux-source-$line with no offset or fuzz"
	! grep -n 'FLUSHLOG_HAVE_\|FLUSHLOG_OUT_OF_TREE\|compat' "$tree/drivers/md/dm-flushlog.c" ||
		_fail "$line: the in-tree target still tests the out-of-tree compat header"

	# 3. checkpatch --strict, that tree's own
	(cd "$tree" && ./scripts/checkpatch.pl --strict --no-summary --show-types \
		"$series"/0*.patch) >"$TEST_TMP/checkpatch" 2>&1 || true
	grep -E '^(ERROR|WARNING):' "$TEST_TMP/checkpatch" &&
		{ cat "$TEST_TMP/checkpatch"; _fail "$line: checkpatch.pl --strict reports errors or warnings"; }
	grep -E '^CHECK:' "$TEST_TMP/checkpatch" | grep -vF "$ALLOWED_CHECKS" &&
		{ cat "$TEST_TMP/checkpatch"; _fail "$line: checkpatch.pl --strict reports a CHECK that is not justified"; }
	echo "$line: checkpatch.pl --strict: no errors, no warnings; CHECKs: $(grep -c '^CHECK:' "$TEST_TMP/checkpatch" || true), all justified"

	# 4. an in-tree build with every warning an error, in the debug
	# kernel's configuration (DM_FLUSHLOG=y, KASAN, lockdep), in a build
	# folder of our own
	"$FLUSHLOG_TOP/scripts/build-kernel" --tree "$tree" --base tinyconfig \
		--config "$FLUSHLOG_TOP/qemu/debug.config" --fs "ext4 xfs btrfs" \
		--configure-into "$TEST_TMP/obj-$line"
	make -s -C "$tree" O="$TEST_TMP/obj-$line" -j "$(nproc)" W=1 KCFLAGS=-Werror \
		drivers/md/dm-flushlog.o >"$TEST_TMP/build" 2>&1 ||
		{ tail -n 40 "$TEST_TMP/build"; _fail "$line: drivers/md/dm-flushlog.o does not build in-tree with W=1 -Werror"; }
	grep -i 'warning' "$TEST_TMP/build" && _fail "$line: warnings in the in-tree build"
	echo "$line: drivers/md/dm-flushlog.o builds in-tree with W=1 -Werror"
	rm -rf "$tree" "$TEST_TMP/obj-$line"
done
