// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the two log readers.  The input is a log file, in
 * either format; it is opened as it is and with its checksums made right
 * (fuzz_fix_checksums), each way without and with FL_OPEN_VERIFY_DATA |
 * FL_OPEN_CHECK_ORDER, and every index entry, label and crash point of an
 * opened log is read back and checked against the file it came from.
 */
#include <inttypes.h>

#include "fuzz.h"

#define STRICT_FLAGS	(FL_OPEN_VERIFY_DATA | FL_OPEN_CHECK_ORDER)

static struct fuzz_file file;

/*
 * Each entry keeps its own number in the log (seq), and offsets grow with
 * it.  Only a version 2 or 3 log, in completion order, and a dm-log-writes
 * log, where a write with PREFLUSH and not FUA waits for the next flush,
 * are put in another order when they are read: in a version 1 log, seq is
 * the entry's place in the index.
 */
static void
check_logged_order(const struct fl_log *log)
{
	const struct fl_log_info *info = fl_log_info(log);
	const struct fl_entry *e = log->entries;
	uint64_t n = info->nr_entries, *offset_of;
	bool reordered = info->format == FL_FORMAT_LOG_WRITES ||
			 info->version != FLUSHLOG_VERSION_DURABILITY_ORDER;

	offset_of = calloc(n ? n : 1, sizeof(*offset_of));
	FUZZ_ASSERT(offset_of);
	for (uint64_t i = 0; i < n; i++) {
		FUZZ_ASSERT(e[i].seq < n && !offset_of[e[i].seq]);
		FUZZ_ASSERT(reordered || e[i].seq == i);
		offset_of[e[i].seq] = e[i].offset;
	}
	for (uint64_t seq = 1; seq < n; seq++)
		FUZZ_ASSERT(offset_of[seq] > offset_of[seq - 1]);
	free(offset_of);
}

static void
check_entries(const struct fl_log *log)
{
	const struct fl_log_info *info = fl_log_info(log);
	const struct fl_entry *e = log->entries;
	uint64_t marks = 0;

	FUZZ_ASSERT(info->used_bytes <= info->log_bytes);
	FUZZ_ASSERT(!fl_log_entry(log, info->nr_entries));
	FUZZ_ASSERT(!info->nr_entries ||
		    fl_log_entry(log, info->nr_entries - 1) == &e[info->nr_entries - 1]);
	check_logged_order(log);
	for (uint64_t i = 0; i < info->nr_entries; i++) {
		const char *label = fl_log_label(log, i);

		/* an entry and its data lie inside the file */
		FUZZ_ASSERT(e[i].offset >= info->log_block_size);
		FUZZ_ASSERT(e[i].offset < info->used_bytes);
		FUZZ_ASSERT(info->used_bytes - e[i].offset >=
			    (uint64_t)info->log_block_size + e[i].data_len);
		FUZZ_ASSERT(e[i].submit_tick <= e[i].complete_tick);
		FUZZ_ASSERT(strcmp(fl_op_name(e[i].op), "unknown"));
		if (e[i].op == FLUSHLOG_OP_MARK) {
			FUZZ_ASSERT(strlen(label) <= FLUSHLOG_MAX_BLOCK_SIZE);
			marks++;
		} else {
			FUZZ_ASSERT(!*label);
		}
		/* a range lies on its device: replay writes it unchecked */
		if (e[i].op != FLUSHLOG_OP_FLUSH && e[i].op != FLUSHLOG_OP_MARK &&
		    e[i].op != FLUSHLOG_OP_RESIZE)
			FUZZ_ASSERT(e[i].sector + e[i].nr_sectors >= e[i].sector &&
				    e[i].sector + e[i].nr_sectors <= fl_log_device(log, e[i].device)->sectors);
	}
	FUZZ_ASSERT(marks == log->counts.marks);
}

static bool
failed_data(const struct fl_entry *e)
{
	return (e->flags & FLUSHLOG_F_FAILED) && e->op >= FLUSHLOG_OP_WRITE &&
	       e->op <= FLUSHLOG_OP_SECURE_ERASE;
}

static void
check_points(const struct fl_log *log)
{
	const struct fl_log_info *info = fl_log_info(log);
	struct fl_points *list;
	struct fl_point *points;
	struct fl_error err;
	size_t n;

	FUZZ_ASSERT(fl_log_points(log, &list, &err) == 0);
	points = list->v;
	n = fl_points_count(list);
	FUZZ_ASSERT(!fl_points_get(list, n) && fl_points_get(list, 0) == points);
	FUZZ_ASSERT(n == log->counts.crash_points + 2);
	FUZZ_ASSERT(points[0].kind == FL_POINT_START && !points[0].nr_applied);
	FUZZ_ASSERT(points[n - 1].kind == FL_POINT_END);
	/* the failed entries that change data come last, after the end */
	for (uint64_t i = 0; i < info->nr_entries; i++)
		FUZZ_ASSERT(!failed_data(fl_log_entry(log, i)) ==
			    (i < points[n - 1].nr_applied));
	FUZZ_ASSERT(points[n - 1].nr_applied + log->counts.failed >= info->nr_entries);
	for (size_t i = 1; i < n; i++) {
		FUZZ_ASSERT(points[i].number == i);
		FUZZ_ASSERT(points[i].nr_applied >= points[i - 1].nr_applied);
		FUZZ_ASSERT(strcmp(fl_point_kind_name(points[i].kind), "unknown"));
	}
	fl_points_free(list);
}

/* Open the file with flags; the entry count, or -1 if it was refused. */
static int64_t
read_log(unsigned int flags)
{
	struct fl_error err = { 0 };
	struct fl_log *log;
	int64_t n;
	int ret;

	ret = fl_log_open(file.path, flags, &log, &err);
	if (ret) {
		/* refused with a reason, never with a stale log */
		FUZZ_ASSERT(ret < 0 && !log);
		FUZZ_ASSERT(err.source != FL_ERR_NONE && err.msg[0]);
		FUZZ_ASSERT(memchr(err.msg, 0, sizeof(err.msg)));
		return -1;
	}
	check_entries(log);
	check_points(log);
	n = (int64_t)fl_log_info(log)->nr_entries;
	fl_log_close(log);
	return n;
}

static void
read_both_ways(const void *data, size_t size)
{
	int64_t loose, strict;

	fuzz_file_set(&file, data, size);
	loose = read_log(0);
	strict = read_log(STRICT_FLAGS);
	/* the stricter open finds the same entries or refuses the log */
	FUZZ_ASSERT(strict < 0 || strict == loose);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *fixed;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (file.fd <= 0)
		fuzz_file_init(&file, "fuzz-log");
	read_both_ways(data, size);
	fixed = malloc(size ? size : 1);
	FUZZ_ASSERT(fixed);
	memcpy(fixed, data, size);
	if (fuzz_fix_checksums(fixed, size) && memcmp(fixed, data, size))
		read_both_ways(fixed, size);
	free(fixed);
	return 0;
}
