// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog replay-log: a drop-in for fstests' src/log-writes/replay-log,
 * so that fstests' dm-log-writes tests (common/dmlogwrites) can replay a
 * log of dm-log-writes, or of dm-flushlog, through libflushlog.
 *
 * It takes replay-log's options as replay-log parses them, and prints on
 * stdout what fstests reads: "N@S" for --find, the count for
 * --num-entries, the "Log version=" line, the -v "replaying" lines.  Its
 * entry numbers are replay-log's for a dm-log-writes log (the order the
 * entries were logged: FL_OPEN_LOGGED_ORDER) and the index's, durability
 * order, for a flushlog log, as 'flushlog dump' numbers them.
 *
 * Where replay-log is wrong, this is not: a discard too large to zero is
 * zeroed all the same, a discard outside --start-sector/--end-sector is
 * skipped as the other entries there are, and a checker killed by a
 * signal fails the step.  Every failure exits 1, as replay-log's do.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli.h"
#include "encode.h"

/* replay-log's exit status for every failure, which fstests tests for */
#define RL_FAILED	1

enum {
	OPT_LOG, OPT_REPLAY, OPT_LIMIT, OPT_START_ENTRY, OPT_START_MARK,
	OPT_END_MARK, OPT_FIND, OPT_NEXT_FLUSH, OPT_NEXT_FUA, OPT_NUM_ENTRIES,
	OPT_NO_DISCARD, OPT_FSCK, OPT_CHECK, OPT_START_SECTOR, OPT_END_SECTOR,
	OPT_VERBOSE,
};

static const struct cli_option replay_log_options[] = {
	[OPT_LOG] = { "log", 0, "LOG", "the log to read (flushlog or dm-log-writes)" },
	[OPT_REPLAY] = { "replay", 0, "DEV", "replay onto DEV, a block device or file that exists" },
	[OPT_LIMIT] = { "limit", 0, "N", "replay (or, with --find, find) N entries from the start entry" },
	[OPT_START_ENTRY] = { "start-entry", 0, "N", "start at entry N (DEV holds what came before)" },
	[OPT_START_MARK] = { "start-mark", 0, "LABEL", "start after the first mark LABEL" },
	[OPT_END_MARK] = { "end-mark", 0, "LABEL", "stop after the next mark LABEL" },
	[OPT_FIND] = { "find", 0, NULL, "replay nothing: print N@S, the entry a replay would stop after" },
	[OPT_NEXT_FLUSH] = { "next-flush", 0, NULL, "stop after the next flush" },
	[OPT_NEXT_FUA] = { "next-fua", 0, NULL, "stop after the next FUA write" },
	[OPT_NUM_ENTRIES] = { "num-entries", 0, NULL, "print the number of entries" },
	[OPT_NO_DISCARD] = { "no-discard", 0, NULL, "do not replay discards" },
	[OPT_FSCK] = { "fsck", 0, "CMD", "run CMD (sh -c) at each --check step; a failure stops" },
	[OPT_CHECK] = { "check", 0, "WHEN", "run --fsck after every N-th entry (WHEN N), flush, fua or discard" },
	[OPT_START_SECTOR] = { "start-sector", 0, "S", "skip entries wholly before sector S" },
	[OPT_END_SECTOR] = { "end-sector", 0, "S", "skip entries that start after sector S" },
	[OPT_VERBOSE] = { "verbose", 'v', NULL, "print each entry replayed; -vv also those skipped" },
	{ NULL },
};

enum check_mode { CHECK_NONE, CHECK_NUMBER, CHECK_FUA, CHECK_FLUSH, CHECK_DISCARD };

#define STOP_FLUSH	(1U << 0)
#define STOP_FUA	(1U << 1)

struct rl_args {
	const char *log_path, *replay_path, *fsck, *start_mark, *end_mark;
	uint64_t limit, start_entry, start_sector, end_sector, check_every;
	enum check_mode check;
	unsigned int stop;	/* STOP_*: --next-flush, --next-fua */
	bool find, num_entries, discard;
	int verbose;
};

