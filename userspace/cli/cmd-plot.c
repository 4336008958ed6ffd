// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog plot: the log as a picture.  Sector against entry number, one
 * mark a write coloured by what it did, flush and FUA points as vertical
 * lines, marks labelled, chosen entries (failing states) in red.  Entries
 * that fall in one pixel column are drawn as one bar a kind, so the file
 * stays small whatever the log's length.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define PLOT_W		1200	/* the plot area, in pixels */
#define PLOT_H		600
#define MARGIN_L	90
#define MARGIN_R	20
#define MARGIN_T	40
#define MARGIN_B	60
#define NR_KINDS	5

enum { OPT_OUTPUT, OPT_HIGHLIGHT, OPT_TITLE };

static const struct cli_option plot_options[] = {
	[OPT_OUTPUT] = { "output", 'o', "FILE", "write the SVG to FILE (default stdout)" },
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
	FILE *out;
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

static void
draw_writes(const struct plot *p)
{
	const struct fl_entry *e = fl_log_entries(p->log);
	struct column *cols = calloc(PLOT_W, sizeof(*cols));

	if (!cols)
		return;
	for (size_t c = 0; c < PLOT_W; c++)
		for (int k = 0; k < NR_KINDS; k++)
			cols[c].lo[k] = UINT64_MAX;
	for (uint64_t i = 0; i < p->nr; i++) {
		size_t c = (size_t)(i * PLOT_W / p->nr);
		int k = kind_of(&e[i]);

		if (k < 0 || !e[i].nr_sectors)
			continue;
		if (e[i].sector < cols[c].lo[k])
			cols[c].lo[k] = e[i].sector;
		if (e[i].sector + e[i].nr_sectors > cols[c].hi[k])
			cols[c].hi[k] = e[i].sector + e[i].nr_sectors;
	}
	for (int k = 0; k < NR_KINDS; k++) {
		fprintf(p->out, "<g fill=\"%s\">\n", kinds[k].colour);
		for (size_t c = 0; c < PLOT_W; c++) {
			double top, h, w = (double)PLOT_W / (double)p->nr;

			if (cols[c].lo[k] == UINT64_MAX)
				continue;
			top = y_of(p, cols[c].hi[k]);
			h = y_of(p, cols[c].lo[k]) - top;
			fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.2f\"/>\n",
				MARGIN_L + (double)c, top, w < 1 ? 1 : w,
				h < 1 ? 1 : h);
		}
		fprintf(p->out, "</g>\n");
	}
	free(cols);
}

static bool
highlighted(const struct plot *p, uint64_t entry)
{
	for (size_t i = 0; i < p->nr_highlight; i++)
		if (p->highlight[i] == entry)
			return true;
	return false;
}

/* Flush, FUA and mark points as vertical lines; marks with their labels. */
static void
draw_points(const struct plot *p)
{
	const struct fl_entry *e = fl_log_entries(p->log);

	for (uint64_t i = 0; i < p->nr; i++) {
		bool mark = e[i].op == FLUSHLOG_OP_MARK;
		double x = x_of(p, i + 1);
		const char *colour;

		if (highlighted(p, i))
			colour = "#cc0000";
		else if (!(e[i].flags & FL_ENTRY_CRASH_POINT))
			continue;
		else
			colour = mark ? "#75507b" : e[i].op == FLUSHLOG_OP_FLUSH ||
				 (e[i].flags & FLUSHLOG_F_PREFLUSH) ? "#4e9a06" : "#f57900";
		fprintf(p->out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\" stroke-opacity=\"0.6\"%s><title>entry %" PRIu64 "</title></line>\n",
			x, MARGIN_T, x, MARGIN_T + PLOT_H, colour,
			highlighted(p, i) ? "2" : "0.5",
			mark ? " stroke-dasharray=\"4 3\"" : "", i);
		if (mark) {
			fprintf(p->out, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" transform=\"rotate(-45 %.1f %d)\" fill=\"#75507b\">",
				x, MARGIN_T - 3, x, MARGIN_T - 3);
			cli_xml_text(p->out, fl_log_label(p->log, i));
			fprintf(p->out, "</text>\n");
		}
	}
}

