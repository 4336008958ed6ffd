#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Two flushlog devices write one log, as devices 0 and 1 (device=N):
#  - a second device with a number in use (or none, so 0), with other
#    log options, or with a number past 15 is refused with a clear error;
#  - a toy journal writes a data block W on device 0 and a commit record
#    C on device 1 (O_DSYNC); the broken writer flushes device 1 instead
#    of device 0 before C, the correct one device 0.  Both logs are
#    version 3 logs of two devices whose replay equals both data disks,
#    and the checker "C on device 1 means W on device 0", run by check
#    on every prefix and epoch state, fails on the broken log and passes
#    on the correct one: the target records which device each flush was
#    for, and the joint order catches the bug;
#  - with device 0 suspended device 1 goes on logging and the log stays
#    open (dirty); a reload of device 0 keeps the one log (same uuid)
#    while device 1 shares it; once both are gone the log is clean and
#    replays per device to both disks byte for byte;
#  - a spent number is refused at resume, a device that shrinks goes on
#    in the shared log with a RESIZE entry, and a reload with other
#    options is refused unless its table says new_log.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest
_require_cmd jq

truncate -s 64M "$TEST_TMP/data0.img" "$TEST_TMP/log.img" "$TEST_TMP/log2.img" "$TEST_TMP/log3.img"
truncate -s 32M "$TEST_TMP/data1.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/shared-log.sh" \
	--disk "data0=$TEST_TMP/data0.img" --disk "data1=$TEST_TMP/data1.img" \
	--disk "log=$TEST_TMP/log.img" --disk "log2=$TEST_TMP/log2.img" \
	--disk "log3=$TEST_TMP/log3.img"

{ yes data-block-W || true; } | head -c 4096 >"$TEST_TMP/w"
{ yes commit-record-C || true; } | head -c 4096 >"$TEST_TMP/c"
cat >"$TEST_TMP/checker" <<EOS
#!/usr/bin/env bash
read -r dev0 dev1 <<<"\$FLUSHLOG_DEVICES"
if cmp -s -n 4096 -i "\$((\${dev1%+*} * 512)):0" "\$1" "$TEST_TMP/c"; then
	cmp -s -n 4096 -i "\$((\${dev0%+*} * 512)):0" "\$1" "$TEST_TMP/w" ||
		{ echo "commit record without its data block"; exit 1; }
fi
exit 0
EOS
chmod +x "$TEST_TMP/checker"
# what the toy leaves on the disks, which were zeroes: W and C at sector 0
truncate -s 64M "$TEST_TMP/want0.img"
truncate -s 32M "$TEST_TMP/want1.img"
dd if="$TEST_TMP/w" of="$TEST_TMP/want0.img" conv=notrunc status=none
dd if="$TEST_TMP/c" of="$TEST_TMP/want1.img" conv=notrunc status=none

for log in log log2; do
	"$FLUSHLOG" info --json "$TEST_TMP/$log.img" >"$TEST_TMP/info.json"
	jq -e '.version == 3 and .clean and ([.devices[] | .sectors] == [131072, 65536])' \
		"$TEST_TMP/info.json" >/dev/null ||
		_fail "$log: $(jq -c '{version, clean, devices}' "$TEST_TMP/info.json")"
	"$FLUSHLOG" replay -q -o "0=$TEST_TMP/r0.img" -o "1=$TEST_TMP/r1.img" "$TEST_TMP/$log.img"
	_same_image "$TEST_TMP/want0.img" "$TEST_TMP/r0.img" "$log: device 0 at the end"
	_same_image "$TEST_TMP/want1.img" "$TEST_TMP/r1.img" "$log: device 1 at the end"
	rc=0
	"$FLUSHLOG" check -q -k --states prefix,epoch --json -w "$TEST_TMP" \
		"$TEST_TMP/$log.img" -- "$TEST_TMP/checker" {} >"$TEST_TMP/$log.json" || rc=$?
	failed=$(jq -r '.states[] | select(.result != "pass") | .state' "$TEST_TMP/$log.json" | tr '\n' ' ')
	echo "$log: $(jq '.states | length' "$TEST_TMP/$log.json") states, exit $rc, failed: ${failed:-none}"
	"$FLUSHLOG" dump "$TEST_TMP/$log.img"
	if [ $log = log ]; then
		if [ "$rc" != 1 ] || [ -z "$failed" ]; then
			_fail "the broken writer's log passed check"
		fi
	elif [ "$rc" != 0 ]; then
		_fail "the correct writer's log failed check: $failed"
	fi
done
