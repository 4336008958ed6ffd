// SPDX-License-Identifier: GPL-2.0
/* flushlog points: the crash points of a log, in order. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "encode.h"

static const struct cli_option points_options[] = {
	{ "json", 0, NULL, "print one JSON object per point" },
	{ NULL },
};

/* -1 if out of memory */
static int
print_point_json(const struct fl_point *p, const char *spec)
{
	struct json_object *o = json_object_new_object();
	int ret;

	if (!o)
		return -1;
	ret = cli_json_add(o, "point", json_object_new_uint64(p->number)) ||
	      cli_json_add(o, "kind", json_object_new_string(fl_point_kind_name(p->kind))) ||
	      cli_json_add(o, "entry", json_object_new_int64((int64_t)p->nr_applied - 1)) ||
	      cli_json_add(o, "applied", json_object_new_uint64(p->nr_applied)) ||
	      cli_json_add(o, "flush", json_object_new_uint64(p->flush_number)) ||
	      cli_json_add(o, "spec", cli_json_string(spec)) ||
	      cli_json_print(stdout, o);
	json_object_put(o);
	return ret ? -1 : 0;
}

static void
print_point_text(const struct fl_point *p, const char *spec)
{
	printf("%8" PRIu64 " %-6s %10" PRId64 " %10" PRIu64 "  ", p->number,
	       fl_point_kind_name(p->kind), (int64_t)p->nr_applied - 1,
	       p->nr_applied);
	cli_print_escaped(stdout, spec);
	putchar('\n');
}

static int
run_points(const struct cli_command *cmd, int argc, char **argv)
{
	struct fl_error err = { 0 };
	struct fl_points *points;
	struct fl_log *log;
	bool json = false;
	const char *arg;
	int ret;

	while (cli_next_option(cmd, argc, argv, &arg) >= 0)
		json = true;
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	ret = cli_open_log(cmd, argv[cli_operand_index()], 0, &log);
	if (ret)
		return ret;
	if (fl_log_points(log, &points, &err)) {
		fl_log_close(log);
		return cli_report(cmd, &err);
	}
	if (!json)
		printf("%8s %-6s %10s %10s  %s\n", "point", "kind", "entry",
		       "applied", "spec");
	for (size_t i = 0; i < fl_points_count(points) && !ret; i++) {
		const struct fl_point *p = fl_points_get(points, i);
		/* a dm-log-writes label may fill a sector of 4 KiB */
		char spec[4096 + 8];

		cli_point_spec(log, p, spec, sizeof(spec));
		if (json)
			ret = print_point_json(p, spec);
		else
			print_point_text(p, spec);
	}
	if (ret)
		fprintf(stderr, "flushlog points: out of memory\n");
	fl_points_free(points);
	fl_log_close(log);
	return ret ? EXIT_BROKEN_RUN : cli_flush_stdout(cmd);
}

const struct cli_command cmd_points = {
	.name = "points",
	.synopsis = "[--json] LOG",
	.summary = "List the crash points: where a crash may leave the disk.",
	.description =
		"The start (point 0, the base) is the first crash point; the others end\n"
		"at an entry: a completed cache flush (flush), a completed FUA write\n"
		"(fua) or a mark; the end of the log is the last point.  The state at\n"
		"a point is the replay of the first 'applied' entries (its position):\n"
		"'entry' is the last of them (-1: none).  'point:N' and the spec column\n"
		"name the point for the --from and --to of replay, check and dump.  A\n"
		"mark's label may hold any bytes: the spec shows a byte that is not UTF-8\n"
		"as \\xNN (in the text, a control character too), which --to reads back,\n"
		"so a spec copied from either output works.",
	.example = "  flushlog points log.img\n  flushlog points --json log.img | jq -r .spec",
	.options = points_options,
	.run = run_points,
};