/* One replay: the log, and where it goes. */
struct rl_run {
	const struct cli_command *cmd;
	const struct rl_args *a;
	struct fl_log *log;
	const struct fl_log_info *info;
	uint32_t unit_sectors;	/* 512-byte sectors in a sector of its options */
	uint64_t start;		/* the first entry to replay or look at */
	struct fl_replay *r;
	int fd;
	bool is_blockdev, can_discard;
};

/* strtoull(s, 0, 0) as replay-log reads numbers, but nothing else. */
static uint64_t
parse_number(const struct cli_command *cmd, const char *opt, const char *s)
{
	uint64_t n;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (!*s || *end || errno)
		cli_usage_error(cmd, "--%s takes a number (decimal, 0x hex, 0 octal), not '%s'",
				opt, s);
	return n;
}

static void
parse_check(const struct cli_command *cmd, struct rl_args *a, const char *s)
{
	if (!strcmp(s, "flush")) {
		a->check = CHECK_FLUSH;
	} else if (!strcmp(s, "fua")) {
		a->check = CHECK_FUA;
	} else if (!strcmp(s, "discard")) {
		a->check = CHECK_DISCARD;
	} else {
		a->check = CHECK_NUMBER;
		a->check_every = parse_number(cmd, "check", s);
		if (!a->check_every)
			cli_usage_error(cmd, "--check 0: check after every N-th entry takes N of 1 or more");
	}
}

static void
parse_args(const struct cli_command *cmd, int argc, char **argv,
	   struct rl_args *a)
{
	const char *arg;
	int opt;

	*a = (struct rl_args) { .end_sector = UINT64_MAX, .discard = true };
	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		switch (opt) {
		case OPT_LOG:		a->log_path = arg; break;
		case OPT_REPLAY:	a->replay_path = arg; break;
		case OPT_LIMIT:
			a->limit = parse_number(cmd, "limit", arg);
			break;
		case OPT_START_ENTRY:
			a->start_entry = parse_number(cmd, "start-entry", arg);
			break;
		case OPT_START_MARK:	a->start_mark = arg; break;
		case OPT_END_MARK:	a->end_mark = arg; break;
		case OPT_FIND:		a->find = true; break;
		case OPT_NEXT_FLUSH:	a->stop |= STOP_FLUSH; break;
		case OPT_NEXT_FUA:	a->stop |= STOP_FUA; break;
		case OPT_NUM_ENTRIES:	a->num_entries = true; break;
		case OPT_NO_DISCARD:	a->discard = false; break;
		case OPT_FSCK:		a->fsck = arg; break;
		case OPT_CHECK:		parse_check(cmd, a, arg); break;
		case OPT_START_SECTOR:
			a->start_sector = parse_number(cmd, "start-sector", arg);
			break;
		case OPT_END_SECTOR:
			a->end_sector = parse_number(cmd, "end-sector", arg);
			break;
		case OPT_VERBOSE:	a->verbose++; break;
		}
	}
	if (cli_operand_index() < argc)
		cli_usage_error(cmd, "unexpected argument '%s' (the log is --log LOG)",
				argv[cli_operand_index()]);
	if (!a->log_path)
		cli_usage_error(cmd, "missing --log LOG");
	if (a->fsck && !a->check)
		cli_usage_error(cmd, "--fsck needs --check N|flush|fua|discard: when to run it");
	if (a->check && !a->fsck)
		cli_usage_error(cmd, "--check needs --fsck CMD: what to run");
}

/*
 * A flush or FUA point as the library has one: never an entry whose bio
 * failed, and in a flushlog log not the data of a PREFLUSH write, whose
 * flush is an entry of its own.  A PREFLUSH|FUA write is both.
 */
static bool
is_flush(const struct fl_entry *e)
{
	return (e->flags & FL_ENTRY_CRASH_POINT) && e->op != FLUSHLOG_OP_MARK &&
	       (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_PREFLUSH));
}

