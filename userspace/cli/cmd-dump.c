// SPDX-License-Identifier: GPL-2.0
/* flushlog dump: one line per entry, blkparse-style, or JSON lines. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "encode.h"

enum { OPT_JSON, OPT_FROM, OPT_TO };

static const struct cli_option dump_options[] = {
	[OPT_JSON] = { "json", 0, NULL, "print one JSON object per entry" },
	[OPT_FROM] = { "from", 0, "POINT",
		       "the entries after POINT's state (default start); N: from entry N on" },
	[OPT_TO] = { "to", 0, "POINT",
		     "the entries up to POINT's state (default: all); N: up to entry N, -1: none" },
	{ NULL },
};

/* An entry with a sector range: not a flush, a mark or a resize. */
static bool
has_range(const struct fl_entry *e)
{
	return e->op != FLUSHLOG_OP_FLUSH && e->op != FLUSHLOG_OP_MARK &&
	       e->op != FLUSHLOG_OP_RESIZE;
}

/*
 * The last column: a mark's label, a resize's new size ("size=N"), and
 * "failed" for a bio that failed.
 */
static void
print_note(const struct fl_log *log, uint64_t entry, const struct fl_entry *e)
{
	if (e->op == FLUSHLOG_OP_MARK) {
		putchar(' ');
		cli_print_escaped(stdout, fl_log_label(log, entry));
	}
	if (e->op == FLUSHLOG_OP_RESIZE)
		printf(" size=%" PRIu64, e->sector);
	if (e->flags & FLUSHLOG_F_FAILED)
		printf(" failed");
}

static void
print_entry_text(const struct fl_log *log, uint64_t entry)
{
	const struct fl_entry *e = fl_log_entry(log, entry);
	char letters[8];

	rwbs(e, letters);
	printf("%8" PRIu64 " %10" PRIu64 " %-12s %-5s", entry, e->seq,
	       fl_op_name(e->op), letters);
	if (fl_log_info(log)->nr_devices > 1) {
		/* device:sector, the device alone where there is no range */
		char where[32];

		if (!has_range(e))
			snprintf(where, sizeof(where), "%u:-", e->device);
		else
			snprintf(where, sizeof(where), "%u:%" PRIu64, e->device,
				 e->sector);
		printf(" %12s", where);
	} else if (!has_range(e)) {
		printf(" %12s", "-");
	} else {
		printf(" %12" PRIu64, e->sector);
	}
	if (!has_range(e))
		printf(" %8s", "-");
	else
		printf(" %8u", e->nr_sectors);
	printf(" %10" PRIu64 " %10" PRIu64 " %-5s", e->submit_tick,
	       e->complete_tick, e->flags & FL_ENTRY_CRASH_POINT ? "point" : "");
	print_note(log, entry, e);
	putchar('\n');
}

static int
add_bool(struct json_object *o, const char *key, bool value)
{
	return cli_json_add(o, key, json_object_new_boolean(value));
}

/*
 * -1 if out of memory.  "seq" is "entry" under its old name, kept for the
 * scripts that read it; "logged_seq" is the header's seq.
 */
static int
print_entry_json(const struct fl_log *log, uint64_t entry)
{
	const struct fl_entry *e = fl_log_entry(log, entry);
	struct json_object *o = json_object_new_object();
	char letters[8];
	int ret;

	if (!o)
		return -1;
	rwbs(e, letters);
	ret = cli_json_add(o, "entry", json_object_new_uint64(entry)) ||
	      cli_json_add(o, "seq", json_object_new_uint64(entry)) ||
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
	      add_bool(o, "failed", e->flags & FLUSHLOG_F_FAILED) ||
	      cli_json_add(o, "submit_tick", json_object_new_uint64(e->submit_tick)) ||
	      cli_json_add(o, "complete_tick", json_object_new_uint64(e->complete_tick)) ||
	      cli_json_add(o, "offset", json_object_new_uint64(e->offset)) ||
	      cli_json_add(o, "data_len", json_object_new_uint64(e->data_len)) ||
	      add_bool(o, "crash_point", e->flags & FL_ENTRY_CRASH_POINT);
	if (e->op == FLUSHLOG_OP_MARK)
		ret = ret || cli_json_add(o, "label",
				    cli_json_string(fl_log_label(log, entry)));
	/* a resize's new size, which its header keeps in sector */
	if (e->op == FLUSHLOG_OP_RESIZE)
		ret = ret || cli_json_add(o, "size", json_object_new_uint64(e->sector));
	if (!ret)
		ret = cli_json_print(stdout, o);
	json_object_put(o);
	return ret;
}

