#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# docs/kubernetes/flushlog-check-job.yaml is an Indexed Job whose pods
# run every shard once: it parses, N is the same in completions,
# parallelism and SHARDS, the volumes it mounts exist, a shard that could
# not run fails the Job; and its pods' script, run here once for each
# JOB_COMPLETION_INDEX with /data and /scratch moved into the test's
# folder, gives reports that merge into the verdicts of one unsharded
# run.  (No cluster here: kubectl cannot validate without an API server.)
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq
_require_cmd python3
python3 -c 'import yaml' 2>/dev/null || _skip "python3-yaml is not installed"

manifest=$FLUSHLOG_TOP/docs/kubernetes/flushlog-check-job.yaml
# the fields the checks need, as "name value" lines; the script apart
python3 - "$manifest" "$TEST_TMP/pod-script" >"$TEST_TMP/fields" <<'EOF'
import sys, yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
if len(docs) != 1:
    sys.exit("expected one document, got %d" % len(docs))
job = docs[0]
spec = job["spec"]
pod = spec["template"]["spec"]
(container,) = pod["containers"]
env = {e["name"]: e.get("value") for e in container.get("env", [])}
print("apiVersion", job["apiVersion"])
print("kind", job["kind"])
print("completionMode", spec.get("completionMode"))
print("completions", spec.get("completions"))
print("parallelism", spec.get("parallelism"))
print("shards", env.get("SHARDS"))
print("restartPolicy", pod.get("restartPolicy"))
print("command", " ".join(container["command"]))
volumes = {v["name"] for v in pod.get("volumes", [])}
for m in container.get("volumeMounts", []):
    print("mount", m["mountPath"], "yes" if m["name"] in volumes else "no-such-volume")
for rule in spec.get("podFailurePolicy", {}).get("rules", []):
    codes = rule.get("onExitCodes", {})
    print("fails-job", rule["action"], codes.get("containerName"), codes.get("operator"),
          ",".join(str(v) for v in codes.get("values", [])))
(script,) = container["args"]
open(sys.argv[2], "w").write(script)
EOF
cat "$TEST_TMP/fields"

field() {	# field NAME: its value
	awk -v n="$1" '$1 == n { sub(/^[^ ]+ /, ""); print; exit }' "$TEST_TMP/fields"
}
want() {	# want NAME VALUE
	[ "$(field "$1")" = "$2" ] || _fail "$1 is '$(field "$1")', expected '$2'"
}
want apiVersion batch/v1
want kind Job
want completionMode Indexed
want restartPolicy Never
want command "/bin/sh -c"
n=$(field completions)
want parallelism "$n"
want shards "$n"
want fails-job "FailJob check In 2,3"
grep -q ' no-such-volume$' "$TEST_TMP/fields" && _fail "a mount names no volume: $(grep no-such-volume "$TEST_TMP/fields")"
grep -q '^mount /data yes$' "$TEST_TMP/fields" || _fail "no /data volume"
grep -q 'JOB_COMPLETION_INDEX' "$TEST_TMP/pod-script" || _fail "the pods' script does not read JOB_COMPLETION_INDEX"
sh -n "$TEST_TMP/pod-script" || _fail "the pods' script is not valid sh"

# the pods, one after another, on the test's data
_broken_journal "$TEST_TMP/journal"
data=$TEST_TMP/data
mkdir -p "$data" "$TEST_TMP/bin"
cp "$TEST_TMP/journal/log" "$data/log.img"
cp "$TEST_TMP/journal/check" "$data/check-state"
truncate -s 2M "$data/base.img"
ln -s "$FLUSHLOG" "$TEST_TMP/bin/flushlog"
sed -e "s|/data/|$data/|g" -e "s|/scratch|$TEST_TMP|g" "$TEST_TMP/pod-script" >"$TEST_TMP/pod.sh"
for ((k = 0; k < n; k++)); do
	rc=0
	PATH=$TEST_TMP/bin:$PATH JOB_COMPLETION_INDEX=$k SHARDS=$n sh "$TEST_TMP/pod.sh" >/dev/null || rc=$?
	((rc == 0)) || _fail "pod $k exited $rc: $(cat "$data/reports/shard-$k.out")"
done
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --base "$data/base.img" \
	--report "$TEST_TMP/one.json" "$data/log.img" -- "$data/check-state" {}
_expect_exit 1 "$FLUSHLOG" merge --report "$data/reports/report.json" "$data/reports"/shard-*.json
_same_verdicts "$TEST_TMP/one.json" "$data/reports/report.json" "the Job's $n pods merged"
echo "$n pods: $(tail -n 1 "$TEST_TMP/stdout")"
