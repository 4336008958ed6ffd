// SPDX-License-Identifier: GPL-2.0
/* flushlog dump: one line per entry, blkparse-style, or JSON lines. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

enum { OPT_JSON, OPT_FROM, OPT_TO };

static const struct cli_option dump_options[] = {
	[OPT_JSON] = { "json", 'j', NULL, "print one JSON object per entry" },
	[OPT_FROM] = { "from", 0, "N", "start at entry N (default 0)" },
	[OPT_TO] = { "to", 0, "N", "stop after entry N (default the last; -1: none)" },
	{ NULL },
};

static void
print_entry_text(const struct fl_log *log, uint64_t seq)
{
	const struct fl_entry *e = &fl_log_entries(log)[seq];
	char letters[8];

	rwbs(e, letters);
	printf("%8" PRIu64 " %8" PRIu64 " %-12s %-5s", seq, e->seq,
	       fl_op_name(e->op), letters);
	if (e->op == FLUSHLOG_OP_FLUSH || e->op == FLUSHLOG_OP_MARK)
		printf(" %12s %8s", "-", "-");
	else
		printf(" %12" PRIu64 " %8u", e->sector, e->nr_sectors);
	printf(" %10" PRIu64 " %10" PRIu64 " %-5s", e->submit_tick,
	       e->complete_tick, e->flags & FL_ENTRY_CRASH_POINT ? "point" : "");
	if (e->op == FLUSHLOG_OP_MARK)
		printf(" %s", fl_log_label(log, seq));
	putchar('\n');
}

static void
print_entry_json(const struct fl_log *log, uint64_t seq)
{
	const struct fl_entry *e = &fl_log_entries(log)[seq];
	char letters[8];

	rwbs(e, letters);
	printf("{\"seq\":%" PRIu64 ",\"logged_seq\":%" PRIu64 ",\"op\":\"%s\",\"rwbs\":\"%s\",\"sector\":%" PRIu64 ",\"nr_sectors\":%u",
	       seq, e->seq, fl_op_name(e->op), letters, e->sector,
	       e->nr_sectors);
	printf(",\"preflush\":%s,\"fua\":%s,\"meta\":%s,\"sync\":%s",
	       e->flags & FLUSHLOG_F_PREFLUSH ? "true" : "false",
	       e->flags & FLUSHLOG_F_FUA ? "true" : "false",
	       e->flags & FLUSHLOG_F_META ? "true" : "false",
	       e->flags & FLUSHLOG_F_SYNC ? "true" : "false");
	printf(",\"submit_tick\":%" PRIu64 ",\"complete_tick\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"data_len\":%u,\"crash_point\":%s",
	       e->submit_tick, e->complete_tick, e->offset, e->data_len,
	       e->flags & FL_ENTRY_CRASH_POINT ? "true" : "false");
	if (e->op == FLUSHLOG_OP_MARK) {
		printf(",\"label\":");
		json_string(stdout, fl_log_label(log, seq));
	}
	printf("}\n");
}

static int
run_dump(const struct cli_command *cmd, int argc, char **argv)
{
	uint64_t from = 0, to = UINT64_MAX, nr;
	bool json = false, have_to = false, none = false;
	struct fl_log *log;
	const char *arg;
	int opt, ret;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == OPT_JSON)
			json = true;
		else if (opt == OPT_FROM)
			cli_parse_u64(cmd, "from", arg, &from);
		else if (!strcmp(arg, "-1"))	/* a state before any entry */
			none = true;
		else
			have_to = !cli_parse_u64(cmd, "to", arg, &to);
	}
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	if (have_to && to < from)
		cli_usage_error(cmd, "--to %" PRIu64 " is before --from %" PRIu64,
				to, from);
	ret = cli_open_log(cmd, argv[cli_operand_index()], 0, &log);
	if (ret)
		return ret;
	nr = fl_log_info(log)->nr_entries;
	if (from >= nr && nr && !none) {
		fprintf(stderr, "flushlog dump: --from %" PRIu64 ": the log has entries 0 to %" PRIu64 " only\n",
			from, nr - 1);
		fl_log_close(log);
		return EXIT_USAGE;
	}
	if (!json)
		printf("%8s %8s %-12s %-5s %12s %8s %10s %10s %-5s %s\n", "seq",
		       "logged", "op", "rwbs", "sector", "sectors", "submit",
		       "complete", "point", "label");
	for (uint64_t i = from; !none && i < nr && i <= to; i++) {
		if (json)
			print_entry_json(log, i);
		else
			print_entry_text(log, i);
	}
	fl_log_close(log);
	return fflush(stdout) ? EXIT_FAILED : EXIT_OK;
}

const struct cli_command cmd_dump = {
	.name = "dump",
	.synopsis = "[--json] [--from N] [--to N] LOG",
	.summary = "Print the log's entries, one per line.",
	.description =
		"Entries are listed in durability order, the order replay applies.\n"
		"Columns: entry number in that order, the number it was logged with\n"
		"(a version 2 log is written in completion order, so the two differ),\n"
		"operation, blkparse-style RWBS letters (F before the operation:\n"
		"preflush; W write, D discard, Z write-zeroes, E secure erase, N flush\n"
		"only, K mark; F after it: FUA; S sync; M metadata), first sector and\n"
		"length in 512-byte sectors, the submit and complete ticks, 'point'\n"
		"where a crash point ends, and a mark's label.  --to -1 prints no\n"
		"entry: the entries of a state before the first one.",
	.example = "  flushlog dump --from 100 --to 120 log.img\n  flushlog dump --json log.img | jq 'select(.fua)'",
	.options = dump_options,
	.run = run_dump,
};