static bool
is_number(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/*
 * The position --from or --to names: a POINT, or as before POINTs, a bare
 * entry number N, which --from starts with and --to ends with (-1: none).
 */
static int
dump_position(const struct cli_command *cmd, const struct fl_log *log,
	      const char *opt, const char *arg, uint64_t *position)
{
	bool from = !strcmp(opt, "from");
	char spec[32];
	int ret;

	if (!from && !strcmp(arg, "-1"))
		return *position = 0, 0;
	if (!is_number(arg) || strlen(arg) > 20)
		return cli_parse_point(cmd, log, opt, arg, position);
	snprintf(spec, sizeof(spec), "entry:%s", arg);
	ret = cli_parse_point(cmd, log, opt, spec, position);
	if (!ret && from)
		--*position;	/* before entry N: its position is N */
	return ret;
}

static int
run_dump(const struct cli_command *cmd, int argc, char **argv)
{
	const char *arg, *from = NULL, *to = NULL;
	uint64_t first = 0, last;
	struct fl_log *log;
	bool json = false;
	int opt, ret;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == OPT_JSON)
			json = true;
		else if (opt == OPT_FROM)
			from = arg;
		else
			to = arg;
	}
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	ret = cli_open_log(cmd, argv[cli_operand_index()], 0, &log);
	if (ret)
		return ret;
	last = fl_log_info(log)->nr_entries;
	if (from)
		ret = dump_position(cmd, log, "from", from, &first);
	if (!ret && to)
		ret = dump_position(cmd, log, "to", to, &last);
	if (!ret)
		ret = cli_check_range(cmd, from, to, first, last);
	if (ret) {
		fl_log_close(log);
		return ret;
	}
	if (!json)
		printf("%8s %10s %-12s %-5s %12s %8s %10s %10s %-5s %s\n",
		       "entry", "logged_seq", "op", "rwbs", "sector", "sectors",
		       "submit", "complete", "point", "label");
	for (uint64_t i = first; !ret && i < last; i++) {
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
	.synopsis = "[--json] [--from POINT] [--to POINT] LOG",
	.summary = "Print the log's entries, one per line.",
	.description =
		"Entries are listed in durability order, the order replay applies.\n"
		"Columns: the entry number, its place in that order (entry:N); the\n"
		"logged seq, its header's seq, its place in the log as written (a\n"
		"version 2 or 3 log is written in completion order, so the two differ);\n"
		"the operation, the RWBS letters blktrace shows for the request the target\n"
		"saw (F before the operation: preflush; W write, D discard, DE secure\n"
		"erase, N write-zeroes; F after it: FUA; S sync; M metadata; a flush is\n"
		"an empty write with preflush, FW, and a mark, a message to blktrace, N),\n"
		"first sector and length in 512-byte sectors, the submit and complete\n"
		"ticks, 'point' where a crash point ends, and a mark's label, a resize's\n"
		"new size (size=N) or 'failed' for a bio that failed (listed last if it\n"
		"changes data: it is never guaranteed durable).  A label\n"
		"may hold any bytes: in the text, a byte that is not UTF-8 and a control\n"
		"character (terminal escapes included) are shown as \\xNN; in the JSON,\n"
		"a byte that is not UTF-8.  --from and --to take a POINT, as every\n"
		"command does (start, end, entry:N, flush:K, point:K, mark:LABEL; see\n"
		"flushlog(1)): the entries listed are those after --from's state up to\n"
		"--to's, the ones 'flushlog replay --in-place' applies between them.  A\n"
		"bare number N is entry N itself, and --to -1 lists none.  A point the\n"
		"log does not have is an error, at either end.",
	.example = "  flushlog dump --from 100 --to 120 log.img\n"
		   "  flushlog dump --from flush:3 --to mark:commit-1 log.img\n"
		   "  flushlog dump --json log.img | jq 'select(.fua)'",
	.options = dump_options,
	.run = run_dump,
};
