#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every command, and every tool shipped beside flushlog, has --help and a
# man page, and every man page is of one of them (or flushlog(1) itself); every option --help shows, long and
# short, is in that man page, and flushlog(1) has the top level's; every
# command and the top level print the one version for --version and -V;
# every page (the man1 and man3 pages, and flushlog-format(5) made from
# docs/log-format.md) renders without warnings.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no

man=$FLUSHLOG_TOP/userspace/man

# _documents PAGE HELPFILE: each option HELPFILE lists is in PAGE
_documents() {
	local page=$1 help=$2 opt
	while read -r opt; do
		# roff writes '-' as '\-'
		grep -qF -- "${opt//-/\\-}" "$page" ||
			_fail "$(basename "$page") does not document $opt"
	done < <({ grep -oE -- '--[a-z][a-z-]*' "$help"
		   grep -oE -- '^ +-[a-zA-Z],' "$help" | tr -d ' ,'; } | sort -u)
}

commands=$("$FLUSHLOG" --help | awk '/^commands:/ { on = 1; next } on && NF { print $1 } on && !NF { exit }')
[ -n "$commands" ] || _fail "flushlog --help lists no commands"
[ -f "$man/flushlog.1" ] || _fail "no flushlog.1"
"$FLUSHLOG" --help >"$TEST_TMP/help"
_documents "$man/flushlog.1" "$TEST_TMP/help"
version=$("$FLUSHLOG" --version)
[ "$("$FLUSHLOG" -V)" = "$version" ] || _fail "flushlog -V differs from --version"
# the tools make install ships beside flushlog have pages of their own
for tool in "$FLUSHLOG_TOP"/userspace/tools/*.c; do
	tool=$(basename "$tool" .c)
	[ -f "$man/$tool.1" ] || _fail "no man page for $tool"
	"$FLUSHLOG_BUILD/$tool" --help >"$TEST_TMP/help" || _fail "'$tool --help' failed"
	_documents "$man/$tool.1" "$TEST_TMP/help"
done
for c in $commands; do
	page=$man/flushlog-$c.1
	[ -f "$page" ] || _fail "no man page for '$c'"
	grep -q "flushlog-$c" "$man/flushlog.1" || _fail "flushlog.1 does not mention flushlog-$c"
	"$FLUSHLOG" "$c" --help >"$TEST_TMP/help" || _fail "'flushlog $c --help' failed"
	_documents "$page" "$TEST_TMP/help"
	for v in --version -V; do
		[ "$("$FLUSHLOG" "$c" "$v")" = "$version" ] ||
			_fail "'flushlog $c $v' does not print '$version'"
	done
	echo "$c: $(grep -coE -- '^ +(-., )?--' "$TEST_TMP/help") options documented"
done
for page in "$man"/*.1; do
	name=$(basename "$page" .1)
	[ "$name" = flushlog ] || [ -f "$FLUSHLOG_TOP/userspace/tools/$name.c" ] ||
		grep -qx "${name#flushlog-}" <<<"$commands" ||
		_fail "$name.1 is the page of no command"
done

# _renders PAGE [GROFF OPTIONS]: no warning from groff
_renders() {
	local page=$1 warnings
	shift
	warnings=$(groff -man -ww "$@" -z "$page" 2>&1)
	[ -z "$warnings" ] || _fail "$(basename "$page"): $warnings"
}

command -v groff >/dev/null || _skip "groff is not installed: no page rendered"
n=0
for page in "$man"/*.1 "$man"/*.3; do
	_renders "$page"
	n=$((n + 1))
done
if command -v go-md2man >/dev/null; then
	make -s -C "$FLUSHLOG_TOP" BUILD="$TEST_TMP/b" "$TEST_TMP/b/man/flushlog-format.5" >/dev/null ||
		_fail "flushlog-format.5 cannot be made"
	# Markdown's UTF-8 goes through preconv, as man(1) does (-k); its
	# wide tables and code lines cannot be justified, which is cosmetic
	_renders "$TEST_TMP/b/man/flushlog-format.5" -k -Wbreak
	n=$((n + 1))
else
	echo "go-md2man is not installed: flushlog-format.5 not rendered"
fi
echo "$n pages render without warnings"
