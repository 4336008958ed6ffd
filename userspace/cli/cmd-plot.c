// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog plot: the log as a picture.  Sector against entry number, each
 * write where it wrote coloured by what it did, flush and FUA points as
 * vertical lines, marks labelled, chosen entries (failing states) in red.
 *
 * The picture costs its pixels, not the log's length.  Entries that fall
 * in one pixel column share its cells (ROW_H pixels of sectors each), and
 * a kind's cells that line up make one rectangle of one path.  A strip
 * under the plot counts the crash points of each pixel column; past
 * SPARSE_POINTS of them, lines that would paint the plot solid, it alone
 * shows them.  Mark labels take LABEL_ROWS rows over the plot, each where
 * a row has room for it (textLength holds a label to the width it was
 * given), and the marks left without are counted.  The SVG is written by
 * libxml2's writer: a label or title of any bytes makes well-formed XML.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "encode.h"

#define PLOT_W		1200	/* the plot area, in pixels */
#define PLOT_H		600
#define ROW_H		4	/* a cell of writes: a pixel column, ROW_H high */
#define NR_ROWS		(PLOT_H / ROW_H)
#define MARGIN_L	90
#define MARGIN_R	50	/* room for the strip's scale */
#define LABEL_ROWS	3	/* rows of mark labels over the plot */
#define LABEL_ROW_H	11
#define LABEL_FONT	9
/* a label character's advance: each label's textLength holds it to that */
#define LABEL_CHAR_W	5.5
#define LABEL_GAP	6	/* pixels between two labels of a row */
#define LABEL_CHARS	24	/* a longer label is cut, and ends in "..." */
#define MARGIN_T	(26 + LABEL_ROWS * LABEL_ROW_H)
#define STRIP_H		24	/* crash points a pixel column, under the plot */
#define STRIP_Y		(MARGIN_T + PLOT_H + 4)
#define AXIS_Y		(STRIP_Y + STRIP_H)
#define SVG_W		(MARGIN_L + PLOT_W + MARGIN_R)
#define SVG_H		(AXIS_Y + 62)
/* more crash points than this in the plot: the strip alone shows them */
#define SPARSE_POINTS	(PLOT_W / 4)
#define NR_KINDS	5

enum { OPT_OUTPUT, OPT_HIGHLIGHT, OPT_TITLE, OPT_FROM, OPT_TO };

static const struct cli_option plot_options[] = {
	[OPT_OUTPUT] = { "output", 'o', "FILE", "write the SVG to FILE ('-', the default: stdout)" },
	[OPT_HIGHLIGHT] = { "highlight", 0, "ENTRIES",
			    "draw these entries' points in red: N[,N...]" },
	[OPT_TITLE] = { "title", 0, "TEXT", "a title (default the log's path)" },
	[OPT_FROM] = { "from", 0, "POINT",
		       "draw the entries after POINT only (default start)" },
	[OPT_TO] = { "to", 0, "POINT",
		     "draw the entries up to POINT only (default end)" },
	{ NULL },
};

static const struct {
	const char *name, *colour;
} kinds[NR_KINDS] = {
	{ "write", "#3465a4" },
	{ "FUA write", "#f57900" },
	{ "discard", "#888a85" },
	{ "write-zeroes", "#c4a000" },
	{ "secure erase", "#8f5902" },
};

#define FLUSH_COLOUR	"#4e9a06"
#define FUA_COLOUR	"#f57900"
#define MARK_COLOUR	"#75507b"
#define RED		"#cc0000"

static int
kind_of(const struct fl_entry *e)
{
	switch (e->op) {
	case FLUSHLOG_OP_WRITE:
		return e->flags & FLUSHLOG_F_FUA ? 1 : 0;
	case FLUSHLOG_OP_DISCARD:
		return 2;
	case FLUSHLOG_OP_WRITE_ZEROES:
		return 3;
	case FLUSHLOG_OP_SECURE_ERASE:
		return 4;
	}
	return -1;
}

/* A mark's label where place_labels() put it. */
struct label {
	uint64_t entry;
	int row;		/* 0 next to the plot */
	double x, width;
	char *text;		/* as drawn: escaped, maybe cut */
	bool cut;
};

