#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A write that fails on the data device may still have changed some of
# its sectors: the log keeps it, flagged failed, and the crash states at
# the end of the log include the data device as it is.  The data device
# is a linear range then an error range over one disk.  A 64 KiB direct
# write across the boundary (sector 8000, inside one of the target's
# 1 MiB split units, so that the target sees one bio) fails (EIO) but
# writes its first 32 KiB; a write inside the error range fails and
# writes nothing.  The log must have both, with their ranges and
# "failed" in flushlog dump --json, and the disk (which was zeroes) must
# equal one of the states check builds at the end of the log (prefix,
# epoch, torn at every block): the oracle is the disk itself.  Before
# failed bios were logged, neither write had an entry and no state held
# the 32 KiB the disk got.  Needs the library to read FLUSHLOG_F_FAILED
# (dump's "failed", and the torn states of a failed write: branch
# i30-lib).
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1
_require_guest
_require_cmd jq

truncate -s 8M "$TEST_TMP/data.img" "$TEST_TMP/log.img"
head -c 8M /dev/urandom >"$TEST_TMP/pattern"
_run_guest "$FLUSHLOG_TOP/tests/guest/failed-writes.sh" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" -- "$TEST_TMP/pattern"
"$FLUSHLOG" dump "$TEST_TMP/log.img"
problems=()
"$FLUSHLOG" dump --json "$TEST_TMP/log.img" >"$TEST_TMP/dump.json" ||
	_fail "dump refused the log"
# entry SECTOR SECTORS FAILED: the log has that write, and says whether it failed
entry() {
	jq -se --argjson s "$1" --argjson n "$2" --argjson f "$3" \
		'any(.[]; .op == "write" and .sector == $s and .nr_sectors == $n and (.failed // false) == $f)' \
		"$TEST_TMP/dump.json" >/dev/null
}
entry 7936 128 true || problems+=("no failed entry for the write across the error range (sectors 7936+128)")
entry 9216 8 true || problems+=("no failed entry for the write inside the error range (sectors 9216+8)")
entry 0 8 false || problems+=("no entry for the write at sector 0")
entry 16 8 false || problems+=("no entry for the write at sector 16")

# the disk as the guest left it is one of the states at the end
cat >"$TEST_TMP/checker" <<EOS
#!/bin/sh
cmp -s "\$1" "$TEST_TMP/data.img" && echo "\$FLUSHLOG_STATE_NAME" >>"$TEST_TMP/matches"
exit 0
EOS
chmod +x "$TEST_TMP/checker"
: >"$TEST_TMP/matches"
rc=0
"$FLUSHLOG" check -q -p end --states prefix,epoch,torn -K 2 --max-torn 128 --json -w "$TEST_TMP" \
	"$TEST_TMP/log.img" -- "$TEST_TMP/checker" {} >"$TEST_TMP/report.json" || rc=$?
((rc == 0)) || problems+=("check of the end states exited $rc")
states=$(jq '.states | length' "$TEST_TMP/report.json" 2>/dev/null || echo none)
echo "$states end states; equal to the disk: $(tr '\n' ' ' <"$TEST_TMP/matches")"
if [ ! -s "$TEST_TMP/matches" ]; then
	if "$FLUSHLOG" replay -q -o "$TEST_TMP/end.img" "$TEST_TMP/log.img"; then
		cmp "$TEST_TMP/end.img" "$TEST_TMP/data.img" | sed 's/^/end state vs disk: /' || true
	fi
	problems+=("no state at the end of the log is the data disk")
fi
((${#problems[@]} == 0)) || _fail "$(printf '\n  %s' "${problems[@]}")"
echo "both failed writes are logged, flagged failed, and the disk is an end state"
