// SPDX-License-Identifier: GPL-2.0
/*
 * Incremental replay equals replay from scratch: one image is stepped
 * through every crash point with fl_replay_to(); at each point a second
 * image is rebuilt from zeroes and the two must be identical.
 *
 * usage: t-incremental LOG WORKDIR
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flushlog.h"
#include "unit.h"

static void
must(int ret, const struct fl_error *err, const char *what)
{
	if (ret) {
		fprintf(stderr, "%s: %s\n", what, err->msg);
		exit(1);
	}
}

/* The first differing sector, or -1. */
static int64_t
compare(int a, int b, uint64_t size)
{
	static char ba[1 << 16], bb[1 << 16];

	for (uint64_t off = 0; off < size; off += sizeof(ba)) {
		size_t n = size - off < sizeof(ba) ? size - off : sizeof(ba);

		if (pread(a, ba, n, (off_t)off) != (ssize_t)n ||
		    pread(b, bb, n, (off_t)off) != (ssize_t)n)
			return (int64_t)(off >> 9);
		if (memcmp(ba, bb, n))
			for (size_t i = 0; i < n; i++)
				if (ba[i] != bb[i])
					return (int64_t)((off + i) >> 9);
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct fl_error err = { 0 };
	struct fl_replay *inc, *scratch;
	struct fl_points *points;
	char path_a[4096], path_b[4096];
	struct fl_log *log;
	uint64_t size;
	size_t nr;
	int a, b;

	if (argc != 3) {
		fprintf(stderr, "usage: t-incremental LOG WORKDIR\n");
		return 2;
	}
	must(fl_log_open(argv[1], 0, &log, &err), &err, argv[1]);
	must(fl_log_points(log, &points, &err), &err, "points");
	nr = fl_points_count(points);
	size = fl_log_info(log)->data_sectors << FLUSHLOG_SECTOR_SHIFT;
	snprintf(path_a, sizeof(path_a), "%s.inc", argv[2]);
	snprintf(path_b, sizeof(path_b), "%s.scratch", argv[2]);
	a = fresh_image(path_a, size);
	must(fl_replay_open(log, a, &inc, &err), &err, "replay open");
	for (size_t i = 0; i < nr; i++) {
		int64_t diff;

		must(fl_replay_to(inc, fl_points_get(points, i)->nr_applied, &err), &err,
		     "incremental replay");
		if (fl_replay_position(inc) != fl_points_get(points, i)->nr_applied) {
			fprintf(stderr, "point %zu: position %" PRIu64 ", expected %" PRIu64 "\n",
				i + 1, fl_replay_position(inc), fl_points_get(points, i)->nr_applied);
			return 1;
		}
		b = fresh_image(path_b, size);
		must(fl_replay_open(log, b, &scratch, &err), &err, "replay open");
		must(fl_replay_to(scratch, fl_points_get(points, i)->nr_applied, &err), &err,
		     "scratch replay");
		fl_replay_close(scratch);
		diff = compare(a, b, size);
		close(b);
		if (diff >= 0) {
			fprintf(stderr, "point %zu (%" PRIu64 " entries): incremental and scratch differ at sector %" PRId64 "\n",
				i + 1, fl_points_get(points, i)->nr_applied, diff);
			return 1;
		}
	}
	/* going backwards is refused, not silently wrong */
	if (nr > 1 && fl_replay_to(inc, 0, &err) != -EINVAL) {
		fprintf(stderr, "replaying backwards was not refused\n");
		return 1;
	}
	printf("%zu points: incremental equals scratch\n", nr);
	fl_replay_close(inc);
	close(a);
	fl_points_free(points);
	fl_log_close(log);
	return 0;
}
