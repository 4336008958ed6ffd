#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One POINT grammar: every --from and --to (dump, replay, check) takes the
# same specs (start, end, entry:N, flush:K, point:K, mark:LABEL), names
# the same position with each, and refuses alike a point the log does not
# have, at either end (exit 2, the option named, the range the log has
# said; never clipped), and a --to before the --from.  dump lists the
# entries between two positions, those replay --in-place applies between
# them; its bare numbers are entry numbers, as before.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/g"
log=$TEST_TMP/g/log
nr=$("$FLUSHLOG" info --json --quick "$log" | jq .entries)

# position SPEC: the number of entries SPEC's state applies, from points
position() {
	case $1 in
	start) echo 0 ;;
	end) echo "$nr" ;;
	entry:*) echo $((${1#entry:} + 1)) ;;
	point:*) "$FLUSHLOG" points --json "$log" | jq "select(.point == ${1#point:}) | .applied" ;;
	*) "$FLUSHLOG" points --json "$log" | jq --arg s "$1" 'select(.spec == $s) | .applied' ;;
	esac
}

# entries FROM TO: the entry numbers dump lists between two POINTs
entries() {
	"$FLUSHLOG" dump --json --from "$1" --to "$2" "$log" | jq -r .entry | paste -sd' '
}

# 1. one spec, one position, in every command
specs='start end entry:0 entry:5 entry:17 flush:1 flush:2 flush:4 point:0 point:3 point:7 mark:after-fua mark:commit-1'
for spec in $specs; do
	p=$(position "$spec")
	[ -n "$p" ] || _fail "points lists no $spec"
	# dump --to SPEC: entries 0 to p-1; --from SPEC: p to the last
	want=$(seq 0 $((p - 1)) | paste -sd' ')
	[ "$(entries start "$spec")" = "$want" ] ||
		_fail "dump --to $spec lists '$(entries start "$spec")', expected entries 0 to $((p - 1))"
	want=$(seq "$p" $((nr - 1)) | paste -sd' ')
	[ "$(entries "$spec" end)" = "$want" ] ||
		_fail "dump --from $spec lists '$(entries "$spec" end)', expected entries $p to $((nr - 1))"
	# replay --to SPEC: the image of entry:p-1's state (or start's)
	ref=start
	((p == 0)) || ref=entry:$((p - 1))
	"$FLUSHLOG" replay -q -o "$TEST_TMP/a.img" --to "$spec" "$log"
	"$FLUSHLOG" replay -q -o "$TEST_TMP/b.img" --to "$ref" "$log"
	_same_image "$TEST_TMP/b.img" "$TEST_TMP/a.img" "replay --to $spec (position $p)"
	# check --to SPEC: the states of the crash points up to position p
	want=$("$FLUSHLOG" points --json "$log" | jq -s "[.[] | select(.applied <= $p) | .entry] | max")
	last=$("$FLUSHLOG" check -q --json --to "$spec" "$log" -- true |
		jq '[.states[] | .entry] | max')
	[ "$last" = "$want" ] || _fail "check --to $spec: last state at entry $last, expected $want"
done
echo "$(wc -w <<<"$specs") specs: dump, replay and check put each at one position"

# dump --from A --to B lists what replay --in-place --from A --to B applies
[ "$(entries flush:1 flush:2)" = 4 ] || _fail "dump --from flush:1 --to flush:2: $(entries flush:1 flush:2)"
[ "$(entries mark:after-fua flush:3)" = "6 7 8 9 10 11" ] ||
	_fail "dump --from mark:after-fua --to flush:3: $(entries mark:after-fua flush:3)"
[ -z "$(entries flush:2 flush:2)" ] || _fail "dump between one position and itself lists entries"
# its bare numbers: entry N itself, at either end; --to -1: none
[ "$(entries 3 5)" = "3 4 5" ] || _fail "dump --from 3 --to 5: $(entries 3 5)"
[ -z "$(entries 0 -1)" ] || _fail "dump --from 0 --to -1: $(entries 0 -1)"
echo "dump lists the entries between two positions; bare numbers are entries"

# 2. out of range is an error, at either end, in every command, never
# clipped; the message names the option and what the log has
# refused WANT CMD...: exit 2, stderr matching WANT
refused() {
	local want=$1
	shift
	_expect_exit 2 "$@"
	grep -Eq -- "$want" "$TEST_TMP/stderr" || _fail "'$*': $(cat "$TEST_TMP/stderr")"
}
out=$TEST_TMP/x.img
"$FLUSHLOG" replay -q -o "$out" --to start "$log"
for bad in "entry:$nr|entries 0 to $((nr - 1)) only" "flush:9|flush points 1 to 4 only" \
	   "point:99|points 0 to 7 only" "mark:nope|no mark labelled 'nope'"; do
	spec=${bad%%|*} why=${bad#*|}
	for opt in from to; do
		refused "^flushlog dump: --$opt: .*$why" "$FLUSHLOG" dump --"$opt" "$spec" "$log"
		refused "^flushlog check: --$opt: .*$why" \
			"$FLUSHLOG" check -q --"$opt" "$spec" "$log" -- true
	done
	refused "^flushlog replay: --to: .*$why" "$FLUSHLOG" replay -o "$out" --to "$spec" "$log"
	refused "^flushlog replay: --from: .*$why" \
		"$FLUSHLOG" replay -o "$out" --in-place --from "$spec" "$log"
done
# dump's bare numbers too: --to 999 is no longer clipped to the end
refused "^flushlog dump: --to: .*entries 0 to $((nr - 1)) only" "$FLUSHLOG" dump --to 999 "$log"
refused "^flushlog dump: --from: .*entries 0 to $((nr - 1)) only" "$FLUSHLOG" dump --from 100 "$log"
refused "^flushlog dump: --to: .*invalid point 'sometime'" "$FLUSHLOG" dump --to sometime "$log"
echo "a point the log does not have: exit 2 in dump, replay and check, at either end"

# 3. --to before --from: one error, said one way
refused "^flushlog dump: --to flush:1 comes before --from mark:after-fua$" \
	"$FLUSHLOG" dump --from mark:after-fua --to flush:1 "$log"
refused "^flushlog check: --to flush:1 comes before --from mark:after-fua$" \
	"$FLUSHLOG" check -q --from mark:after-fua --to flush:1 "$log" -- true
refused "flushlog replay: --to flush:1 comes before --from mark:after-fua$" \
	"$FLUSHLOG" replay -o "$out" --in-place --from mark:after-fua --to flush:1 "$log"
echo "--to before --from: refused alike"
