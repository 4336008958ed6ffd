// SPDX-License-Identifier: GPL-2.0
/*
 * Crash states beyond flush boundaries.
 *
 * At a crash point k (the state of the first k entries), the log's order
 * and ticks say what else may be on the media: every write logged after k
 * that was submitted before the next flush or FUA completion (the end of
 * k's epoch) may or may not have reached it.  The prefix model takes none
 * of them; the epoch model takes every subset of at most max_reorder of
 * them, applied in log order, so that overlapping writes land in one
 * consistent order; the torn model takes one of them in part, a head or a
 * tail of it cut at a data block boundary.
 *
 * A state is named by what it applies: "N" the first N entries, "N+E,F"
 * those and entries E and F, "N~T:A+L" those and L sectors of entry T from
 * its A-th sector on.  Names are canonical (entries that change nothing
 * and leading extras fold into N), so one state has one name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool
changes_data(const struct fl_entry *e)
{
	return e->op != FLUSHLOG_OP_FLUSH && e->op != FLUSHLOG_OP_MARK;
}

static bool
makes_durable(const struct fl_entry *e)
{
	return (e->flags & FL_ENTRY_CRASH_POINT) && e->op != FLUSHLOG_OP_MARK;
}

/*
 * The writes that may be on the media at crash point nr_applied beyond the
 * first nr_applied entries: into *out (caller frees), their count returned.
 */
static int
possibly_durable(const struct fl_log *log, uint64_t nr_applied,
		 uint64_t **out, size_t *nr)
{
	const struct fl_entry *e = log->entries;
	uint64_t n = log->info.nr_entries, end = n, horizon = UINT64_MAX;
	size_t count = 0;

	for (uint64_t j = nr_applied; j < n; j++)
		if (makes_durable(&e[j])) {
			end = j + 1;
			horizon = e[j].complete_tick;
			break;
		}
	*out = NULL;
	*nr = 0;
	for (int pass = 0; pass < 2; pass++) {
		count = 0;
		for (uint64_t j = nr_applied; j < n; j++) {
			/* logged after the epoch's end but submitted within it */
			if (j >= end && e[j].submit_tick >= horizon)
				continue;
			if (j >= end && !log->info.has_ticks)
				break;
			if (!changes_data(&e[j]))
				continue;
			if (pass)
				(*out)[count] = j;
			count++;
		}
		if (pass || !count)
			break;
		*out = malloc(count * sizeof(**out));
		if (!*out)
			return -ENOMEM;
	}
	*nr = count;
	return 0;
}

/* Fold leading extras and entries that change nothing into the prefix. */
static void
canonicalise(const struct fl_log *log, struct fl_state *s)
{
	const struct fl_entry *e = log->entries;

	while (s->base < log->info.nr_entries && s->base != s->torn) {
		if (s->nr_extra && s->extra[0] == s->base) {
			memmove(s->extra, s->extra + 1,
				--s->nr_extra * sizeof(s->extra[0]));
		} else if (changes_data(&e[s->base])) {
			break;
		}
		s->base++;
	}
}

