# SPDX-License-Identifier: GPL-2.0
# Helpers for scripts that run inside the guest (qemu/run-guest), in the
# shape of fstests' common/dmlogwrites: _flushlog_init, _flushlog_mark,
# _flushlog_remove.  Disks are /dev/flushlog/NAME, named by the host.
# shellcheck shell=bash

set -euo pipefail

: "${FLUSHLOG_TOP:?run through qemu/run-guest}"
# the guest's scratch space: its /tmp is the host's, read-only
: "${TMPDIR:?run through qemu/run-guest}"
export FLUSHLOG=${FLUSHLOG_BUILD:-$FLUSHLOG_TOP/build}/flushlog

_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# _flushlog_init NAME DATA LOG [FEATURES...]: a flushlog device over DATA
# logging to LOG, /dev/mapper/NAME
_flushlog_init() {
	local name=$1 data=$2 log=$3 table
	shift 3
	table="0 $(blockdev --getsz "$data") flushlog $data $log"
	(($#)) && table+=" $# $*"
	dmsetup create "$name" --table "$table"
}

_flushlog_mark() {
	dmsetup message "$1" 0 mark "$2"
}

_flushlog_status() {	# the INFO status words after "flushlog"
	dmsetup status "$1" | sed -n 's/^[0-9]* [0-9]* flushlog //p'
}

# _flushlog_field DEV NAME: the value of NAME=VALUE in DEV's status (NAME
# state: its first word, which has no name); fails if there is none
_flushlog_field() {
	local status
	status=$(_flushlog_status "$1")
	awk -v name="$2" -v dev="$1" '
		name == "state" { print $1; found = 1; exit }
		{
			for (i = 2; i <= NF; i++)
				if (index($i, name "=") == 1) {
					print substr($i, length(name) + 2)
					found = 1
					exit
				}
		}
		END {
			if (!found) {
				printf "no %s= in the status of %s: %s\n", name, dev, $0 >"/dev/stderr"
				exit 1
			}
		}' <<<"$status"
}

# _expect_reload_refused NAME TABLE MESSAGE: reloading NAME with TABLE is
# refused, when the table is loaded or else at its resume (which checks
# again), and the kernel says MESSAGE
_expect_reload_refused() {
	local name=$1 table=$2 want=$3
	dmesg -C
	if dmsetup reload "$name" --table "$table" 2>/dev/null &&
	   dmsetup resume "$name" 2>/dev/null; then
		_fail "reload of $name with '$table' was resumed"
	fi
	dmesg | grep -qF "$want" ||
		_fail "reload of $name with '$table': expected '$want', got: $(dmesg | tail -n 3)"
	echo "refused as expected: reload of $name with '$table' -> $want"
}

_flushlog_remove() {
	dmsetup remove "$1"
}

# _expect_table_error TABLE MESSAGE: creating TABLE fails, and the kernel
# says MESSAGE (ti->error) about it
_expect_table_error() {
	local table=$1 want=$2
	dmesg -C
	if dmsetup create bad --table "$table" 2>/dev/null; then
		dmsetup remove bad
		_fail "table '$table' was accepted"
	fi
	dmesg | grep -qF "$want" ||
		_fail "table '$table': expected '$want' in dmesg, got: $(dmesg | tail -n 3)"
	echo "refused as expected: $table -> $want"
}
