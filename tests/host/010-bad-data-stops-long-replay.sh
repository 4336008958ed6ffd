#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# On a log long enough for the checksum thread, a bad data byte deep in
# the log stops the replay right before that entry: exit 3 naming it, the
# in-place image holds exactly the entries before it, and a new image is
# not created at all.
. "$FLUSHLOG_TOP/tests/common.sh"

"$FLUSHLOG_TOP/bench/gen-workload" 96 >"$TEST_TMP/w.fls"
"$MKLOG" -l -o "$TEST_TMP/log" "$TEST_TMP/w.fls" >"$TEST_TMP/layout"
# the first write entry beyond 80 MiB of log
read -r _ seq off size < <(awk '$3 > 80 * 1048576 && $4 > 512 { print; exit }' "$TEST_TMP/layout")
[ -n "$seq" ] || _fail "no entry beyond 80 MiB"
cp "$TEST_TMP/log" "$TEST_TMP/bad"
printf 'X' | dd of="$TEST_TMP/bad" bs=1 seek=$((off + 512 + size / 2 - 512)) conv=notrunc status=none

"$FLUSHLOG" replay -q -o "$TEST_TMP/img" --to start "$TEST_TMP/log"
_expect_exit 3 "$FLUSHLOG" replay -q --in-place -o "$TEST_TMP/img" "$TEST_TMP/bad"
grep -q "entry $seq at offset $off: data checksum mismatch" "$TEST_TMP/stderr" ||
	_fail "message does not name entry $seq: $(cat "$TEST_TMP/stderr")"
grep -q "holds the state after the first $seq entries" "$TEST_TMP/stderr" ||
	_fail "does not say what the image holds: $(cat "$TEST_TMP/stderr")"
"$FLUSHLOG" replay -q -o "$TEST_TMP/want" --to "entry:$((seq - 1))" "$TEST_TMP/log"
_same_image "$TEST_TMP/want" "$TEST_TMP/img" "in-place replay stopped at entry $seq"

_expect_exit 3 "$FLUSHLOG" replay -q -o "$TEST_TMP/new" "$TEST_TMP/bad"
[ ! -e "$TEST_TMP/new" ] || _fail "a failed replay created its image"
# the whole good log still replays to what it replayed before
"$FLUSHLOG" replay -q -o "$TEST_TMP/full" "$TEST_TMP/log"
"$FLUSHLOG" replay -q --in-place --from "entry:$((seq - 1))" -o "$TEST_TMP/img" "$TEST_TMP/log"
_same_image "$TEST_TMP/full" "$TEST_TMP/img" "resumed replay"
echo "stopped at entry $seq (offset $off) as expected"

# entries larger than the checker's lead (64 MiB) must not stall it
printf '%s\n' 'device 262144' 'write 0 8' 'write 8 204800' 'write 204808 8' 'write 0 140000 fua' >"$TEST_TMP/huge.fls"
"$MKLOG" -e "$TEST_TMP/huge" -o "$TEST_TMP/huge.log" "$TEST_TMP/huge.fls"
# (its FUA write follows unflushed writes: not durability order, on purpose)
timeout 60 "$FLUSHLOG" replay -q --no-order-check -o "$TEST_TMP/huge.img" "$TEST_TMP/huge.log" ||
	_fail "replay of a log with 100 MiB entries did not finish"
_same_image "$TEST_TMP/huge/point-2.img" "$TEST_TMP/huge.img" "log with 100 MiB entries"
