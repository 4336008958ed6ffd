// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A write issued after another write completed replaces it where the two
 * overlap, whatever order a log puts them in.  Durability order can put
 * the newer one first: a write W that completed into the disk's cache
 * waits there for a flush, and a FUA write X to the same sectors, issued
 * after W completed, is durable as soon as it completes, before the flush
 * that makes W durable.  Applied in that order, W would leave its older
 * data over X's.  So an entry that overtook an older one is marked, and
 * replay keeps, for the sectors such entries wrote, the tick they were
 * issued at: an entry applied later leaves those of them alone that were
 * issued after it completed.  Only what a state really applies counts: if
 * X is not in a state (still in flight at its crash point), W's data is
 * what the disk may hold there.
 *
 * Two writes in flight together may reach the disk in either order; the
 * log's order stands for them.  A dm-log-writes log has no ticks of its
 * own: its reader gives it one an entry, in the order it was logged, so
 * that only the writes it moved in durability order overtake.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* fewer ranges than this are not worth a look for dead ones */
#define NEWER_PRUNE_MIN	256

/*
 * An entry overtakes if a later one in the log completed before it was
 * issued.  One pass from the end, keeping the earliest completion seen,
 * and a second, if any entry overtakes, to note that earliest completion
 * every FL_LATER_STEP entries.
 */
void
fl_log_mark_overtaking(struct fl_log *log)
{
	uint64_t earliest = UINT64_MAX, n = log->info.nr_entries;

	log->first_overtaking = FL_NO_ENTRY;
	free(log->later_complete);
	log->later_complete = NULL;
	for (uint64_t i = n; i-- > 0;) {
		struct fl_entry *e = &log->entries[i];

		e->flags &= ~FL_ENTRY_OVERTAKES;
		if (!fl_changes_data(e))
			continue;
		if (e->submit_tick > earliest) {
			e->flags |= FL_ENTRY_OVERTAKES;
			log->first_overtaking = i;
		}
		if (e->complete_tick < earliest)
			earliest = e->complete_tick;
	}
	if (log->first_overtaking == FL_NO_ENTRY)
		return;
	log->later_complete = malloc((n / FL_LATER_STEP + 1) * sizeof(uint64_t));
	if (!log->later_complete)
		return;		/* the map is never pruned: slower, as right */
	earliest = UINT64_MAX;
	for (uint64_t i = n; i-- > 0;) {
		const struct fl_entry *e = &log->entries[i];

		if (fl_changes_data(e) && e->complete_tick < earliest)
			earliest = e->complete_tick;
		if (i % FL_LATER_STEP == 0)
			log->later_complete[i / FL_LATER_STEP] = earliest;
	}
}

/*
 * Entry seq is applied: ranges whose tick no entry after it completed
 * before can keep no entry out any more.  The earliest completion from
 * the last step at or before seq + 1 on is no later than theirs.  Done
 * when the map has doubled since, so each range is looked at a bounded
 * number of times on average.
 */
static void
newer_prune(struct fl_newer *m, const struct fl_log *log, uint64_t seq)
{
	uint64_t next = seq + 1, floor;
	size_t kept = 0;

	if (next >= log->info.nr_entries)
		floor = UINT64_MAX;
	else
		floor = log->later_complete[next / FL_LATER_STEP];
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].tick > floor)
			m->v[kept++] = m->v[i];
	m->n = kept;
	m->prune_at = 2 * kept > NEWER_PRUNE_MIN ? 2 * kept : NEWER_PRUNE_MIN;
}

void
fl_newer_clear(struct fl_newer *m)
{
	m->n = 0;
	m->prune_at = NEWER_PRUNE_MIN;
}