static bool
is_fua(const struct fl_entry *e)
{
	return (e->flags & FL_ENTRY_CRASH_POINT) && (e->flags & FLUSHLOG_F_FUA);
}

/* A failed write, discard, ...: never durable, so never replayed. */
static bool
is_failed_data(const struct fl_entry *e)
{
	return (e->flags & FLUSHLOG_F_FAILED) && e->op != FLUSHLOG_OP_FLUSH &&
	       e->op != FLUSHLOG_OP_MARK && e->op != FLUSHLOG_OP_RESIZE;
}

static bool
is_discard(const struct fl_entry *e)
{
	return e->op == FLUSHLOG_OP_DISCARD && !is_failed_data(e);
}

static bool
is_mark(const struct rl_run *run, uint64_t i, const char *label)
{
	return fl_log_entry(run->log, i)->op == FLUSHLOG_OP_MARK &&
	       !strcmp(fl_log_label(run->log, i), label);
}

/*
 * replay-log's should_stop(): with --end-mark only that mark stops it
 * (--next-flush and --next-fua then stop nothing, as there).
 */
static bool
should_stop(const struct rl_run *run, uint64_t i)
{
	const struct fl_entry *e = fl_log_entry(run->log, i);

	if (run->a->end_mark)
		return is_mark(run, i, run->a->end_mark);
	return ((run->a->stop & STOP_FLUSH) && is_flush(e)) ||
	       ((run->a->stop & STOP_FUA) && is_fua(e));
}

/* The entry's first sector and length in the units of the options. */
static uint64_t
entry_sector(const struct rl_run *run, const struct fl_entry *e)
{
	return e->sector / run->unit_sectors;
}

static uint64_t
entry_units(const struct rl_run *run, const struct fl_entry *e)
{
	return e->nr_sectors / run->unit_sectors;
}

/*
 * replay-log's log_should_skip(): an entry of no length is never skipped;
 * one is when it ends at or before --start-sector or starts after
 * --end-sector.
 */
static bool
outside_range(const struct rl_run *run, const struct fl_entry *e)
{
	uint64_t sector = entry_sector(run, e), nr = entry_units(run, e);

	if (!nr || e->op == FLUSHLOG_OP_RESIZE)
		return false;
	return sector + nr <= run->a->start_sector || sector > run->a->end_sector;
}

/*
 * Where the log continues after entry e (with_data) or after its header,
 * in log blocks: replay-log's "@S".  A flushlog entry's data is padded to
 * a whole block.
 */
static uint64_t
log_block_after(const struct rl_run *run, const struct fl_entry *e,
		bool with_data)
{
	uint32_t bs = run->info->log_block_size;
	uint64_t end = e->offset + bs, data = e->data_len;

	if (run->info->format == FL_FORMAT_FLUSHLOG)
		data = (data + bs - 1) / bs * bs;
	return (with_data ? end + data : end) / bs;
}

/* dm-log-writes' flag bits, which replay-log prints */
#define LW_FLUSH	(1U << 0)
#define LW_FUA		(1U << 1)
#define LW_DISCARD	(1U << 2)
#define LW_MARK		(1U << 3)
#define LW_METADATA	(1U << 4)

/* replay-log's "0x5(FLUSH|DISCARD)", and what a flushlog entry adds. */
static unsigned int
entry_flags(const struct fl_entry *e, char *buf, size_t len)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ LW_FLUSH, "FLUSH" }, { LW_FUA, "FUA" },
		{ LW_DISCARD, "DISCARD" }, { LW_MARK, "MARK" },
		{ LW_METADATA, "METADATA" },
	};
	unsigned int flags = 0;
	size_t n = 0;

	if (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_PREFLUSH))
		flags |= LW_FLUSH;
	if (e->flags & FLUSHLOG_F_FUA)
		flags |= LW_FUA;
	if (e->op == FLUSHLOG_OP_DISCARD)
		flags |= LW_DISCARD;
	if (e->op == FLUSHLOG_OP_MARK)
		flags |= LW_MARK;
	if (e->flags & FLUSHLOG_F_META)
		flags |= LW_METADATA;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].bit)
			n += snprintf(buf + n, len - n, "%s%s", n ? "|" : "",
				      names[i].name);
	/* what dm-log-writes cannot say: named, with no bit of its own */
	if (e->op == FLUSHLOG_OP_WRITE_ZEROES || e->op == FLUSHLOG_OP_SECURE_ERASE ||
	    e->op == FLUSHLOG_OP_RESIZE)
		n += snprintf(buf + n, len - n, "%s%s", n ? "|" : "",
			      e->op == FLUSHLOG_OP_RESIZE ? "RESIZE" :
			      e->op == FLUSHLOG_OP_WRITE_ZEROES ? "ZEROES" : "ERASE");
	if (e->flags & FLUSHLOG_F_FAILED)
		n += snprintf(buf + n, len - n, "%sFAILED", n ? "|" : "");
	if (!n)
		snprintf(buf, len, "NONE");
	return flags;
}

