#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# crashtest --size 8G: an 8 GiB ext4 is traced and its states checked with
# reordered writes and the fsync oracle, every state passing.  The state
# images move forward in place on the scratch disk (not in guest memory),
# each state's extras applied and undone: an undo that left a write behind,
# or a journal replay that reached the image, fails fsck or the oracle in a
# later state.  check-state mounts through a snapshot, so check must not
# have seen a checker write to its image; the scratch disk is gone after.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest
_require_cmd jq

out=$TEST_TMP/run
"$FLUSHLOG_TOP/scripts/crashtest" --fs ext4 --size 8G --ops 40 --states epoch --max-reorder 1 \
	--max-states 60 --oracle fsync --out "$out" || _fail "crashtest exited $?: $(tail -n 5 "$out/summary.txt")"
[ "$(stat -c %s "$out/data.img")" = $((8 << 30)) ] || _fail "data.img is not 8 GiB"
checked=$(jq .checked "$out/report.json")
((checked >= 30)) || _fail "only $checked states checked"
jq -e '.failed == 0' "$out/report.json" >/dev/null || _fail "a state failed"
# a state other than its point's prefix (entries 0..entry): writes reordered
reordered=$(jq '[.states[] | select(.state != ((.entry + 1) | tostring))] | length' "$out/report.json")
((reordered > 0)) || _fail "no reordered state was checked"
if grep -q 'wrote to the image' "$out/summary.txt"; then
	_fail "a checker wrote to its state image: $(grep 'wrote to the image' "$out/summary.txt")"
fi
[ ! -e "$out/scratch.img" ] || _fail "the scratch disk was left in the run folder"
[ -s "$out/check-ms.txt" ] || _fail "no check-ms.txt"
echo "8 GiB ext4: $checked states ($reordered reordered) checked in $(cat "$out/check-ms.txt") ms, all passed, in place"
