#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Test 075's model can fail: each bug of tests/data/model-mutations.txt
# (durability order, torn cuts, the end of an epoch, the newer-write rule)
# is planted, one at a time, in a copy of the sources under TEST_TMP,
# flushlog is rebuilt there, and fl-model must find a log on which it
# differs from the model (logs of seed 29, leaving out the known gaps'
# cases).  The copy without a bug must pass the same logs: what fails is
# the bug, not the copy.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no (it builds a flushlog of its own, without sanitizers)

MODEL=$FLUSHLOG_BUILD/tests/fl-model
src=$TEST_TMP/src
max_logs=30
mkdir -p "$src"
cp -r "$FLUSHLOG_TOP/Makefile" "$FLUSHLOG_TOP/userspace" "$src/"
mkdir -p "$src/drivers"
cp -r "$FLUSHLOG_TOP/drivers/uapi" "$src/drivers/"

# build: the copy's flushlog, only what changed since the last build
build() {
	make -C "$src" -s -j2 build/flushlog >"$TEST_TMP/make.out" 2>&1 ||
		_fail "the copy does not build: $(tail -n 5 "$TEST_TMP/make.out")"
}

# model_run COUNT: fl-model on logs 0..COUNT-1 of seed 29 against the
# copy's flushlog, stopping at the first that differs; its output in
# TEST_TMP/run.out
model_run() {
	"$MODEL" run --flushlog "$src/build/flushlog" --mklog "$MKLOG" --workdir "$TEST_TMP" \
		--seed 29 --count "$1" --no-gaps --no-shrink >"$TEST_TMP/run.out" 2>&1
}

build
last=0
while IFS=$'\t' read -r name file expr why; do
	[[ -z $name || $name == \#* ]] && continue
	cp "$FLUSHLOG_TOP/$file" "$src/$file"
	sed -i "$expr" "$src/$file"
	! cmp -s "$FLUSHLOG_TOP/$file" "$src/$file" ||
		_fail "mutation $name no longer changes $file: mend tests/data/model-mutations.txt"
	build
	rc=0
	model_run "$max_logs" || rc=$?
	[ "$rc" = 1 ] || {
		cat "$TEST_TMP/run.out" >&2
		_fail "mutation $name ($why): fl-model exited $rc on $max_logs logs, expected 1 (a mismatch)"
	}
	caught=$(sed -n 's/^not ok log \([0-9]*\) .*/\1/p' "$TEST_TMP/run.out")
	[ -n "$caught" ] || _fail "mutation $name: no 'not ok' line: $(head -n 3 "$TEST_TMP/run.out")"
	((caught > last)) && last=$caught
	echo "$name ($why): caught by log $caught: $(grep -m1 '^not ok' "$TEST_TMP/run.out" | sed 's/^[^:]*: //')"
	cp "$FLUSHLOG_TOP/$file" "$src/$file"
done <"$DATA/model-mutations.txt"

# the copy as it is passes every log that caught a bug
build
model_run $((last + 1)) || {
	cat "$TEST_TMP/run.out" >&2
	_fail "the copy without a planted bug differs from the model too (above)"
}
echo "without a planted bug: $(head -n 1 "$TEST_TMP/run.out")"