int
fl_newer_copy(struct fl_newer *to, const struct fl_newer *from)
{
	if (from->n > to->cap) {
		struct fl_newer_range *v = realloc(to->v, from->n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		to->v = v;
		to->cap = from->n;
	}
	if (from->n)
		memcpy(to->v, from->v, from->n * sizeof(*to->v));
	to->n = from->n;
	to->prune_at = from->prune_at;
	return 0;
}

void
fl_newer_free(struct fl_newer *m)
{
	free(m->v);
	*m = (struct fl_newer){ 0 };
}

/* The first range ending after sector at. */
static size_t
newer_find(const struct fl_newer *m, uint64_t at)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].end <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sectors [start, end) hold tick from now on, whatever they held. */
static int
newer_set(struct fl_newer *m, uint64_t start, uint64_t end, uint64_t tick)
{
	size_t i = newer_find(m, start), j = i, add = 1;
	struct fl_newer_range head = { 0 }, tail = { 0 };
	bool has_head = false, has_tail = false;

	if (i < m->n && m->v[i].start < start) {
		head = m->v[i];
		head.end = start;
		has_head = true;
	}
	while (j < m->n && m->v[j].start < end)
		j++;
	if (j > i && m->v[j - 1].end > end) {
		tail = m->v[j - 1];
		tail.start = end;
		has_tail = true;
	}
	add += has_head + has_tail;
	if (m->n - (j - i) + add > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct fl_newer_range *v;

		while (cap < m->n + add)
			cap *= 2;
		v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	memmove(&m->v[i + add], &m->v[j], (m->n - j) * sizeof(*m->v));
	m->n = m->n - (j - i) + add;
	if (has_head)
		m->v[i++] = head;
	m->v[i++] = (struct fl_newer_range){ start, end, tick };
	if (has_tail)
		m->v[i] = tail;
	return 0;
}

/*
 * Sectors [first, first + count) of entry seq are to be applied: call
 * fn on each run of them that no newer entry already applied holds, and
 * note what the entry now holds.  fn NULL: only note it (the entries an
 * image already has).
 *
 * The map keeps, for each sector, the latest issue tick of the marked
 * entries applied there: an entry that completed before that tick was
 * overwritten by one of them, on the disk, whatever was applied since.
 * So ticks only ever rise, and only marked entries raise them: an
 * unmarked entry was issued before every later entry completed, so its
 * tick could never keep one of them out.
 */
int
fl_newer_apply(struct fl_newer *m, const struct fl_log *log, uint64_t seq,
	       uint64_t first, uint64_t count,
	       int (*fn)(void *arg, uint64_t seq, uint64_t first, uint64_t count),
	       void *arg, struct fl_error *err)
{
	const struct fl_entry *e = &log->entries[seq];
	/* image sectors: entries of several devices never share one */
	uint64_t start = fl_entry_image_sector(log, e);
	uint64_t at = start + first, end = at + count, stop;
	bool overtakes = e->flags & FL_ENTRY_OVERTAKES;
	int ret = 0;

	if (!fl_changes_data(e) || (m->pass_discards && e->op == FLUSHLOG_OP_DISCARD) ||
	    (!m->n && !overtakes))
		goto whole;
	for (size_t i = newer_find(m, at); at < end && !ret; at = stop) {
		const struct fl_newer_range *held = NULL;
		bool raise = overtakes;

		if (i < m->n && m->v[i].start < end)
			held = &m->v[i];
		if (held && held->start <= at) {
			stop = held->end < end ? held->end : end;
			if (held->tick > e->complete_tick) {
				i++;	/* issued after e completed: it stays */
				continue;
			}
			raise = overtakes && e->submit_tick > held->tick;
		} else {
			stop = held ? held->start : end;
		}
		ret = fn ? fn(arg, seq, at - start, stop - at) : 0;
		if (!ret && raise && newer_set(m, at, stop, e->submit_tick))
			return fl_set_error(err, FL_ERR_NOMEM, seq, e->offset,
					    "out of memory noting which sectors entry %" PRIu64 " holds",
					    seq), -ENOMEM;
		i = newer_find(m, stop);
	}
	if (!ret && m->n >= NEWER_PRUNE_MIN && m->n >= m->prune_at &&
	    log->later_complete)
		newer_prune(m, log, seq);
	return ret;
whole:
	return fn ? fn(arg, seq, first, count) : 0;
}