static void
draw_frame(const struct plot *p, const char *title)
{
	fprintf(p->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#2e3436\"/>\n",
		MARGIN_L, MARGIN_T, PLOT_W, PLOT_H);
	for (int t = 0; t <= 4; t++) {
		uint64_t sector = p->sectors * t / 4, entry = p->nr * t / 4;

		fprintf(p->out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 "</text>\n",
			MARGIN_L - 4, y_of(p, sector) + 4, sector);
		fprintf(p->out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%" PRIu64 "</text>\n",
			x_of(p, entry), MARGIN_T + PLOT_H + 16, entry);
	}
	fprintf(p->out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">entry (sequence number)</text>\n",
		MARGIN_L + PLOT_W / 2, MARGIN_T + PLOT_H + 34);
	fprintf(p->out, "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\">sector</text>\n",
		MARGIN_T + PLOT_H / 2, MARGIN_T + PLOT_H / 2);
	fprintf(p->out, "<text x=\"%d\" y=\"16\" font-weight=\"bold\">", MARGIN_L);
	cli_xml_text(p->out, title);
	fprintf(p->out, "</text>\n");
	/* the legend, under the axis */
	for (int k = 0; k < NR_KINDS; k++)
		fprintf(p->out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			MARGIN_L + 110 * k, MARGIN_T + PLOT_H + 42,
			kinds[k].colour, MARGIN_L + 110 * k + 14,
			MARGIN_T + PLOT_H + 51, kinds[k].name);
	fprintf(p->out, "<text x=\"%d\" y=\"%d\"><tspan fill=\"#4e9a06\">| flush</tspan> <tspan fill=\"#f57900\">| FUA</tspan> <tspan fill=\"#75507b\">: mark</tspan> <tspan fill=\"#cc0000\">| highlighted</tspan></text>\n",
		MARGIN_L + 110 * NR_KINDS, MARGIN_T + PLOT_H + 51);
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
	const char *arg, *output = NULL, *title = NULL, *path;
	struct plot p = { 0 };
	struct fl_log *log;
	int opt, ret;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == OPT_OUTPUT)
			output = arg;
		else if (opt == OPT_TITLE)
			title = arg;
		else if (parse_highlight(cmd, arg, &p))
			return EXIT_FAILED;
	}
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	path = argv[cli_operand_index()];
	ret = cli_open_log(cmd, path, 0, &log);
	if (ret)
		return ret;
	p.log = log;
	p.nr = fl_log_info(log)->nr_entries;
	p.sectors = fl_log_info(log)->data_sectors ? fl_log_info(log)->data_sectors : 1;
	p.out = output ? fopen(output, "w") : stdout;
	if (!p.out) {
		fprintf(stderr, "flushlog plot: cannot write '%s': %s\n", output,
			strerror(errno));
		ret = EXIT_FAILED;
		goto out;
	}
	fprintf(p.out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
		MARGIN_L + PLOT_W + MARGIN_R, MARGIN_T + PLOT_H + MARGIN_B);
	fprintf(p.out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	draw_frame(&p, title ? title : path);
	draw_writes(&p);
	draw_points(&p);
	fprintf(p.out, "</svg>\n");
	ret = EXIT_OK;
	if (ferror(p.out) || (output && fclose(p.out)) || (!output && fflush(p.out))) {
		fprintf(stderr, "flushlog plot: cannot write '%s'\n",
			output ? output : "stdout");
		ret = EXIT_FAILED;
	}
out:
	free(p.highlight);
	fl_log_close(log);
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
		"share a pixel column share one bar a kind.",
	.example =
		"  flushlog plot -o log.svg log.img\n"
		"  flushlog plot --highlight 120,245 -o failing.svg log.img",
	.options = plot_options,
	.run = run_plot,
};
