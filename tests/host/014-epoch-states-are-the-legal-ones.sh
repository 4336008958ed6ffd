#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check --states epoch/torn hands the checker exactly the legal
# crash states of a log with writes in flight across its crash points, and
# each image holds exactly the writes its name says: a checker finds which
# writes are on each image by comparing their sectors with the final one
# (every write has sectors of its own), against a table worked out by hand
# from the format's rules.  replay --state rebuilds the same images; bad
# state names are refused.
. "$FLUSHLOG_TOP/tests/common.sh"

# A, B flushed; D a FUA write; C, E, F completed around it, flushed later
# (E still in flight when D completed, F submitted after that).
cat >"$TEST_TMP/inflight.fls" <<'EOS'
device 2048
write 0 8 ticks 1 2            # 0 A
write 8 8 ticks 3 4            # 1 B
flush ticks 5 6                # 2      point 1: 3 entries
write 100 8 fua ticks 8 11     # 3 D    point 2: 4 entries
write 16 8 ticks 7 9           # 4 C
write 24 8 ticks 10 14         # 5 E
write 32 8 ticks 12 13         # 6 F
flush ticks 15 16              # 7      point 3: 8 entries, then the end
EOS
dir=$TEST_TMP/inflight
_mklog "$TEST_TMP/inflight.fls" flushlog "$dir"
final=$dir/point-4.img

# which of each write's 8 sectors match the final image: "A8 B8 C0 ..."
cat >"$TEST_TMP/present" <<EOS
#!/bin/bash
for w in A:0 B:8 C:16 D:100 E:24 F:32; do
	n=0
	for ((s = \${w#*:}; s < \${w#*:} + 8; s++)); do
		cmp -s <(dd if="\$1" bs=512 skip=\$s count=1 status=none) \\
			<(dd if="$final" bs=512 skip=\$s count=1 status=none) && n=\$((n + 1))
	done
	printf '%s%d ' "\${w%%:*}" "\$n"
done
echo
EOS
chmod +x "$TEST_TMP/present"
cat >"$TEST_TMP/record" <<EOS
#!/bin/sh
echo "\$FLUSHLOG_STATE_NAME \$("$TEST_TMP/present" "\$1")" >>"$TEST_TMP/seen"
EOS
chmod +x "$TEST_TMP/record"

# check_states ARGS... -- EXPECTED: the states and their contents
check_states() {
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	rm -f "$TEST_TMP/seen"
	"$FLUSHLOG" check -q --every-state -w "$TEST_TMP" "${args[@]}" "$dir/log" -- "$TEST_TMP/record" {} \
		>"$TEST_TMP/out" || _fail "check ${args[*]} failed: $(cat "$TEST_TMP/out")"
	diff <(printf '%s\n' "$@" | sort) <(sort "$TEST_TMP/seen") ||
		_fail "check ${args[*]}: the states above differ (< expected, > handed to the checker)"
	echo "check ${args[*]}: $(head -n 1 "$TEST_TMP/out")"
}

# the start (point 0, the base) is a crash point like the others
check_states -- \
	"0 A0 B0 C0 D0 E0 F0 " \
	"3 A8 B8 C0 D0 E0 F0 " "4 A8 B8 C0 D8 E0 F0 " "8 A8 B8 C8 D8 E8 F8 " "8 A8 B8 C8 D8 E8 F8 "
# at the start, A and B may be on the media (the first flush completed at
# tick 6, before C and D were submitted): "0+0" is state 1; at point 1,
# D, C and E were in flight or done (F not yet submitted); at point 2, C,
# E and F; "3+3" is state 4 and "4+4" is state 5
check_states --states epoch -- \
	"0 A0 B0 C0 D0 E0 F0 " "1 A8 B0 C0 D0 E0 F0 " "0+1 A0 B8 C0 D0 E0 F0 " \
	"3 A8 B8 C0 D0 E0 F0 " "4 A8 B8 C0 D8 E0 F0 " "8 A8 B8 C8 D8 E8 F8 " "8 A8 B8 C8 D8 E8 F8 " \
	"3+4 A8 B8 C8 D0 E0 F0 " "3+5 A8 B8 C0 D0 E8 F0 " \
	"5 A8 B8 C8 D8 E0 F0 " "4+5 A8 B8 C0 D8 E8 F0 " "4+6 A8 B8 C0 D8 E0 F8 "
grep -q '^12 states at 5 crash points (13 candidates)' "$TEST_TMP/out" ||
	_fail "expected the count line '12 states at 5 crash points (13 candidates)': $(head -n 1 "$TEST_TMP/out")"
# torn, two cuts a write (after its first and its seventh sector)
mapfile -t torn < <(for e in 3 4 5; do
	w=$(echo "D C E" | cut -d' ' -f$((e - 2)))
	for cut in 1:7 7:1; do
		printf '3~%s:0+%s %s\n' "$e" "${cut%:*}" "$w${cut%:*}"
		printf '3~%s:%s+%s %s\n' "$e" "${cut%:*}" "${cut#*:}" "$w${cut#*:}"
	done
done)
"$FLUSHLOG" check -q -w "$TEST_TMP" --states torn --max-torn 2 "$dir/log" -- true >"$TEST_TMP/out"
grep -q '^37 states at 5 crash points (37 candidates)' "$TEST_TMP/out" ||
	_fail "torn: expected 5 prefix and 32 torn states: $(head -n 1 "$TEST_TMP/out")"
for t in "${torn[@]}"; do
	name=${t%% *}
	"$FLUSHLOG" replay -q -o "$TEST_TMP/t.img" --state "$name" "$dir/log"
	got=$("$TEST_TMP/present" "$TEST_TMP/t.img")
	want="A8 B8 C0 D0 E0 F0 "
	w=${t#* }
	want=${want/${w:0:1}0/$w}
	[ "$got" = "$want" ] || _fail "torn state $name holds '$got', expected '$want'"
done
echo "torn states hold the part of the write their name says"

# K=2 counts every pair too; a sample is deterministic and as large as asked
"$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch -K 2 "$dir/log" -- true >"$TEST_TMP/out"
grep -q ' (20 candidates)' "$TEST_TMP/out" || _fail "K=2: $(head -n 1 "$TEST_TMP/out")"
for i in 1 2; do
	"$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch,torn --max-states 7 \
		--report "$TEST_TMP/s$i.json" "$dir/log" -- true >/dev/null
done
cmp -s "$TEST_TMP/s1.json" "$TEST_TMP/s2.json" ||
	[ "$(jq -c '[.states[].state]' "$TEST_TMP/s1.json")" = "$(jq -c '[.states[].state]' "$TEST_TMP/s2.json")" ] ||
	_fail "two samples differ"
[ "$(jq '.states | length' "$TEST_TMP/s1.json")" -le 7 ] || _fail "--max-states 7 checked more"

# replay --state equals what check handed over, for a reordered state
"$FLUSHLOG" replay -q -o "$TEST_TMP/r.img" --state 4+6 "$dir/log"
[ "$("$TEST_TMP/present" "$TEST_TMP/r.img")" = "A8 B8 C0 D8 E0 F8 " ] || _fail "replay --state 4+6"
for bad in 3+2 99 3+4,4 "4~5:0+100" "4~5:0+0" 3+x "4+5~5:0+1"; do
	_expect_exit 2 "$FLUSHLOG" replay -q -o "$TEST_TMP/x.img" --state "$bad" "$dir/log"
	grep -q "state '$bad'" "$TEST_TMP/stderr" || _fail "replay --state $bad: $(cat "$TEST_TMP/stderr")"
done
echo "bad state names are refused, naming the state"