struct plot {
	const struct fl_log *log;
	xmlTextWriterPtr w;
	uint64_t first, nr;	/* the entries drawn: [first, first + nr) */
	uint64_t sectors;
	uint64_t *highlight;
	size_t nr_highlight;
	/* the crash points at each pixel column: flush and FUA, marks */
	uint64_t durable[PLOT_W], marks[PLOT_W];
	uint64_t nr_points;
	struct label *labels;
	size_t nr_labels, unlabelled;
};

static double
x_of(const struct plot *p, uint64_t position)
{
	return MARGIN_L + (double)(position - p->first) * PLOT_W /
	       (double)(p->nr ? p->nr : 1);
}

/* The pixel column of a position, or the first past it (up). */
static size_t
column_of(const struct plot *p, uint64_t position, bool up)
{
	unsigned __int128 x = (unsigned __int128)(position - p->first) * PLOT_W;
	uint64_t nr = p->nr ? p->nr : 1;

	return (size_t)(x / nr + (up && x % nr));
}

/* The row of cells a sector is drawn in, 0 at the bottom. */
static size_t
row_of(const struct plot *p, uint64_t sector)
{
	size_t r = (size_t)((unsigned __int128)sector * NR_ROWS / p->sectors);

	return r < NR_ROWS ? r : NR_ROWS - 1;
}

static double
y_of(const struct plot *p, uint64_t sector)
{
	return MARGIN_T + PLOT_H - (double)sector * PLOT_H / (double)p->sectors;
}

/*
 * The writer's calls return < 0 on failure (out of memory, a write
 * error); each drawing function returns -1 if one of its calls failed.
 */
static int
start(const struct plot *p, const char *element)
{
	return xmlTextWriterStartElement(p->w, BAD_CAST element) < 0 ? -1 : 0;
}

static int
end(const struct plot *p)
{
	return xmlTextWriterEndElement(p->w) < 0 ? -1 : 0;
}

static __attribute__((format(printf, 3, 4))) int
attr(const struct plot *p, const char *name, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = xmlTextWriterWriteVFormatAttribute(p->w, BAD_CAST name, fmt, ap);
	va_end(ap);
	return ret < 0 ? -1 : 0;
}

/* <text x y [anchor]>TEXT</text>: TEXT any bytes, escaped */
static int
text(const struct plot *p, double x, double y, const char *anchor,
     const char *s)
{
	return start(p, "text") || attr(p, "x", "%.1f", x) ||
	       attr(p, "y", "%.1f", y) ||
	       (anchor && attr(p, "text-anchor", "%s", anchor)) ||
	       cli_xml_text(p->w, s, strlen(s), 0) || end(p);
}

static int
rect(const struct plot *p, double x, double y, double w, double h,
     const char *fill)
{
	return start(p, "rect") || attr(p, "x", "%.1f", x) ||
	       attr(p, "y", "%.1f", y) || attr(p, "width", "%.2f", w) ||
	       attr(p, "height", "%.2f", h) ||
	       (fill && attr(p, "fill", "%s", fill)) || end(p);
}

/*
 * <path d="D" fill=FILL/>, D what was written to d, a memstream of *buf,
 * which is closed and freed; nothing if D is empty.
 */
static int
path(const struct plot *p, FILE *d, char **buf, const char *fill)
{
	int ret = fclose(d) ? -1 : 0;

	if (!ret && **buf)
		ret = start(p, "path") || attr(p, "fill", "%s", fill) ||
		      attr(p, "shape-rendering", "crispEdges") ||
		      attr(p, "d", "%s", *buf) || end(p);
	free(*buf);
	*buf = NULL;
	return ret;
}

/* Are rows r0..r1 of a column a maximal run of bit? */
static bool
is_run(const uint8_t *cells, uint8_t bit, size_t r0, size_t r1)
{
	for (size_t r = r0; r <= r1; r++)
		if (!(cells[r] & bit))
			return false;
	return (!r0 || !(cells[r0 - 1] & bit)) &&
	       (r1 + 1 == NR_ROWS || !(cells[r1 + 1] & bit));
}

/*
 * A kind's cells as rectangles of one path: each run of cells in a
 * column, as wide as the columns after it have the same run (the
 * cells taken are cleared).
 */
