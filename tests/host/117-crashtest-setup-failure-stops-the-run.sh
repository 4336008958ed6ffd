#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A crashtest whose setup fails checks nothing: a workload that exits 127
# (a command it needs is missing) and a mkfs that refuses its options (-b 3) each
# stop the run with exit 4 ("the setup failed"), their output in the run
# folder (workload.txt, mkfs.txt), the reason in setup-failed.txt, and no
# report.json; the summary says no state was checked.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

# expect_setup_failure RUN OUTPUT-FILE WHAT: RUN stopped before checking
expect_setup_failure() {
	local run=$1 file=$2 what=$3
	[ -f "$run/$file" ] || _fail "$what: no $file in the run folder"
	[ -f "$run/setup-failed.txt" ] || _fail "$what: no setup-failed.txt"
	[ ! -e "$run/report.json" ] || _fail "$what: states were checked: $(head -c 300 "$run/report.json")"
	grep -q '^no state was checked' "$run/summary.txt" ||
		_fail "$what: the summary does not say no state was checked: $(cat "$run/summary.txt")"
	echo "$what: $(cat "$run/setup-failed.txt")"
}

mkdir -p "$TEST_TMP/w"
cat >"$TEST_TMP/w/workload" <<'EOS'
#!/bin/sh
echo "workload: writing the journal"
fl-no-such-writer "$FLUSHLOG_DEV"
EOS
chmod +x "$TEST_TMP/w/workload"

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs raw --workload "$TEST_TMP/w/workload" \
	--check "/bin/true {}" --out "$TEST_TMP/raw" >"$TEST_TMP/raw.out" 2>&1 || rc=$?
((rc == 4)) || { cat "$TEST_TMP/raw.out"; _fail "a workload that exits 127: crashtest exited $rc, expected 4"; }
grep -q '^workload: writing the journal' "$TEST_TMP/raw/workload.txt" ||
	_fail "workload.txt lacks the workload's output: $(cat "$TEST_TMP/raw/workload.txt")"
grep -q 'fl-no-such-writer' "$TEST_TMP/raw/workload.txt" ||
	_fail "workload.txt lacks the shell's complaint: $(cat "$TEST_TMP/raw/workload.txt")"
grep -q 'exited 127' "$TEST_TMP/raw/setup-failed.txt" ||
	_fail "setup-failed.txt does not give the exit status: $(cat "$TEST_TMP/raw/setup-failed.txt")"
expect_setup_failure "$TEST_TMP/raw" workload.txt "workload exit 127"

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs ext4 --ops 5 --mkfs-opts "-b 3" \
	--out "$TEST_TMP/ext4" >"$TEST_TMP/ext4.out" 2>&1 || rc=$?
((rc == 4)) || { cat "$TEST_TMP/ext4.out"; _fail "a mkfs that fails: crashtest exited $rc, expected 4"; }
[ ! -e "$TEST_TMP/ext4/not-run.txt" ] || _fail "a bad --mkfs-opts was called 'cannot run here'"
expect_setup_failure "$TEST_TMP/ext4" mkfs.txt "bad mkfs option"
