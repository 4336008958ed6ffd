// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Crash points, and the point specifications users type: a point is a
 * number of entries to apply, since the log is in durability order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *
fl_point_kind_name(enum fl_point_kind kind)
{
	switch (kind) {
	case FL_POINT_START:
		return "start";
	case FL_POINT_FLUSH:
		return "flush";
	case FL_POINT_FUA:
		return "fua";
	case FL_POINT_MARK:
		return "mark";
	case FL_POINT_END:
		return "end";
	}
	return "unknown";
}

static enum fl_point_kind
entry_point_kind(const struct fl_entry *e)
{
	if (e->op == FLUSHLOG_OP_MARK)
		return FL_POINT_MARK;
	if (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_PREFLUSH))
		return FL_POINT_FLUSH;
	return FL_POINT_FUA;
}

static int
no_memory(struct fl_error *err, size_t n)
{
	return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
			    "out of memory listing %zu points", n), -ENOMEM;
}

static struct fl_points *
points_new(size_t n)
{
	struct fl_points *l = calloc(1, sizeof(*l));

	if (l)
		l->v = calloc(n ? n : 1, sizeof(*l->v));
	if (l && !l->v) {
		free(l);
		l = NULL;
	}
	return l;
}

int
fl_log_points(const struct fl_log *log, struct fl_points **points,
	      struct fl_error *err)
{
	uint64_t n = log->counts.crash_points + 2, k = 1, flushes = 0;
	struct fl_points *l = points_new(n);
	struct fl_point *p;

	if (!l)
		return no_memory(err, n);
	p = l->v;
	/* the start: a crash before the first flush completed */
	p[0] = (struct fl_point) { .number = 0, .kind = FL_POINT_START };
	for (uint64_t i = 0, f = 0; i <= log->info.nr_entries; i++) {
		const struct fl_entry *e;

		/* flushes before their writes' data end a crash point at i */
		for (; f < log->nr_early_flushes && log->early_flushes[f] == i; f++) {
			p[k] = (struct fl_point) {
				.number = k, .kind = FL_POINT_FLUSH,
				.nr_applied = i, .flush_number = ++flushes,
			};
			k++;
		}
		if (i == log->info.nr_entries)
			break;
		e = &log->entries[i];
		if (!(e->flags & FL_ENTRY_CRASH_POINT) || fl_point_before_data(e))
			continue;
		p[k].number = k;
		p[k].kind = entry_point_kind(e);
		p[k].nr_applied = i + 1;
		if (p[k].kind != FL_POINT_MARK)
			p[k].flush_number = ++flushes;
		k++;
	}
	/* the failed writes, last, are no crash point's: not the end's */
	p[k].number = k;
	p[k].kind = FL_POINT_END;
	p[k].nr_applied = fl_log_end(log);
	l->nr = k + 1;
	*points = l;
	return 0;
}

size_t
fl_points_count(const struct fl_points *points)
{
	return points->nr;
}

const struct fl_point *
fl_points_get(const struct fl_points *points, size_t i)
{
	return i < points->nr ? &points->v[i] : NULL;
}

void
fl_points_free(struct fl_points *points)
{
	if (points)
		free(points->v);
	free(points);
}

static int
parse_number(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int
resolve_mark(const struct fl_log *log, const char *label, uint64_t *nr,
	     struct fl_error *err)
{
	const struct fl_mark *m = fl_log_find_mark(log, label);

	if (!m)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "no mark labelled '%s' in the log", label),
		       -ENOENT;
	*nr = m->entry + 1;
	return 0;
}

int
fl_log_resolve_point(const struct fl_log *log, const char *spec,
		     uint64_t *nr_applied, struct fl_error *err)
{
	uint64_t n, nr = log->info.nr_entries;
	const char *arg = strchr(spec, ':');
	struct fl_points *list;
	struct fl_point *points;
	size_t nr_points;
	int ret;

	if (!strcmp(spec, "end"))
		return *nr_applied = fl_log_end(log), 0;
	if (!strcmp(spec, "start"))
		return *nr_applied = 0, 0;
	if (!strncmp(spec, "mark:", 5))
		return resolve_mark(log, spec + 5, nr_applied, err);
	if (!arg || parse_number(arg + 1, &n))
		goto bad_spec;
	if (!strncmp(spec, "entry:", 6)) {
		if (!nr)
			return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY,
					    FL_NO_ENTRY, "'%s': the log has no entries",
					    spec), -ERANGE;
		if (n >= nr)
			return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY,
					    FL_NO_ENTRY,
					    "'%s': the log has entries 0 to %" PRId64 " only",
					    spec, (int64_t)nr - 1), -ERANGE;
		return *nr_applied = n + 1, 0;
	}
	if (strncmp(spec, "flush:", 6) && strncmp(spec, "point:", 6))
		goto bad_spec;
	ret = fl_log_points(log, &list, err);
	if (ret)
		return ret;
	points = list->v;
	nr_points = list->nr;
	ret = -ERANGE;
	for (size_t i = 0; i < nr_points; i++) {
		bool hit = spec[0] == 'p' ? points[i].number == n :
			   points[i].flush_number == n && n;

		if (hit) {
			*nr_applied = points[i].nr_applied;
			ret = 0;
			break;
		}
	}
	fl_points_free(list);
	if (ret)
		fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
			     "'%s': the log has %s %d to %" PRIu64 " only",
			     spec, spec[0] == 'p' ? "points" : "flush points",
			     spec[0] == 'p' ? 0 : 1,
			     spec[0] == 'p' ? (uint64_t)nr_points - 1 :
			     log->counts.crash_points -
			     log->counts.marks);
	return ret;

bad_spec:
	return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
			    "invalid point '%s' (expected start, end, entry:N, flush:K, point:K or mark:LABEL)",
			    spec), -EINVAL;
}

int
fl_points_select(const struct fl_points *all, unsigned int kinds,
		 uint64_t from, uint64_t to, struct fl_points **chosen,
		 struct fl_error *err)
{
	bool want_start = kinds & FL_POINT_BIT(FL_POINT_START);
	const struct fl_point *p = all->v;
	struct fl_points *l;

	if (to < from)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "the last position (%" PRIu64 " entries) comes before the first (%" PRIu64 ")",
				    to, from), -EINVAL;
	/* one more than all: a start of its own */
	l = points_new(all->nr + 1);
	if (!l)
		return no_memory(err, all->nr + 1);
	for (size_t i = 0; i < all->nr && p[i].nr_applied <= to; i++) {
		bool at_start = p[i].nr_applied == from;

		if (want_start && !at_start && p[i].nr_applied > from) {
			l->v[l->nr++] = (struct fl_point) {
				.number = 0, .kind = FL_POINT_START,
				.nr_applied = from,
			};
			want_start = false;
		}
		if ((want_start && at_start) ||
		    ((kinds & FL_POINT_BIT(p[i].kind)) && p[i].nr_applied >= from))
			l->v[l->nr++] = p[i];
		if (at_start)
			want_start = false;
	}
	/* the points past from all lie past to: the start stays */
	if (want_start && all->nr && from <= p[all->nr - 1].nr_applied)
		l->v[l->nr++] = (struct fl_point) {
			.number = 0, .kind = FL_POINT_START, .nr_applied = from,
		};
	*chosen = l;
	return 0;
}
