// SPDX-License-Identifier: LGPL-2.1-or-later
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
 * its A-th sector on, and a final "%" when every discard among them left
 * the old data (the discard model).  Names are canonical (entries that
 * change nothing and leading extras fold into N), so one state has one
 * name.
 *
 * Every crash point is planned, the start (point 0, the base) included.
 * Planning counts before it lists: each point's possibly durable writes
 * are counted with prefix sums and a Fenwick tree (O(N log N) for N
 * entries, however deep the queues), and listed one point at a time, only
 * for the points whose states are wanted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* every byte of the options is a field: none a caller could set unseen */
_Static_assert(sizeof(struct fl_state_opts) == FL_STATE_OPTS_SIZE_VER0 &&
	       sizeof(struct fl_state_opts) ==
	       offsetof(struct fl_state_opts, flags) + sizeof(uint32_t),
	       "struct fl_state_opts has padding or grew without a new size");

/* Fold leading extras and entries that change nothing into the prefix. */
static void
canonicalise(const struct fl_log *log, struct fl_state *s)
{
	const struct fl_entry *e = log->entries;

	while (s->base < log->info.nr_entries && s->base != s->torn) {
		if (s->nr_extra && s->extra[0] == s->base) {
			memmove(s->extra, s->extra + 1,
				--s->nr_extra * sizeof(s->extra[0]));
		} else if (fl_changes_data(&e[s->base])) {
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
	if (s->keep_discards && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - n, "%%");
	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

int
fl_state_contents_name(const struct fl_log *log, const struct fl_state *s,
		       char *buf, size_t len)
{
	struct fl_state k = *s;

	canonicalise(log, &k);
	return fl_state_name(&k, buf, len);
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
	uint64_t nr_pd;		/* possibly durable writes */
	uint64_t torn;		/* torn candidates */
	uint64_t total;		/* candidates, the prefix state included */
	bool discard;		/* the state keeping the discards differs */
};

/* How many torn candidates a possibly durable entry brings. */
static uint64_t
torn_weight(const struct fl_log *log, const struct fl_state_opts *o,
	    const struct fl_entry *e)
{
	if (!(o->models & FL_STATES_TORN) || e->op != FLUSHLOG_OP_WRITE)
		return 0;
	/* a data block of its device is the unit a write is torn at */
	return 2ULL * nr_cuts(e->nr_sectors / fl_entry_block_sectors(log, e),
			      o->max_torn);
}

static uint64_t
epoch_states(const struct fl_state_opts *o, uint64_t nr_pd)
{
	uint64_t n = 0;

	if (o->models & FL_STATES_EPOCH)
		for (unsigned int k = 1; k <= o->max_reorder; k++)
			n = add_sat(n, choose(nr_pd, k));
	return n;
}

/*
 * What planning needs of the log, O(N) in memory: where each position's
 * epoch ends, and prefix sums of data entries and of torn candidates.
 */
struct planner {
	const struct fl_log *log;
	const struct fl_state_opts *o;
	uint64_t n;
	uint64_t *epoch_end;	/* [p]: the first position > p ending an epoch, or n */
	uint64_t *pc, *pt;	/* [i]: data entries, torn candidates before i */
};

/*
 * A write logged past the epoch that ends at end was in flight when the
 * epoch ended if it was submitted before this tick: the completion of the
 * flush or FUA entry that ends it.  A PREFLUSH write's data counts as
 * submitted when its flush completed (fl_data_submit()): before, it could
 * not be on the media, nor without what that flush made durable.  Where
 * no such entry ends the epoch (the end of the log, or a flush before its
 * write's data, which nothing logged after it was in flight with) it is
 * 0, before which nothing was submitted.  No tick is set apart to mean
 * "none": a crash point may complete at any tick, 2^64 - 1 included.  A
 * dm-log-writes log has the ticks its reader gave it, one an entry in log
 * order.
 */
static uint64_t
horizon_of(const struct planner *pl, uint64_t end)
{
	const struct fl_entry *e = pl->log->entries;

	if (!end || !fl_makes_durable(&e[end - 1]))
		return 0;
	return e[end - 1].complete_tick;
}

static int
planner_init(struct planner *pl, const struct fl_log *log,
	     const struct fl_state_opts *o)
{
	const struct fl_entry *e = log->entries;
	uint64_t n = log->info.nr_entries;

	*pl = (struct planner) { .log = log, .o = o, .n = n };
	pl->epoch_end = malloc((n + 1) * sizeof(*pl->epoch_end));
	pl->pc = malloc((n + 1) * sizeof(*pl->pc));
	pl->pt = malloc((n + 1) * sizeof(*pl->pt));
	if (!pl->epoch_end || !pl->pc || !pl->pt)
		return -ENOMEM;
	/* first mark the positions where an epoch ends, then fill in */
	memset(pl->epoch_end, 0, (n + 1) * sizeof(*pl->epoch_end));
	for (uint64_t i = 0; i < n; i++)
		if (fl_makes_durable(&e[i]))
			pl->epoch_end[i + 1] = 1;
	for (uint64_t f = 0; f < log->nr_early_flushes; f++)
		pl->epoch_end[log->early_flushes[f]] = 1;
	for (uint64_t p = n + 1, end = n; p-- > 0;) {
		bool ends = p && pl->epoch_end[p];

		pl->epoch_end[p] = end;
		if (ends)
			end = p;
	}
	pl->pc[0] = pl->pt[0] = 0;
	for (uint64_t i = 0; i < n; i++) {
		pl->pc[i + 1] = pl->pc[i] + fl_changes_data(&e[i]);
		pl->pt[i + 1] = add_sat(pl->pt[i], torn_weight(log, o, &e[i]));
	}
	return 0;
}

static void
planner_free(struct planner *pl)
{
	free(pl->epoch_end);
	free(pl->pc);
	free(pl->pt);
}

/*
 * A Fenwick tree over the ranks of submit ticks: how many late writes, and
 * how many torn candidates they bring, were submitted before a horizon.
 */
struct fenwick {
	uint64_t *ticks;	/* the distinct submit ticks, sorted */
	uint64_t *count, *torn;
	size_t n;
};

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* How many distinct ticks are below t. */
static size_t
rank_below(const struct fenwick *f, uint64_t t)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->ticks[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Add v to position i (0-based) of a Fenwick tree t of n. */
static void
fw_add(uint64_t *t, size_t n, size_t i, uint64_t v)
{
	for (i++; i <= n; i += i & -i)
		t[i] = add_sat(t[i], v);
}

/* The sum of positions [0, i). */
static uint64_t
fw_sum(const uint64_t *t, size_t i)
{
	uint64_t sum = 0;

	for (; i; i -= i & -i)
		sum = add_sat(sum, t[i]);
	return sum;
}

/* The first position whose prefix sum, itself included, reaches target. */
static size_t
fw_select(const uint64_t *t, size_t n, uint64_t target)
{
	size_t pos = 0, step = 1;

	while (step * 2 <= n)
		step *= 2;
	for (; step; step /= 2)
		if (pos + step <= n && t[pos + step] < target) {
			pos += step;
			target -= t[pos];
		}
	return pos;
}

static int
fenwick_init(struct fenwick *f, const struct fl_log *log)
{
	const struct fl_entry *e = log->entries;
	uint64_t n = log->info.nr_entries;
	size_t all = 0;

	*f = (struct fenwick) { 0 };
	f->ticks = malloc((n ? n : 1) * sizeof(*f->ticks));
	if (!f->ticks)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		if (fl_changes_data(&e[i]))
			f->ticks[all++] = fl_data_submit(log, i);
	qsort(f->ticks, all, sizeof(*f->ticks), cmp_u64);
	for (size_t i = 0; i < all; i++)
		if (!f->n || f->ticks[f->n - 1] != f->ticks[i])
			f->ticks[f->n++] = f->ticks[i];
	f->count = calloc(f->n + 1, sizeof(*f->count));
	f->torn = calloc(f->n + 1, sizeof(*f->torn));
	return f->count && f->torn ? 0 : -ENOMEM;
}

static void
fenwick_free(struct fenwick *f)
{
	free(f->ticks);
	free(f->count);
	free(f->torn);
}

/* A point and its epoch's end: points are counted by decreasing end. */
struct point_end {
	uint64_t end;
	size_t point;
};

static int
by_end_down(const void *a, const void *b)
{
	const struct point_end *x = a, *y = b;

	return x->end > y->end ? -1 : x->end < y->end;
}

/*
 * Count every point's possibly durable writes and torn candidates without
 * listing them: those of its epoch from prefix sums, the late ones (logged
 * from the epoch's end on, submitted before its horizon) from a Fenwick
 * tree filled from the end of the log backwards.  O(N log N) in all.
 */
static int
count_pd(const struct planner *pl, struct point_plan *plan, size_t nr_points)
{
	const struct fl_entry *e = pl->log->entries;
	struct point_end *order = NULL;
	struct fenwick f = { 0 };
	uint64_t next = pl->n;
	int ret = -ENOMEM;

	for (size_t i = 0; i < nr_points; i++) {
		uint64_t a = plan[i].nr_applied, end = pl->epoch_end[a];

		plan[i].nr_pd = pl->pc[end] - pl->pc[a];
		plan[i].torn = pl->pt[end] - pl->pt[a];
	}
	order = malloc((nr_points ? nr_points : 1) * sizeof(*order));
	if (!order || fenwick_init(&f, pl->log))
		goto out;
	for (size_t i = 0; i < nr_points; i++)
		order[i] = (struct point_end) {
			pl->epoch_end[plan[i].nr_applied], i,
		};
	qsort(order, nr_points, sizeof(*order), by_end_down);
	for (size_t k = 0; k < nr_points; k++) {
		struct point_plan *p = &plan[order[k].point];
		uint64_t end = order[k].end, h = horizon_of(pl, end);

		for (; next > end; next--)
			if (fl_changes_data(&e[next - 1])) {
				size_t r = rank_below(&f, fl_data_submit(pl->log,
									  next - 1));

				fw_add(f.count, f.n, r, 1);
				fw_add(f.torn, f.n, r,
				       torn_weight(pl->log, pl->o, &e[next - 1]));
			}
		p->nr_pd += fw_sum(f.count, rank_below(&f, h));
		p->torn = add_sat(p->torn, fw_sum(f.torn, rank_below(&f, h)));
	}
	ret = 0;
out:
	free(order);
	fenwick_free(&f);
	return ret;
}

/*
 * Sector ranges, sorted, disjoint and not touching: what a discard left
 * that no later entry overwrote.
 */
static int
ranges_replace(struct fl_ranges *s, size_t lo, size_t hi,
	       const struct fl_range *with, size_t nr_with)
{
	size_t n = s->n - (hi - lo) + nr_with;

	if (n > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct fl_range *v;

		while (cap < n)
			cap *= 2;
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	memmove(s->v + lo + nr_with, s->v + hi, (s->n - hi) * sizeof(*s->v));
	memcpy(s->v + lo, with, nr_with * sizeof(*with));
	s->n = n;
	return 0;
}

/* The first range ending after sector at (touching: at or after). */
size_t
fl_ranges_find(const struct fl_ranges *s, uint64_t at, bool touching)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].end < at || (!touching && s->v[mid].end == at))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
fl_ranges_add(struct fl_ranges *s, uint64_t start, uint64_t end)
{
	size_t lo = fl_ranges_find(s, start, true), hi = lo;
	struct fl_range r = { start, end };

	if (start >= end)
		return 0;
	while (hi < s->n && s->v[hi].start <= end)
		hi++;
	if (hi > lo) {
		r.start = s->v[lo].start < start ? s->v[lo].start : start;
		r.end = s->v[hi - 1].end > end ? s->v[hi - 1].end : end;
	}
	return ranges_replace(s, lo, hi, &r, 1);
}

int
fl_ranges_remove(struct fl_ranges *s, uint64_t start, uint64_t end)
{
	size_t lo = fl_ranges_find(s, start, false), hi = lo, nr = 0;
	struct fl_range keep[2];

	if (start >= end)
		return 0;
	while (hi < s->n && s->v[hi].start < end)
		hi++;
	if (hi == lo)
		return 0;
	if (s->v[lo].start < start)
		keep[nr++] = (struct fl_range) { s->v[lo].start, start };
	if (s->v[hi - 1].end > end)
		keep[nr++] = (struct fl_range) { end, s->v[hi - 1].end };
	return ranges_replace(s, lo, hi, keep, nr);
}

void
fl_ranges_free(struct fl_ranges *s)
{
	free(s->v);
	*s = (struct fl_ranges) { 0 };
}

/* How entry e changes what discards left: add to it, cut it, or neither. */
int
fl_ranges_update(struct fl_ranges *s, uint64_t start, const struct fl_entry *e)
{
	uint64_t end = start + e->nr_sectors;

	if (e->op == FLUSHLOG_OP_DISCARD)
		return fl_ranges_add(s, start, end);
	if (fl_changes_data(e))
		return fl_ranges_remove(s, start, end);
	return 0;
}

/* Add to "to" what of [start, end) "from" holds. */
static int
ranges_add_overlap(struct fl_ranges *to, const struct fl_ranges *from,
		   uint64_t start, uint64_t end)
{
	int ret = 0;

	for (size_t i = fl_ranges_find(from, start, false);
	     !ret && i < from->n && from->v[i].start < end; i++)
		ret = fl_ranges_add(to, from->v[i].start > start ?
				    from->v[i].start : start,
				    from->v[i].end < end ? from->v[i].end : end);
	return ret;
}

/*
 * What the "%" state of a prefix holds, as replay builds it (replay.c,
 * keep_discards()): kept, the sectors whose last change is a discard; and
 * written, the sectors whose data under the discards is not zeroes (the
 * base's, unless it is zeroes, or a write's).  The "%" state differs from
 * the prefix state where the two overlap.  Both follow the newer-write
 * rule (overtake.c), as replay does: a discard issued after a write
 * completed keeps that write's data even when durability order applies
 * the write later.  kept is followed with discards holding their sectors
 * against older entries, written with discards passing, as if never
 * issued.
 */
struct discard_walk {
	const struct fl_log *log;
	struct fl_ranges kept, written, differs;
	struct fl_newer kept_newer, written_newer;
};

/* A piece of an entry that changes what the sectors' last change is. */
static int
kept_piece(void *arg, uint64_t seq, uint64_t first, uint64_t count)
{
	struct discard_walk *w = arg;
	const struct fl_entry *e = &w->log->entries[seq];
	uint64_t start = fl_entry_image_sector(w->log, e) + first;
	int ret;

	if (e->op != FLUSHLOG_OP_DISCARD) {
		ret = fl_ranges_remove(&w->kept, start, start + count);
		return ret ? ret : fl_ranges_remove(&w->differs, start,
						    start + count);
	}
	ret = fl_ranges_add(&w->kept, start, start + count);
	return ret ? ret : ranges_add_overlap(&w->differs, &w->written, start,
					      start + count);
}

/*
 * A piece of an entry that changes what lies under the discards: a write
 * under a discard that kept its sectors (one that overtook it) makes the
 * "%" state differ there.
 */
static int
written_piece(void *arg, uint64_t seq, uint64_t first, uint64_t count)
{
	struct discard_walk *w = arg;
	const struct fl_entry *e = &w->log->entries[seq];
	uint64_t start = fl_entry_image_sector(w->log, e) + first;
	int ret;

	if (e->op == FLUSHLOG_OP_DISCARD)
		return 0;
	if (e->op != FLUSHLOG_OP_WRITE) {	/* zeroes, for sure */
		ret = fl_ranges_remove(&w->written, start, start + count);
		return ret ? ret : fl_ranges_remove(&w->differs, start,
						    start + count);
	}
	ret = fl_ranges_add(&w->written, start, start + count);
	return ret ? ret : ranges_add_overlap(&w->differs, &w->kept, start,
					      start + count);
}

static int
walk_entry(struct discard_walk *w, uint64_t seq)
{
	const struct fl_entry *e = &w->log->entries[seq];
	int ret;

	if (!fl_changes_data(e))
		return 0;
	ret = fl_newer_apply(&w->kept_newer, w->log, seq, 0, e->nr_sectors,
			     kept_piece, w, NULL);
	return ret ? ret : fl_newer_apply(&w->written_newer, w->log, seq, 0,
					  e->nr_sectors, written_piece, w, NULL);
}

/*
 * Which points have a discard state that differs from their prefix
 * state.  One pass, points in log order.
 */
static int
find_discards(const struct fl_log *log, const struct fl_state_opts *o,
	      struct point_plan *plan, size_t nr_points)
{
	struct discard_walk w = { .log = log };
	uint64_t j = 0;
	int ret = 0;

	fl_newer_clear(&w.kept_newer);
	fl_newer_clear(&w.written_newer);
	w.written_newer.pass_discards = true;
	if (!(o->flags & FL_STATE_OPT_ZERO_BASE))
		ret = fl_ranges_add(&w.written, 0, log->info.image_sectors);
	for (size_t i = 0; i < nr_points && !ret; i++) {
		for (; j < plan[i].nr_applied && !ret; j++)
			ret = walk_entry(&w, j);
		plan[i].discard = w.differs.n > 0;
	}
	fl_ranges_free(&w.kept);
	fl_ranges_free(&w.written);
	fl_ranges_free(&w.differs);
	fl_newer_free(&w.kept_newer);
	fl_newer_free(&w.written_newer);
	return ret;
}

/*
 * The idx-th k-subset of n in lexicographic order, into c[0..k).  The
 * subsets whose i-th element lies in [x, y] number C(n - x, m + 1) -
 * C(n - y - 1, m + 1), m = k - i - 1: each element is a binary search.
 */
static void
unrank_subset(uint64_t idx, size_t n, unsigned int k, size_t *c)
{
	size_t x = 0;

	for (unsigned int i = 0; i < k; i++) {
		unsigned int m = k - i - 1;
		uint64_t total = choose(n - x, m + 1);
		size_t lo = x, hi = n - m - 1;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (idx < total - choose(n - mid - 1, m + 1))
				hi = mid;
			else
				lo = mid + 1;
		}
		idx -= total - choose(n - lo, m + 1);
		c[i] = lo;
		x = lo + 1;
	}
}

/* Two states with the same contents, whatever the names they came with. */
static bool
same_state(const struct fl_log *log, const struct fl_state *a,
	   const struct fl_state *b)
{
	struct fl_state x = *a, y = *b;

	canonicalise(log, &x);
	canonicalise(log, &y);
	if (x.base != y.base || x.nr_extra != y.nr_extra || x.torn != y.torn ||
	    x.keep_discards != y.keep_discards)
		return false;
	if (x.torn != FL_NO_ENTRY && (x.torn_first != y.torn_first ||
				      x.torn_count != y.torn_count))
		return false;
	return !memcmp(x.extra, y.extra, x.nr_extra * sizeof(x.extra[0]));
}

static uint64_t
hash_state(const struct fl_log *log, const struct fl_state *s)
{
	struct fl_state k = *s;
	uint64_t h = 1469598103934665603ULL;
	uint64_t f[4];

	canonicalise(log, &k);
	f[0] = k.base;
	f[1] = k.torn;
	f[2] = (uint64_t)k.torn_first << 32 | k.torn_count;
	f[3] = k.nr_extra | (uint64_t)k.keep_discards << 8;
	for (unsigned int i = 0; i < 4 + k.nr_extra; i++)
		h = (h ^ (i < 4 ? f[i] : k.extra[i - 4])) * 1099511628211ULL;
	return h;
}

/*
 * An open-addressing set of the listed states, to drop duplicates: 16
 * bytes a slot, at most half of them used.
 */
struct state_list {
	struct fl_state *v;
	size_t n, cap;
	size_t *slot;		/* index in v + 1, or 0 */
	uint64_t *hash;
	size_t slots;
	size_t nr_prefix;	/* v[0..nr_prefix): the prefix states */
};

static size_t
slot_of(const struct fl_log *log, const struct state_list *l, uint64_t h,
	const struct fl_state *s)
{
	size_t i = h & (l->slots - 1);

	while (l->slot[i] && (l->hash[i] != h ||
			      !same_state(log, &l->v[l->slot[i] - 1], s)))
		i = (i + 1) & (l->slots - 1);
	return i;
}

static int
grow_slots(struct state_list *l)
{
	struct state_list g = *l;

	g.slots = l->slots ? 2 * l->slots : 1024;
	g.slot = calloc(g.slots, sizeof(*g.slot));
	g.hash = calloc(g.slots, sizeof(*g.hash));
	if (!g.slot || !g.hash) {
		free(g.slot);
		free(g.hash);
		return -ENOMEM;
	}
	for (size_t j = 0; j < l->slots; j++) {
		size_t i;

		if (!l->slot[j])
			continue;
		for (i = l->hash[j] & (g.slots - 1); g.slot[i];
		     i = (i + 1) & (g.slots - 1))
			;
		g.slot[i] = l->slot[j];
		g.hash[i] = l->hash[j];
	}
	free(l->slot);
	free(l->hash);
	*l = g;
	return 0;
}

static void
state_list_free(struct state_list *l)
{
	free(l->v);
	free(l->slot);
	free(l->hash);
}

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
	uint64_t h = hash_state(log, s);
	struct fl_state key = *s;
	size_t i;

	if (2 * (l->n + 1) > l->slots && grow_slots(l))
		return -ENOMEM;
	i = slot_of(log, l, h, s);
	if (l->slot[i] && !prefix) {
		struct fl_state *old = &l->v[l->slot[i] - 1];

		/* even one whose name folded into a plain "N" */
		if (l->slot[i] > l->nr_prefix)
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
	if (!prefix)
		canonicalise(log, &key);
	l->v[l->n++] = key;
	if (!l->slot[i]) {	/* a prefix state's duplicate is not indexed */
		l->slot[i] = l->n;
		l->hash[i] = h;
	}
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
by_nr_applied(const void *a, const void *b)
{
	const struct point_plan *x = a, *y = b;

	if (x->nr_applied != y->nr_applied)
		return x->nr_applied < y->nr_applied ? -1 : 1;
	return x->point < y->point ? -1 : x->point > y->point;
}

/* Count every point's candidates; *others: all but the prefix states. */
static int
plan_points(const struct planner *pl, const struct fl_point *points,
	    size_t nr_points, struct point_plan *plan, uint64_t *others)
{
	const struct fl_state_opts *o = pl->o;
	int ret;

	for (size_t i = 0; i < nr_points; i++) {
		if (points[i].nr_applied > pl->n)
			return -ERANGE;
		plan[i].nr_applied = points[i].nr_applied;
		plan[i].point = points[i].number;
	}
	qsort(plan, nr_points, sizeof(*plan), by_nr_applied);
	if (o->models & (FL_STATES_EPOCH | FL_STATES_TORN)) {
		ret = count_pd(pl, plan, nr_points);
		if (ret)
			return ret;
	}
	if (o->models & FL_STATES_DISCARD) {
		ret = find_discards(pl->log, o, plan, nr_points);
		if (ret)
			return ret;
	}
	*others = 0;
	for (size_t i = 0; i < nr_points; i++) {
		struct point_plan *p = &plan[i];

		p->total = add_sat(add_sat(1, epoch_states(o, p->nr_pd)),
				   add_sat(p->torn, p->discard));
		*others = add_sat(*others, p->total - 1);
	}
	return 0;
}

/*
 * A late write a state needs, found once every pick is made: the rank-th
 * of the data entries logged from end on and submitted before h, or
 * (torn) the one holding the rank-th torn candidate among them.
 */
struct late_query {
	uint64_t h, end, rank;
	size_t state;		/* in the picks */
	unsigned int slot;	/* extra[slot], or FL_STATE_MAX_REORDER: torn */
};

/*
 * The sampled states other than the prefix ones, appended to the list
 * before duplicates are dropped, and the late writes they still need.
 */
struct picks {
	const struct planner *pl;
	struct state_list *l;
	struct late_query *q;
	size_t nr_q, cap_q;
};

static int
grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 256;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* Cut a torn candidate: the i-th of entry e's, head or tail. */
static void
set_torn(const struct fl_log *log, const struct fl_state_opts *o,
	 struct fl_state *s, uint64_t entry, uint64_t i)
{
	const struct fl_entry *e = &log->entries[entry];
	uint32_t bs = fl_entry_block_sectors(log, e), units = e->nr_sectors / bs;
	uint32_t cuts = nr_cuts(units, o->max_torn);
	uint32_t cut = cut_at(units, cuts, (uint32_t)(i / 2)) * bs;

	s->torn = entry;
	if (i % 2 == 0) {	/* the head reached the media */
		s->torn_first = 0;
		s->torn_count = cut;
	} else {		/* the tail did */
		s->torn_first = cut;
		s->torn_count = e->nr_sectors - cut;
	}
}

/* The first j in [a, end) with sum[j + 1] - sum[a] > rank. */
static uint64_t
select_in_epoch(const uint64_t *sum, uint64_t a, uint64_t end, uint64_t rank)
{
	uint64_t lo = a, hi = end - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (sum[mid + 1] - sum[a] > rank)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * The rank-th possibly durable write of point p (torn: the one holding
 * the rank-th torn candidate) into slot of state si: at once when it lies
 * in the point's epoch, else as a late query.
 */
static int
pick_pd(struct picks *pk, const struct point_plan *p, uint64_t rank,
	bool torn, size_t si, unsigned int slot)
{
	const struct planner *pl = pk->pl;
	const uint64_t *sum = torn ? pl->pt : pl->pc;
	uint64_t a = p->nr_applied, end = pl->epoch_end[a];
	struct fl_state *s = &pk->l->v[si];
	uint64_t j;

	if (rank >= sum[end] - sum[a]) {
		if (grow((void **)&pk->q, &pk->cap_q, pk->nr_q + 1, sizeof(*pk->q)))
			return -ENOMEM;
		pk->q[pk->nr_q++] = (struct late_query) {
			.h = horizon_of(pl, end), .end = end,
			.rank = rank - (sum[end] - sum[a]), .state = si,
			.slot = slot,
		};
		return 0;
	}
	j = select_in_epoch(sum, a, end, rank);
	if (torn)
		set_torn(pl->log, pl->o, s, j, rank - (sum[j] - sum[a]));
	else
		s->extra[slot] = j;
	return 0;
}

/*
 * Candidate idx of a point, 1 <= idx < p->total, as a state: after the
 * prefix come the epoch's subsets by size, the torn writes, the discard
 * state.
 */
static int
pick_state(struct picks *pk, const struct point_plan *p, uint64_t idx)
{
	const struct fl_state_opts *o = pk->pl->o;
	struct state_list *l = pk->l;
	size_t si = l->n, c[FL_STATE_MAX_REORDER];
	struct fl_state *s;
	int ret = 0;

	if (grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -ENOMEM;
	s = &l->v[l->n++];
	*s = (struct fl_state) {
		.point = p->point, .base = p->nr_applied, .torn = FL_NO_ENTRY,
	};
	idx--;
	for (unsigned int k = 1; k <= o->max_reorder && (o->models & FL_STATES_EPOCH); k++) {
		uint64_t by_size = choose(p->nr_pd, k);

		if (idx >= by_size) {
			idx -= by_size;
			continue;
		}
		unrank_subset(idx, p->nr_pd, k, c);
		s->nr_extra = k;
		for (unsigned int i = 0; i < k && !ret; i++)
			ret = pick_pd(pk, p, c[i], false, si, i);
		return ret;
	}
	if (idx < p->torn)
		return pick_pd(pk, p, idx, true, si, FL_STATE_MAX_REORDER);
	s->keep_discards = true;	/* the last candidate of a point */
	return 0;
}

static int
by_horizon(const void *a, const void *b)
{
	const struct late_query *x = a, *y = b;

	return x->h < y->h ? -1 : x->h > y->h;
}

struct tick_entry {
	uint64_t tick, entry;
};

static int
by_tick(const void *a, const void *b)
{
	const struct tick_entry *x = a, *y = b;

	return x->tick < y->tick ? -1 : x->tick > y->tick;
}

/*
 * Answer the late queries together, in order of horizon: the data entries
 * submitted before it go into Fenwick trees over entry numbers (one
 * counting, one weighing torn candidates), where the rank-th from end on
 * is one descent away.  O((N + Q) log N).
 */
static int
resolve_late(struct picks *pk)
{
	const struct planner *pl = pk->pl;
	const struct fl_entry *e = pl->log->entries;
	struct tick_entry *by_submit = NULL;
	uint64_t *count = NULL, *torn = NULL;
	size_t n = pl->n, nr = 0, next = 0;
	int ret = -ENOMEM;

	if (!pk->nr_q)
		return 0;
	by_submit = malloc(n * sizeof(*by_submit));
	count = calloc(n + 1, sizeof(*count));
	torn = calloc(n + 1, sizeof(*torn));
	if (!by_submit || !count || !torn)
		goto out;
	for (uint64_t i = 0; i < n; i++)
		if (fl_changes_data(&e[i]))
			by_submit[nr++] = (struct tick_entry) {
				fl_data_submit(pl->log, i), i,
			};
	qsort(by_submit, nr, sizeof(*by_submit), by_tick);
	qsort(pk->q, pk->nr_q, sizeof(*pk->q), by_horizon);
	for (size_t k = 0; k < pk->nr_q; k++) {
		const struct late_query *q = &pk->q[k];
		struct fl_state *s = &pk->l->v[q->state];
		bool weighed = q->slot == FL_STATE_MAX_REORDER;
		const uint64_t *t = weighed ? torn : count;
		uint64_t before, j;

		for (; next < nr && by_submit[next].tick < q->h; next++) {
			uint64_t i = by_submit[next].entry;

			fw_add(count, n, i, 1);
			fw_add(torn, n, i, torn_weight(pl->log, pl->o, &e[i]));
		}
		before = fw_sum(t, q->end);
		j = fw_select(t, n, before + q->rank + 1);
		if (weighed)
			set_torn(pl->log, pl->o, s, j,
				 q->rank - (fw_sum(t, j) - before));
		else
			s->extra[q->slot] = j;
	}
	ret = 0;
out:
	free(by_submit);
	free(count);
	free(torn);
	return ret;
}

/*
 * The prefix states, then the others: all of them, or as many as the
 * sample leaves room for, spread evenly over their numbering, so that the
 * same log and options always give the same states.  No point's possibly
 * durable writes are listed: each pick finds the ones it names.
 */
static int
list_states(const struct planner *pl, const struct point_plan *plan,
	    size_t nr_points, uint64_t others, struct state_list *l)
{
	const struct fl_state_opts *o = pl->o;
	uint64_t want_prefix = nr_points, want = others, first = 0, k = 0;
	struct picks pk = { .pl = pl, .l = l };
	size_t picked;
	int ret = 0;

	if (o->max_states && o->max_states < nr_points + others) {
		want_prefix = o->max_states < nr_points ? o->max_states : nr_points;
		want = o->max_states - want_prefix;
	}
	for (uint64_t i = 0; i < want_prefix; i++) {
		const struct point_plan *p = &plan[spread(i, nr_points, want_prefix)];
		struct fl_state s = {
			.point = p->point, .base = p->nr_applied, .torn = FL_NO_ENTRY,
		};

		if (keep_state(pl->log, l, &s, true))
			return -ENOMEM;
	}
	l->nr_prefix = l->n;
	for (size_t i = 0; i < nr_points && k < want && !ret; i++) {
		uint64_t end = first + plan[i].total - 1, pick;

		while (!ret && k < want && (pick = spread(k, others, want)) < end) {
			ret = pick_state(&pk, &plan[i], pick - first + 1);
			k++;
		}
		first = end;
	}
	if (!ret)
		ret = resolve_late(&pk);
	free(pk.q);
	/* drop the duplicates in place: keep_state appends at l->n <= i */
	picked = l->n;
	l->n = l->nr_prefix;
	for (size_t i = l->nr_prefix; i < picked && !ret; i++) {
		struct fl_state st = l->v[i];

		ret = keep_state(pl->log, l, &st, false);
	}
	return ret;
}

int
fl_log_states(const struct fl_log *log, const struct fl_points *chosen,
	      const struct fl_state_opts *opts, size_t opts_size,
	      struct fl_states **states, uint64_t *candidates,
	      struct fl_error *err)
{
	const struct fl_point *points = chosen->v;
	size_t nr_points = chosen->nr;
	struct fl_state_opts own, *o = &own;
	struct fl_states *result = NULL;
	struct point_plan *plan = NULL;
	struct state_list list = { 0 };
	struct planner pl = { 0 };
	uint64_t others = 0, listed;
	int ret = -ENOMEM;

	*candidates = 0;
	if (opts_size < FL_STATE_OPTS_SIZE_VER0)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "state options of %zu bytes: at least %d",
				    opts_size, FL_STATE_OPTS_SIZE_VER0), -EINVAL;
	if (fl_copy_struct_in(&own, sizeof(own), opts, opts_size))
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "state options of %zu bytes set fields this library (%s) does not know",
				    opts_size, fl_version()), -E2BIG;
	if (own.flags & ~FL_STATE_OPT_ZERO_BASE)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "state option flags 0x%x this library (%s) does not know",
				    own.flags & ~FL_STATE_OPT_ZERO_BASE,
				    fl_version()), -E2BIG;
	if (!own.max_reorder)
		own.max_reorder = 1;
	if (!own.max_torn)
		own.max_torn = 1;
	if (o->max_reorder > FL_STATE_MAX_REORDER)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "reorder bound 1 to %d, not %u",
				    FL_STATE_MAX_REORDER, o->max_reorder), -EINVAL;
	plan = calloc(nr_points ? nr_points : 1, sizeof(*plan));
	if (!plan || planner_init(&pl, log, o))
		goto out;
	ret = plan_points(&pl, points, nr_points, plan, &others);
	if (ret == -ERANGE) {
		fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
			     "a crash point lies past the end of the log");
		goto out;
	}
	if (ret)
		goto out;
	*candidates = add_sat(nr_points, others);
	listed = o->max_states && o->max_states < *candidates ? o->max_states :
		 *candidates;
	if (*candidates == UINT64_MAX) {
		fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
			     "more than 2^64 crash states: lower the reorder bound");
		ret = -EOVERFLOW;
		goto out;
	}
	if (listed > FL_STATES_LIMIT) {
		if (listed < *candidates)
			fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				     "a sample of %" PRIu64 " of %" PRIu64 " crash states is more than the %d that can be listed",
				     listed, *candidates, FL_STATES_LIMIT);
		else
			fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				     "%" PRIu64 " crash states, more than the %d that can be listed",
				     *candidates, FL_STATES_LIMIT);
		ret = -E2BIG;
		goto out;
	}
	ret = list_states(&pl, plan, nr_points, others, &list);
	if (ret)
		goto out;
	if (list.n)	/* no points: no list, and qsort must not see NULL */
		qsort(list.v, list.n, sizeof(*list.v), by_base);
	result = malloc(sizeof(*result));
	if (!result) {
		ret = -ENOMEM;
		goto out;
	}
	result->v = list.v;
	result->nr = list.n;
	list.v = NULL;
	*states = result;