static void
trace_kind(uint8_t (*cells)[NR_ROWS], uint8_t bit, FILE *d)
{
	for (size_t c = 0; c < PLOT_W; c++)
		for (size_t r = 0; r < NR_ROWS; r++) {
			size_t r1 = r, c1 = c + 1;

			if (!(cells[c][r] & bit))
				continue;
			while (r1 + 1 < NR_ROWS && (cells[c][r1 + 1] & bit))
				r1++;
			for (; c1 < PLOT_W && is_run(cells[c1], bit, r, r1); c1++)
				for (size_t i = r; i <= r1; i++)
					cells[c1][i] &= ~bit;
			fprintf(d, "M%zu %zuh%zuv%zuh-%zuz", MARGIN_L + c,
				MARGIN_T + PLOT_H - (r1 + 1) * ROW_H, c1 - c,
				(r1 - r + 1) * ROW_H, c1 - c);
			r = r1;
		}
}

/*
 * Writes: each entry marks the cells (pixel columns by ROW_H pixels of
 * sectors) it wrote, one bit a kind; each kind's cells are one path.
 */
static int
draw_writes(const struct plot *p)
{
	uint8_t (*cells)[NR_ROWS] = calloc(PLOT_W, sizeof(*cells));
	int ret = cells ? 0 : -1;

	for (uint64_t i = p->first; i < p->first + p->nr && !ret; i++) {
		const struct fl_entry *e = fl_log_entry(p->log, i);
		size_t c0 = column_of(p, i, false), c1 = column_of(p, i + 1, true);
		int k = kind_of(e);
		uint64_t at;

		if (k < 0 || !e->nr_sectors)
			continue;
		/* several devices: one after another, as in an image of all */
		at = fl_log_device(p->log, e->device)->image_sector + e->sector;
		for (size_t c = c0; c < c1 || c == c0; c++)
			for (size_t r = row_of(p, at);
			     r <= row_of(p, at + e->nr_sectors - 1); r++)
				cells[c][r] |= 1U << k;
	}
	for (int k = 0; k < NR_KINDS && !ret; k++) {
		char *buf = NULL;
		size_t len;
		FILE *d = open_memstream(&buf, &len);

		if (!d)
			ret = -1;
		else {
			trace_kind(cells, 1U << k, d);
			ret = path(p, d, &buf, kinds[k].colour);
		}
	}
	free(cells);
	return ret;
}

static bool
highlighted(const struct plot *p, uint64_t entry)
{
	for (size_t i = 0; i < p->nr_highlight; i++)
		if (p->highlight[i] == entry)
			return true;
	return false;
}

/*
 * A crash point's line, from y1 down through the plot, with its entry
 * number as a tooltip.
 */
static int
point_line(const struct plot *p, uint64_t i, const char *colour, bool mark,
	   double y1)
{
	double x = x_of(p, i + 1);
	char title[32];

	snprintf(title, sizeof(title), "entry %" PRIu64, i);
	return start(p, "line") || attr(p, "x1", "%.1f", x) ||
	       attr(p, "y1", "%.1f", y1) || attr(p, "x2", "%.1f", x) ||
	       attr(p, "y2", "%d", MARGIN_T + PLOT_H) ||
	       attr(p, "stroke", "%s", colour) ||
	       attr(p, "stroke-width", "%s", highlighted(p, i) ? "2" : "0.5") ||
	       attr(p, "stroke-opacity", "0.6") ||
	       (mark && attr(p, "stroke-dasharray", "4 3")) ||
	       start(p, "title") || cli_xml_text(p->w, title, strlen(title), 0) ||
	       end(p) || end(p);
}

static double
label_y(int row)
{
	return MARGIN_T - 4 - row * LABEL_ROW_H;
}

/*
 * A label as drawn: escaped, and past LABEL_CHARS characters cut, with
 * "..." (one character) after; its characters in *chars.  NULL if out of
 * memory.
 */
static char *
label_text(const char *label, size_t *chars, bool *cut)
{
	char *s = cli_escape(label, strlen(label), ESC_CONTROL), *t;
	size_t i, n = 0;

	if (!s)
		return NULL;
	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;	/* a character goes on */
		if (n == LABEL_CHARS)
			break;
		n++;
	}
	*chars = n;
	*cut = s[i];
	if (!*cut)
		return s;
	t = realloc(s, i + sizeof("\u2026"));
	if (!t) {
		free(s);
		return NULL;
	}
	memcpy(t + i, "\u2026", sizeof("\u2026"));
	*chars = n + 1;
	return t;
}

