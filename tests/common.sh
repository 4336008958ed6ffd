# SPDX-License-Identifier: GPL-2.0
# Helpers sourced by every test, in the shape of fstests' common/rc:
# _require_* skip with the reason, _fail prints what differed and exits.
# shellcheck shell=bash

set -euo pipefail

: "${FLUSHLOG_TOP:?run tests through tests/run}"
: "${FLUSHLOG_BUILD:?run tests through tests/run}"
: "${TEST_TMP:?run tests through tests/run}"

FLUSHLOG=$FLUSHLOG_BUILD/flushlog
MKLOG=$FLUSHLOG_BUILD/tests/fl-mklog
DATA=$FLUSHLOG_TOP/tests/data
export FLUSHLOG MKLOG DATA

_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

_skip() {
	echo "skipped: $*"
	exit 77
}

_require_cmd() {
	command -v "$1" >/dev/null 2>&1 || _skip "$1 is not installed"
}

# _expect_exit CODE CMD...: run CMD, which must exit with CODE; its stderr
# is kept in $TEST_TMP/stderr.
_expect_exit() {
	local want=$1 got=0
	shift
	"$@" >"$TEST_TMP/stdout" 2>"$TEST_TMP/stderr" || got=$?
	if [ "$got" != "$want" ]; then
		echo "--- stderr:" >&2
		cat "$TEST_TMP/stderr" >&2
		_fail "'$*' exited $got, expected $want"
	fi
}

# _same_image EXPECTED GOT WHAT: byte-for-byte comparison; on a
# difference, say at which sector.
_same_image() {
	local first
	if ! first=$(cmp "$1" "$2" 2>&1); then
		echo "$first" >&2
		local byte
		byte=$(echo "$first" | sed -n 's/.* byte \([0-9]*\).*/\1/p')
		[ -n "$byte" ] && echo "first difference in sector $(((byte - 1) / 512))" >&2
		_fail "$3: $2 differs from $1"
	fi
}

# _mklog SCENARIO FORMAT OUTDIR: write SCENARIO's log and expected images.
_mklog() {
	mkdir -p "$3"
	"$MKLOG" -f "$2" -e "$3" -o "$3/log" "$1"
}

# _kernel_version LINE: the ABI of Debian's newest kernel of LINE
_kernel_version() {
	bash -c '. "$1/scripts/lib.sh" && fl_kernel_version "$2"' _ "$FLUSHLOG_TOP" "$1"
}

# _require_guest: QEMU can run, and the kernel the test runs on
# ($FLUSHLOG_KERNEL, default 6.1): a Debian line's headers are installed.
_require_guest() {
	local k=${FLUSHLOG_KERNEL:-6.1} v
	_require_cmd qemu-system-x86_64
	_require_cmd jq
	case $k in
	6.1|6.12|debian)
		v=$(_kernel_version "${k/debian/6.1}" 2>/dev/null) ||
			_skip "no Debian $k kernel in the package index"
		[ -d "/usr/src/linux-headers-$v" ] ||
			_skip "linux-headers-$v is not installed (scripts/install-deps guest)" ;;
	esac
}

