// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: what users type.  The input, up to its first NUL, is
 * given as a point spec to fl_log_resolve_point() and as a state name to
 * fl_state_parse(), on fixed valid logs made from tests/data by the
 * Makefile (spec-*.log in FUZZ_LOG_DIR, or $FL_FUZZ_LOG_DIR).  What they
 * accept must make sense for the log: a point within it, a state whose
 * entries and torn range are the log's, whose name parses back to it, and
 * which applies onto an image of the log's device.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <inttypes.h>

#include "fuzz.h"

#ifndef FUZZ_LOG_DIR
#define FUZZ_LOG_DIR "."
#endif

#define MAX_LOGS	8

static struct fl_log *logs[MAX_LOGS];
static unsigned int nr_logs;
static struct fuzz_file image;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FL_FUZZ_LOG_DIR");
	struct dirent *d;
	DIR *dp;

	(void)argc;
	(void)argv;
	if (!dir)
		dir = FUZZ_LOG_DIR;
	dp = opendir(dir);
	if (!dp) {
		fprintf(stderr, "fuzz-spec: cannot open '%s' (set FL_FUZZ_LOG_DIR)\n",
			dir);
		exit(1);
	}
	while ((d = readdir(dp)) && nr_logs < MAX_LOGS) {
		char path[4096];
		struct fl_error err;

		if (fnmatch("spec-*.log", d->d_name, 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (fl_log_open(path, FL_OPEN_VERIFY_DATA, &logs[nr_logs], &err)) {
			fprintf(stderr, "fuzz-spec: %s\n", err.msg);
			exit(1);
		}
		nr_logs++;
	}
	closedir(dp);
	if (!nr_logs) {
		fprintf(stderr, "fuzz-spec: no spec-*.log in '%s'\n", dir);
		exit(1);
	}
	fuzz_file_init(&image, "fuzz-spec-image");
	return 0;
}

static void
check_point(struct fl_log *log, const char *spec)
{
	struct fl_error err = { 0 };
	uint64_t n = UINT64_MAX;

	if (fl_log_resolve_point(log, spec, &n, &err)) {
		FUZZ_ASSERT(err.source == FL_ERR_ARG && err.msg[0]);
		return;
	}
	FUZZ_ASSERT(n <= fl_log_info(log)->nr_entries);
}

static void
check_state_fields(const struct fl_log *log, const struct fl_state *s)
{
	const struct fl_entry *e = log->entries;
	uint64_t n = fl_log_info(log)->nr_entries;

	FUZZ_ASSERT(s->base <= n);
	FUZZ_ASSERT(s->nr_extra <= FL_STATE_MAX_REORDER);
	for (unsigned int i = 0; i < s->nr_extra; i++) {
		FUZZ_ASSERT(s->extra[i] >= s->base && s->extra[i] < n);
		FUZZ_ASSERT(!i || s->extra[i] > s->extra[i - 1]);
	}
	if (s->torn == FL_NO_ENTRY)
		return;
	FUZZ_ASSERT(s->torn >= s->base && s->torn < n);
	FUZZ_ASSERT(e[s->torn].op == FLUSHLOG_OP_WRITE);
	FUZZ_ASSERT(s->torn_count);
	FUZZ_ASSERT((uint64_t)s->torn_first + s->torn_count <=
		    e[s->torn].nr_sectors);
}

static void
check_state(struct fl_log *log, const char *name)
{
	const struct fl_log_info *info = fl_log_info(log);
	char again[FL_STATE_NAME_MAX];
	struct fl_error err = { 0 };
	struct fl_state *s, *t;

	if (fl_state_parse(log, name, &s, &err)) {
		FUZZ_ASSERT(err.source == FL_ERR_ARG && err.msg[0]);
		return;
	}
	check_state_fields(log, s);
	/* its name parses back to the same state */
	FUZZ_ASSERT(fl_state_name(s, again, sizeof(again)) == 0);
	FUZZ_ASSERT(fl_state_parse(log, again, &t, &err) == 0);
	FUZZ_ASSERT(t->base == s->base && t->nr_extra == s->nr_extra &&
		    t->torn == s->torn);
	FUZZ_ASSERT(!memcmp(t->extra, s->extra, s->nr_extra * sizeof(s->extra[0])));
	FUZZ_ASSERT(s->torn == FL_NO_ENTRY || (t->torn_first == s->torn_first &&
					       t->torn_count == s->torn_count));
	FUZZ_ASSERT(t->keep_discards == s->keep_discards);
	FUZZ_ASSERT(fl_state_base(s) == s->base &&
		    fl_state_keeps_discards(s) == s->keep_discards);
	fl_state_free(t);
	/* and applies onto an image of the device: the logs are small */
	fuzz_file_zero(&image, info->image_sectors << FLUSHLOG_SECTOR_SHIFT);
	if (fl_state_apply(log, image.fd, s, &err))
		FUZZ_ASSERT(err.msg[0] && err.source != FL_ERR_OUTPUT);
	fl_state_free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size);

	FUZZ_ASSERT(s);
	for (unsigned int i = 0; i < nr_logs; i++) {
		check_point(logs[i], s);
		check_state(logs[i], s);
	}
	free(s);
	return 0;
}
