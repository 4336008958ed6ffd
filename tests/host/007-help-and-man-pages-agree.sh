#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every command has --help and a man page; every option --help shows is in
# that man page; the pages render without warnings.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no

man=$FLUSHLOG_TOP/userspace/man
commands=$("$FLUSHLOG" --help | awk '/^commands:/ { on = 1; next } on && NF { print $1 } on && !NF { exit }')
[ -n "$commands" ] || _fail "flushlog --help lists no commands"
[ -f "$man/flushlog.1" ] || _fail "no flushlog.1"
for c in $commands; do
	page=$man/flushlog-$c.1
	[ -f "$page" ] || _fail "no man page for '$c'"
	grep -q "flushlog-$c" "$man/flushlog.1" || _fail "flushlog.1 does not mention flushlog-$c"
	"$FLUSHLOG" "$c" --help >"$TEST_TMP/help" || _fail "'flushlog $c --help' failed"
	while read -r opt; do
		# roff writes '-' as '\-'
		grep -qF -- "${opt//-/\\-}" "$page" ||
			_fail "flushlog-$c.1 does not document $opt"
	done < <(grep -oE -- '--[a-z][a-z-]*' "$TEST_TMP/help" | sort -u)
	echo "$c: $(grep -coE -- '^ +(-., )?--' "$TEST_TMP/help") options documented"
done
if command -v groff >/dev/null; then
	for page in "$man"/*.1; do
		warnings=$(groff -man -ww -z "$page" 2>&1)
		[ -z "$warnings" ] || _fail "$(basename "$page"): $warnings"
	done
fi
