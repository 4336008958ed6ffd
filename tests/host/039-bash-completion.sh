#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion (userspace/completion/flushlog) completes flushlog's
# commands and options, point specs and mark labels of the log on the
# command line (a label split at ':' by bash, as it splits them), comma
# lists, and scripts/crashtest's options and their values (--state: the
# failing states of the --recheck RUN on the line).
. "$FLUSHLOG_TOP/tests/common.sh"

# shellcheck source=userspace/completion/flushlog
. "$FLUSHLOG_TOP/userspace/completion/flushlog"

# _complete WORD...: COMPREPLY for the last WORD, the function called as
# bash calls it: COMP_WORDS and COMP_CWORD set, and in a shell without
# errexit or nounset (compopt fails outside a real completion: no matter)
_complete() {
	local fn
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	fn=$(complete -p "${1##*/}" | awk '{ print $(NF - 1) }')
	set +eu
	"$fn" "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" 2>/dev/null
	set -eu
}

# _completes WANT WORD...: completing the last WORD offers WANT (words, in
# order, space separated)
_completes() {
	local want=$1
	shift
	_complete "$@"
	[ "${COMPREPLY[*]}" = "$want" ] ||
		_fail "completing '$*': got '${COMPREPLY[*]}', expected '$want'"
}

# _offers WANT WORD...: WANT is among what completing the last WORD offers
_offers() {
	local want=$1
	shift
	_complete "$@"
	printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$want" ||
		_fail "completing '$*' does not offer '$want': ${COMPREPLY[*]}"
}

printf '%s\n' 'device 2048' 'write 0 8' 'flush' 'mark café' 'write 8 8 fua' 'mark commit-1' \
	'mark commit-2' >"$TEST_TMP/s.fls"
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/s.fls"
log=$TEST_TMP/log
fl=$FLUSHLOG

_completes "replay replay-log" "$fl" re
_completes "replay-log" "$fl" replay-
_completes "check" "$fl" help ch
_offers "--version" "$fl" ""
_completes "--report" "$fl" check --rep
_offers "--json" "$fl" dump -
_offers "-V" "$fl" dump -
_offers "-q" "$fl" info -
_completes "--quick --quiet" "$fl" info --qu
# replay-log's: the marks of its --log, its --check steps
_completes "commit-1 commit-2" "$fl" replay-log --log "$log" --end-mark comm
_completes "flush fua" "$fl" replay-log --log "$log" --check f
echo "commands and options"

# point specs and mark labels, from the log on the command line
_completes "flush:1 flush:2" "$fl" replay -o "$TEST_TMP/x.img" "$log" --to fl
_completes "commit-1 commit-2" "$fl" replay -o "$TEST_TMP/x.img" "$log" --to mark : com
_completes "café" "$fl" replay "$log" -o "$TEST_TMP/x.img" --from mark : ca
_offers "point:3" "$fl" check -k "$log" --from ""
_completes "flush,mark" "$fl" check --points flush,m
_completes "epoch" "$fl" check --states ep
_completes "in-place" "$fl" check --images in
_offers "$log" "$fl" info "$TEST_TMP/l"
echo "specs, labels and lists"

ct=$FLUSHLOG_TOP/scripts/crashtest
_completes "--ordering --ops --oracle --out" "$ct" --o
_completes "--mkfs-opts" "$ct" --mk
_completes "default on off" "$ct" --ordering ""
_completes "xfs xfs-logdev" "$ct" --fs x
_completes "epoch,torn" "$ct" --states epoch,t
# --state: the failures of the --recheck RUN on the line
run=$TEST_TMP/run
mkdir -p "$run/failures/point-3" "$run/failures/state-5+7"
printf '%s\n' '{"states":[' '{"state":"4","result":"fail"},' '{"state":"5","result":"pass"},' \
	'{"state":"5+7","result":"timeout"}' ']}' >"$run/report.json"
_completes "point-3 state-5+7 4 5+7" "$ct" --recheck "$run" --state ""
_completes "state-5+7" "$ct" --recheck "$run" --state st
_completes "" "$ct" --state ""
echo "crashtest options and values"
