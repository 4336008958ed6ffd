// SPDX-License-Identifier: GPL-2.0
/* flushlog points: the crash points of a log, in order. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"

static const struct cli_option points_options[] = {
	{ "json", 'j', NULL, "print one JSON object per point" },
	{ NULL },
};

static int
run_points(const struct cli_command *cmd, int argc, char **argv)
{
	struct fl_error err = { 0 };
	struct fl_point *points;
	struct fl_log *log;
	bool json = false;
	const char *arg;
	size_t nr;
	int ret;

	while (cli_next_option(cmd, argc, argv, &arg) >= 0)
		json = true;
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	ret = cli_open_log(cmd, argv[cli_operand_index()], 0, &log);
	if (ret)
		return ret;
	if (fl_log_points(log, &points, &nr, &err)) {
		fl_log_close(log);
		return cli_report(cmd, &err);
	}
	if (!json)
		printf("%8s %-6s %10s %10s  %s\n", "point", "kind", "entry",
		       "applied", "spec");
	for (size_t i = 0; i < nr; i++) {
		const struct fl_point *p = &points[i];
		char spec[96];

		cli_point_spec(log, p, spec, sizeof(spec));
		if (json) {
			printf("{\"point\":%" PRIu64 ",\"kind\":\"%s\",\"entry\":%" PRId64 ",\"applied\":%" PRIu64 ",\"flush\":%" PRIu64 ",\"spec\":",
			       p->number, fl_point_kind_name(p->kind),
			       (int64_t)p->nr_applied - 1, p->nr_applied,
			       p->flush_number);
			json_string(stdout, spec);
			printf("}\n");
			continue;
		}
		printf("%8" PRIu64 " %-6s %10" PRId64 " %10" PRIu64 "  %s\n",
		       p->number, fl_point_kind_name(p->kind),
		       (int64_t)p->nr_applied - 1, p->nr_applied, spec);
	}
	free(points);
	fl_log_close(log);
	return fflush(stdout) ? EXIT_FAILED : EXIT_OK;
}

const struct cli_command cmd_points = {
	.name = "points",
	.synopsis = "[--json] LOG",
	.summary = "List the crash points: where a crash may leave the disk.",
	.description =
		"The start (point 0, the base) is the first crash point; the others end\n"
		"at an entry: a completed cache flush (flush), a completed FUA write\n"
		"(fua) or a mark; the end of the log is the last point.  The state at\n"
		"a point is the replay of the first 'applied' entries: 'entry' is the\n"
		"last of them (-1: none).  'point:N' and the spec column name the point\n"
		"for 'flushlog replay --to'.",
	.example = "  flushlog points log.img\n  flushlog points --json log.img | jq -r .spec",
	.options = points_options,
	.run = run_points,
};
