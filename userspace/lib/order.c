// SPDX-License-Identifier: GPL-2.0
/*
 * Checking that a log is in durability order, from its ticks alone: the
 * writer's promise that the entries before each crash point are exactly
 * the writes guaranteed durable there.  A log that breaks it was written
 * by a broken target, and every state replayed from it would be wrong.
 */
#include <errno.h>
#include <inttypes.h>

#include "internal.h"

static bool
changes_data(const struct fl_entry *e)
{
	return e->op != FLUSHLOG_OP_FLUSH && e->op != FLUSHLOG_OP_MARK;
}

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
		if (!changes_data(e) || (e->flags & FLUSHLOG_F_FUA))
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
