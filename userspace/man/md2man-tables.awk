# SPDX-License-Identifier: GPL-2.0
#
# go-md2man's tables, made to fit an 80-column page.  go-md2man (2.0)
# writes each Markdown table as a tbl table of plain columns, a cell as a
# text block (T{ T}, which tbl wraps) only when its first run of plain
# text is longer than 30 characters, so that a description beginning with
# `code` stays one line and the table overflows; and after a text block
# it puts the tab before the next cell on a line of its own, which tbl
# reads as a new row.  Here the rows are put together again, the last
# column of every table expands to the line (x), and each cell longer
# than 30 characters as shown, and every body cell of the last column, is
# a text block, wrapped to what the other columns leave.  No hyphenation
# or justification either, as in our own pages: a narrow text block
# cannot be justified without gaps.
#
# go-md2man <page.md | awk -f md2man-tables.awk >page.5

/^\.TH / {
	print
	print ".nh"
	print ".ad l"
	next
}

/^\.TS$/ {
	in_table = 1
	head = ""	# the options and format lines
	formats = 0
	nr_lines = 0
	print
	next
}

in_table && /^\.TE$/ {
	in_table = 0
	print_rows()
	print
	next
}

!in_table {
	print
	next
}

# the options line ("allbox;"), then two format lines, the last ending "."
formats < 2 && /;$/ {
	print
	next
}

formats < 2 {
	formats++
	match($0, /l[^l]*$/)
	print substr($0, 1, RSTART) "x" substr($0, RSTART + 1)
	next
}

{
	line[++nr_lines] = $0
}

# The table's rows from its lines: a text block's lines belong to its
# row, and so does a line that begins with a tab after a block's T}.
function print_rows(   i, n, cur, in_block) {
	n = 0
	cur = ""
	in_block = 0
	for (i = 1; i <= nr_lines; i++) {
		if (in_block) {
			cur = cur "\n" line[i]
			if (line[i] ~ /^T}/)
				in_block = 0
		} else if (cur != "" && line[i] ~ /^\t/ && cur ~ /\nT}$|^T}$/) {
			cur = cur line[i]
		} else {
			if (cur != "")
				row[++n] = cur
			cur = line[i]
		}
		if (line[i] ~ /T\{$/)
			in_block = 1
	}
	if (cur != "")
		row[++n] = cur
	for (i = 1; i <= n; i++)
		print_row(row[i], i == 1)
}

# A row's cells, split at the tabs outside text blocks, into cell[];
# their number
function split_cells(r,   n, pos, end, rest) {
	n = 0
	rest = r
	for (;;) {
		n++
		if (substr(rest, 1, 3) == "T{\n") {
			end = index(rest, "\nT}")
			cell[n] = substr(rest, 4, end - 4)
			rest = substr(rest, end + 3)
		} else {
			pos = index(rest, "\t")
			if (!pos) {
				cell[n] = rest
				return n
			}
			cell[n] = substr(rest, 1, pos - 1)
			rest = substr(rest, pos)
		}
		if (substr(rest, 1, 1) != "\t")
			return n
		rest = substr(rest, 2)
	}
}

# how many characters a cell shows
function shown(c) {
	gsub(/\\f[A-Z]/, "", c)
	gsub(/\\&/, "", c)
	gsub(/\\\(../, "x", c)
	return length(c)
}

function print_row(r, is_head,   n, i, out, c) {
	delete cell
	n = split_cells(r)
	out = ""
	for (i = 1; i <= n; i++) {
		c = cell[i]
		if (i > 1)
			out = out "\t"
		if (c != "" && (shown(c) > 30 || (i == n && !is_head)))
			out = out "T{\n" c "\nT}"
		else
			out = out c
	}
	print out
}