int
fl_state_name(const struct fl_state *s, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%" PRIu64, s->base);

	for (unsigned int i = 0; i < s->nr_extra && n >= 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - n, "%c%" PRIu64, i ? ',' : '+',
			      s->extra[i]);
	if (s->torn != FL_NO_ENTRY && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - n, "~%" PRIu64 ":%" PRIu32 "+%" PRIu32,
			      s->torn, s->torn_first, s->torn_count);
	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* Combinations: C(n, k), saturating at UINT64_MAX. */
static uint64_t
choose(uint64_t n, unsigned int k)
{
	unsigned __int128 c = 1;

	if (k > n)
		return 0;
	for (unsigned int i = 1; i <= k; i++) {
		c = c * (n - k + i) / i;
		if (c > UINT64_MAX)
			return UINT64_MAX;
	}
	return (uint64_t)c;
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Data blocks of sectors: the unit a write is torn at. */
static uint32_t
block_sectors(const struct fl_log *log)
{
	uint32_t b = log->info.data_block_size >> FLUSHLOG_SECTOR_SHIFT;

	return b ? b : 1;
}

/* How many places a write of units blocks is cut at: all, or max_torn. */
static uint32_t
nr_cuts(uint32_t units, unsigned int max_torn)
{
	return units < 2 ? 0 : units - 1 < max_torn ? units - 1 : max_torn;
}

/* The i-th cut, 1 <= cut < units: every block boundary, or spread evenly. */
static uint32_t
cut_at(uint32_t units, uint32_t cuts, uint32_t i)
{
	if (cuts == units - 1)
		return i + 1;
	if (cuts == 1)
		return units / 2;
	return 1 + (uint32_t)((uint64_t)i * (units - 2) / (cuts - 1));
}

/* One point's share of the candidates, in the order they are numbered. */
struct point_plan {
	uint64_t nr_applied, point;
	uint64_t *pd;		/* possibly durable entries */
	size_t nr_pd;
	uint64_t by_size[FL_STATE_MAX_REORDER + 1];	/* subsets of each size */
	uint64_t torn;		/* torn candidates */
	uint64_t total;
};

static void
plan_point(const struct fl_log *log, const struct fl_state_opts *o,
	   struct point_plan *p)
{
	uint32_t bs = block_sectors(log);

	p->total = 1;	/* the prefix state */
	if (o->models & FL_STATES_EPOCH)
		for (unsigned int k = 1; k <= o->max_reorder; k++) {
			p->by_size[k] = choose(p->nr_pd, k);
			p->total = add_sat(p->total, p->by_size[k]);
		}
	if (o->models & FL_STATES_TORN)
		for (size_t i = 0; i < p->nr_pd; i++) {
			const struct fl_entry *e = &log->entries[p->pd[i]];

			if (e->op == FLUSHLOG_OP_WRITE)
				p->torn += 2 * nr_cuts(e->nr_sectors / bs, o->max_torn);
		}
	p->total = add_sat(p->total, p->torn);
}

/* The idx-th k-subset of n in lexicographic order, into c[0..k). */
static void
unrank_subset(uint64_t idx, size_t n, unsigned int k, size_t *c)
{
	size_t x = 0;

	for (unsigned int i = 0; i < k; i++) {
		for (;; x++) {
			uint64_t with_x = choose(n - x - 1, k - i - 1);

			if (idx < with_x)
				break;
			idx -= with_x;
		}
		c[i] = x++;
	}
}

/* Candidate idx of a point, 0 <= idx < p->total, as a state. */
static void
make_state(const struct fl_log *log, const struct fl_state_opts *o,
	   const struct point_plan *p, uint64_t idx, struct fl_state *s)
{
	uint32_t bs = block_sectors(log);

	*s = (struct fl_state) {
		.point = p->point, .base = p->nr_applied, .torn = FL_NO_ENTRY,
	};
	if (idx-- == 0)
		return;
	for (unsigned int k = 1; k <= o->max_reorder && (o->models & FL_STATES_EPOCH); k++) {
		size_t c[FL_STATE_MAX_REORDER];

		if (idx >= p->by_size[k]) {
			idx -= p->by_size[k];
			continue;
		}
		unrank_subset(idx, p->nr_pd, k, c);
		for (unsigned int i = 0; i < k; i++)
			s->extra[i] = p->pd[c[i]];
		s->nr_extra = k;
		return;
	}
	for (size_t i = 0; i < p->nr_pd; i++) {
		const struct fl_entry *e = &log->entries[p->pd[i]];
		uint32_t units = e->nr_sectors / bs, cuts, cut;

		if (e->op != FLUSHLOG_OP_WRITE)
			continue;
		cuts = nr_cuts(units, o->max_torn);
		if (idx >= 2ULL * cuts) {
			idx -= 2ULL * cuts;
			continue;
		}
		s->torn = p->pd[i];
		cut = cut_at(units, cuts, (uint32_t)(idx / 2)) * bs;
		if (idx % 2 == 0) {	/* the head reached the media */
			s->torn_first = 0;
			s->torn_count = cut;
		} else {		/* the tail did */
			s->torn_first = cut;
			s->torn_count = e->nr_sectors - cut;
		}
		return;
	}
}

/*
 * An open-addressing map from a state's canonical name to its place in
 * the list, to drop duplicates.
 */
struct name_map {
	char **names;
	size_t *where;
	size_t cap, used;
};

static uint64_t
hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t
slot_of(const struct name_map *m, const char *name)
{
	size_t i = hash_name(name) & (m->cap - 1);

	while (m->names[i] && strcmp(m->names[i], name))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int
name_map_grow(struct name_map *m)
{
	struct name_map g = { .cap = m->cap ? 2 * m->cap : 1024 };

	g.names = calloc(g.cap, sizeof(*g.names));
	g.where = calloc(g.cap, sizeof(*g.where));
	if (!g.names || !g.where) {
		free(g.names);
		free(g.where);
		return -ENOMEM;
	}
	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->names[j])
			continue;
		i = slot_of(&g, m->names[j]);
		g.names[i] = m->names[j];
		g.where[i] = m->where[j];
	}
	free(m->names);
	free(m->where);
	g.used = m->used;
	*m = g;
	return 0;
}

/* Where name is in the list, or SIZE_MAX after recording it at where. */
static int
name_map_add(struct name_map *m, const char *name, size_t where,
	     size_t *found)
{
	size_t i;

	if (2 * (m->used + 1) > m->cap && name_map_grow(m))
		return -ENOMEM;
	i = slot_of(m, name);
	if (m->names[i]) {
		*found = m->where[i];
		return 0;
	}
	m->names[i] = strdup(name);
	if (!m->names[i])
		return -ENOMEM;
	m->where[i] = where;
	m->used++;
	*found = SIZE_MAX;
	return 0;
}

static void
name_map_free(struct name_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->names[i]);
	free(m->names);
	free(m->where);
}

