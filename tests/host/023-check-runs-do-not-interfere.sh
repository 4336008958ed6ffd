#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check keeps its files in a private folder of the work folder:
# two runs at once in one work folder, on different logs, each see only
# their own states (both reports right); a user's own master.img and
# state-0.img there are left alone; an interrupted run (SIGINT) kills its
# checker and leaves no folder behind.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

work=$TEST_TMP/work
mkdir -p "$work"
_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/a"
_mklog "$DATA/concurrent.fls" flushlog "$TEST_TMP/b"
echo "the user's own file" >"$work/master.img"
echo "another one" >"$work/state-0.img"
cat >"$TEST_TMP/model-check" <<'EOS'
#!/bin/sh
# model-check IMAGE EXPECT_DIR: slow enough for the two runs to overlap
sleep 0.2
cmp "$1" "$2/point-$FLUSHLOG_POINT.img"
EOS
chmod +x "$TEST_TMP/model-check"

pids=()
for run in a b; do
	"$FLUSHLOG" check -q -j 2 -w "$work" --report "$TEST_TMP/$run.json" \
		"$TEST_TMP/$run/log" -- "$TEST_TMP/model-check" {} "$TEST_TMP/$run" \
		>"$TEST_TMP/$run.out" 2>&1 &
	pids+=($!)
done
for i in 0 1; do
	rc=0
	wait "${pids[$i]}" || rc=$?
	run=$([ "$i" = 0 ] && echo a || echo b)
	((rc == 0)) || _fail "run $run exited $rc: $(cat "$TEST_TMP/$run.out")"
	n=$(wc -l <"$TEST_TMP/$run/points.txt")
	jq -e ".checked == $n and .failed == 0" "$TEST_TMP/$run.json" >/dev/null ||
		_fail "run $run: $(cat "$TEST_TMP/$run.json")"
	echo "run $run: $n states, all equal to the model"
done
[ "$(cat "$work/master.img")" = "the user's own file" ] || _fail "the user's master.img changed"
[ "$(cat "$work/state-0.img")" = "another one" ] || _fail "the user's state-0.img changed"
[ "$(find "$work" -mindepth 1 | wc -l)" = 2 ] || _fail "left in the work folder: $(ls -A "$work")"

# SIGINT: the checker's group is killed and the folder removed.  A
# background job starts with SIGINT ignored: give it the default back.
cat >"$TEST_TMP/slow" <<EOS
#!/bin/sh
echo \$\$ >"$TEST_TMP/slow.pid"
sleep 1000
EOS
chmod +x "$TEST_TMP/slow"
rm -f "$TEST_TMP/slow.pid"
env --default-signal=INT "$FLUSHLOG" check -q -w "$work" "$TEST_TMP/a/log" -- "$TEST_TMP/slow" {} &
pid=$!
for _ in $(seq 100); do
	[ -s "$TEST_TMP/slow.pid" ] && break
	sleep 0.1
done
[ -s "$TEST_TMP/slow.pid" ] || _fail "the checker did not start"
[ -n "$(find "$work" -maxdepth 1 -name 'flushlog-check.*')" ] || _fail "no private folder while running"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
((rc == 130)) || _fail "interrupted check exited $rc, expected 130 (SIGINT)"
checker=$(cat "$TEST_TMP/slow.pid")
stat=$(ps -o stat= -p "$checker" || true)
[ -z "$stat" ] || [[ $stat == Z* ]] || _fail "the checker $checker still runs after SIGINT"
[ -z "$(find "$work" -maxdepth 1 -name 'flushlog-check.*')" ] ||
	_fail "an interrupted run left $(ls -A "$work")"
[ "$(cat "$work/master.img")" = "the user's own file" ] || _fail "the user's master.img changed"
