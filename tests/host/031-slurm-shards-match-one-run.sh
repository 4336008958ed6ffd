#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/slurm-check on a real Slurm: a one-node cluster started here
# (munged, slurmctld and slurmd from Debian's packages, every file of
# theirs in a folder of their own, nothing in /etc) runs a 4-task array
# over a log whose broken writer makes some states fail; the merged
# report gives every state the verdict that one unsharded flushlog check
# gives it.  Every daemon and job is stopped at the end, on failure too.
# Skipped when Slurm cannot run here (not root, not installed, slurmd
# not up within 30 seconds).
. "$FLUSHLOG_TOP/tests/common.sh"

((EUID == 0)) || _skip "not root: slurmd runs jobs as their users"
for c in munged slurmctld slurmd sbatch sinfo squeue scancel jq; do
	_require_cmd "$c"
done

# munged wants a socket folder that everyone may enter: not TEST_TMP (0700)
cluster=$(mktemp -d /tmp/flushlog-slurm.XXXXXX)
chmod 755 "$cluster"
conf=$cluster/slurm.conf
daemons=()

# cluster_pids: what still runs of this cluster (the Slurm daemons, job
# steps, jobs and their checkers): each has SLURM_CONF=$conf in its
# environment, which neither this shell nor anything outside has
cluster_pids() {
	local p
	for p in /proc/[0-9]*; do
		grep -qszxF "SLURM_CONF=$conf" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
	done
	return 0
}

# stop: cancel the jobs, stop the daemons this test started (by their
# PIDs), then whatever of the cluster is left; fail if anything survives
stop() {
	local rc=$? pid left
	set +e
	# the jobs first, while slurmctld and slurmd are there to end them
	if SLURM_CONF=$conf scancel --quiet --user=root >/dev/null 2>&1; then
		for _ in $(seq 50); do
			[ -z "$(SLURM_CONF=$conf squeue -h 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	for pid in "${daemons[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for _ in $(seq 50); do
		left=$(cluster_pids; for pid in "${daemons[@]}"; do kill -0 "$pid" 2>/dev/null && echo "$pid"; done)
		[ -z "$left" ] && break
		sleep 0.2
	done
	for pid in $left; do
		kill -KILL "$pid" 2>/dev/null
	done
	sleep 0.5
	left=$(cluster_pids; for pid in "${daemons[@]}"; do kill -0 "$pid" 2>/dev/null && echo "$pid"; done)
	if [ -n "$left" ]; then
		echo "FAIL: still running after the test: $(ps -o pid=,args= -p "${left//$'\n'/,}")" >&2
		rc=1
	fi
	rm -rf "$cluster"
	exit "$rc"
}
trap stop EXIT

# free_port: a TCP port nothing listens on, with the next one free too
free_port() {
	local port listening addr st
	listening=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		while read -r _ addr _ st _; do
			[ "$st" = 0A ] && echo $((16#${addr##*:}))
		done)
	for _ in $(seq 100); do
		port=$((20000 + RANDOM % 20000))
		grep -qxE "$port|$((port + 1))" <<<"$listening" || { echo "$port"; return 0; }
	done
	return 1
}

port=$(free_port) || _skip "no free pair of TCP ports"
host=$(hostname -s)
mkdir -p "$cluster/state" "$cluster/spool"
dd if=/dev/urandom of="$cluster/munge.key" bs=1024 count=1 status=none
chmod 400 "$cluster/munge.key"
cat >"$conf" <<EOF
ClusterName=flushlog-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$cluster/munge.sock
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/slurmctld.log
SlurmdLogFile=$cluster/slurmd.log
ReturnToService=2
NodeName=fl0 NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=flushlog Nodes=ALL Default=YES MaxTime=10 State=UP
EOF

start=$SECONDS
munged -F --key-file="$cluster/munge.key" --socket="$cluster/munge.sock" \
	--pid-file="$cluster/munged.pid" --log-file="$cluster/munged.log" \
	--seed-file="$cluster/munged.seed" >"$cluster/munged.out" 2>&1 &
daemons+=("$!")
for _ in $(seq 50); do
	[ -S "$cluster/munge.sock" ] && break
	sleep 0.1
done
[ -S "$cluster/munge.sock" ] || { cat "$cluster/munged.out"; _skip "munged did not start"; }
SLURM_CONF=$conf slurmctld -D -f "$conf" >"$cluster/slurmctld.out" 2>&1 &
daemons+=("$!")
SLURM_CONF=$conf slurmd -D -f "$conf" -N fl0 >"$cluster/slurmd.out" 2>&1 &
daemons+=("$!")
state=
for _ in $(seq 60); do
	state=$(SLURM_CONF=$conf sinfo -h -N -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.5
done
if [ "$state" != idle ]; then
	tail -n 20 "$cluster"/*.out "$cluster"/*.log 2>/dev/null
	_skip "slurmd did not come up within 30 s (node state '${state:-none}')"
fi
echo "one-node cluster up in $((SECONDS - start)) s"

_broken_journal "$TEST_TMP/journal"
log=$TEST_TMP/journal/log
check=$TEST_TMP/journal/check
_expect_exit 1 "$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" \
	--report "$TEST_TMP/one.json" "$log" -- "$check" {}
total=$(jq '.states | length' "$TEST_TMP/one.json")
failed=$(jq '.failed' "$TEST_TMP/one.json")
((failed > 0 && failed < total)) || _fail "the log should have passing and failing states: $failed of $total failed"

start=$SECONDS
rc=0
SLURM_CONF=$conf FLUSHLOG=$FLUSHLOG timeout 150 "$FLUSHLOG_TOP/scripts/slurm-check" \
	--shards 4 --out "$TEST_TMP/shards" --sbatch "--time=2" \
	--states epoch "$log" -- "$check" {} >"$TEST_TMP/slurm-check.out" 2>&1 || rc=$?
cat "$TEST_TMP/slurm-check.out"
if ((rc != 1)); then
	SLURM_CONF=$conf squeue
	tail -n 5 "$TEST_TMP"/shards/shard-*.out 2>/dev/null
	_fail "slurm-check exited $rc, expected 1 (failing states)"
fi
echo "4-task array and merge in $((SECONDS - start)) s"
for k in 0 1 2 3; do
	[ -s "$TEST_TMP/shards/shard-$k.out" ] || _fail "no output of task $k: did Slurm run it?"
	jq -e --arg s "$k/4" '.shard == $s and .finished' "$TEST_TMP/shards/shard-$k.json" >/dev/null ||
		_fail "shard-$k.json: $(head -n 1 "$TEST_TMP/shards/shard-$k.json")"
done
_same_verdicts "$TEST_TMP/one.json" "$TEST_TMP/shards/report.json" "4 Slurm shards merged"
jq -e --argjson n "$total" '.finished and .checked == $n' "$TEST_TMP/shards/report.json" >/dev/null ||
	_fail "merged report: $(head -n 1 "$TEST_TMP/shards/report.json")"
if command -v xmllint >/dev/null; then
	xmllint --noout "$TEST_TMP/shards/junit.xml" || _fail "the merged junit.xml is not well-formed"
fi
echo "$total states, $failed failing: the same verdicts from 4 Slurm tasks as from one run"
