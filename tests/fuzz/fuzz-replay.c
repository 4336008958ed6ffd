// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: crash states and replay.  The input is a log (its
 * checksums made right, see fuzz_fix_checksums); an opened log's crash
 * points are replayed in turn onto a sparse memfd image, its states are
 * enumerated under small bounds, and a few of them are replayed and
 * applied.  Logs of a device larger than MAX_IMAGE are enumerated only.
 * A planned state must be one fl_state_parse() accepts under its name.
 */
#include <inttypes.h>

#include "fuzz.h"

#define MAX_IMAGE	(4ULL << 20)
#define STATES_REPLAYED	4

static struct fuzz_file file, image;

static const struct fl_state_opts option_sets[] = {
	{ .models = FL_STATES_PREFIX | FL_STATES_EPOCH | FL_STATES_TORN,
	  .max_reorder = 2, .max_torn = 2, .max_states = 64 },
	{ .models = FL_STATES_EPOCH, .max_reorder = FL_STATE_MAX_REORDER,
	  .max_torn = 1, .max_states = 16 },
	{ .models = FL_STATES_PREFIX | FL_STATES_TORN, .max_reorder = 1,
	  .max_torn = 3, .max_states = 32 },
	{ .models = FL_STATES_PREFIX | FL_STATES_EPOCH | FL_STATES_DISCARD,
	  .max_reorder = 1, .max_torn = 1, .max_states = 32 },
	{ .models = FL_STATES_DISCARD, .max_reorder = 1, .max_torn = 1,
	  .max_states = 32, .flags = FL_STATE_OPT_ZERO_BASE },
};

/* Two states are the same state (the point they are legal at aside). */
static bool
same_state(const struct fl_state *a, const struct fl_state *b)
{
	if (a->keep_discards != b->keep_discards)
		return false;
	return a->base == b->base && a->nr_extra == b->nr_extra &&
	       !memcmp(a->extra, b->extra, a->nr_extra * sizeof(a->extra[0])) &&
	       a->torn == b->torn &&
	       (a->torn == FL_NO_ENTRY || (a->torn_first == b->torn_first &&
					   a->torn_count == b->torn_count));
}

static bool
image_fits(const struct fl_log *log)
{
	return fl_log_info(log)->image_sectors <= MAX_IMAGE >> FLUSHLOG_SECTOR_SHIFT;
}

/* Step through every crash point: one forward pass of the log. */
static void
replay_points(struct fl_log *log, const struct fl_point *points, size_t n)
{
	struct fl_error err = { 0 };
	struct fl_replay *r;

	fuzz_file_zero(&image, fl_log_info(log)->image_sectors << FLUSHLOG_SECTOR_SHIFT);
	FUZZ_ASSERT(fl_replay_open(log, image.fd, &r, &err) == 0);
	for (size_t i = 0; i < n; i++) {
		if (fl_replay_to(r, points[i].nr_applied, &err)) {
			FUZZ_ASSERT(err.msg[0] && err.source != FL_ERR_OUTPUT);
			break;
		}
		FUZZ_ASSERT(fl_replay_position(r) == points[i].nr_applied);
	}
	fl_replay_close(r);
}

/* Build state s from scratch: its first s->base entries, then the rest. */
static void
replay_state(struct fl_log *log, const struct fl_state *s)
{
	struct fl_error err = { 0 };
	struct fl_replay *r;
	int ret;

	fuzz_file_zero(&image, fl_log_info(log)->image_sectors << FLUSHLOG_SECTOR_SHIFT);
	FUZZ_ASSERT(fl_replay_open(log, image.fd, &r, &err) == 0);
	ret = fl_replay_to(r, s->base, &err);
	fl_replay_close(r);
	if (!ret)
		ret = fl_state_apply(log, image.fd, s, &err);
	if (ret)
		FUZZ_ASSERT(err.msg[0] && err.source != FL_ERR_OUTPUT);
}

static void
check_name(const struct fl_log *log, const struct fl_state *s)
{
	char name[FL_STATE_NAME_MAX];
	struct fl_error err = { 0 };
	struct fl_state *t;

	FUZZ_ASSERT(fl_state_name(s, name, sizeof(name)) == 0);
	if (fl_state_parse(log, name, &t, &err)) {
		fprintf(stderr, "planned state '%s' refused: %s\n", name, err.msg);
		FUZZ_ASSERT(!"a planned state parses");
	}
	FUZZ_ASSERT(same_state(t, s));
	fl_state_free(t);
}

static void
enumerate(struct fl_log *log, const struct fl_points *points_list,
	  const struct fl_state_opts *o)
{
	struct fl_error err = { 0 };
	struct fl_states *list;
	struct fl_state *states;
	uint64_t candidates;
	size_t nr;

	if (fl_log_states(log, points_list, o, sizeof(*o), &list, &candidates,
			  &err)) {
		FUZZ_ASSERT(err.msg[0]);
		return;
	}
	states = list->v;
	nr = fl_states_count(list);
	FUZZ_ASSERT(!nr || fl_states_get(list, nr - 1) == &states[nr - 1]);
	FUZZ_ASSERT(!fl_states_get(list, nr));
	FUZZ_ASSERT(nr <= o->max_states && nr <= candidates);
	for (size_t i = 0; i < nr; i++) {
		FUZZ_ASSERT(!i || states[i].base >= states[i - 1].base);
		check_name(log, &states[i]);
	}
	for (size_t i = 0; image_fits(log) && i < nr && i < STATES_REPLAYED; i++)
		replay_state(log, &states[i * nr / STATES_REPLAYED]);
	fl_states_free(list);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fl_error err = { 0 };
	struct fl_points *list;
	unsigned char *buf;
	struct fl_log *log;
	size_t n;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (file.fd <= 0) {
		fuzz_file_init(&file, "fuzz-replay-log");
		fuzz_file_init(&image, "fuzz-replay-image");
	}
	buf = malloc(size ? size : 1);
	FUZZ_ASSERT(buf);
	memcpy(buf, data, size);
	fuzz_fix_checksums(buf, size);
	fuzz_file_set(&file, buf, size);
	free(buf);
	if (fl_log_open(file.path, 0, &log, &err))
		return 0;
	FUZZ_ASSERT(fl_log_points(log, &list, &err) == 0);
	n = fl_points_count(list);
	if (image_fits(log))
		replay_points(log, list->v, n);
	for (size_t i = 0; i < sizeof(option_sets) / sizeof(option_sets[0]); i++)
		enumerate(log, list, &option_sets[i]);
	fl_points_free(list);
	fl_log_close(log);
	return 0;
}
