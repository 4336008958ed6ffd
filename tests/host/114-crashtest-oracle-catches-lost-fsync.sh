#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A broken writer the fsync oracle must catch: ext4 mounted with
# barrier=0 issues no cache flush and no FUA, so nothing it writes after
# mkfs is ever promised to the media, and every crash state after the
# first fsync has lost what that fsync promised.  crashtest --oracle fsync
# fails, and a saved failure names the file and the mark.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
_require_guest

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs ext4 --mount-opts barrier=0 --ops 60 --seed 7 \
	--oracle fsync --out "$TEST_TMP/run" >"$TEST_TMP/out" 2>&1 || rc=$?
cat "$TEST_TMP/out"
((rc == 1)) || _fail "crashtest exited $rc, expected 1 (failing states)"
grep -l "^fsync oracle: .* before mark fsync-[0-9]*; state " "$TEST_TMP"/run/failures/*/checker.out \
	>"$TEST_TMP/named" || _fail "no failure names a broken fsync promise"
echo "$(wc -l <"$TEST_TMP/named") failing states name a lost fsync, e.g.:"
grep -h -m1 "^fsync oracle: .* before mark" "$(head -n 1 "$TEST_TMP/named")"