# _run_guest SCRIPT [run-guest options] [-- ARGS]: run SCRIPT ARGS in the
# guest; its output is shown, and a failure of the guest or of SCRIPT
# fails the test.
_run_guest() {
	local script=$1 rc=0 opts=()
	shift
	while (($#)) && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	(($#)) && shift
	FLUSHLOG_BUILD=$FLUSHLOG_BUILD "$FLUSHLOG_TOP/qemu/run-guest" "${opts[@]}" \
		"$script" "$@" || rc=$?
	((rc == 0)) || _fail "guest run of $(basename "$script") failed (exit $rc)"
}

# _crashtest_passes FS [crashtest options]: make crashtest's run for FS
# (fl-workload, 100 operations, seed 7) passes every state it checks; on
# a failure the run folder is kept in test-results/crashtest-KERNEL-FS.
_crashtest_passes() {
	local fs=$1 rc=0 keep
	shift
	"$FLUSHLOG_TOP/scripts/crashtest" --fs "$fs" --ops 100 --seed 7 \
		--out "$TEST_TMP/$fs" "$@" || rc=$?
	if ((rc)); then
		keep=$FLUSHLOG_BUILD/test-results/crashtest-${FLUSHLOG_KERNEL:-default}-$fs
		rm -rf "$keep" && cp -r "$TEST_TMP/$fs" "$keep"
		_fail "$fs: failing states (exit $rc); run folder kept in $keep"
	fi
	echo "$fs: $(grep -m1 'states at' "$TEST_TMP/$fs/summary.txt")"
	echo "$fs: $(grep 'states checked' "$TEST_TMP/$fs/summary.txt")"
}

# _crashtest_caught FS CAUSES [crashtest options]: make crashtest's run
# for FS with its ordering off (fl-workload, seed 7, the fsync oracle)
# fails states (exit 1), and a failing state's checker output matches
# CAUSES (grep -E): failed by the filesystem, not by a checker that could
# not run.  The run folder is TEST_TMP/off.
_crashtest_caught() {
	local fs=$1 causes=$2 rc=0
	shift 2
	"$FLUSHLOG_TOP/scripts/crashtest" --fs "$fs" --ordering off --seed 7 --oracle fsync \
		--out "$TEST_TMP/off" "$@" >"$TEST_TMP/off.out" 2>&1 || rc=$?
	[ "$rc" = 1 ] ||
		_fail "$fs, ordering off: crashtest exited $rc, expected 1 (failing states): $(tail -n 3 "$TEST_TMP/off.out")"
	grep -Eq "$causes" "$TEST_TMP"/off/failures/*/checker.out ||
		_fail "$fs, ordering off: no failure says '$causes': $(head -n 3 "$TEST_TMP"/off/failures/*/checker.out)"
	echo "$fs, ordering off: $(grep 'states checked' "$TEST_TMP/off/summary.txt")"
}

# _broken_journal DIR: DIR/log, a journal of 8 transactions (data, a
# flush, then the commit with FUA) whose writer commits transactions 2
# and 5 before their data, with a second write in every epoch so that
# --states epoch adds states; and DIR/check IMAGE, which fails a state
# holding a commit without its data.  Some states of each model fail.
_broken_journal() {
	local dir=$1 i d c x
	mkdir -p "$dir"
	{
		echo 'device 4096'
		for i in 0 1 2 3 4 5 6 7; do
			d=$((16 * i)) c=$((16 * i + 8)) x=$((2000 + 8 * i))
			if ((i == 2 || i == 5)); then
				printf 'write %d 8 fua\nwrite %d 8\nwrite %d 8\nflush\n' "$c" "$d" "$x"
			else
				printf 'write %d 8\nwrite %d 8\nflush\nwrite %d 8 fua\n' "$d" "$x" "$c"
			fi
			echo "mark tx-$i"
		done
	} >"$dir/journal.fls"
	"$MKLOG" -o "$dir/log" "$dir/journal.fls"
	cat >"$dir/check" <<'EOS'
#!/bin/sh
# check IMAGE: transaction i's commit (sector 16i+8) needs its data (16i)
for i in 0 1 2 3 4 5 6 7; do
	commit=$(dd if="$1" bs=512 skip=$((16 * i + 8)) count=1 status=none | tr -d '\0' | wc -c)
	data=$(dd if="$1" bs=512 skip=$((16 * i)) count=1 status=none | tr -d '\0' | wc -c)
	[ "$commit" -eq 0 ] || [ "$data" -gt 0 ] || exit 1
done
EOS
	chmod +x "$dir/check"
}

# _same_verdicts EXPECTED GOT WHAT: two --report reports give each state
# (its point and name) the same result; on a difference, print it
_same_verdicts() {
	local verdicts='.states[] | "\(.point) \(.state) \(.result)"'
	if ! diff -u --label "$1" --label "$2" <(jq -r "$verdicts" "$1" | sort) \
		<(jq -r "$verdicts" "$2" | sort) >&2; then
		_fail "$3: the verdicts differ (- $1, + $2; lines: point state result)"
	fi
}

# _fstests_snapshot: FSTESTS_SNAPSHOT, the fstests tree (or tarball, as
# git archive makes) the fstests tests use, or skip: $FLUSHLOG_FSTESTS, else the snapshot in
# ../shared/fstests beside this checkout, or beside the repository it was
# cloned from (a CI clone in /tmp of a checkout that has ../shared).
_fstests_snapshot() {
	local d f found=''
	if [ -n "${FLUSHLOG_FSTESTS:-}" ]; then
		[ -e "$FLUSHLOG_FSTESTS" ] || _fail "FLUSHLOG_FSTESTS: no '$FLUSHLOG_FSTESTS'"
		export FSTESTS_SNAPSHOT
		FSTESTS_SNAPSHOT=$(realpath "$FLUSHLOG_FSTESTS")
		return
	fi
	for d in "$FLUSHLOG_TOP/.." \
		 "$(git -C "$FLUSHLOG_TOP" config --get remote.origin.url 2>/dev/null || true)/.."; do
		for f in "$d"/shared/fstests/fstests-*.tar.xz; do
			[ -f "$f" ] && found=$f
		done
		[ -z "$found" ] || break
	done
	[ -n "$found" ] ||
		_skip "no fstests tree: FLUSHLOG_FSTESTS unset and no ../shared/fstests/fstests-*.tar.xz"
	export FSTESTS_SNAPSHOT
	FSTESTS_SNAPSHOT=$(realpath "$found")
}