/* replay-log's line for an entry: "replaying 3@12: sector 8, ..." */
static void
print_entry(const struct rl_run *run, const char *what, uint64_t i,
	    bool with_data)
{
	const struct fl_entry *e = fl_log_entry(run->log, i);
	char names[96];
	unsigned int flags = entry_flags(e, names, sizeof(names));

	printf("%s %" PRIu64 "@%" PRIu64 ": sector %" PRIu64 ", size %" PRIu64 ", flags 0x%x(%s)\n",
	       what, i, log_block_after(run, e, with_data), entry_sector(run, e),
	       (uint64_t)e->nr_sectors << FLUSHLOG_SECTOR_SHIFT, flags, names);
}

/*
 * replay-log's -vv line for an entry it seeks past, its size in sectors:
 * to --start-entry (log_seek_entry(), at the entry's header, no flag
 * names), or reading on, to --start-mark or in --find
 * (log_seek_next_entry(), after the header).
 */
static void
print_seek(const struct rl_run *run, uint64_t i, bool reading_on)
{
	const struct fl_entry *e = fl_log_entry(run->log, i);
	uint32_t bs = run->info->log_block_size;
	char names[96];
	unsigned int flags = entry_flags(e, names, sizeof(names));

	printf("seek entry %" PRIu64 "@%" PRIu64 ": %" PRIu64 ", size %" PRIu64 ", flags 0x%x",
	       i, reading_on ? log_block_after(run, e, false) : e->offset / bs,
	       entry_sector(run, e), entry_units(run, e), flags);
	if (reading_on)
		printf("(%s)", names);
	putchar('\n');
}

static int
lib_failed(const struct rl_run *run, const struct fl_error *err)
{
	fprintf(stderr, "flushlog %s: ", run->cmd->name);
	cli_print_escaped(stderr, err->msg);
	fputc('\n', stderr);
	return RL_FAILED;
}

/* The entries before entry `to` that wait in the replay, applied. */
static int
apply_pending(struct rl_run *run, uint64_t to)
{
	struct fl_error err = { 0 };

	if (fl_replay_position(run->r) < to && fl_replay_to(run->r, to, &err))
		return lib_failed(run, &err);
	return 0;
}

/* Entry i is not replayed: the image is declared to hold it. */
static int
pass_over(struct rl_run *run, uint64_t i)
{
	struct fl_error err = { 0 };
	int ret = apply_pending(run, i);

	if (!ret && fl_replay_seek(run->r, i + 1, &err))
		ret = lib_failed(run, &err);
	return ret;
}

/*
 * A discard onto a block device is sent to it as one (BLKDISCARD), as
 * replay-log does; where the device cannot, and onto a file, the library
 * zeroes the range, however large (replay-log leaves a discard of more
 * than 128 MiB unzeroed on a device without discard).
 */