/*
 * Place the marks' labels, left to right, each in the first row with
 * room for it at its line (pulled left at the right edge); a mark that
 * finds none is counted.  Returns -1 if out of memory.
 */
static int
place_labels(struct plot *p)
{
	double row_end[LABEL_ROWS];

	for (int r = 0; r < LABEL_ROWS; r++)
		row_end[r] = -1e9;
	for (uint64_t i = p->first; i < p->first + p->nr; i++) {
		struct label l = { .entry = i };
		struct label *v;
		size_t chars;

		if (fl_log_entry(p->log, i)->op != FLUSHLOG_OP_MARK)
			continue;
		l.text = label_text(fl_log_label(p->log, i), &chars, &l.cut);
		if (!l.text)
			return -1;
		l.width = (double)chars * LABEL_CHAR_W;
		l.x = x_of(p, i + 1) + 2;
		if (l.x + l.width > SVG_W - 2)
			l.x = SVG_W - 2 - l.width;
		while (l.row < LABEL_ROWS && row_end[l.row] + LABEL_GAP > l.x)
			l.row++;
		if (!chars || l.row == LABEL_ROWS) {
			p->unlabelled += chars > 0;
			free(l.text);
			continue;
		}
		row_end[l.row] = l.x + l.width;
		v = realloc(p->labels, (p->nr_labels + 1) * sizeof(*v));
		if (!v) {
			free(l.text);
			return -1;
		}
		p->labels = v;
		p->labels[p->nr_labels++] = l;
	}
	return 0;
}

/* A label, its full text as a tooltip where it was cut. */
static int
draw_label(const struct plot *p, const struct label *l)
{
	const char *full = fl_log_label(p->log, l->entry);

	return start(p, "text") || attr(p, "class", "mark-label") ||
	       attr(p, "x", "%.1f", l->x) || attr(p, "y", "%.1f", label_y(l->row)) ||
	       attr(p, "font-size", "%d", LABEL_FONT) ||
	       attr(p, "textLength", "%.1f", l->width) ||
	       attr(p, "lengthAdjust", "spacing") ||
	       attr(p, "fill", MARK_COLOUR) ||
	       (l->cut && (start(p, "title") ||
			   cli_xml_text(p->w, full, strlen(full), 0) || end(p))) ||
	       cli_xml_text(p->w, l->text, strlen(l->text), 0) || end(p);
}

/*
 * Crash points as vertical lines: every one while they are few, else
 * the labelled marks and the highlighted entries only (one line a pixel
 * column), the strip showing the rest.  A labelled mark's line reaches
 * up to its label.
 */
static int
draw_points(const struct plot *p)
{
	bool dense = p->nr_points > SPARSE_POINTS;
	size_t next_label = 0, last_red = SIZE_MAX;

	for (uint64_t i = p->first; i < p->first + p->nr; i++) {
		const struct fl_entry *e = fl_log_entry(p->log, i);
		bool mark = e->op == FLUSHLOG_OP_MARK, red = highlighted(p, i);
		const struct label *l = NULL;
		const char *colour;

		while (next_label < p->nr_labels && p->labels[next_label].entry < i)
			next_label++;
		if (next_label < p->nr_labels && p->labels[next_label].entry == i)
			l = &p->labels[next_label];
		if (red && dense && column_of(p, i + 1, false) == last_red)
			continue;
		if (red)
			colour = RED;
		else if (!(e->flags & FL_ENTRY_CRASH_POINT) || (dense && !l))
			continue;
		else
			colour = mark ? MARK_COLOUR : e->op == FLUSHLOG_OP_FLUSH ||
				 (e->flags & FLUSHLOG_F_PREFLUSH) ? FLUSH_COLOUR : FUA_COLOUR;
		if (red)
			last_red = column_of(p, i + 1, false);
		if (point_line(p, i, colour, mark, l ? label_y(l->row) + 2 : MARGIN_T))
			return -1;
	}
	for (size_t i = 0; i < p->nr_labels; i++)
		if (draw_label(p, &p->labels[i]))
			return -1;
	return 0;
}

