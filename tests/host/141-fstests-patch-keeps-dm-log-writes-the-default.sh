#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# patches/fstests applies to the fstests snapshot with no offset or fuzz,
# and common/dmlogwrites, patched, does for a user who sets nothing what
# it did before (the log-writes table, fstests' own replay-log, every
# call site of replay-log going through LOGWRITES_REPLAY), picks
# dm-flushlog's table and flushlog-replay-log from PATH with
# LOGWRITES_TARGET=flushlog, keeps a LOGWRITES_REPLAY the user set, keeps
# dm-flushlog's answer to a mark out of the test's output, and says
# "not run" for a target it does not know or a replay program that is
# not there.  Run with fstests' functions stubbed: no device is touched.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
_require_cmd patch
_require_cmd xz
_fstests_snapshot
snap=$FSTESTS_SNAPSHOT

tree=$TEST_TMP/fstests
mkdir -p "$tree"
if [ -d "$snap" ]; then
	cp -a "$snap/." "$tree/"
else
	tar -xJf "$snap" -C "$tree" --strip-components=1
fi
for p in "$FLUSHLOG_TOP"/patches/fstests/*.patch; do
	out=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch <"$p" 2>&1) ||
		_fail "${p##*/} does not apply: $out"
	! grep -Ei 'offset|fuzz|hunk' <<<"$out" || _fail "${p##*/} applies only with offset or fuzz"
	grep -q '^base-commit: [0-9a-f]\{40\}$' "$p" || _fail "${p##*/} names no base commit"
	grep -q '^Signed-off-by: ' "$p" || _fail "${p##*/} is not signed off"
done
echo "patches/fstests applies to $(basename "$snap") with no offset or fuzz"

# every replay-log call goes through LOGWRITES_REPLAY
# shellcheck disable=SC2016 # the patterns are fstests' text, $ and all
calls=$(grep -rn 'src/log-writes/replay-log' "$tree/common" "$tree/tests" |
	grep -v 'LOGWRITES_REPLAY=\$here/src/log-writes/replay-log$' |
	grep -v '"\$LOGWRITES_REPLAY" = "\$here/src/log-writes/replay-log"' |
	grep -v '^[^:]*:[0-9]*:#' || true)
[ -z "$calls" ] || _fail "replay-log still called by its path: $calls"
echo "every call of replay-log goes through LOGWRITES_REPLAY"

# probe ENV...: source the patched common/dmlogwrites with fstests'
# functions stubbed, in TREE, and print what it decided
cat >"$TEST_TMP/probe" <<'EOF'
#!/bin/bash
here=$1
shift
export "$@"
cd "$here"
_fail() { echo "fail: $*"; exit 1; }
_notrun() { echo "notrun: $*"; exit 0; }
_require_dm_target() { echo "dm target: $1"; }
_require_test_program() { echo "test program: $1"; }
_exclude_scratch_mount_option() { :; }
_dmsetup_create() { shift; echo "table: $2"; }
blockdev() { echo 2048; }
DMSETUP_PROG=$TEST_TMP_BIN/dmsetup
seqres=/dev/null
. ./common/dmlogwrites
echo "replay: $LOGWRITES_REPLAY"
LOGWRITES_DEV=/dev/null
# _require_log_writes less its block device test (no device here)
! type _require_log_writes_target >/dev/null 2>&1 || _require_log_writes_target
_log_writes_init /dev/zero
echo "mark output: [$(_log_writes_mark m1)]"
EOF
chmod +x "$TEST_TMP/probe"
mkdir -p "$TEST_TMP/bin" "$TEST_TMP/path"
# dm-flushlog's dmsetup prints the mark's entry number
printf '#!/bin/sh\necho 17\n' >"$TEST_TMP/bin/dmsetup"
printf '#!/bin/sh\nexit 0\n' >"$TEST_TMP/path/flushlog-replay-log"
chmod +x "$TEST_TMP/bin/dmsetup" "$TEST_TMP/path/flushlog-replay-log"
probe() {
	env -i PATH="$TEST_TMP/path:/usr/bin:/bin" TEST_TMP_BIN="$TEST_TMP/bin" \
		"$TEST_TMP/probe" "$tree" "$@" 2>&1
}
# _expect_probe WHAT OUT LINE...: each LINE is in OUT
_expect_probe() {
	local what=$1 out=$2 l
	shift 2
	for l in "$@"; do
		grep -qxF -- "$l" <<<"$out" || { echo "$out"; _fail "$what: no line '$l'"; }
	done
	echo "$what: ok"
}

_expect_probe "nothing set (dm-log-writes)" "$(probe LOGWRITES_X=)" \
	"replay: $tree/src/log-writes/replay-log" "dm target: log-writes" \
	"test program: log-writes/replay-log" "table: 0 2048 log-writes /dev/zero /dev/null" \
	"mark output: []"
_expect_probe "LOGWRITES_TARGET=flushlog" "$(probe LOGWRITES_TARGET=flushlog)" \
	"replay: $TEST_TMP/path/flushlog-replay-log" "dm target: flushlog" \
	"table: 0 2048 flushlog /dev/zero /dev/null" "mark output: []"
_expect_probe "a LOGWRITES_REPLAY of the user's" \
	"$(probe LOGWRITES_TARGET=flushlog LOGWRITES_REPLAY="$TEST_TMP/path/flushlog-replay-log")" \
	"replay: $TEST_TMP/path/flushlog-replay-log"
_expect_probe "an unknown target" "$(probe LOGWRITES_TARGET=log-writes2)" \
	"notrun: LOGWRITES_TARGET 'log-writes2' is neither log-writes nor flushlog"
out=$(probe LOGWRITES_TARGET=flushlog LOGWRITES_REPLAY=/nonexistent/replay)
grep -q "^notrun: LOGWRITES_REPLAY '/nonexistent/replay' is not an executable" <<<"$out" ||
	{ echo "$out"; _fail "a missing replay program is not a notrun"; }
echo "a missing replay program: not run"

# the unpatched tree, same probe: the default is what it was
orig=$TEST_TMP/orig
mkdir -p "$orig"
if [ -d "$snap" ]; then cp -a "$snap/." "$orig/"; else tar -xJf "$snap" -C "$orig" --strip-components=1; fi
out=$(env -i PATH="$TEST_TMP/path:/usr/bin:/bin" TEST_TMP_BIN="$TEST_TMP/bin" "$TEST_TMP/probe" "$orig" X=)
grep -qxF "table: 0 2048 log-writes /dev/zero /dev/null" <<<"$out" ||
	{ echo "$out"; _fail "the unpatched tree's table differs from the patched default's"; }
echo "the patched default's table is the unpatched tree's"