out:
	if (ret == -ENOMEM)
		fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
			     "out of memory listing crash states");
	planner_free(&pl);
	free(plan);
	state_list_free(&list);
	return ret;
}

size_t
fl_states_count(const struct fl_states *states)
{
	return states->nr;
}

const struct fl_state *
fl_states_get(const struct fl_states *states, size_t i)
{
	return i < states->nr ? &states->v[i] : NULL;
}

void
fl_states_free(struct fl_states *states)
{
	if (states)
		free(states->v);
	free(states);
}

uint64_t
fl_state_point(const struct fl_state *s)
{
	return s->point;
}

uint64_t
fl_state_base(const struct fl_state *s)
{
	return s->base;
}

int64_t
fl_state_last_entry(const struct fl_state *s)
{
	int64_t last = (int64_t)s->base - 1;

	if (s->nr_extra && (int64_t)s->extra[s->nr_extra - 1] > last)
		last = (int64_t)s->extra[s->nr_extra - 1];
	if (s->torn != FL_NO_ENTRY && (int64_t)s->torn > last)
		last = (int64_t)s->torn;
	return last;
}

bool
fl_state_keeps_discards(const struct fl_state *s)
{
	return s->keep_discards;
}

void
fl_state_free(struct fl_state *s)
{
	free(s);
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

static int
parse_state(const struct fl_log *log, const char *id, struct fl_state *s,
	    struct fl_error *err)
{
	uint64_t n = log->info.nr_entries, v, first, count;
	const char *p = id;

	*s = (struct fl_state) { .torn = FL_NO_ENTRY };
	if (parse_u64(&p, &s->base) || s->base > n)
		return bad_state(err, id, "expected N[+E[,E...]][~T:A+L][%] with N at most the number of entries");
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
		/* first + count may wrap: compare each with what is left */
		if (log->entries[s->torn].op != FLUSHLOG_OP_WRITE || !count ||
		    first >= log->entries[s->torn].nr_sectors ||
		    count > log->entries[s->torn].nr_sectors - first)
			return bad_state(err, id, "the torn range is not inside a write entry");
		for (unsigned int i = 0; i < s->nr_extra; i++)
			if (s->extra[i] == s->torn)
				return bad_state(err, id, "an entry is both whole and torn");
		s->torn_first = (uint32_t)first;
		s->torn_count = (uint32_t)count;
	}
	if (*p == '%') {
		p++;
		s->keep_discards = true;
	}
	if (*p)
		return bad_state(err, id, "trailing characters");
	return 0;
}

