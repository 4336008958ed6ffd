#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Each example's verifier (examples/APP/APP-app verify), run on the host on
# data its own workload made (flushlog-promise recording the promises):
# it passes what the workload left with every promise, and fails, naming
# why, when a promised commit is missing, when data is damaged, and when
# a transaction is half applied; before any promise, a missing or
# half-made store passes.  The ground truth is the workload's own output,
# changed by hand the way a crash or a broken writer could.
# asan: no
. "$FLUSHLOG_TOP/tests/common.sh"

ex=$FLUSHLOG_TOP/examples
mkdir -p "$TEST_TMP/bin"
cat >"$TEST_TMP/bin/flushlog-promise" <<'S'
#!/bin/sh
echo "$1=$2" >>"$PROMISES"
S
chmod +x "$TEST_TMP/bin/flushlog-promise"
export PATH=$TEST_TMP/bin:$PATH

# make APP CONFIG N: the workload's data in $TEST_TMP/APP, its promises
make_data() {
	rm -rf "${TEST_TMP:?}/$1" && mkdir -p "$TEST_TMP/$1"
	PROMISES=$TEST_TMP/$1.promises FLUSHLOG_MNT=$TEST_TMP/$1 "$ex/$1/$1-app" run "$2" "$3" >/dev/null ||
		_fail "$1-app run $2 $3 failed"
}
# verdict APP WANT WHY [VAR=VALUE...]: the verifier, in APP's folder,
# exits WANT (0 or 1); a failure must say WHY
verdict() {
	local app=$1 want=$2 why=$3 got=0
	shift 3
	(cd "$TEST_TMP/$app" && env "$@" "$ex/$app/$app-app" verify) >"$TEST_TMP/out" 2>&1 || got=$?
	[ "$got" = "$want" ] || _fail "$app verify $* exited $got, not $want: $(cat "$TEST_TMP/out")"
	[ -z "$why" ] || grep -q -- "$why" "$TEST_TMP/out" || _fail "$app verify $*: no '$why' in: $(cat "$TEST_TMP/out")"
}

# SQLite
if command -v sqlite3 >/dev/null; then
	make_data sqlite wal-full 6
	[ "$(tail -n 1 "$TEST_TMP/sqlite.promises")" = txn=6 ] || _fail "sqlite-app promised $(tail -n 1 "$TEST_TMP/sqlite.promises")"
	verdict sqlite 0 '6 transactions' FLUSHLOG_PROMISE_txn=6
	verdict sqlite 1 'acknowledged transactions lost' FLUSHLOG_PROMISE_txn=7
	db=$TEST_TMP/sqlite/app.db
	sqlite3 "$db" "UPDATE t SET v = 'x' WHERE id = 2;"
	verdict sqlite 1 'not their id' FLUSHLOG_PROMISE_txn=1
	make_data sqlite delete-full 6
	sqlite3 "$db" "UPDATE meta SET last = 5; DELETE FROM t WHERE id = 6;"
	verdict sqlite 0 '' FLUSHLOG_PROMISE_txn=5
	sqlite3 "$db" "DELETE FROM t WHERE id = 3;"
	verdict sqlite 1 'with gaps' FLUSHLOG_PROMISE_txn=1
	make_data sqlite off 4
	sqlite3 "$db" "UPDATE meta SET last = 3;"
	verdict sqlite 1 'half applied' FLUSHLOG_PROMISE_txn=1
	dd if=/dev/urandom of="$db" bs=4096 seek=1 count=2 conv=notrunc status=none
	verdict sqlite 1 'integrity_check\|malformed\|failed' FLUSHLOG_PROMISE_txn=1
	rm -f "$db"*
	verdict sqlite 0 'nothing promised'
	verdict sqlite 1 'missing' FLUSHLOG_PROMISE_txn=1
	echo "sqlite: a lost commit, a damaged row, a gap, a half transaction and a damaged file are caught"
else
	_skip "sqlite3 is not installed (scripts/install-deps test)"
fi

# git
make_data git committed 4
head=$(git -C "$TEST_TMP/git/repo" rev-parse HEAD)
verdict git 0 '4 commits' FLUSHLOG_PROMISE_n=4 FLUSHLOG_PROMISE_head="$head"
verdict git 1 'acknowledged commits lost' FLUSHLOG_PROMISE_n=5
# what git does not promise: the index
: >"$TEST_TMP/git/repo/.git/index"
verdict git 0 '' FLUSHLOG_PROMISE_n=4 FLUSHLOG_PROMISE_head="$head"
# main back one commit: the promised head is not on it
git -C "$TEST_TMP/git/repo" update-ref refs/heads/main HEAD~1
verdict git 1 'not main' FLUSHLOG_PROMISE_n=3 FLUSHLOG_PROMISE_head="$head"
git -C "$TEST_TMP/git/repo" update-ref refs/heads/main "$head"
# an object a crash left empty
obj=$(git -C "$TEST_TMP/git/repo" rev-parse "HEAD:file-2")
f=$TEST_TMP/git/repo/.git/objects/${obj:0:2}/${obj:2}
chmod u+w "$f" && : >"$f"
verdict git 1 'git fsck' FLUSHLOG_PROMISE_n=4 FLUSHLOG_PROMISE_head="$head"
rm -rf "$TEST_TMP/git/repo"
verdict git 0 'nothing promised'
verdict git 1 'missing' FLUSHLOG_PROMISE_n=1
echo "git: a lost commit, a moved-back main and an empty object are caught; a damaged index is not git's promise"

# LMDB (python3-lmdb)
if /usr/bin/python3 -c 'import lmdb' 2>/dev/null; then
	make_data lmdb sync 5
	verdict lmdb 0 '5 transactions' FLUSHLOG_PROMISE_txn=5
	verdict lmdb 1 'acknowledged transactions lost' FLUSHLOG_PROMISE_txn=6
	(cd "$TEST_TMP/lmdb" && /usr/bin/python3 -c '
import lmdb
env = lmdb.open("db", map_size=64 << 20)
with env.begin(write=True) as t:
    t.put(b"last", b"4")
    t.delete(b"00000005")')
	verdict lmdb 0 '' FLUSHLOG_PROMISE_txn=4
	(cd "$TEST_TMP/lmdb" && /usr/bin/python3 -c '
import lmdb
env = lmdb.open("db", map_size=64 << 20)
with env.begin(write=True) as t:
    t.put(b"00000002", b"x")')
	verdict lmdb 1 'not their key' FLUSHLOG_PROMISE_txn=1
	rm -rf "$TEST_TMP/lmdb/db"
	verdict lmdb 0 'nothing promised'
	verdict lmdb 1 'missing' FLUSHLOG_PROMISE_txn=1
	echo "lmdb: a lost commit, a damaged value and a missing environment are caught"
else
	echo "lmdb: python3-lmdb is not installed here, its verifier not exercised (scripts/install-deps app lmdb)"
fi
