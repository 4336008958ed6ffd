#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check keeps one image per job and only moves it forward: each
# state's extras (reordered writes, a torn part, discards that kept their
# data) are applied over saved bytes and undone after the checker.  Every
# image a checker gets, in each --images mode and with 1 and 3 jobs, equals
# the same state built from scratch by 'flushlog replay --state' byte for
# byte, on a base with holes and data.  The checker writes garbage into a
# quarter of its images after looking: in place, the seal must catch every
# such write and the image be rebuilt, or a later state of that job
# differs; auto mode must switch to copies at the first one.
. "$FLUSHLOG_TOP/tests/common.sh"

# a script with overlapping writes, torn candidates, discards, zeroes and
# many epochs over a 2 MiB device
{
	echo "device 4096"
	for i in $(seq 1 60); do
		s=$(( (i * 733) % 3900 ))
		echo "write $s $(( (i % 5) * 8 + 8 )) seed $i"
		case $((i % 7)) in
		2) echo "discard $(( (i * 211) % 3800 )) 64" ;;
		4) echo "zeroes $(( (i * 97) % 3900 )) 16" ;;
		5) echo flush; echo "write $(( s + 4 )) 8 fua seed $((i + 1000))" ;;
		esac
		((i % 3)) || echo flush
		((i % 20)) || printf "flush\nmark m%s\n" "$i"
	done
	echo flush
} >"$TEST_TMP/s.fls"
_mklog "$TEST_TMP/s.fls" flushlog "$TEST_TMP/m"
log=$TEST_TMP/m/log
# the base: data with holes between
truncate -s 2M "$TEST_TMP/base"
for off in 0 300 1100 1900; do
	head -c 200K /dev/urandom | dd of="$TEST_TMP/base" bs=1K seek="$off" conv=notrunc status=none
done

cat >"$TEST_TMP/checker" <<EOS
#!/bin/sh
echo "\$FLUSHLOG_STATE_NAME \$(sha256sum <"\$1" | cut -c1-64)" >>"\$SEEN"
# a quarter of the checkers write to the state after looking at it
case \$(echo "\$FLUSHLOG_STATE_NAME" | cksum | cut -d' ' -f1) in
*[048]) head -c 4096 /dev/urandom |
		dd of="\$1" bs=4096 seek=\$((\$(od -An -N2 -tu2 /dev/urandom) % 500)) conv=notrunc status=none &&
	echo "\$FLUSHLOG_STATE_NAME" >>"\$SEEN.wrote" ;;
# others put a file of their own at its path, as a tool that writes a new
# file and renames it over the old one does
*[26]) head -c 4096 /dev/urandom >"\$1.new" && mv "\$1.new" "\$1" &&
	echo "\$FLUSHLOG_STATE_NAME" >>"\$SEEN.wrote" ;;
esac
exit 0
EOS
chmod +x "$TEST_TMP/checker"

opts=(--states "epoch,torn,discard" -K 2 --max-states 400 --base "$TEST_TMP/base")
"$FLUSHLOG" check -q "${opts[@]}" -w "$TEST_TMP" "$log" -- true >"$TEST_TMP/plan"
echo "plan: $(head -n 1 "$TEST_TMP/plan")"

# the ground truth: each state named by check, built alone by replay
export SEEN=$TEST_TMP/seen-plan
# shellcheck disable=SC2016 # the checker's shell expands them
"$FLUSHLOG" check -q --images copy "${opts[@]}" -w "$TEST_TMP" "$log" -- sh -c 'echo "$FLUSHLOG_STATE_NAME" >>"$SEEN"' >/dev/null
sort -u "$SEEN" >"$TEST_TMP/names"
nr=$(wc -l <"$TEST_TMP/names")
((nr > 100)) || _fail "only $nr states planned"
grep -q '+' "$TEST_TMP/names" || _fail "no reordered state among them"
grep -q '~' "$TEST_TMP/names" || _fail "no torn state among them"
grep -q '%' "$TEST_TMP/names" || _fail "no state that keeps discards among them"
while read -r name; do
	"$FLUSHLOG" replay --state "$name" --base "$TEST_TMP/base" -o "$TEST_TMP/one.img" "$log" ||
		_fail "replay --state $name failed"
	echo "$name $(sha256sum <"$TEST_TMP/one.img" | cut -c1-64)"
done <"$TEST_TMP/names" | sort >"$TEST_TMP/want"
echo "ground truth: $nr states, each replayed alone"

for mode in in-place auto copy; do
	for jobs in 1 3; do
		export SEEN=$TEST_TMP/seen-$mode-$jobs
		"$FLUSHLOG" check -q --images "$mode" -j "$jobs" "${opts[@]}" -w "$TEST_TMP" "$log" \
			-- "$TEST_TMP/checker" {} >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
			_fail "--images $mode -j $jobs: check exited $?: $(cat "$TEST_TMP/err")"
		sort -u "$SEEN" >"$SEEN.sorted"
		if ! diff "$TEST_TMP/want" "$SEEN.sorted" >"$TEST_TMP/diff"; then
			head -n 20 "$TEST_TMP/diff"
			_fail "--images $mode -j $jobs: $(grep -c '^>' "$TEST_TMP/diff") images differ from the replay of their state (< replay, > check)"
		fi
		wrote=$(wc -l <"$SEEN.wrote")
		((wrote > 10)) || _fail "the checker wrote to only $wrote images"
		case $mode in
		in-place) grep -q "^flushlog check: $wrote checkers wrote to their state image; each was rebuilt" "$TEST_TMP/err" ||
				_fail "in place, $wrote writes not all caught: $(cat "$TEST_TMP/err")" ;;
		auto) grep -q "wrote to the image of state .*copies of their own" "$TEST_TMP/err" ||
				_fail "auto did not switch to copies: $(cat "$TEST_TMP/err")" ;;
		copy) [ ! -s "$TEST_TMP/err" ] || _fail "copy mode: $(cat "$TEST_TMP/err")" ;;
		esac
		echo "--images $mode -j $jobs: $nr images equal their replays; the checker wrote to $wrote"
	done
done