/* Count the crash points of each pixel column, for the strip. */
static void
count_points(struct plot *p)
{
	for (uint64_t i = p->first; i < p->first + p->nr; i++) {
		const struct fl_entry *e = fl_log_entry(p->log, i);
		size_t c = column_of(p, i + 1, false);

		if (!(e->flags & FL_ENTRY_CRASH_POINT))
			continue;
		c = c < PLOT_W ? c : PLOT_W - 1;
		p->nr_points++;
		if (e->op == FLUSHLOG_OP_MARK)
			p->marks[c]++;
		else
			p->durable[c]++;
	}
}

/* The outline of a histogram of a[c] (+ b[c]) over the strip, max full. */
static void
trace_strip(FILE *d, const uint64_t *a, const uint64_t *b, uint64_t max)
{
	int base = STRIP_Y + STRIP_H, y = base;

	fprintf(d, "M%d %d", MARGIN_L, base);
	for (int c = 0; c < PLOT_W; c++) {
		uint64_t n = a[c] + (b ? b[c] : 0);
		int h = (int)((n * STRIP_H + max - 1) / max);

		if (base - h != y) {
			y = base - h;
			fprintf(d, "H%dV%d", MARGIN_L + c, y);
		}
	}
	fprintf(d, "H%dV%dz", MARGIN_L + PLOT_W, base);
}

/*
 * Under the plot, the crash points of each pixel column: marks stacked
 * on flush and FUA points, the busiest column full height.
 */
static int
draw_strip(const struct plot *p)
{
	uint64_t max = 0;
	char *buf = NULL, n[40];
	size_t len;
	FILE *d;
	int ret;

	for (int c = 0; c < PLOT_W; c++)
		if (p->durable[c] + p->marks[c] > max)
			max = p->durable[c] + p->marks[c];
	ret = start(p, "text") || attr(p, "x", "%d", MARGIN_L - 4) ||
	      attr(p, "y", "%d", STRIP_Y + 15) || attr(p, "text-anchor", "end") ||
	      attr(p, "font-size", "%d", LABEL_FONT) ||
	      cli_xml_text(p->w, "crash points", 12, 0) || end(p);
	if (ret || !max)
		return ret;
	d = open_memstream(&buf, &len);
	if (!d)
		return -1;
	trace_strip(d, p->durable, p->marks, max);
	ret = path(p, d, &buf, MARK_COLOUR);
	d = ret ? NULL : open_memstream(&buf, &len);
	if (!d)
		return -1;
	trace_strip(d, p->durable, NULL, max);
	ret = path(p, d, &buf, FLUSH_COLOUR);
	snprintf(n, sizeof(n), "max %" PRIu64, max);
	return ret || start(p, "text") ||
	       attr(p, "x", "%d", MARGIN_L + PLOT_W + 4) ||
	       attr(p, "y", "%d", STRIP_Y + 9) ||
	       attr(p, "font-size", "%d", LABEL_FONT) ||
	       cli_xml_text(p->w, n, strlen(n), 0) || end(p);
}

/* The axes' numbers; the last entry's is right-aligned, inside the picture. */
static int
draw_axes(const struct plot *p)
{
	char n[24];

	for (int t = 0; t <= 4; t++) {
		uint64_t sector = p->sectors * t / 4, entry = p->first + p->nr * t / 4;

		snprintf(n, sizeof(n), "%" PRIu64, sector);
		if (text(p, MARGIN_L - 4, y_of(p, sector) + 4, "end", n))
			return -1;
		snprintf(n, sizeof(n), "%" PRIu64, entry);
		if (start(p, "text") || attr(p, "class", "x-tick") ||
		    attr(p, "x", "%.1f", x_of(p, entry)) ||
		    attr(p, "y", "%d", AXIS_Y + 14) ||
		    attr(p, "text-anchor", t == 4 ? "end" : "middle") ||
		    cli_xml_text(p->w, n, strlen(n), 0) || end(p))
			return -1;
	}
	return text(p, MARGIN_L + PLOT_W / 2, AXIS_Y + 30, "middle",
		    "entry (sequence number)") ||
	       start(p, "text") || attr(p, "x", "14") ||
	       attr(p, "y", "%d", MARGIN_T + PLOT_H / 2) ||
	       attr(p, "transform", "rotate(-90 14 %d)", MARGIN_T + PLOT_H / 2) ||
	       attr(p, "text-anchor", "middle") ||
	       cli_xml_text(p->w, "sector", 6, 0) || end(p);
}

