#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog dump's RWBS letters are blktrace's for the request the target
# saw.  The oracle is the kernel's own code: blk_fill_rwbs() and, for a
# mark (a note to blktrace, no request), fill_rwbs(), cut out of each
# Debian kernel line's kernel/trace/blktrace.c and compiled against stub
# REQ_* definitions.  Every op and flag combination fl-mklog writes is
# dumped and compared, text and JSON.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
. "$FLUSHLOG_TOP/scripts/lib.sh"
_require_cmd jq
_require_cmd cc

# _function FILE HEAD: the function whose definition starts with the line
# HEAD, through its closing brace in column 0
_function() {
	awk -v head="$2" 'index($0, head) == 1 { on = 1 } on { print } on && /^}/ { exit }' "$1"
}

# _oracle TREE OUT: compile the kernel's letters into OUT, which reads
# "OP FLAG..." lines (an entry as the target logged it) and prints them
_oracle() {
	local tree=$1 c=$TEST_TMP/oracle.c
	{
		cat <<'EOS'
#include <stdio.h>
#include <string.h>
EOS
		echo "#include \"$tree/include/uapi/linux/blktrace_api.h\""
		cat <<'EOS'
/*
 * Stubs for include/linux/blk_types.h: the functions test an operation
 * under REQ_OP_MASK and flags by their bits, so distinct values do.
 */
typedef unsigned int blk_opf_t;
#define __force
enum { REQ_OP_READ = 0, REQ_OP_WRITE = 1, REQ_OP_FLUSH = 2, REQ_OP_DISCARD = 3,
       REQ_OP_SECURE_ERASE = 5, REQ_OP_WRITE_ZEROES = 9 };
#define REQ_OP_MASK	0xffU
#define REQ_FUA		(1U << 8)
#define REQ_PREFLUSH	(1U << 9)
#define REQ_SYNC	(1U << 10)
#define REQ_META	(1U << 11)
#define REQ_RAHEAD	(1U << 12)
#define EXPORT_SYMBOL_GPL(x)
EOS
		_function "$tree/kernel/trace/blktrace.c" 'static void fill_rwbs('
		_function "$tree/kernel/trace/blktrace.c" 'void blk_fill_rwbs('
		cat <<'EOS'

/*
 * What dm-flushlog saw for each entry (drivers/dm-flushlog.c,
 * bio_entry_op()): a FLUSH entry is an empty REQ_OP_WRITE with
 * REQ_PREFLUSH, as a bio-based target gets a flush; a MARK is a message.
 */
int main(void)
{
	char line[256], rwbs[16];

	while (fgets(line, sizeof(line), stdin)) {
		blk_opf_t opf = 0;
		char *word = strtok(line, " \n");

		if (!strcmp(word, "mark")) {
			struct blk_io_trace t = { .action = BLK_TN_MESSAGE };

			fill_rwbs(rwbs, &t);
			puts(rwbs);
			continue;
		}
		if (!strcmp(word, "write"))
			opf = REQ_OP_WRITE;
		else if (!strcmp(word, "flush"))
			opf = REQ_OP_WRITE | REQ_PREFLUSH;
		else if (!strcmp(word, "discard"))
			opf = REQ_OP_DISCARD;
		else if (!strcmp(word, "zeroes"))
			opf = REQ_OP_WRITE_ZEROES;
		else if (!strcmp(word, "erase"))
			opf = REQ_OP_SECURE_ERASE;
		while ((word = strtok(NULL, " \n"))) {
			if (!strcmp(word, "fua"))
				opf |= REQ_FUA;
			else if (!strcmp(word, "preflush"))
				opf |= REQ_PREFLUSH;
			else if (!strcmp(word, "sync"))
				opf |= REQ_SYNC;
			else if (!strcmp(word, "meta"))
				opf |= REQ_META;
		}
		blk_fill_rwbs(rwbs, opf);
		puts(rwbs);
	}
	return 0;
}
EOS
	} >"$c"
	cc -w -o "$2" "$c" || _fail "the oracle from $tree does not build: $(head -c 2000 "$c")"
}

# Every op fl-mklog writes with every subset of the flags it takes
flags=(fua preflush meta sync)
{
	for op in "write 0 8" "discard 0 8" "zeroes 0 8" "erase 0 8" flush; do
		for ((m = 0; m < 16; m++)); do
			words=
			for b in 0 1 2 3; do
				if ((m >> b & 1)); then
					words+=" ${flags[b]}"
				fi
			done
			echo "$op$words"
		done
	done
	echo "mark m"
} >"$TEST_TMP/ops"
{ echo 'device 2048'; cat "$TEST_TMP/ops"; } >"$TEST_TMP/ops.fls"
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/ops.fls"
# the oracle's words: an op's name and its flags, no sector
awk '{ printf "%s", $1; for (i = 2; i <= NF; i++) if ($i !~ /^[0-9]+$/ && $i != "m") printf " %s", $i; print "" }' \
	"$TEST_TMP/ops" >"$TEST_TMP/words"
"$FLUSHLOG" dump "$TEST_TMP/log" | awk 'NR > 1 { print $4 }' >"$TEST_TMP/text"
"$FLUSHLOG" dump --json "$TEST_TMP/log" | jq -r .rwbs >"$TEST_TMP/json"

checked=0
for line in $FL_KERNEL_LINES; do
	dpkg-query -W -f='${Status}' "linux-source-$line" 2>/dev/null | grep -q 'ok installed' ||
		{ echo "linux-source-$line is not installed: not compared"; continue; }
	tree=$(fl_linux_source "$line")
	[ -f "$tree/kernel/trace/blktrace.c" ] || { echo "$tree has no blktrace.c"; continue; }
	_oracle "$tree" "$TEST_TMP/oracle-$line"
	"$TEST_TMP/oracle-$line" <"$TEST_TMP/words" >"$TEST_TMP/want-$line"
	for got in text json; do
		if ! diff <(paste -d' ' "$TEST_TMP/words" "$TEST_TMP/want-$line") \
			  <(paste -d' ' "$TEST_TMP/words" "$TEST_TMP/$got") >"$TEST_TMP/diff"; then
			cat "$TEST_TMP/diff" >&2
			_fail "dump's $got differs from $line's blk_fill_rwbs() (< kernel, > dump)"
		fi
	done
	echo "$line: $(wc -l <"$TEST_TMP/words") entries, letters as blk_fill_rwbs(): $(sort -u "$TEST_TMP/want-$line" | paste -sd' ')"
	checked=$((checked + 1))
done
((checked)) || _skip "no kernel source tree (scripts/install-deps kernel) to derive the letters from"
