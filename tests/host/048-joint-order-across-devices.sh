#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A version 3 log holds two devices in one order, and a flush makes only
# its own device's writes durable.  A toy journal writes a data block W on
# device 0 and a journal block X and a FUA commit record C on device 1.
# The correct writer flushes device 0 before C; the broken one flushes
# device 1 instead.  Replayed per device at every crash point, the images
# must equal fl-mklog's model of the writes durable there, and the
# checker "C on device 1 means W on device 0" must fail at some point of
# the broken log and at none of the correct one.  The same broken trace
# read as one device (its journal moved to sectors 1024 and up of device
# 0, a version 2 log) passes the checker: only the joint order, with
# flushes per device, catches the bug.  Bad device numbers are refused.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

# The broken writer: F1 (device 1) covers X only, so C is durable before W.
cat >"$TEST_TMP/broken.fls" <<'EOS'
device 2048
adddevice 1024
version 3
write 0 8 seed 1 ticks 1 2            # W, device 0
write 16 8 seed 3 ticks 3 4 dev 1     # X, device 1
flush ticks 5 6 dev 1                 # F1: the journal's flush
write 0 8 fua seed 2 ticks 7 8 dev 1  # C: commit record
flush ticks 9 10                      # F0: the data's, too late
EOS
# The correct one: F0 covers W before C; X waits for F1, after C.
cat >"$TEST_TMP/correct.fls" <<'EOS'
device 2048
adddevice 1024
version 3
write 0 8 seed 1 ticks 1 2            # W, device 0
write 16 8 seed 3 ticks 3 4 dev 1     # X, device 1
flush ticks 5 6                       # F0
write 0 8 fua seed 2 ticks 7 8 dev 1  # C
flush ticks 9 10 dev 1                # F1
EOS

# model NAME SECTORS OPS...: the image of the writes OPS on one device
model() {
	local name=$1 sectors=$2 op
	shift 2
	{
		echo "device $sectors"
		for op in "$@"; do
			case $op in
			W) echo "write 0 8 seed 1" ;;
			X) echo "write 16 8 seed 3" ;;
			C) echo "write 0 8 seed 2" ;;
			esac
		done
		[ $# -gt 0 ] || echo "empty"
	} >"$TEST_TMP/$name.fls"
	mkdir -p "$TEST_TMP/$name"
	"$MKLOG" -e "$TEST_TMP/$name" -o "$TEST_TMP/$name/log" "$TEST_TMP/$name.fls"
	cp "$TEST_TMP/$name/point-$(($(wc -l <"$TEST_TMP/$name/points.txt") - 1)).img" \
		"$TEST_TMP/$name.img"
}
model d0-empty 2048
model d0-w 2048 W
model d1-empty 1024
model d1-x 1024 X
model d1-c 1024 C
model d1-xc 1024 X C

# expect LOG POINT IMAGE0 IMAGE1: both devices' state at POINT
expect() {
	"$FLUSHLOG" replay -q -o "0=$TEST_TMP/got0.img" -o "1=$TEST_TMP/got1.img" \
		--to "$2" "$TEST_TMP/$1.log" ||
		_fail "$1: replay --to $2 failed"
	_same_image "$TEST_TMP/$3.img" "$TEST_TMP/got0.img" "$1 at $2, device 0"
	_same_image "$TEST_TMP/$4.img" "$TEST_TMP/got1.img" "$1 at $2, device 1"
}

# commit_checker IMAGE0 IMAGE1: the toy's promise, C on 1 means W on 0
commit_checker() {
	if cmp -s -n 4096 "$2" "$TEST_TMP/d1-c.img"; then
		cmp -s -n 4096 "$1" "$TEST_TMP/d0-w.img" || return 1
	fi
	return 0
}