static int
discard(struct rl_run *run, uint64_t i)
{
	const struct fl_entry *e = fl_log_entry(run->log, i);
	uint64_t range[2] = { e->sector << FLUSHLOG_SECTOR_SHIFT,
			      (uint64_t)e->nr_sectors << FLUSHLOG_SECTOR_SHIFT };
	int ret;

	if (!run->is_blockdev || !run->can_discard)
		return 0;	/* applied with the next run */
	ret = apply_pending(run, i);
	if (ret)
		return ret;
	if (!ioctl(run->fd, BLKDISCARD, range))
		return pass_over(run, i);
	run->can_discard = false;
	if (run->a->verbose)
		printf("replay device doesn't support discard, switching to writing zeros\n");
	return 0;
}

/*
 * Entry i, as replay-log's log_replay_next_entry() takes it: its line,
 * then applied (with the next run of entries the library replays at once)
 * or passed over.
 */
static int
replay_entry(struct rl_run *run, uint64_t i)
{
	const struct fl_entry *e = fl_log_entry(run->log, i);
	bool skip = outside_range(run, e) || is_failed_data(e);

	if (run->a->verbose > 1 || (run->a->verbose && !skip))
		print_entry(run, skip ? "skipping" : "replaying", i, false);
	if (skip || (e->op == FLUSHLOG_OP_DISCARD && !run->a->discard))
		return pass_over(run, i);
	if (e->op == FLUSHLOG_OP_DISCARD)
		return discard(run, i);
	return 0;
}

static bool
check_due(const struct rl_run *run, uint64_t i, uint64_t count)
{
	const struct fl_entry *e = fl_log_entry(run->log, i);

	switch (run->a->check) {
	case CHECK_NUMBER:
		return !(count % run->a->check_every);
	case CHECK_FUA:
		return is_fua(e);
	case CHECK_FLUSH:
		return is_flush(e);
	case CHECK_DISCARD:
		return is_discard(e);
	default:
		return false;
	}
}

