#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The table's feature arguments are written three times: in
# drivers/flushlog.rst (the user's page), in the comment above
# flushlog_ctr() (the grammar, as dm targets write it) and in the strings
# parse_features() compares.  The three give the same features with the
# same value forms (a literal such as on_full=fail, or a number such as
# max_pending=<n>), and the feature count the constructor accepts is the
# number of distinct features (each at most once) and what the page says.
# Read from the text, not from line numbers; a source the test can no
# longer read fails with what it looked for.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no

rst=$FLUSHLOG_TOP/drivers/flushlog.rst
src=$FLUSHLOG_TOP/drivers/dm-flushlog.c

# Each extractor prints one line per accepted form, "name" or "name=value",
# value a literal or <n> for a number, sorted.  A documented value that is
# not a lower-case literal (<MiB>, N) is a number.

# rst_features: the ``term`` lines of the "Table parameters" section that
# are not positional arguments (those the grammar line names as <term>)
rst_features() {
	awk '
	function norm(t,   n, v, i, k, alt) {
		n = index(t, "=")
		if (!n) { print t; return }
		k = split(substr(t, n + 1), alt, "|")
		for (i = 1; i <= k; i++)
			print substr(t, 1, n) (alt[i] ~ /^[a-z0-9_]+$/ ? alt[i] : "<n>")
	}
	/^=+$/ { in_sec = (prev == "Table parameters") }
	in_sec && /^  flushlog </ { grammar = $0 }
	in_sec && /^``[a-z_]+(=[^`]+)?``$/ {
		t = substr($0, 3, length($0) - 4)
		if (index(grammar, "<" t ">") == 0)
			norm(t)
	}
	{ prev = $0 }' "$rst" | sort -u
}

# rst_max: N of "at most N" in the sentence that introduces the features
rst_max() {
	awk '/^=+$/ { in_sec = (prev == "Table parameters") }
	in_sec && /feature arguments/ && match($0, /at most [0-9]+/) {
		print substr($0, RSTART + 8, RLENGTH - 8); exit }
	{ prev = $0 }' "$rst"
}

# comment_features: the comment block right above flushlog_ctr(), from its
# "Feature arguments" line on: the lines indented as the first feature is
# (deeper lines are descriptions)
comment_features() {
	awk '
	function norm(t,   n, i, k, alt) {
		n = index(t, "=")
		if (!n) { print t; return }
		k = split(substr(t, n + 1), alt, "|")
		for (i = 1; i <= k; i++)
			print substr(t, 1, n) (alt[i] ~ /^[a-z0-9_]+$/ ? alt[i] : "<n>")
	}
	/^\/\*/ { block = ""; in_c = 1 }
	in_c { block = block $0 "\n" }
	in_c && /\*\// { in_c = 0 }
	/^static int flushlog_ctr\(/ { found = 1; exit }
	END {
		if (!found) exit 2
		k = split(block, line, "\n")
		for (i = 1; i <= k; i++) {
			if (line[i] ~ /Feature arguments/) { on = 1; continue }
			if (!on || !match(line[i], /^ \*  +[a-z_]+(=[^ ]+)?( |$)/))
				continue
			match(line[i], /^ \*  +/)
			if (!col) col = RLENGTH
			if (RLENGTH != col)
				continue
			t = substr(line[i], col + 1)
			sub(/ .*/, "", t)
			norm(t)
		}
	}' "$src" | sort -u
}

# parse_body: parse_features() from its signature to its closing brace
parse_body() {
	awk '/^static int parse_features\(/ { on = 1 } on { print } on && /^}/ { exit }' "$src"
}

# code_features: what parse_features() compares: strcmp(arg, "x") is a
# whole argument; strncmp(arg, "x=", N) or str_has_prefix(arg, "x=") a
# prefix, after which strcmp(arg + N, "v") is a literal value and a
# sscanf or kstrto* of arg + N a number (N the prefix's length, or a
# variable holding it); a strncmp whose N is not its prefix's length is
# printed as a mismatch
code_features() {
	parse_body | awk '
	{
		s = $0
		while (match(s, /(strncmp|str_has_prefix)\([a-z_]+, "[^"]+"(, [0-9]+)?\)/)) {
			call = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
			p = call; sub(/^[^"]*"/, "", p); sub(/".*/, "", p)
			if (match(call, /, [0-9]+\)$/)) {
				n = substr(call, RSTART + 2, RLENGTH - 3) + 0
				if (n != length(p))
					print "mismatch: " call " compares " n " bytes of \"" p "\""
			}
			cur = p; by_len[length(p)] = p
		}
		s = $0
		while (match(s, /strcmp\([a-z_]+( \+ [a-z0-9_]+)?, "[^"]+"\)/)) {
			call = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
			v = call; sub(/^[^"]*"/, "", v); sub(/".*/, "", v)
			if (call ~ / \+ /)
				print prefix_of(call) v
			else
				print v
		}
		s = $0
		while (match(s, /(sscanf|kstrto[a-z0-9]+)\([a-z_]+( \+ [a-z0-9_]+)?, "?[^,]*/)) {
			call = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
			if (call ~ /, "[a-z_]+=%/) {		# sscanf(arg, "x=%u...")
				p = call; sub(/^[^"]*"/, "", p); sub(/%.*/, "", p)
				print p "<n>"
			} else if (call ~ / \+ /) {
				print prefix_of(call) "<n>"
			}
		}
	}
	function prefix_of(call,   off) {
		off = call; sub(/^[^+]*\+ /, "", off); sub(/[,)].*/, "", off)
		if (off ~ /^[0-9]+$/ && (off + 0) in by_len)
			return by_len[off + 0]
		return cur
	}' | sort -u
}

# code_max: the most feature arguments dm_read_arg_group() accepts: the
# upper bound of the first struct dm_arg in parse_features(), a number or
# a macro the file defines
code_max() {
	local max
	max=$(parse_body | sed -n 's/.*{ *0, *\([A-Za-z0-9_]*\) *,.*/\1/p' | head -n 1)
	if [[ $max =~ ^[A-Z_][A-Z0-9_]*$ ]]; then
		max=$(sed -n "s/^#define[[:space:]]*${max}[[:space:]]*\([0-9]*\).*/\1/p" "$src")
	fi
	echo "$max"
}

# names FILE: the distinct feature names of a list
names() {
	sed 's/=.*//' "$1" | sort -u
}

rst_features >"$TEST_TMP/rst"
comment_features >"$TEST_TMP/comment" ||
	_fail "no comment block right above 'static int flushlog_ctr(' in drivers/dm-flushlog.c"
parse_body >"$TEST_TMP/body"
[ -s "$TEST_TMP/body" ] || _fail "no 'static int parse_features(' in drivers/dm-flushlog.c"
code_features >"$TEST_TMP/code"

[ -s "$TEST_TMP/rst" ] ||
	_fail "no feature terms (\`\`name\`\` or \`\`name=value\`\` lines) in the Table parameters section of drivers/flushlog.rst"
[ -s "$TEST_TMP/comment" ] ||
	_fail "no feature lines after 'Feature arguments' in the comment above flushlog_ctr()"
[ -s "$TEST_TMP/code" ] ||
	_fail "no strcmp/strncmp/str_has_prefix of a feature argument in parse_features()"
echo "flushlog.rst documents: $(paste -sd' ' "$TEST_TMP/rst")"
echo "the constructor's comment: $(paste -sd' ' "$TEST_TMP/comment")"
grep -v '^mismatch: ' "$TEST_TMP/code" >"$TEST_TMP/code.forms" || true
echo "parse_features() compares: $(paste -sd' ' "$TEST_TMP/code.forms")"

bad=0
if grep '^mismatch: ' "$TEST_TMP/code" >&2; then
	bad=1
fi
for other in comment code.forms; do
	case $other in
	comment) what="the comment above flushlog_ctr()" ;;
	*) what="parse_features()" ;;
	esac
	if ! diff -u --label drivers/flushlog.rst --label "$what" \
		"$TEST_TMP/rst" "$TEST_TMP/$other" >"$TEST_TMP/diff"; then
		echo "drivers/flushlog.rst (-) and $what (+) differ:" >&2
		tail -n +3 "$TEST_TMP/diff" | grep '^[-+]' >&2
		bad=1
	fi
done

n=$(names "$TEST_TMP/rst" | wc -l)
max=$(code_max)
page_max=$(rst_max)
if [ -z "$max" ]; then
	echo "parse_features() has no '{0, N, ...}' struct dm_arg bound to read" >&2
	bad=1
elif [ "$max" != "$n" ]; then
	echo "parse_features() accepts up to $max feature arguments; flushlog.rst documents $n features, each at most once" >&2
	bad=1
fi
if [ "$page_max" != "$n" ]; then
	echo "flushlog.rst says 'at most ${page_max:-<nothing>}' feature arguments and documents $n features" >&2
	bad=1
fi
((bad == 0)) || _fail "the documented table grammar and the constructor disagree"
echo "the page, the constructor's comment and parse_features() agree: $n features, at most $max arguments"