struct state_list {
	struct fl_state *v;
	size_t n, cap;
	struct name_map seen;
};

/*
 * Add s unless a state with the same contents is listed.  A duplicate of
 * another reordered state moves that one to the later point: a state
 * legal at several crash points must pass the checks of the latest (an
 * fsync oracle asks more of later points).  Prefix states stay as they
 * are, one for each point, under their own names.
 */
static int
keep_state(const struct fl_log *log, struct state_list *l,
	   const struct fl_state *s, bool prefix)
{
	char name[FL_STATE_NAME_MAX];
	struct fl_state key = *s;
	size_t found;

	canonicalise(log, &key);
	if (fl_state_name(&key, name, sizeof(name)) ||
	    name_map_add(&l->seen, name, l->n, &found))
		return -ENOMEM;
	if (found != SIZE_MAX && !prefix) {
		struct fl_state *old = &l->v[found];

		if (old->nr_extra || old->torn != FL_NO_ENTRY)
			old->point = s->point > old->point ? s->point : old->point;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct fl_state *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = prefix ? *s : key;
	return 0;
}

static int
by_base(const void *a, const void *b)
{
	const struct fl_state *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->point < y->point ? -1 : x->point > y->point;
}

/* The i-th of n items when k of them are spread evenly: 0 <= i < k. */
static uint64_t
spread(uint64_t i, uint64_t n, uint64_t k)
{
	return (uint64_t)((unsigned __int128)i * n / k);
}

static int
plan_points(const struct fl_log *log, const struct fl_point *points,
	    size_t nr_points, const struct fl_state_opts *o,
	    struct point_plan *plan, uint64_t *reordered)
{
	*reordered = 0;
	for (size_t i = 0; i < nr_points; i++) {
		plan[i].nr_applied = points[i].nr_applied;
		plan[i].point = points[i].number;
		if (o->models & (FL_STATES_EPOCH | FL_STATES_TORN) &&
		    possibly_durable(log, points[i].nr_applied, &plan[i].pd,
				     &plan[i].nr_pd))
			return -ENOMEM;
		plan_point(log, o, &plan[i]);
		*reordered = add_sat(*reordered, plan[i].total - 1);
	}
	return 0;
}

/*
 * The prefix states, then the others: all of them, or as many as the
 * sample leaves room for, spread evenly over their numbering, so that the
 * same log and options always give the same states.
 */
static int
list_states(const struct fl_log *log, const struct fl_state_opts *o,
	    const struct point_plan *plan, size_t nr_points,
	    uint64_t reordered, struct state_list *l)
{
	uint64_t want_prefix = nr_points, want = reordered, base_idx = 0, k = 0;
	struct fl_state s;

	if (o->max_states && o->max_states < nr_points + reordered) {
		want_prefix = o->max_states < nr_points ? o->max_states : nr_points;
		want = o->max_states - want_prefix;
	}
	for (uint64_t i = 0; i < want_prefix; i++) {
		make_state(log, o, &plan[spread(i, nr_points, want_prefix)], 0, &s);
		if (keep_state(log, l, &s, true))
			return -ENOMEM;
	}
	for (size_t i = 0; i < nr_points && k < want; i++) {
		uint64_t end = base_idx + plan[i].total - 1, pick;

		while (k < want && (pick = spread(k, reordered, want)) < end) {
			make_state(log, o, &plan[i], pick - base_idx + 1, &s);
			if (keep_state(log, l, &s, false))
				return -ENOMEM;
			k++;
		}
		base_idx = end;
	}
	return 0;
}

int
fl_log_states(const struct fl_log *log, const struct fl_point *points,
	      size_t nr_points, const struct fl_state_opts *o,
	      struct fl_state **states, size_t *nr_states,
	      uint64_t *candidates, struct fl_error *err)
{
	struct point_plan *plan = calloc(nr_points ? nr_points : 1, sizeof(*plan));
	struct state_list list = { 0 };
	uint64_t reordered = 0;
	int ret = -ENOMEM;

	if (o->max_reorder > FL_STATE_MAX_REORDER || !o->max_torn)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "reorder bound 1 to %d and at least one cut, not %u and %u",
				    FL_STATE_MAX_REORDER, o->max_reorder,
				    o->max_torn), -EINVAL;
	if (!plan || plan_points(log, points, nr_points, o, plan, &reordered))
		goto out;
	if (reordered == UINT64_MAX) {
		fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
			     "more than 2^64 crash states: lower the reorder bound");
		ret = -E2BIG;
		goto out;
	}
	if (list_states(log, o, plan, nr_points, reordered, &list))
		goto out;
	qsort(list.v, list.n, sizeof(*list.v), by_base);
	*states = list.v;
	*nr_states = list.n;
	*candidates = add_sat(nr_points, reordered);
	list.v = NULL;
	ret = 0;
