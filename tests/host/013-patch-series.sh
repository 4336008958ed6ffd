#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel patch series is what scripts/make-patches makes from drivers/
# today, applies to a fresh unpack of Debian's linux-source-6.1 without
# offset or fuzz, passes checkpatch.pl --strict with no error or warning,
# and the patched tree builds drivers/md/dm-flushlog.o with W=1 -Werror.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
. "$FLUSHLOG_TOP/scripts/lib.sh"

# The CHECKs that stay, each for a reason: a uapi header cannot use BIT()
# or static_assert() (both kernel-internal), so it spells _Static_assert.
ALLOWED_CHECKS='Avoid CamelCase: <_Static_assert>'

dpkg-query -W -f='${Status}' linux-source-6.1 2>/dev/null | grep -q 'ok installed' ||
	_skip "linux-source-6.1 is not installed (scripts/install-deps kernel)"
for c in git patch perl bison flex bc; do _require_cmd $c; done
[ -f /usr/include/libelf.h ] || _skip "libelf-dev is not installed (scripts/install-deps kernel)"

# 1. up to date with drivers/
"$FLUSHLOG_TOP/scripts/make-patches" --out "$TEST_TMP/patches" >/dev/null
diff -ru "$FLUSHLOG_TOP/patches" "$TEST_TMP/patches" >"$TEST_TMP/stale" ||
	{ head -n 40 "$TEST_TMP/stale"; _fail "patches/ differs from what drivers/ makes: run make patches"; }
echo "patches/ is what make-patches makes"

# 2. applies exactly to a fresh copy of the unpacked source
src=$(fl_linux_source)
tree=$TEST_TMP/linux
cp -al "$src" "$tree"
while read -r p; do
	out=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch <"$FLUSHLOG_TOP/patches/$p" 2>&1) ||
		_fail "$p does not apply: $out"
	if grep -Ei 'offset|fuzz|hunk' <<<"$out"; then
		_fail "$p applies only with offset or fuzz"
	fi
done <"$FLUSHLOG_TOP/patches/series"
echo "the series applies with no offset or fuzz"

# 3. checkpatch --strict
(cd "$tree" && ./scripts/checkpatch.pl --strict --no-summary --show-types \
	"$FLUSHLOG_TOP"/patches/0*.patch) >"$TEST_TMP/checkpatch" 2>&1 || true
grep -E '^(ERROR|WARNING):' "$TEST_TMP/checkpatch" &&
	{ cat "$TEST_TMP/checkpatch"; _fail "checkpatch.pl --strict reports errors or warnings"; }
grep -E '^CHECK:' "$TEST_TMP/checkpatch" | grep -vF "$ALLOWED_CHECKS" &&
	{ cat "$TEST_TMP/checkpatch"; _fail "checkpatch.pl --strict reports a CHECK that is not justified"; }
echo "checkpatch.pl --strict: no errors, no warnings; CHECKs: $(grep -c '^CHECK:' "$TEST_TMP/checkpatch" || true), all justified"

# 4. an in-tree build with every warning an error, in the debug kernel's
# configuration (DM_FLUSHLOG=y, KASAN, lockdep), in a build folder of our own
"$FLUSHLOG_TOP/scripts/build-debug-kernel" --configure "$tree" "$TEST_TMP/obj"
make -s -C "$tree" O="$TEST_TMP/obj" -j "$(nproc)" W=1 KCFLAGS=-Werror \
	drivers/md/dm-flushlog.o >"$TEST_TMP/build" 2>&1 ||
	{ tail -n 40 "$TEST_TMP/build"; _fail "drivers/md/dm-flushlog.o does not build in-tree with W=1 -Werror"; }
grep -i 'warning' "$TEST_TMP/build" && _fail "warnings in the in-tree build"
echo "drivers/md/dm-flushlog.o builds in-tree with W=1 -Werror"
