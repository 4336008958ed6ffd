#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# on_full=fail promises that a write acknowledged durable (FUA) has its
# entry on the log device durably, not only in the log disk's volatile
# cache.  The log device of an on_full=fail device is itself a flushlog
# device (the outer one), so that its log O records every write and flush
# the inner target sends its log disk L, and a mark ack-K after the K-th
# O_DSYNC write returned.  The oracle is O's own crash model: a crash
# just after mark ack-K leaves L as the state of O's last flush or FUA
# point before the mark (what was written to L since may be lost), so at
# each such point every ack mark before O's next flush or FUA point must
# find its write's entry, sector and data, in L's image (flushlog dump of
# a dirty log).  Before log writes were made durable by a flush of the log
# device ahead of a FUA's completion, L held no durable entry at all.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1
_require_guest
_require_cmd jq

n=20
head -c $((n * 4096)) /dev/urandom >"$TEST_TMP/pattern"
truncate -s 8M "$TEST_TMP/data.img" "$TEST_TMP/log.img"
truncate -s 32M "$TEST_TMP/outer.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/fail-mode-durable-entries.sh" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" \
	--disk "outer=$TEST_TMP/outer.img" -- "$TEST_TMP/pattern" "$n"

# the outer log is faithful: its replay is L as the guest left it
"$FLUSHLOG" replay -q -o "$TEST_TMP/l.img" "$TEST_TMP/outer.img"
_same_image "$TEST_TMP/log.img" "$TEST_TMP/l.img" "the outer log's replay vs L"

# "POINT REQUIRED" for every point a crash guarantees (start, flush, fua,
# end): REQUIRED is the number of ack marks before the next such point
"$FLUSHLOG" points --json "$TEST_TMP/outer.img" >"$TEST_TMP/points.json"
jq -rs --argjson n "$n" '
	[.[] | select(.kind == "mark" and (.spec | startswith("mark:ack-"))) | .entry] as $acks
	| [.[] | select(.kind != "mark")] as $d
	| range(0; $d | length) as $i
	| (if $i + 1 < ($d | length) and $d[$i].kind != "end"
	   then $d[$i + 1].entry else infinite end) as $next
	| "\($d[$i].point) \([$acks[] | select(. < $next)] | length)"' \
	"$TEST_TMP/points.json" >"$TEST_TMP/required"
[ "$(jq -s '[.[] | select(.kind == "mark")] | length' "$TEST_TMP/points.json")" = "$n" ] ||
	_fail "the outer log holds $(jq -s '[.[] | select(.kind == "mark")] | length' "$TEST_TMP/points.json") marks, not $n"

cat >"$TEST_TMP/checker" <<EOS
#!/usr/bin/env bash
# checker IMAGE: L's image at a point of O holds the entry of every write
# acknowledged before O's next durable point
set -u
need=\$(awk -v p="\$FLUSHLOG_POINT" '\$1 == p { print \$2 }' "$TEST_TMP/required")
[ -n "\$need" ] || { echo "point \$FLUSHLOG_POINT is not in the table"; exit 1; }
((need > 0)) || exit 0
missing() {
	echo "\$FLUSHLOG_SPEC (point \$FLUSHLOG_POINT, \$need acknowledged): \$*" |
		tee -a "$TEST_TMP/missing"
	exit 1
}
"$FLUSHLOG" dump --json -q "\$1" >"\$1.dump" 2>"\$1.err" ||
	missing "ack-1's write has no entry: L is not a log (\$(head -n 1 "\$1.err"))"
# an entry's data follows its header block (log-format.md, Layout)
blk=\$("$FLUSHLOG" info --json -q "\$1" 2>/dev/null | jq .log_block_size)
[[ \$blk =~ ^[0-9]+\$ ]] || missing "ack-1's write has no entry: L has no readable super block"
for ((k = 1; k <= need; k++)); do
	off=\$(jq -r --argjson s \$((64 * k)) \
		'select(.op == "write" and .sector == \$s and .nr_sectors == 8 and .data_len == 4096) | .offset' \
		"\$1.dump" | tail -n 1)
	[ -n "\$off" ] || missing "ack-\$k's write (sector \$((64 * k))) has no entry"
	cmp -s -n 4096 -i "\$((off + blk)):\$(((k - 1) * 4096))" "\$1" "$TEST_TMP/pattern" ||
		missing "ack-\$k's entry (sector \$((64 * k))) holds other data"
done
EOS
chmod +x "$TEST_TMP/checker"
rc=0
"$FLUSHLOG" check -q -k -p start,flush,fua,end --json -w "$TEST_TMP" \
	"$TEST_TMP/outer.img" -- "$TEST_TMP/checker" {} >"$TEST_TMP/report.json" || rc=$?
echo "$(jq '.states | length' "$TEST_TMP/report.json") states of L checked, exit $rc"
if [ -s "$TEST_TMP/missing" ]; then
	echo "first state that lacks an acknowledged entry:" >&2
	head -n 1 "$TEST_TMP/missing" >&2
	_fail "$(wc -l <"$TEST_TMP/missing") states of the log device lose an acknowledged write's entry"
fi
((rc == 0)) || _fail "check exited $rc"
echo "every state of L holds the entry of every write acknowledged before it"
