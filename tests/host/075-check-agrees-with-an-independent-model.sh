#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check hands its checker exactly the crash states that an
# independent model of the documents allows, and names each one for what
# it holds.  tests/tools/fl-model.c is that model, written from
# docs/log-format.md, docs/crash-models.md and flushlog-check(1) alone
# (durability by flush and FUA and ticks, per device; the newer-write
# rule; discards that keep their data; torn writes cut at the device's
# blocks; epoch states of up to K writes; the start a crash point).  It
# makes random logs (1-3 small devices of 512-byte and 4 KiB blocks, deep
# queues, overlaps, FUA, preflush, discards, write-zeroes, marks; all four
# formats), runs check --states prefix,epoch,torn,discard -K 1 or 2 with
# a checker that records each image's digest, and compares both ways:
# every image handed over is a state of the model and the state its name
# says; every state of the model is handed over.  A mismatch is shrunk to
# a minimal log, printed with the state that differs.  The logs of
# tests/data/model-*.fls are logs on which the two once differed, each
# a case of its own.
#
# FL_MODEL_SEED, FL_MODEL_COUNT and FL_MODEL_SECONDS choose the logs
# (default seed 29, 200 logs, no time limit); a long run is, for example,
#   FL_MODEL_SEED=7 FL_MODEL_COUNT=1000000 FL_MODEL_SECONDS=3600 \
#       TIMEOUT_S=0 make check-host TESTS=075
# or build/tests/fl-model run --seed 7 --count 1000000 --seconds 3600.
. "$FLUSHLOG_TOP/tests/common.sh"

MODEL=$FLUSHLOG_BUILD/tests/fl-model
seed=${FL_MODEL_SEED:-29}
count=${FL_MODEL_COUNT:-200}
seconds=${FL_MODEL_SECONDS:-0}
opts=(--flushlog "$FLUSHLOG" --mklog "$MKLOG" --workdir "$TEST_TMP")
# under a sanitizer every checker starts some ten times slower: the
# first 25 of the same logs
if ldd "$FLUSHLOG" 2>/dev/null | grep -q libasan; then
	count=${FL_MODEL_COUNT:-25}
fi

# the logs on which the model and flushlog once differed
for script in "$DATA"/model-*.fls; do
	if ! "$MODEL" check "${opts[@]}" "$script" >"$TEST_TMP/one.out" 2>&1; then
		cat "$TEST_TMP/one.out" >&2
		_fail "$(basename "$script"): flushlog check and the model differ (above)"
	fi
	echo "$(basename "$script"): $(sed 's/^[^:]*: //' "$TEST_TMP/one.out")"
done

rc=0
"$MODEL" run "${opts[@]}" --seed "$seed" --count "$count" --seconds "$seconds" \
	>"$TEST_TMP/run.out" 2>&1 || rc=$?
if ((rc)); then
	cat "$TEST_TMP/run.out" >&2
	_fail "random logs of seed $seed: flushlog check and the model differ (above; exit $rc)"
fi
grep -v '^coverage:' "$TEST_TMP/run.out"

# 200 logs or more reached what the model is for: several devices,
# dm-log-writes, the newer-write rule (a FUA write over an older one
# waiting in the cache), each model's states, the known gaps' cases
coverage=$(grep '^coverage:' "$TEST_TMP/run.out")
echo "$coverage"
logs=$(echo "$coverage" | grep -o ' logs=[0-9]*' | cut -d= -f2)
((logs >= 200)) || exit 0
for want in several-devices=20 log-writes=20 newer-write-kept=20 epoch=1000 \
	torn=1000 discard=50 fua-discards=10 log-writes-preflush=5 last-tick=3; do
	got=$(echo "$coverage" | grep -o " ${want%=*}=[0-9]*" | cut -d= -f2)
	((got >= ${want#*=})) ||
		_fail "coverage: ${want%=*} is ${got:-missing}, expected at least ${want#*=}"
done