int
fl_state_parse(const struct fl_log *log, const char *name,
	       struct fl_state **state, struct fl_error *err)
{
	struct fl_state *s = malloc(sizeof(*s));
	int ret;

	if (!s)
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory"), -ENOMEM;
	ret = parse_state(log, name, s, err);
	if (ret)
		free(s);
	else
		*state = s;
	return ret;
}

bool
fl_state_is_prefix(const struct fl_state *s, uint64_t nr_applied)
{
	return !s->nr_extra && s->torn == FL_NO_ENTRY && !s->keep_discards &&
	       s->base == nr_applied;
}

/* Both in O(log marks), from the index over the marks (log.c). */
const char *
fl_log_last_mark(const struct fl_log *log, uint64_t nr_applied)
{
	uint64_t k = fl_log_first_mark(log, nr_applied, false);

	return k ? log->marks[k - 1].label : NULL;
}

const char *
fl_state_after_mark(const struct fl_log *log, const struct fl_state *s,
		    uint64_t nr_applied)
{
	uint64_t k;

	if (fl_state_is_prefix(s, nr_applied))	/* a mark point's own mark */
		k = fl_log_first_mark(log, nr_applied ? nr_applied - 1 : 0, false);
	else	/* past the end of the point's epoch: its next flush or FUA */
		k = fl_log_first_mark(log, nr_applied, true);
	return k < log->nr_marks ? log->marks[k].label : NULL;
}
