#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Torn and discard states of a log of two devices: device 0 of 512-byte
# blocks, device 1 of 4096-byte ones.  A write tears at its own device's
# block boundaries (device 1's 16-sector write only in halves of 8), and
# every state's image, checked by flushlog check, equals one composed here
# with dd from a base of 0xaa bytes and the writes' data (fl-mklog's
# one-device models of the same seeds): each part at its device's place
# in the image (FLUSHLOG_DEVICES), a discard's sectors zero, or their
# old data in a "%" state.  The same checker with device 1 placed one
# sector off fails states: the composition can tell.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

# In durability order: B (device 1, entry 0), D (discard, device 1), F1,
# then A (device 0, entry 3), F0.  Nothing overlaps.
cat >"$TEST_TMP/log.fls" <<'EOS'
device 2048
adddevice 1024 4096
version 3
write 0 8 seed 1 ticks 1 2            # A
write 0 16 seed 5 ticks 3 4 dev 1     # B
discard 32 16 ticks 5 6 dev 1         # D
flush ticks 7 8 dev 1                 # F1
flush ticks 9 10                      # F0
EOS
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/log.fls"
head -c $((3072 * 512)) /dev/zero | tr '\0' '\252' >"$TEST_TMP/base.img"

# data NAME SECTORS SEED: a write's data, from a one-device model
data() {
	printf 'device 2048\nwrite 0 %d seed %d\n' "$2" "$3" >"$TEST_TMP/$1.fls"
	mkdir -p "$TEST_TMP/$1"
	"$MKLOG" -e "$TEST_TMP/$1" -o "$TEST_TMP/$1/log" "$TEST_TMP/$1.fls"
	dd if="$TEST_TMP/$1/point-1.img" of="$TEST_TMP/$1.data" bs=512 count="$2" status=none
}
data a 8 1
data b 16 5

cat >"$TEST_TMP/checker" <<'EOS'
#!/usr/bin/env bash
# checker IMAGE: IMAGE is the state FLUSHLOG_STATE_NAME, composed with dd
set -euo pipefail
t=$TEST_TMP
[ "$FLUSHLOG_DEVICES" = "0+2048 2048+1024" ] || { echo "FLUSHLOG_DEVICES '$FLUSHLOG_DEVICES'"; exit 1; }
dev1=$((2048 + ${DEV1_SHIFT:-0}))
exp=$(mktemp "$t/expected.XXXXXX")
trap 'rm -f "$exp"' EXIT
cp "$t/base.img" "$exp"
# put FILE SKIP SEEK COUNT: sectors of FILE into the expected image
put() { dd if="$1" of="$exp" bs=512 skip="$2" seek="$3" count="$4" conv=notrunc status=none; }
s=$FLUSHLOG_STATE_NAME
prefix=${s%%[~%]*}
((prefix < 1)) || put "$t/b.data" 0 "$dev1" 16
((prefix < 2)) || put /dev/zero 0 $((dev1 + 32)) 16
((prefix < 4)) || put "$t/a.data" 0 0 8
case $s in
*%) put "$t/base.img" $((dev1 + 32)) $((dev1 + 32)) 16 ;;
*~*)
	torn=${s#*~} entry=${torn%%:*} part=${torn#*:}
	from=${part%+*} len=${part#*+}
	case $entry in
	0) put "$t/b.data" "$from" $((dev1 + from)) "$len"
	   # device 1 tears at its 4096-byte blocks only
	   ((from % 8 == 0 && len % 8 == 0)) || { echo "B torn at sector $from+$len"; exit 1; } ;;
	3) put "$t/a.data" "$from" "$from" "$len" ;;
	*) echo "a torn entry $entry, which is no write"; exit 1 ;;
	esac ;;
esac
cmp "$exp" "$1" || { echo "state $s differs from its composition"; exit 1; }
echo "$s" >>"$t/checked"
EOS
chmod +x "$TEST_TMP/checker"
export TEST_TMP

"$FLUSHLOG" check --states prefix,torn,discard -b "$TEST_TMP/base.img" --json \
	"$TEST_TMP/log" -- "$TEST_TMP/checker" {} >"$TEST_TMP/report.json" 2>"$TEST_TMP/check.err" ||
	_fail "a state differs from its composition: $(jq -r '.states[] | select(.result != "pass") | "\(.state): \(.output // "")"' "$TEST_TMP/report.json" | head -n 5; tail -n 3 "$TEST_TMP/check.err")"
states=$(jq -r '.states[].state' "$TEST_TMP/report.json" | sort -u | tr '\n' ' ')
for want in 0 0~0:0+8 0~0:8+8 3 3~3:0+1 3~3:7+1 3% 5 5%; do
	[[ " $states" == *" $want "* ]] || _fail "no state $want among: $states"
done
[ "$(sort -u "$TEST_TMP/checked" | wc -l)" = "$(jq '[.states[].state] | unique | length' "$TEST_TMP/report.json")" ] ||
	_fail "the checker did not see every state"
echo "$(wc -l <"$TEST_TMP/checked") states equal their composition: $states"

# the negative control: device 1 one sector off
: >"$TEST_TMP/checked"
DEV1_SHIFT=1 _expect_exit 1 "$FLUSHLOG" check -q --states prefix,torn,discard -b "$TEST_TMP/base.img" \
	"$TEST_TMP/log" -- "$TEST_TMP/checker" {}
echo "device 1 one sector off: states fail"