static int
tspan(const struct plot *p, const char *fill, const char *s)
{
	return start(p, "tspan") || attr(p, "fill", "%s", fill) ||
	       cli_xml_text(p->w, s, strlen(s), 0) || end(p);
}

/* The legend, under the axis; how many marks have no label, at its end. */
static int
draw_legend(const struct plot *p)
{
	char note[64];

	for (int k = 0; k < NR_KINDS; k++)
		if (rect(p, MARGIN_L + 110 * k, AXIS_Y + 40, 10, 10,
			 kinds[k].colour) ||
		    text(p, MARGIN_L + 110 * k + 14, AXIS_Y + 49, NULL,
			 kinds[k].name))
			return -1;
	if (start(p, "text") || attr(p, "x", "%d", MARGIN_L + 110 * NR_KINDS) ||
	    attr(p, "y", "%d", AXIS_Y + 49) ||
	    tspan(p, FLUSH_COLOUR, "| flush") || tspan(p, FUA_COLOUR, "| FUA") ||
	    tspan(p, MARK_COLOUR, ": mark") ||
	    tspan(p, RED, "| highlighted") || end(p))
		return -1;
	if (!p->unlabelled)
		return 0;
	snprintf(note, sizeof(note), "+%zu mark%s not labelled", p->unlabelled,
		 p->unlabelled == 1 ? "" : "s");
	return start(p, "text") || attr(p, "class", "unlabelled") ||
	       attr(p, "x", "%d", MARGIN_L + PLOT_W) ||
	       attr(p, "y", "%d", AXIS_Y + 49) || attr(p, "text-anchor", "end") ||
	       attr(p, "fill", MARK_COLOUR) ||
	       cli_xml_text(p->w, note, strlen(note), 0) || end(p);
}

static int
draw_frame(const struct plot *p, const char *title)
{
	return start(p, "rect") || attr(p, "x", "%d", MARGIN_L) ||
	       attr(p, "y", "%d", MARGIN_T) || attr(p, "width", "%d", PLOT_W) ||
	       attr(p, "height", "%d", PLOT_H) || attr(p, "fill", "none") ||
	       attr(p, "stroke", "#2e3436") || end(p) ||
	       draw_axes(p) ||
	       start(p, "text") || attr(p, "x", "%d", MARGIN_L) ||
	       attr(p, "y", "16") || attr(p, "font-weight", "bold") ||
	       cli_xml_text(p->w, title, strlen(title), 0) || end(p) ||
	       draw_legend(p);
}

/* The whole picture; -1 if the writer failed or memory ran out. */
static int
draw(struct plot *p, FILE *out, const char *title)
{
	int failed;

	count_points(p);
	if (place_labels(p))
		return -1;
	p->w = cli_xml_start(out);
	if (!p->w)
		return -1;
	failed = start(p, "svg") ||
		 attr(p, "xmlns", "http://www.w3.org/2000/svg") ||
		 attr(p, "width", "%d", SVG_W) || attr(p, "height", "%d", SVG_H) ||
		 attr(p, "font-family", "sans-serif") || attr(p, "font-size", "11") ||
		 start(p, "rect") || attr(p, "width", "100%%") ||
		 attr(p, "height", "100%%") || attr(p, "fill", "white") || end(p) ||
		 draw_frame(p, title) || draw_writes(p) || draw_strip(p) ||
		 draw_points(p) || end(p);
	return cli_xml_end(p->w, failed);
}

static int
parse_highlight(const struct cli_command *cmd, const char *arg,
		struct plot *p)
{
	const char *s = arg;

	while (*s) {
		uint64_t *v = realloc(p->highlight,
				      (p->nr_highlight + 1) * sizeof(*v));
		char *end;

		if (!v)
			return -ENOMEM;
		p->highlight = v;
		errno = 0;
		if (!strncmp(s, "-1", 2) && (!s[2] || s[2] == ',')) {
			s += s[2] ? 3 : 2;	/* before the first entry: none */
			continue;
		}
		if (*s < '0' || *s > '9')
			cli_usage_error(cmd, "--highlight: '%s' is not a list of entry numbers", arg);
		v[p->nr_highlight++] = strtoull(s, &end, 10);
		if (errno || (*end && *end != ','))
			cli_usage_error(cmd, "--highlight: '%s' is not a list of entry numbers", arg);
		s = *end ? end + 1 : end;
	}
	return 0;
}

