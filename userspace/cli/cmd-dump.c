// SPDX-License-Identifier: GPL-2.0
/* flushlog dump: one line per entry, blkparse-style, or JSON lines. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "encode.h"

enum { OPT_JSON, OPT_FROM, OPT_TO };

static const struct cli_option dump_options[] = {
	[OPT_JSON] = { "json", 0, NULL, "print one JSON object per entry" },
	[OPT_FROM] = { "from", 0, "N", "start at entry N (default 0)" },
	[OPT_TO] = { "to", 0, "N", "stop after entry N (default the last; -1: none)" },
	{ NULL },
};

static void
print_entry_text(const struct fl_log *log, uint64_t seq)
{
	const struct fl_entry *e = fl_log_entry(log, seq);
	char letters[8];

	rwbs(e, letters);
	printf("%8" PRIu64 " %8" PRIu64 " %-12s %-5s", seq, e->seq,
	       fl_op_name(e->op), letters);
	if (fl_log_info(log)->nr_devices > 1) {
		/* device:sector, the device alone where there is no range */
		char where[32];

		if (e->op == FLUSHLOG_OP_FLUSH || e->op == FLUSHLOG_OP_MARK)
			snprintf(where, sizeof(where), "%u:-", e->device);
		else
			snprintf(where, sizeof(where), "%u:%" PRIu64, e->device,
				 e->sector);
		printf(" %12s", where);
	} else if (e->op == FLUSHLOG_OP_FLUSH || e->op == FLUSHLOG_OP_MARK) {
		printf(" %12s", "-");
	} else {
		printf(" %12" PRIu64, e->sector);
	}
	if (e->op == FLUSHLOG_OP_FLUSH || e->op == FLUSHLOG_OP_MARK)
		printf(" %8s", "-");
	else
		printf(" %8u", e->nr_sectors);
	printf(" %10" PRIu64 " %10" PRIu64 " %-5s", e->submit_tick,
	       e->complete_tick, e->flags & FL_ENTRY_CRASH_POINT ? "point" : "");
	if (e->op == FLUSHLOG_OP_MARK) {
		putchar(' ');
		cli_print_escaped(stdout, fl_log_label(log, seq));
	}
	putchar('\n');
}

static int
add_bool(struct json_object *o, const char *key, bool value)
{
	return cli_json_add(o, key, json_object_new_boolean(value));
}

/* -1 if out of memory */
static int
print_entry_json(const struct fl_log *log, uint64_t seq)
{
	const struct fl_entry *e = fl_log_entry(log, seq);
	struct json_object *o = json_object_new_object();
	char letters[8];
	int ret;

	if (!o)
		return -1;
	rwbs(e, letters);
	ret = cli_json_add(o, "seq", json_object_new_uint64(seq)) ||
	      cli_json_add(o, "logged_seq", json_object_new_uint64(e->seq)) ||
	      cli_json_add(o, "op", json_object_new_string(fl_op_name(e->op))) ||
	      cli_json_add(o, "rwbs", json_object_new_string(letters)) ||
	      cli_json_add(o, "device", json_object_new_uint64(e->device)) ||
	      cli_json_add(o, "sector", json_object_new_uint64(e->sector)) ||
	      cli_json_add(o, "nr_sectors", json_object_new_uint64(e->nr_sectors)) ||
	      add_bool(o, "preflush", e->flags & FLUSHLOG_F_PREFLUSH) ||
	      add_bool(o, "fua", e->flags & FLUSHLOG_F_FUA) ||
	      add_bool(o, "meta", e->flags & FLUSHLOG_F_META) ||
	      add_bool(o, "sync", e->flags & FLUSHLOG_F_SYNC) ||
	      cli_json_add(o, "submit_tick", json_object_new_uint64(e->submit_tick)) ||
	      cli_json_add(o, "complete_tick", json_object_new_uint64(e->complete_tick)) ||
	      cli_json_add(o, "offset", json_object_new_uint64(e->offset)) ||
	      cli_json_add(o, "data_len", json_object_new_uint64(e->data_len)) ||
	      add_bool(o, "crash_point", e->flags & FL_ENTRY_CRASH_POINT);
	if (e->op == FLUSHLOG_OP_MARK)
		ret = ret || cli_json_add(o, "label",
				    cli_json_string(fl_log_label(log, seq)));
	if (!ret)
		ret = cli_json_print(stdout, o);
	json_object_put(o);
	return ret;
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
	ret = 0;
	for (uint64_t i = from; !ret && !none && i < nr && i <= to; i++) {
		if (json)
			ret = print_entry_json(log, i);
		else
			print_entry_text(log, i);
	}
	fl_log_close(log);
	if (ret)
		fprintf(stderr, "flushlog dump: out of memory\n");
	return ret ? EXIT_BROKEN_RUN : cli_flush_stdout(cmd);
}

const struct cli_command cmd_dump = {
	.name = "dump",
	.synopsis = "[--json] [--from N] [--to N] LOG",
	.summary = "Print the log's entries, one per line.",
	.description =
		"Entries are listed in durability order, the order replay applies.\n"
		"Columns: entry number in that order, the number it was logged with\n"
		"(a version 2 log is written in completion order, so the two differ),\n"
		"operation, the RWBS letters blktrace shows for the request the target\n"
		"saw (F before the operation: preflush; W write, D discard, DE secure\n"
		"erase, N write-zeroes; F after it: FUA; S sync; M metadata; a flush is\n"
		"an empty write with preflush, FW, and a mark, a message to blktrace, N),\n"
		"first sector and length in 512-byte sectors, the submit and complete\n"
		"ticks, 'point' where a crash point ends, and a mark's label.  A label\n"
		"may hold any bytes: in the text, a byte that is not UTF-8 and a control\n"
		"character (terminal escapes included) are shown as \\xNN; in the JSON,\n"
		"a byte that is not UTF-8.  --to -1 prints no entry: the entries of a\n"
		"state before the first one.",
	.example = "  flushlog dump --from 100 --to 120 log.img\n  flushlog dump --json log.img | jq 'select(.fua)'",
	.options = dump_options,
	.run = run_dump,
};