/* The image as it stands after entry i, synced, handed to --fsck. */
static int
run_fsck(struct rl_run *run, uint64_t i)
{
	int ret = apply_pending(run, i + 1), status;

	if (ret)
		return ret;
	if (fsync(run->fd)) {
		fprintf(stderr, "flushlog %s: cannot sync '%s' before checking entry %" PRIu64 ": %s\n",
			run->cmd->name, run->a->replay_path, i, strerror(errno));
		return RL_FAILED;
	}
	fflush(stdout);		/* our lines before the checker's */
	status = system(run->a->fsck);
	if (status != -1 && WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	fprintf(stderr, "flushlog %s: Fsck errored out on entry %" PRIu64 " (offset %" PRIu64 "): '%s' ",
		run->cmd->name, i, fl_log_entry(run->log, i)->offset, run->a->fsck);
	if (status == -1)
		fprintf(stderr, "could not be run: %s\n", strerror(errno));
	else if (WIFEXITED(status))
		fprintf(stderr, "exited %d\n", WEXITSTATUS(status));
	else
		fprintf(stderr, "was killed by signal %d\n", WTERMSIG(status));
	return RL_FAILED;
}

static int
replay_entries(struct rl_run *run)
{
	const struct rl_args *a = run->a;
	uint64_t n = run->info->nr_entries, count = 0, i;
	struct fl_error err = { 0 };
	int ret = 0;

	if (fl_replay_seek(run->r, run->start, &err))
		return lib_failed(run, &err);
	for (i = run->start; i < n && !ret; i++) {
		ret = replay_entry(run, i);
		count++;
		if (!ret && a->fsck && check_due(run, i, count))
			ret = run_fsck(run, i);
		if (!ret && ((a->limit && count == a->limit) || should_stop(run, i))) {
			i++;
			break;
		}
	}
	if (!ret)
		ret = apply_pending(run, i);
	if (!ret && fsync(run->fd)) {
		fprintf(stderr, "flushlog %s: cannot sync '%s': %s\n",
			run->cmd->name, a->replay_path, strerror(errno));
		ret = RL_FAILED;
	}
	return ret;
}

static int
replay(struct rl_run *run)
{
	struct fl_error err = { 0 };
	struct stat st;
	int ret;

	if (fstat(run->fd, &st)) {
		fprintf(stderr, "flushlog %s: cannot stat '%s': %s\n",
			run->cmd->name, run->a->replay_path, strerror(errno));
		return RL_FAILED;
	}
	run->is_blockdev = S_ISBLK(st.st_mode);
	run->can_discard = true;
	if (fl_replay_open(run->log, run->fd, &run->r, &err))
		return lib_failed(run, &err);
	ret = replay_entries(run);
	fl_replay_close(run->r);
	return ret;
}

/* --find: the entry a replay with these options would stop after. */
static int
find(const struct rl_run *run)
{
	uint64_t n = run->info->nr_entries, count = 0;

	for (uint64_t i = run->start; i < n; i++) {
		const struct fl_entry *e = fl_log_entry(run->log, i);

		count++;
		if (run->a->verbose > 1)
			print_seek(run, i, true);
		if ((run->a->limit && count == run->a->limit) ||
		    should_stop(run, i)) {
			printf("%" PRIu64 "@%" PRIu64 "\n", i,
			       log_block_after(run, e, true));
			return 0;
		}
	}
	fprintf(stderr, "flushlog %s: Couldn't find entry: none of entries %" PRIu64 " to %" PRIu64 " of '%s' is ",
		run->cmd->name, run->start, n ? n - 1 : 0, run->a->log_path);
	if (run->a->end_mark)
		fprintf(stderr, "a mark '%s'", run->a->end_mark);
	else if (run->a->stop)
		fprintf(stderr, "a%s%s%s", run->a->stop & STOP_FLUSH ? " flush" : "",
			run->a->stop == (STOP_FLUSH | STOP_FUA) ? " or" : "",
			run->a->stop & STOP_FUA ? " FUA write" : "");
	else
		fprintf(stderr, "asked for (give --limit, --end-mark, --next-flush or --next-fua)");
	if (run->a->limit)
		fprintf(stderr, ", and there are fewer than %" PRIu64, run->a->limit);
	fputc('\n', stderr);
	return RL_FAILED;
}

/*
 * Where replay and find begin: after --start-mark (replay-log's
 * seek_to_mark() leaves the mark consumed), else at --start-entry, which
 * must be an entry of the log (0 always is, an empty log's too).
 */
static int
find_start(struct rl_run *run)
{
	uint64_t n = run->info->nr_entries;

	if (run->a->start_mark) {
		for (uint64_t i = 0; i < n; i++) {
			if (run->a->verbose > 1)
				print_seek(run, i, true);
			if (is_mark(run, i, run->a->start_mark)) {
				run->start = i + 1;
				return 0;
			}
		}
		fprintf(stderr, "flushlog %s: Couldn't find starting mark: '%s' has no mark '%s'\n",
			run->cmd->name, run->a->log_path, run->a->start_mark);
		return RL_FAILED;
	}
	if (run->a->start_entry && run->a->start_entry >= n) {
		fprintf(stderr, "flushlog %s: --start-entry %" PRIu64 ": Invalid entry number: '%s' has entries 0 to %" PRId64 "\n",
			run->cmd->name, run->a->start_entry, run->a->log_path,
			(int64_t)n - 1);
		return RL_FAILED;
	}
	run->start = run->a->start_entry;
	for (uint64_t i = 0; i < run->start && run->a->verbose > 1; i++)
		print_seek(run, i, false);
	return 0;
}

static int
open_log(struct rl_run *run)
{
	struct fl_error err = { 0 };

	if (fl_log_open(run->a->log_path, FL_OPEN_LOGGED_ORDER, &run->log, &err))
		return lib_failed(run, &err);
	run->info = fl_log_info(run->log);
	if (run->info->torn)
		cli_warn(run->cmd, "'%s' was not closed and is torn at entry %" PRIu64 " (offset %" PRIu64 "): %s; using the %" PRIu64 " entries before it",
			 run->a->log_path, run->info->torn_entry,
			 run->info->torn_offset, run->info->torn_reason,
			 run->info->nr_entries);
	if (run->info->nr_devices > 1) {
		fprintf(stderr, "flushlog %s: '%s' holds %u data devices: replay-log replays a log of one (flushlog replay -o DEV=IMAGE replays each)\n",
			run->cmd->name, run->a->log_path, run->info->nr_devices);
		return RL_FAILED;
	}
	/* a dm-log-writes log counts in its sectors, a flushlog log in 512 */
	run->unit_sectors = run->info->format == FL_FORMAT_LOG_WRITES ?
			    run->info->log_block_size >> FLUSHLOG_SECTOR_SHIFT : 1;
	return 0;
}

/* In replay-log's order: what fstests reads first comes first. */
static int
run_replay_log(const struct cli_command *cmd, int argc, char **argv)
{
	struct rl_run run = { .cmd = cmd, .fd = -1 };
	struct rl_args a;
	int ret;

	parse_args(cmd, argc, argv, &a);
	run.a = &a;
	if (a.replay_path) {
		/* replay-log writes to what exists: a device, or a file */
		run.fd = open(a.replay_path, O_RDWR | O_CLOEXEC);
		if (run.fd < 0) {
			fprintf(stderr, "flushlog %s: cannot open replay target '%s': %s\n",
				cmd->name, a.replay_path, strerror(errno));
			return RL_FAILED;
		}
	}
	ret = open_log(&run);
	if (!ret)
		ret = find_start(&run);
	if (ret)
		;
	else if (a.find)
		ret = find(&run);
	else if (a.num_entries)
		printf("%" PRIu64 "\n", run.info->nr_entries);
	else if (!a.replay_path)
		printf("Log version=%u, sectorsize=%u, entries=%" PRIu64 "\n",
		       run.info->version, run.info->log_block_size,
		       run.info->nr_entries);
	else
		ret = replay(&run);
	if (!ret && cli_flush_stdout(cmd))
		ret = RL_FAILED;
	if (run.fd >= 0)
		close(run.fd);
	fl_log_close(run.log);
	return ret;
}

const struct cli_command cmd_replay_log = {
	.name = "replay-log",
	.synopsis = "--log LOG [--replay DEV] [--find] [options]",
	.summary = "fstests' replay-log, for flushlog and dm-log-writes logs.",
	.description =
		"A drop-in for fstests' src/log-writes/replay-log: the same options, parsed\n"
		"as it parses them (numbers as strtoull(3) base 0 reads them), the same\n"
		"output on stdout.  Without --replay, --find or --num-entries it prints\n"
		"\"Log version=V, sectorsize=B, entries=N\".  --find prints N@S: N the\n"
		"entry, S where the log goes on after it, in log blocks.  --limit counts\n"
		"the entries from the start entry; --end-mark, --next-flush and --next-fua\n"
		"stop after the entry that matches (with --end-mark only the mark stops).\n"
		"Entry N of a dm-log-writes log is the N-th entry logged, as replay-log\n"
		"numbers it; of a flushlog log, the N-th in durability order, as 'flushlog\n"
		"dump' numbers it.  Sectors are the log's sectors for a dm-log-writes log,\n"
		"512 bytes for a flushlog log.  A failed entry of a flushlog log is never\n"
		"replayed nor a flush or FUA point.  DEV must exist; a discard is sent to a\n"
		"block device as one, and otherwise zeroed.  Called as replay-log or\n"
		"flushlog-replay-log (a link to flushlog), flushlog is this command.",
	.example =
		"  flushlog replay-log --log log.img --find --end-mark mkfs\n"
		"  flushlog replay-log --log log.img --replay /dev/sdb --limit 120\n"
		"  flushlog replay-log --log log.img --replay /dev/sdb --check fua \\\n"
		"          --fsck 'fsck.ext4 -fn /dev/sdb'\n"
		"  LOGWRITES_TARGET=flushlog ./check generic/482    # fstests with patches/fstests",
	.options = replay_log_options,
	.run = run_replay_log,
	.usage_status = RL_FAILED,
	.exit_status = "exit status: 0 ok, 1 anything failed: a bad option or log, no such entry\nor mark, a --fsck that failed (as fstests' replay-log)",
};