static int
run_plot(const struct cli_command *cmd, int argc, char **argv)
{
	const char *arg, *output = "-", *title = NULL, *path, *from = NULL;
	const char *to = NULL;
	struct cli_input log_input;
	struct plot p = { 0 };
	struct cli_output o;
	struct fl_log *log;
	uint64_t last;
	int opt, ret;
	FILE *out;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == OPT_OUTPUT)
			output = arg;
		else if (opt == OPT_TITLE)
			title = arg;
		else if (opt == OPT_FROM)
			from = arg;
		else if (opt == OPT_TO)
			to = arg;
		else if (parse_highlight(cmd, arg, &p))
			return EXIT_BROKEN_RUN;
	}
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	path = argv[cli_operand_index()];
	log_input = (struct cli_input) { "the log", path };
	ret = cli_output_check("flushlog plot", output, OUTPUT_STREAM, 0,
			       &log_input, 1);
	if (ret)
		goto out_free;
	ret = cli_open_log(cmd, path, 0, &log);
	if (ret)
		goto out_free;
	p.log = log;
	ret = cli_parse_point_range(cmd, log, from, to, &p.first, &last);
	if (ret)
		goto out_close;
	p.nr = last - p.first;
	p.sectors = fl_log_info(log)->image_sectors ?: 1;
	ret = cli_output_open(&o, "flushlog plot", output, OUTPUT_STREAM, 0,
			      &log_input, 1);
	if (ret)
		goto out_close;
	out = cli_output_stdio(&o);
	if (!out || draw(&p, out, title ? title : path) || ferror(out)) {
		fprintf(stderr, "flushlog plot: cannot write '%s': %s\n", output,
			strerror(errno));
		cli_output_abort(&o);
		ret = EXIT_BROKEN_RUN;
	} else {
		ret = cli_output_close(&o);
	}
out_close:
	fl_log_close(log);
out_free:
	for (size_t i = 0; i < p.nr_labels; i++)
		free(p.labels[i].text);
	free(p.labels);
	free(p.highlight);
	return ret;
}

const struct cli_command cmd_plot = {
	.name = "plot",
	.synopsis = "[-o FILE] [--highlight ENTRIES] [--title TEXT] [--from POINT] [--to POINT] LOG",
	.summary = "Draw the log as an SVG picture: sector against entry.",
	.description =
		"Each write marks the sectors it wrote at its entry number: blue a write,\n"
		"orange a FUA write, grey a discard, yellow write-zeroes, brown a secure\n"
		"erase; entries that share a pixel column share its cells (4 pixels of\n"
		"sectors each), so the picture costs its pixels, not the log's length.\n"
		"Vertical lines are crash points: green a flush, orange a FUA write,\n"
		"dashed purple a mark.  A strip under the plot counts the crash points\n"
		"of each pixel column (marks in purple on top of flush and FUA points,\n"
		"the busiest column full height); with more than 300 of them, the strip\n"
		"alone shows them, and lines are drawn for the labelled marks and the\n"
		"highlighted entries only.  Mark labels go in three rows over the plot,\n"
		"each at its line where a row has room, cut after 24 characters; how\n"
		"many marks found no room is said under the plot.  --from and --to draw\n"
		"the entries between two points (start, end, entry:N, flush:K, point:K\n"
		"or mark:LABEL, as replay and check take them).  --highlight draws the\n"
		"given entries' lines in red (crashtest passes the failing points; -1, a\n"
		"state before any entry, draws nothing).  A label or title may hold any\n"
		"bytes: one that is not UTF-8, and a control character, is drawn as\n"
		"\\xNN, so the SVG is always well-formed XML.",
	.example =
		"  flushlog plot -o log.svg log.img\n"
		"  flushlog plot --highlight 120,245 -o failing.svg log.img\n"
		"  flushlog plot --from mark:mkfs-done --to flush:40 \\\n"
		"      -o workload.svg log.img",
	.options = plot_options,
	.run = run_plot,
};
