#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Hostile input gets an error, never a wild read: the libFuzzer harnesses
# of tests/fuzz (both log readers, point specs and state names, state
# enumeration and replay) run for about a minute in all, seeded from
# tests/data, and find no crash, leak, timeout or broken invariant.  A
# finding prints its input as hex; it is kept in
# BUILD/test-results/027-fuzz/crashes.  FL_FUZZ_SECONDS sets the time
# per harness (default 20); make fuzz SECONDS=N runs longer.
# asan: no (the harnesses carry their own ASan and UBSan)
. "$FLUSHLOG_TOP/tests/common.sh"

FUZZ_CC=${FUZZ_CC:-clang}

# _require_libfuzzer: clang links -fsanitize=fuzzer (libclang-rt-NN-dev).
_require_libfuzzer() {
	_require_cmd "$FUZZ_CC"
	echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' \
		>"$TEST_TMP/probe.c"
	"$FUZZ_CC" -fsanitize=fuzzer,address,undefined -o "$TEST_TMP/probe" \
		"$TEST_TMP/probe.c" >"$TEST_TMP/probe.err" 2>&1 ||
		_skip "$FUZZ_CC cannot link -fsanitize=fuzzer (no libFuzzer runtime: install libclang-rt-14-dev): $(head -n 1 "$TEST_TMP/probe.err")"
}

_require_libfuzzer
make -C "$FLUSHLOG_TOP" -s BUILD="$FLUSHLOG_BUILD" FUZZ_CC="$FUZZ_CC" fuzz-progs ||
	_fail "the fuzz harnesses do not build"
rm -rf "$FLUSHLOG_BUILD/test-results/027-fuzz"
"$FLUSHLOG_TOP/tests/fuzz/run" --build "$FLUSHLOG_BUILD" \
	--seconds "${FL_FUZZ_SECONDS:-20}" \
	--out "$FLUSHLOG_BUILD/test-results/027-fuzz" --corpus "$TEST_TMP/corpus" ||
	_fail "fuzzing found a crash, leak, timeout or broken invariant (inputs in $FLUSHLOG_BUILD/test-results/027-fuzz/crashes)"