out:
	if (ret == -ENOMEM)
		fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
			     "out of memory listing crash states");
	for (size_t i = 0; plan && i < nr_points; i++)
		free(plan[i].pd);
	free(plan);
	free(list.v);
	name_map_free(&list.seen);
	return ret;
}

static int
parse_u64(const char **p, uint64_t *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

static int
bad_state(struct fl_error *err, const char *id, const char *why)
{
	return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
			    "state '%s': %s", id, why), -EINVAL;
}

int
fl_state_parse(const struct fl_log *log, const char *id, struct fl_state *s,
	       struct fl_error *err)
{
	uint64_t n = log->info.nr_entries, v, first, count;
	const char *p = id;

	*s = (struct fl_state) { .torn = FL_NO_ENTRY };
	if (parse_u64(&p, &s->base) || s->base > n)
		return bad_state(err, id, "expected N[+E[,E...]][~T:A+L] with N at most the number of entries");
	if (*p == '+') {
		do {
			p++;
			if (s->nr_extra == FL_STATE_MAX_REORDER)
				return bad_state(err, id, "too many extra entries");
			if (parse_u64(&p, &v) || v >= n)
				return bad_state(err, id, "an extra entry is not an entry of the log");
			if (v < s->base || (s->nr_extra && v <= s->extra[s->nr_extra - 1]))
				return bad_state(err, id, "extra entries must be past N and ascending");
			s->extra[s->nr_extra++] = v;
		} while (*p == ',');
	}
	if (*p == '~') {
		p++;
		if (parse_u64(&p, &s->torn) || s->torn >= n || s->torn < s->base ||
		    *p++ != ':' || parse_u64(&p, &first) || *p++ != '+' ||
		    parse_u64(&p, &count))
			return bad_state(err, id, "a torn write is ~ENTRY:FIRST+COUNT, ENTRY past N");
		if (log->entries[s->torn].op != FLUSHLOG_OP_WRITE || !count ||
		    first + count > log->entries[s->torn].nr_sectors)
			return bad_state(err, id, "the torn range is not inside a write entry");
		for (unsigned int i = 0; i < s->nr_extra; i++)
			if (s->extra[i] == s->torn)
				return bad_state(err, id, "an entry is both whole and torn");
		s->torn_first = (uint32_t)first;
		s->torn_count = (uint32_t)count;
	}
	if (*p)
		return bad_state(err, id, "trailing characters");
	return 0;
}
