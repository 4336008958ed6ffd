#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A slice of make matrix (scripts/matrix): ext4 with its flush/FUA ordering
# on and switched off (barrier=0), and nilfs2 with it on; 60 operations of
# fl-workload, every prefix state and a sample of the epoch states on the
# same log, each mounted, read, fsck'd and held to the fsync oracle.  With
# the ordering on every state must pass: a failure is a finding about the
# filesystem or about flushlog, and the run folders are kept.  With it off
# nothing is promised to the media, and the matrix must catch it: failing
# states, one naming the fsync whose promise was lost.  (The rest of the
# matrix is make matrix: docs/matrix.md.)
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

m=$TEST_TMP/matrix rc=0
# slice FS ORDERINGS: one table of its own
slice() {
	"$FLUSHLOG_TOP/scripts/matrix" --fs "$1" --ordering "$2" --ops 60 --seed 7 \
		--max-states 20 --out "$m" --table "$TEST_TMP/$1.md" >"$TEST_TMP/$1.out" 2>&1 || rc=$?
	sed -n '/^| filesystem/,/^$/p' "$TEST_TMP/$1.md" 2>/dev/null || cat "$TEST_TMP/$1.out"
}
slice ext4 "on off"
slice nilfs2 on
if ((rc)); then
	keep=$FLUSHLOG_BUILD/test-results/matrix
	rm -rf "$keep" && cp -r "$m" "$keep"
	_fail "matrix exited $rc: an ordered row failed; run folders kept in $keep"
fi

# row FS ORDERING: its cells "checked / failed" for prefix and epoch
row() {
	awk -F' *[|] *' -v fs="$1" -v o="$2" '$2 == fs && $3 == o { print $5 "|" $6 }' "$TEST_TMP/$1.md"
}

for on in "$(row ext4 on)" "$(row nilfs2 on)"; do
	[[ $on =~ ^[1-9][0-9]*\ /\ 0\|[1-9][0-9]*\ /\ 0$ ]] ||
		_fail "ordering on: expected states checked and none failed, the table says '$on'"
done
off=$(row ext4 off)
[[ $off =~ ^[0-9]+\ /\ [1-9][0-9]*\|[0-9]+\ /\ [1-9][0-9]*$ ]] ||
	_fail "ext4 barrier=0: expected failing states under both models, the table says '$off'"
grep -l "^fsync oracle: .* before mark f[a-z]*sync-[0-9]*; state " \
	"$m"/*/ext4-off/*/failures/*/checker.out >"$TEST_TMP/named" ||
	_fail "no failure of ext4 barrier=0 names a broken fsync promise"
echo "ext4 barrier=0: $(wc -l <"$TEST_TMP/named") failing states name a lost fsync, e.g.:"
grep -h -m1 "^fsync oracle: .* before mark" "$(head -n 1 "$TEST_TMP/named")"
grep -q '^## Failures' "$TEST_TMP/ext4.md" || _fail "the table lists no failure to reproduce"
