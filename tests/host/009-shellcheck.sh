#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every shell script of the project passes shellcheck.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
_require_cmd shellcheck

cd "$FLUSHLOG_TOP"
# the project's files: git's list, or in a copy outside git (or inside
# another repository that ignores it: git lists nothing) every file but
# the build's
project_files() {
	local files
	files=$(git ls-files --cached --others --exclude-standard 2>/dev/null) || files=
	if [ -n "$files" ]; then
		printf '%s\n' "$files"
	else
		find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\./||'
	fi
}
mapfile -t scripts < <(project_files | while read -r f; do
	case $f in *.sh) echo "$f" ;; *) head -c 64 "$f" 2>/dev/null | grep -Eq '^#!.*(bash|busybox sh)|^# shellcheck shell=bash' && echo "$f" ;; esac
done; echo tests/common.sh)
# tests/common.sh is always there: one is none found
((${#scripts[@]} > 1)) || _fail "no scripts found"
shellcheck -x -e SC1091 "${scripts[@]}"
echo "${#scripts[@]} scripts clean"
