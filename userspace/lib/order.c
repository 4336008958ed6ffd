// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Durability order, from the ticks alone: the entries before each crash
 * point are exactly the writes guaranteed durable there.  A version 2 log
 * is in completion order and is put in durability order once read; any
 * log can then be checked to be in it.  A log that fails either was
 * written by a broken target, and every state replayed from it would be
 * wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"

/* A completed cache flush: a FLUSH entry, or a PREFLUSH|FUA write. */
static bool
is_flush(const struct fl_entry *e)
{
	return e->op == FLUSHLOG_OP_FLUSH ||
	       ((e->flags & FLUSHLOG_F_PREFLUSH) && (e->flags & FLUSHLOG_F_FUA));
}

int
fl_log_check_order(const struct fl_log *log, struct fl_error *err)
{
	const struct fl_entry *ent = log->entries;
	uint64_t n = log->info.nr_entries, prev_flush = FL_NO_ENTRY;
	uint64_t next_flush = FL_NO_ENTRY, last_point = FL_NO_ENTRY;
	uint64_t waiting_write = FL_NO_ENTRY;	/* logged, awaiting its flush */

#define ORDER_ERROR(i, ...) \
	(fl_set_error(err, FL_ERR_LOG, (i), ent[i].offset, __VA_ARGS__), \
	 -EBADMSG)

	if (!log->info.has_ticks)
		return 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct fl_entry *e = &ent[i];

		if (e->flags & FL_ENTRY_CRASH_POINT) {
			if (last_point != FL_NO_ENTRY &&
			    e->complete_tick <= ent[last_point].complete_tick)
				return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": crash point completed at tick %" PRIu64 ", not after entry %" PRIu64 "'s (tick %" PRIu64 ")",
						   i, e->offset, e->complete_tick,
						   last_point,
						   ent[last_point].complete_tick);
			last_point = i;
		}
		if (is_flush(e)) {
			prev_flush = i;
			waiting_write = FL_NO_ENTRY;
			continue;
		}
		/* the writes before a point are durable there: a flush must come first */
		if ((e->flags & FL_ENTRY_CRASH_POINT) && waiting_write != FL_NO_ENTRY)
			return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": crash point logged after entry %" PRIu64 ", a write no flush had made durable yet",
					   i, e->offset, waiting_write);
		if (!fl_changes_data(e) || (e->flags & FLUSHLOG_F_FUA))
			continue;
		/* a write that waited for a flush: the right one? */
		if (prev_flush != FL_NO_ENTRY &&
		    e->complete_tick < ent[prev_flush].submit_tick)
			return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": write completed at tick %" PRIu64 " is logged after flush entry %" PRIu64 ", issued at tick %" PRIu64 ", which made it durable",
					   i, e->offset, e->complete_tick,
					   prev_flush, ent[prev_flush].submit_tick);
		if (next_flush == FL_NO_ENTRY || next_flush < i)
			for (next_flush = i + 1; next_flush < n &&
			     !is_flush(&ent[next_flush]); next_flush++)
				;
		if (next_flush < n &&
		    e->complete_tick >= ent[next_flush].submit_tick)
			return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": write completed at tick %" PRIu64 " is logged before flush entry %" PRIu64 ", issued earlier at tick %" PRIu64 ", which does not cover it",
					   i, e->offset, e->complete_tick,
					   next_flush, ent[next_flush].submit_tick);
		waiting_write = i;
	}
	return 0;
#undef ORDER_ERROR
}

/* A writer in completion order logs each entry when its bio completed. */
static int
check_completion_order(const struct fl_log *log, struct fl_error *err)
{
	const struct fl_entry *ent = log->entries;

	for (uint64_t i = 1; i < log->info.nr_entries; i++)
		if (ent[i].complete_tick < ent[i - 1].complete_tick)
			return fl_set_error(err, FL_ERR_LOG, ent[i].seq,
					    ent[i].offset,
					    "entry %" PRIu64 " at offset %" PRIu64 ": completed at tick %" PRIu64 ", before entry %" PRIu64 " (tick %" PRIu64 "), yet logged after it: a version %u log is in completion order",
					    ent[i].seq, ent[i].offset,
					    ent[i].complete_tick, ent[i - 1].seq,
					    ent[i - 1].complete_tick,
					    log->info.version), -EBADMSG;
	return 0;
}

struct reorder {
	const struct fl_entry *in;	/* completion order */
	struct fl_entry *out;		/* durability order */
	uint64_t nr_out;
	struct fl_mark *next_mark;	/* marks keep their order: renumber */
};

static void
emit(struct reorder *r, uint64_t i)
{
	if (r->in[i].op == FLUSHLOG_OP_MARK)
		(r->next_mark++)->entry = r->nr_out;
	r->out[r->nr_out++] = r->in[i];
}

/*
 * What a version 1 writer did in memory: a write that changes data
 * without FUA waits, in completion order, until a flush submitted after it
 * completed, and goes just before that flush; the flush takes a prefix of
 * the waiting writes, since they are in completion order.  FUA writes,
 * marks and flushes stay where they are, and writes no flush covered go
 * last.  Stable, and each entry is moved once.
 */
int
fl_log_to_durability_order(struct fl_log *log, struct fl_error *err)
{
	uint64_t n = log->info.nr_entries, head = 0, tail = 0;
	struct reorder r = { .in = log->entries, .next_mark = log->marks };
	uint64_t *waiting;
	int ret;

	ret = check_completion_order(log, err);
	if (ret || !n)
		return ret;
	r.out = malloc(n * sizeof(*r.out));
	waiting = malloc(n * sizeof(*waiting));
	if (!r.out || !waiting) {
		free(r.out);
		free(waiting);
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory putting %" PRIu64 " entries in durability order",
				    n), -ENOMEM;
	}
	for (uint64_t i = 0; i < n; i++) {
		const struct fl_entry *e = &r.in[i];

		if (is_flush(e)) {
			while (head < tail &&
			       r.in[waiting[head]].complete_tick < e->submit_tick)
				emit(&r, waiting[head++]);
		} else if (fl_changes_data(e) && !(e->flags & FLUSHLOG_F_FUA)) {
			waiting[tail++] = i;
			continue;
		}
		emit(&r, i);
	}
	while (head < tail)
		emit(&r, waiting[head++]);
	free(waiting);
	free(log->entries);
	log->entries = r.out;
	log->entries_cap = n;
	return 0;
}
