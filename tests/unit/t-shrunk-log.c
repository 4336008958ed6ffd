// SPDX-License-Identifier: GPL-2.0
/*
 * A log that shrinks after it was opened gives an error naming the offset,
 * never SIGBUS: the log is opened, cut in the middle of a write's data,
 * and then replayed (fl_replay_to) and a state beyond the cut applied
 * (fl_state_apply).  Both must fail with FL_ERR_IO (the log could not be
 * read), naming the entry and the offset of the bytes that are gone; the
 * replay applies the entries before the cut.
 *
 * usage: t-shrunk-log LOG WORKDIR (LOG is cut: pass a copy)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flushlog.h"
#include "unit.h"

/* The error must be the log's, at entry seq, at or after offset at. */
static void
expect_log_error(const char *what, int ret, const struct fl_error *err,
		 uint64_t seq, uint64_t at)
{
	char offset[32];

	snprintf(offset, sizeof(offset), "offset %" PRIu64, err->offset);
	if (!ret || err->source != FL_ERR_IO || err->entry != seq ||
	    err->offset < at || !strstr(err->msg, offset)) {
		fprintf(stderr, "%s: expected a log read error at entry %" PRIu64 ", offset >= %" PRIu64 "; got %d, source %d, entry %" PRIu64 ", offset %" PRIu64 ": %s\n",
			what, seq, at, ret, err->source, err->entry,
			err->offset, err->msg);
		exit(1);
	}
	printf("%s: %s\n", what, err->msg);
}

int
main(int argc, char **argv)
{
	struct fl_error err = { 0 };
	struct fl_state *state;
	char name[32];
	const struct fl_log_info *info;
	struct fl_replay *r;
	char path[4096];
	struct fl_log *log;
	uint64_t seq, cut, size;
	int fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: t-shrunk-log LOG WORKDIR\n");
		return 2;
	}
	if (fl_log_open(argv[1], 0, &log, &err)) {
		fprintf(stderr, "%s: %s\n", argv[1], err.msg);
		return 1;
	}
	info = fl_log_info(log);
	size = info->data_sectors << FLUSHLOG_SECTOR_SHIFT;
	/* the first write with data in the second half of the log */
	for (seq = info->nr_entries / 2; seq < info->nr_entries; seq++)
		if (fl_log_entry(log, seq)->data_len)
			break;
	if (seq == info->nr_entries) {
		fprintf(stderr, "%s: no write in its second half\n", argv[1]);
		return 1;
	}
	/* the state of no entry but that write, named before the cut */
	snprintf(name, sizeof(name), "0+%" PRIu64, seq);
	if (fl_state_parse(log, name, &state, &err)) {
		fprintf(stderr, "state %s: %s\n", name, err.msg);
		return 1;
	}
	cut = fl_log_entry(log, seq)->offset + info->log_block_size + 512;
	if (truncate(argv[1], (off_t)cut)) {
		perror(argv[1]);
		return 1;
	}
	printf("cut the log at %" PRIu64 ", in entry %" PRIu64 "'s data\n",
	       cut, seq);

	snprintf(path, sizeof(path), "%s/replay.img", argv[2]);
	fd = fresh_image(path, size);
	if (fl_replay_open(log, fd, &r, &err)) {
		fprintf(stderr, "replay: %s\n", err.msg);
		return 1;
	}
	ret = fl_replay_to(r, info->nr_entries, &err);
	expect_log_error("replay", ret, &err, seq, cut - 512);
	if (fl_replay_position(r) != seq) {
		fprintf(stderr, "replay: %" PRIu64 " entries applied, expected %" PRIu64 "\n",
			fl_replay_position(r), seq);
		return 1;
	}
	fl_replay_close(r);
	close(fd);

	snprintf(path, sizeof(path), "%s/state.img", argv[2]);
	fd = fresh_image(path, size);
	memset(&err, 0, sizeof(err));
	ret = fl_state_apply(log, fd, state, &err);
	expect_log_error("state apply", ret, &err, seq, cut - 512);
	fl_state_free(state);
	close(fd);
	fl_log_close(log);
	return 0;
}