# violations LOG [OUTPUTS...]: the points where the checker fails
violations() {
	local log=$1 p bad=""
	shift
	for p in $("$FLUSHLOG" points --json "$TEST_TMP/$log.log" | jq -r .spec); do
		if [ $# -eq 0 ]; then
			"$FLUSHLOG" replay -q -o "0=$TEST_TMP/c0.img" -o "1=$TEST_TMP/c1.img" \
				--to "$p" "$TEST_TMP/$log.log" || _fail "$log: replay --to $p"
			commit_checker "$TEST_TMP/c0.img" "$TEST_TMP/c1.img" || bad="$bad $p"
		else
			"$FLUSHLOG" replay -q -o "$TEST_TMP/c.img" --to "$p" \
				"$TEST_TMP/$log.log" || _fail "$log: replay --to $p"
			# the single device's sectors 1024 and up stand for device 1
			dd if="$TEST_TMP/c.img" of="$TEST_TMP/c1.img" bs=512 skip=1024 \
				count=1024 status=none
			commit_checker "$TEST_TMP/c.img" "$TEST_TMP/c1.img" || bad="$bad $p"
		fi
	done
	echo "${bad# }"
}

for log in broken correct; do
	"$MKLOG" -o "$TEST_TMP/$log.log" "$TEST_TMP/$log.fls"
	"$FLUSHLOG" info --json "$TEST_TMP/$log.log" >"$TEST_TMP/info.json"
	[ "$(jq -c '[.devices[] | [.sectors, .block_size]]' "$TEST_TMP/info.json")" = \
		'[[2048,512],[1024,512]]' ] ||
		_fail "$log: devices: $(jq -c .devices "$TEST_TMP/info.json")"
	[ "$(jq -r .order_verified "$TEST_TMP/info.json")" = true ] ||
		_fail "$log: durability order not verified"
done

# Durability order, broken: X F1 C W F0.  Points: start, F1, C, F0, end.
expect broken start d0-empty d1-empty
expect broken flush:1 d0-empty d1-x
expect broken flush:2 d0-empty d1-xc	# C durable, W not: the bug
expect broken flush:3 d0-w d1-xc
# correct: W F0 C X F1; X waits for F1, which F0 does not stand in for
expect correct flush:1 d0-w d1-empty
expect correct flush:2 d0-w d1-c
expect correct flush:3 d0-w d1-xc
echo "both logs replay per device to the model at every point"

got=$(violations broken)
[ "$got" = "flush:2" ] || _fail "broken writer: checker failed at '$got', expected flush:2"
got=$(violations correct)
[ -z "$got" ] || _fail "correct writer: checker failed at '$got'"
echo "the broken writer is caught at flush:2, the correct one passes"

# The broken trace as one device: F1 then covers W too, and hides the bug.
sed -e '/^adddevice/d' -e 's/^version 3/version 2/' \
	-e 's/^write 16 8 \(.*\) dev 1/write 1040 8 \1/' \
	-e 's/^write 0 8 fua \(.*\) dev 1/write 1024 8 fua \1/' \
	-e 's/ dev 1//' "$TEST_TMP/broken.fls" >"$TEST_TMP/single.fls"
! grep -q "dev 1" "$TEST_TMP/single.fls" || _fail "single.fls still names device 1"
"$MKLOG" -o "$TEST_TMP/single.log" "$TEST_TMP/single.fls"
got=$(violations single one-device)
[ -z "$got" ] || _fail "one-device reading: checker failed at '$got'"
echo "read as one device, the same trace passes: the joint order is what catches it"

# One image of all devices holds each at the offset info gives it, with
# the per-device images' contents.
# With the reader thread on and off (FLUSHLOG_READER): a device's replay
# reads its own entries only.
for p in start flush:1 flush:2 flush:3 end; do
	reader=$((${#p} % 2))
	FLUSHLOG_READER=$reader "$FLUSHLOG" replay -q -o "all=$TEST_TMP/all.img" -o "0=$TEST_TMP/d0.img" \
		-o "1=$TEST_TMP/d1.img" --to "$p" "$TEST_TMP/broken.log" ||
		_fail "replay all= --to $p, FLUSHLOG_READER=$reader"
	dd if="$TEST_TMP/all.img" of="$TEST_TMP/s0.img" bs=512 count=2048 status=none
	dd if="$TEST_TMP/all.img" of="$TEST_TMP/s1.img" bs=512 skip=2048 count=1024 status=none
	_same_image "$TEST_TMP/d0.img" "$TEST_TMP/s0.img" "all= at $p, device 0"
	_same_image "$TEST_TMP/d1.img" "$TEST_TMP/s1.img" "all= at $p, device 1"
done
[ "$(stat -c %s "$TEST_TMP/all.img")" = $((3072 * 512)) ] ||
	_fail "the image of all devices is $(stat -c %s "$TEST_TMP/all.img") bytes"
[ "$(jq -c '[.devices[].image_sector]' "$TEST_TMP/info.json")" = '[0,2048]' ] ||
	_fail "image sectors: $(jq -c .devices "$TEST_TMP/info.json")"
# a crash state is one image of every device: --state takes a bare IMAGE
"$FLUSHLOG" replay -q -o "$TEST_TMP/state.img" --state 3 "$TEST_TMP/broken.log" ||
	_fail "replay --state 3 of a log of two devices failed"
"$FLUSHLOG" replay -q -o "all=$TEST_TMP/all.img" --to flush:2 "$TEST_TMP/broken.log"
_same_image "$TEST_TMP/all.img" "$TEST_TMP/state.img" "--state 3 against all= --to flush:2"
echo "one image of all devices equals the per-device images"

# check hands the checker one image of all devices, and FLUSHLOG_DEVICES
# says where each is; prefix and epoch states alike.
cat >"$TEST_TMP/checker" <<EOS
#!/usr/bin/env bash
set -e
read -r dev0 dev1 <<<"\$FLUSHLOG_DEVICES"
[ "\$dev0 \$dev1" = "0+2048 2048+1024" ] || { echo "FLUSHLOG_DEVICES=\$FLUSHLOG_DEVICES"; exit 2; }
dd if="\$1" of="\$1.d0" bs=512 count=8 status=none
dd if="\$1" of="\$1.d1" bs=512 skip=2048 count=8 status=none
trap 'rm -f "\$1.d0" "\$1.d1"' EXIT
if cmp -s -n 4096 "\$1.d1" "$TEST_TMP/d1-c.img"; then
	cmp -s -n 4096 "\$1.d0" "$TEST_TMP/d0-w.img" || { echo "commit without its data"; exit 1; }
fi
exit 0
EOS
chmod +x "$TEST_TMP/checker"
for log in broken correct; do
	rc=0
	"$FLUSHLOG" check -q -k --states prefix,epoch -K 2 --json -w "$TEST_TMP" \
		"$TEST_TMP/$log.log" -- "$TEST_TMP/checker" {} >"$TEST_TMP/$log.json" || rc=$?
	failed=$(jq -r '.states[] | select(.result != "pass") | .state' "$TEST_TMP/$log.json" | tr '\n' ' ')
	total=$(jq '.states | length' "$TEST_TMP/$log.json")
	echo "$log: $total states, failed: ${failed:-none}"
	if [ $log = broken ]; then
		if [ "$rc" != 1 ] || [ -z "$failed" ]; then
			_fail "broken writer: check exit $rc, failed '$failed'"
		fi
	elif [ "$rc" != 0 ] || [ -n "$failed" ]; then
		_fail "correct writer: check exit $rc, failed '$failed'"
	fi
done
# the prefix state at C is among the broken log's failures
jq -e '.states[] | select(.spec == "flush:2" and .result == "fail")' \
	"$TEST_TMP/broken.json" >/dev/null || _fail "broken writer: flush:2 passed check"

# Bad device numbers and requests.
_expect_exit 2 "$FLUSHLOG" replay -q -o "$TEST_TMP/x.img" "$TEST_TMP/broken.log"
grep -q "the log holds 2 devices: name the image of each as DEV=IMAGE" "$TEST_TMP/stderr" ||
	_fail "no DEV=: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$FLUSHLOG" replay -q -o "2=$TEST_TMP/x.img" "$TEST_TMP/broken.log"
grep -q "the log holds 2 devices" "$TEST_TMP/stderr" || _fail "2=: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$FLUSHLOG" replay -q -o "0=$TEST_TMP/x.img" -o "0=$TEST_TMP/y.img" \
	"$TEST_TMP/broken.log"
grep -q "names its device twice" "$TEST_TMP/stderr" || _fail "0= twice: $(cat "$TEST_TMP/stderr")"
[ ! -e "$TEST_TMP/x.img" ] || _fail "a refused replay wrote an image"
# an entry of device 2 in a log of 2; a version 2 log with a device table
sed 's/^flush ticks 9 10 /flush ticks 9 10 baddev 2 /' "$TEST_TMP/broken.fls" >"$TEST_TMP/bad.fls"
"$MKLOG" -o "$TEST_TMP/bad.log" "$TEST_TMP/bad.fls"
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/bad.log"
grep -q "entry 4 at offset [0-9]*: device 2 of a log of 2 devices" "$TEST_TMP/stderr" ||
	_fail "device 2: $(cat "$TEST_TMP/stderr")"
sed 's/^version 3$/version 2/' "$TEST_TMP/broken.fls" >"$TEST_TMP/bad.fls"
"$MKLOG" -o "$TEST_TMP/bad.log" "$TEST_TMP/bad.fls"
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/bad.log"
grep -q "super block: a version 2 log has a device table" "$TEST_TMP/stderr" ||
	_fail "version 2 with devices: $(cat "$TEST_TMP/stderr")"
# a device number no target used is listed as absent: no entry may name it
cat >"$TEST_TMP/absent.fls" <<'EOS'
device 2048
adddevice 0 0
adddevice 1024
version 3
write 0 8 seed 1 ticks 1 2
write 16 8 seed 3 ticks 3 4 dev 2
flush ticks 5 6 dev 2
EOS
"$MKLOG" -o "$TEST_TMP/absent.log" "$TEST_TMP/absent.fls"
"$FLUSHLOG" info "$TEST_TMP/absent.log" >"$TEST_TMP/absent.info" ||
	_fail "a log with an absent device is refused"
grep -q "data device 1: *absent" "$TEST_TMP/absent.info" ||
	_fail "info: $(cat "$TEST_TMP/absent.info")"
"$FLUSHLOG" replay -q -o "2=$TEST_TMP/d2.img" "$TEST_TMP/absent.log" ||
	_fail "replay of device 2 failed"
_same_image "$TEST_TMP/d1-x.img" "$TEST_TMP/d2.img" "device 2 at the end"
_expect_exit 2 "$FLUSHLOG" replay -q -o "1=$TEST_TMP/x.img" "$TEST_TMP/absent.log"
grep -q "lists that one as absent" "$TEST_TMP/stderr" || _fail "1=: $(cat "$TEST_TMP/stderr")"
sed 's/^flush ticks 5 6 dev 2$/flush ticks 5 6 baddev 1/' "$TEST_TMP/absent.fls" >"$TEST_TMP/bad.fls"
"$MKLOG" -o "$TEST_TMP/bad.log" "$TEST_TMP/bad.fls"
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/bad.log"
grep -q "entry 2 at offset [0-9]*: device 1, which the super block lists as absent" "$TEST_TMP/stderr" ||
	_fail "absent device's entry: $(cat "$TEST_TMP/stderr")"
# devices too large for one image of them all
{ echo "device 2048"; for i in 1 2 3 4 5 6 7 8; do echo "adddevice $((1 << 52))"; done
  echo "version 3"; echo "write 0 8 seed 1"; } >"$TEST_TMP/huge.fls"
"$MKLOG" -o "$TEST_TMP/huge.log" "$TEST_TMP/huge.fls"
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/huge.log"
grep -q "super block: devices of [0-9]* sectors in all: more than an image can hold" "$TEST_TMP/stderr" ||
	_fail "huge devices: $(cat "$TEST_TMP/stderr")"
# a device's data is its own: another device's bad checksum does not stop it
read -r _ _ eoff _ < <("$MKLOG" -l -o "$TEST_TMP/l.log" "$TEST_TMP/broken.fls" | sed -n 2p)
cp "$TEST_TMP/broken.log" "$TEST_TMP/baddata.log"
printf 'X' | dd of="$TEST_TMP/baddata.log" bs=1 seek=$((eoff + 600)) conv=notrunc status=none
for reader in 0 1; do
	FLUSHLOG_READER=$reader "$FLUSHLOG" replay -q -o "0=$TEST_TMP/d0.img" "$TEST_TMP/baddata.log" ||
		_fail "device 0's replay read device 1's data (FLUSHLOG_READER=$reader)"
	FLUSHLOG_READER=$reader _expect_exit 3 "$FLUSHLOG" replay -q -o "1=$TEST_TMP/d1.img" "$TEST_TMP/baddata.log"
done
echo "bad device numbers are refused"
