// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog plot: the log as a picture.  Sector against entry number, one
 * mark a write coloured by what it did, flush and FUA points as vertical
 * lines, marks labelled, chosen entries (failing states) in red.  Entries
 * that fall in one pixel column are drawn as one bar a kind, so the file
 * stays small whatever the log's length.  The SVG is written by libxml2's
 * writer: a label or title of any bytes makes well-formed XML.
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
#define MARGIN_L	90
#define MARGIN_R	20
#define MARGIN_T	40
#define MARGIN_B	60
#define NR_KINDS	5

enum { OPT_OUTPUT, OPT_HIGHLIGHT, OPT_TITLE };

static const struct cli_option plot_options[] = {
	[OPT_OUTPUT] = { "output", 'o', "FILE", "write the SVG to FILE ('-', the default: stdout)" },
	[OPT_HIGHLIGHT] = { "highlight", 0, "ENTRIES",
			    "draw these entries' points in red: N[,N...]" },
	[OPT_TITLE] = { "title", 0, "TEXT", "a title (default the log's path)" },
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

/* One bar a kind a pixel column: the sectors its entries span. */
struct column {
	uint64_t lo[NR_KINDS], hi[NR_KINDS];
};

struct plot {
	const struct fl_log *log;
	xmlTextWriterPtr w;
	uint64_t nr, sectors;
	uint64_t *highlight;
	size_t nr_highlight;
};

static double
x_of(const struct plot *p, uint64_t entry)
{
	return MARGIN_L + (double)entry * PLOT_W / (double)(p->nr ? p->nr : 1);
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

/* Each kind's bars, one a pixel column, over the sectors its entries span. */
static int
draw_bars(const struct plot *p, const struct column *cols)
{
	double w = (double)PLOT_W / (double)p->nr;

	for (int k = 0; k < NR_KINDS; k++) {
		if (start(p, "g") || attr(p, "fill", "%s", kinds[k].colour))
			return -1;
		for (size_t c = 0; c < PLOT_W; c++) {
			double top, h;

			if (cols[c].lo[k] == UINT64_MAX)
				continue;
			top = y_of(p, cols[c].hi[k]);
			h = y_of(p, cols[c].lo[k]) - top;
			if (rect(p, MARGIN_L + (double)c, top, w < 1 ? 1 : w,
				 h < 1 ? 1 : h, NULL))
				return -1;
		}
		if (end(p))
			return -1;
	}
	return 0;
}

static int
draw_writes(const struct plot *p)
{
	struct column *cols = calloc(PLOT_W, sizeof(*cols));
	int ret;

	if (!cols)
		return -1;
	for (size_t c = 0; c < PLOT_W; c++)
		for (int k = 0; k < NR_KINDS; k++)
			cols[c].lo[k] = UINT64_MAX;
	for (uint64_t i = 0; i < p->nr; i++) {
		const struct fl_entry *e = fl_log_entry(p->log, i);
		size_t c = (size_t)(i * PLOT_W / p->nr);
		int k = kind_of(e);

		uint64_t at;

		if (k < 0 || !e->nr_sectors)
			continue;
		/* several devices: one after another, as in an image of all */
		at = fl_log_device(p->log, e->device)->image_sector + e->sector;
		if (at < cols[c].lo[k])
			cols[c].lo[k] = at;
		if (at + e->nr_sectors > cols[c].hi[k])
			cols[c].hi[k] = at + e->nr_sectors;
	}
	ret = draw_bars(p, cols);
	free(cols);
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

/* A crash point's line, with its entry number as a tooltip. */
static int
point_line(const struct plot *p, uint64_t i, const char *colour, bool mark)
{
	double x = x_of(p, i + 1);
	char title[32];

	snprintf(title, sizeof(title), "entry %" PRIu64, i);
	return start(p, "line") || attr(p, "x1", "%.1f", x) ||
	       attr(p, "y1", "%d", MARGIN_T) || attr(p, "x2", "%.1f", x) ||
	       attr(p, "y2", "%d", MARGIN_T + PLOT_H) ||
	       attr(p, "stroke", "%s", colour) ||
	       attr(p, "stroke-width", "%s", highlighted(p, i) ? "2" : "0.5") ||
	       attr(p, "stroke-opacity", "0.6") ||
	       (mark && attr(p, "stroke-dasharray", "4 3")) ||
	       start(p, "title") || cli_xml_text(p->w, title, strlen(title), 0) ||
	       end(p) || end(p);
}

/* A mark's label, slanted above its line. */
static int
mark_label(const struct plot *p, uint64_t i)
{
	const char *label = fl_log_label(p->log, i);
	double x = x_of(p, i + 1);

	return start(p, "text") || attr(p, "x", "%.1f", x) ||
	       attr(p, "y", "%d", MARGIN_T - 3) || attr(p, "font-size", "9") ||
	       attr(p, "transform", "rotate(-45 %.1f %d)", x, MARGIN_T - 3) ||
	       attr(p, "fill", "#75507b") ||
	       cli_xml_text(p->w, label, strlen(label), 0) || end(p);
}

/* Flush, FUA and mark points as vertical lines; marks with their labels. */
static int
draw_points(const struct plot *p)
{
	for (uint64_t i = 0; i < p->nr; i++) {
		const struct fl_entry *e = fl_log_entry(p->log, i);
		bool mark = e->op == FLUSHLOG_OP_MARK;
		const char *colour;

		if (highlighted(p, i))
			colour = "#cc0000";
		else if (!(e->flags & FL_ENTRY_CRASH_POINT))
			continue;
		else
			colour = mark ? "#75507b" : e->op == FLUSHLOG_OP_FLUSH ||
				 (e->flags & FLUSHLOG_F_PREFLUSH) ? "#4e9a06" : "#f57900";
		if (point_line(p, i, colour, mark) || (mark && mark_label(p, i)))
			return -1;
	}
	return 0;
}

static int
draw_axes(const struct plot *p)
{
	char n[24];

	for (int t = 0; t <= 4; t++) {
		uint64_t sector = p->sectors * t / 4, entry = p->nr * t / 4;

		snprintf(n, sizeof(n), "%" PRIu64, sector);
		if (text(p, MARGIN_L - 4, y_of(p, sector) + 4, "end", n))
			return -1;
		snprintf(n, sizeof(n), "%" PRIu64, entry);
		if (text(p, x_of(p, entry), MARGIN_T + PLOT_H + 16, "middle", n))
			return -1;
	}
	return text(p, MARGIN_L + PLOT_W / 2, MARGIN_T + PLOT_H + 34, "middle",
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

/* The legend, under the axis. */
static int
draw_legend(const struct plot *p)
{
	for (int k = 0; k < NR_KINDS; k++)
		if (rect(p, MARGIN_L + 110 * k, MARGIN_T + PLOT_H + 42, 10, 10,
			 kinds[k].colour) ||
		    text(p, MARGIN_L + 110 * k + 14, MARGIN_T + PLOT_H + 51, NULL,
			 kinds[k].name))
			return -1;
	return start(p, "text") || attr(p, "x", "%d", MARGIN_L + 110 * NR_KINDS) ||
	       attr(p, "y", "%d", MARGIN_T + PLOT_H + 51) ||
	       tspan(p, "#4e9a06", "| flush") || tspan(p, "#f57900", "| FUA") ||
	       tspan(p, "#75507b", ": mark") ||
	       tspan(p, "#cc0000", "| highlighted") || end(p);
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

/* The whole picture; -1 if the writer failed. */
static int
draw(struct plot *p, FILE *out, const char *title)
{
	int failed;

	p->w = cli_xml_start(out);
	if (!p->w)
		return -1;
	failed = start(p, "svg") ||
		 attr(p, "xmlns", "http://www.w3.org/2000/svg") ||
		 attr(p, "width", "%d", MARGIN_L + PLOT_W + MARGIN_R) ||
		 attr(p, "height", "%d", MARGIN_T + PLOT_H + MARGIN_B) ||
		 attr(p, "font-family", "sans-serif") || attr(p, "font-size", "11") ||
		 start(p, "rect") || attr(p, "width", "100%%") ||
		 attr(p, "height", "100%%") || attr(p, "fill", "white") || end(p) ||
		 draw_frame(p, title) || draw_writes(p) || draw_points(p) ||
		 end(p);
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
	const char *arg, *output = "-", *title = NULL, *path;
	struct cli_input log_input;
	struct plot p = { 0 };
	struct cli_output o;
	struct fl_log *log;
	int opt, ret;
	FILE *out;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == OPT_OUTPUT)
			output = arg;
		else if (opt == OPT_TITLE)
			title = arg;
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
	p.nr = fl_log_info(log)->nr_entries;
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
	free(p.highlight);
	return ret;
}

const struct cli_command cmd_plot = {
	.name = "plot",
	.synopsis = "[-o FILE] [--highlight ENTRIES] [--title TEXT] LOG",
	.summary = "Draw the log as an SVG picture: sector against entry.",
	.description =
		"Each write is a bar over the sectors it wrote, at its entry number:\n"
		"blue a write, orange a FUA write, grey a discard, yellow write-zeroes,\n"
		"brown a secure erase.  Vertical lines are crash points: green a flush,\n"
		"orange a FUA write, dashed purple a mark, with its label.  --highlight\n"
		"draws the given entries' lines in red (crashtest passes the failing\n"
		"points; -1, a state before any entry, draws nothing).  Entries that\n"
		"share a pixel column share one bar a kind.  A label or title may hold\n"
		"any bytes: one that is not UTF-8, and a control character, is drawn\n"
		"as \\xNN, so the SVG is always well-formed XML.",
	.example =
		"  flushlog plot -o log.svg log.img\n"
		"  flushlog plot --highlight 120,245 -o failing.svg log.img",
	.options = plot_options,
	.run = run_plot,
};
