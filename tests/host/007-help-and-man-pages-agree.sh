#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every command, and every tool shipped beside flushlog, has --help and a
# man page, and every man page is of one of them (or flushlog(1) itself); every option --help shows, long and
# short, is in that man page, and flushlog(1) has the top level's; every
# command and the top level print the one version for --version and -V;
# every page (the man1 and man3 pages, and flushlog-format(5) made from
# docs/log-format.md) renders at 80 columns without warnings, tables
# included, and no alternating-font macro runs two words together.
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

# _renders PAGE: no warning from groff with its tables made (tbl) and
# every warning on, at the line length man(1) sets in an 80-column
# terminal (78n), UTF-8 through preconv as man(1) does; nor from man(1)
# itself at MANWIDTH=80 (its own tbl and groff warnings); no line of the
# page as shown wider than 80 columns; no words run together
_renders() {
	local page=$1 warnings
	warnings=$(groff -man -t -k -Tutf8 -ww -rLL=78n -z "$page" 2>&1)
	[ -z "$warnings" ] || _fail "$(basename "$page") at 80 columns: $warnings"
	if command -v man >/dev/null; then
		warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		[ -z "$warnings" ] || _fail "$(basename "$page"), man --warnings at MANWIDTH=80: $warnings"
	fi
	# tbl says nothing of a table whose expanding column cannot shrink,
	# nor troff of a long line of an example: the page as shown must fit
	warnings=$(groff -man -t -k -Tutf8 -rLL=78n -P-cbou "$page" |
		perl -CS -ne 'chomp; printf "line %d, %d columns: %s\n", $., length, $_ if length > 80')
	[ -z "$warnings" ] || _fail "$(basename "$page") is wider than 80 columns: $warnings"
	_words_apart "$page"
}

# _words_apart PAGE: an alternating-font macro (.BR, .IR, .BI, ...) sets
# its arguments with no space between them, so two words given as two of
# its arguments run together ("fl_log_states),howmanyentriesit" from
# ".BR fl_log_states ), how many entries it"): no argument may end in a
# word of two letters where the next begins with one (a single letter, a
# variable such as K in ".IR K th", and escapes such as \(dq are no words)
_words_apart() {
	local bad
	bad=$(awk '
		function split_args(line,   i, c, quoted, cur, started, n) {
			n = 0; cur = ""; quoted = 0; started = 0
			for (i = 1; i <= length(line); i++) {
				c = substr(line, i, 1)
				if (c == "\"") { quoted = !quoted; started = 1; continue }
				if (c == " " && !quoted) {
					if (started) { arg[++n] = cur; cur = ""; started = 0 }
					continue
				}
				cur = cur c; started = 1
			}
			if (started) arg[++n] = cur
			return n
		}
		/^\.(BR|RB|IR|RI|BI|IB)( |$)/ {
			delete arg
			n = split_args(substr($0, 5))
			for (i = 1; i < n; i++)
				if (arg[i] ~ /(^|[^\\(])[A-Za-z][A-Za-z]$/ && arg[i + 1] ~ /^[A-Za-z][A-Za-z]/)
					printf "line %d: \"%s\": %s and %s run together\n", FNR, $0, arg[i], arg[i + 1]
		}' "$1")
	[ -z "$bad" ] || _fail "$(basename "$1"): $bad"
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
	_renders "$TEST_TMP/b/man/flushlog-format.5"
	n=$((n + 1))
else
	echo "go-md2man is not installed: flushlog-format.5 not rendered"
fi
echo "$n pages render at 80 columns without warnings, no words run together"
