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

/*
 * A completed cache flush: a FLUSH entry, or a PREFLUSH|FUA write.  Not
 * one that failed: it made nothing durable.
 */
static bool
is_flush(const struct fl_entry *e)
{
	if (fl_entry_failed(e))
		return false;
	return e->op == FLUSHLOG_OP_FLUSH ||
	       ((e->flags & FLUSHLOG_F_PREFLUSH) && (e->flags & FLUSHLOG_F_FUA));
}

/* A failed entry that changes data: no flush covers it, none is its crash point. */
static bool
failed_data(const struct fl_entry *e)
{
	return fl_entry_failed(e) && fl_changes_data(e);
}

/*
 * Each device's state, for fl_log_check_order(): its last flush before
 * the entry being checked and its next after it, and a write of it logged
 * since its last flush, which no flush has made durable yet (FL_NO_ENTRY:
 * none).
 */
struct device_flushes {
	uint64_t prev, next, waiting_write;
};

int
fl_log_check_order(const struct fl_log *log, struct fl_error *err)
{
	const struct fl_entry *ent = log->entries;
	uint64_t n = log->info.nr_entries, last_point = FL_NO_ENTRY;
	uint64_t failed = FL_NO_ENTRY;	/* the first failed write so far */
	struct device_flushes dev[FLUSHLOG_MAX_DEVICES];
	unsigned int nr_waiting = 0;	/* devices with a waiting write */

#define ORDER_ERROR(i, ...) \
	(fl_set_error(err, FL_ERR_LOG, (i), ent[i].offset, __VA_ARGS__), \
	 -EBADMSG)

	if (!log->info.has_ticks)
		return 0;
	for (unsigned int d = 0; d < FLUSHLOG_MAX_DEVICES; d++)
		dev[d] = (struct device_flushes) {
			FL_NO_ENTRY, FL_NO_ENTRY, FL_NO_ENTRY
		};
	for (uint64_t i = 0; i < n; i++) {
		const struct fl_entry *e = &ent[i];
		struct device_flushes *f = &dev[e->device];

		if (e->flags & FL_ENTRY_CRASH_POINT) {
			if (last_point != FL_NO_ENTRY &&
			    e->complete_tick <= ent[last_point].complete_tick)
				return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": crash point completed at tick %" PRIu64 ", not after entry %" PRIu64 "'s (tick %" PRIu64 ")",
						   i, e->offset, e->complete_tick,
						   last_point,
						   ent[last_point].complete_tick);
			last_point = i;
			/*
			 * fl_log_failed_last() put them after every point:
			 * the planner counts on it, so it is checked here
			 * as the ticks are
			 */
			if (failed != FL_NO_ENTRY)
				return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": crash point logged after entry %" PRIu64 ", a failed write that is never durable",
						   i, e->offset, failed);
		}
		if (failed_data(e)) {
			if (failed == FL_NO_ENTRY)
				failed = i;
			continue;
		}
		if (is_flush(e)) {
			f->prev = i;
			if (f->waiting_write != FL_NO_ENTRY) {
				f->waiting_write = FL_NO_ENTRY;
				nr_waiting--;
			}
		}
		/* the writes before a point are durable there, on every device */
		for (unsigned int d = 0; nr_waiting && (e->flags & FL_ENTRY_CRASH_POINT) &&
		     d < FLUSHLOG_MAX_DEVICES; d++)
			if (dev[d].waiting_write != FL_NO_ENTRY)
				return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": crash point logged after entry %" PRIu64 ", a write no flush had made durable yet",
						   i, e->offset, dev[d].waiting_write);
		if (is_flush(e) || !fl_changes_data(e) ||
		    (e->flags & FLUSHLOG_F_FUA))
			continue;
		/* a write that waited for a flush: the right one? */
		if (f->prev != FL_NO_ENTRY &&
		    e->complete_tick < ent[f->prev].submit_tick)
			return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": write completed at tick %" PRIu64 " is logged after flush entry %" PRIu64 ", issued at tick %" PRIu64 ", which made it durable",
					   i, e->offset, e->complete_tick,
					   f->prev, ent[f->prev].submit_tick);
		if (f->next == FL_NO_ENTRY || f->next < i)
			for (f->next = i + 1; f->next < n &&
			     (!is_flush(&ent[f->next]) ||
			      ent[f->next].device != e->device); f->next++)
				;
		if (f->next < n &&
		    e->complete_tick >= ent[f->next].submit_tick)
			return ORDER_ERROR(i, "entry %" PRIu64 " at offset %" PRIu64 ": write completed at tick %" PRIu64 " is logged before flush entry %" PRIu64 ", issued earlier at tick %" PRIu64 ", which does not cover it",
					   i, e->offset, e->complete_tick,
					   f->next, ent[f->next].submit_tick);
		if (f->waiting_write == FL_NO_ENTRY)
			nr_waiting++;
		f->waiting_write = i;
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

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
emit(struct reorder *r, uint64_t i)
{
	if (r->in[i].op == FLUSHLOG_OP_MARK)
		(r->next_mark++)->entry = r->nr_out;
	r->out[r->nr_out++] = r->in[i];
}

/*
 * What a version 1 writer did in memory (a failed write is then moved
 * past every crash point: fl_log_failed_last()): a write that changes data
 * without FUA waits, in completion order, until a flush of its device
 * submitted after it completed, and goes just before that flush; the
 * flush takes a prefix of its device's waiting writes, since they are in
 * completion order.  FUA writes, marks and flushes stay where they are,
 * and writes no flush covered go last, in completion order.  Stable, and
 * each entry is moved once.
 */
int
fl_log_to_durability_order(struct fl_log *log, struct fl_error *err)
{
	uint64_t n = log->info.nr_entries, nr_left = 0;
	struct reorder r = { .in = log->entries, .next_mark = log->marks };
	/* each device's waiting writes, oldest first, linked by next[] */
	uint64_t head[FLUSHLOG_MAX_DEVICES], tail[FLUSHLOG_MAX_DEVICES];
	uint64_t *waiting, *next;
	int ret;

	ret = check_completion_order(log, err);
	if (ret || !n)
		return ret;
	r.out = malloc(n * sizeof(*r.out));
	waiting = malloc(n * sizeof(*waiting));
	next = malloc(n * sizeof(*next));
	if (!r.out || !waiting || !next) {
		free(r.out);
		free(waiting);
		free(next);
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory putting %" PRIu64 " entries in durability order",
				    n), -ENOMEM;
	}
	/* next[] links each device's queue of waiting entries */
	for (unsigned int d = 0; d < FLUSHLOG_MAX_DEVICES; d++)
		head[d] = tail[d] = FL_NO_ENTRY;
	for (uint64_t i = 0; i < n; i++) {
		const struct fl_entry *e = &r.in[i];
		unsigned int d = e->device;

		if (is_flush(e)) {
			while (head[d] != FL_NO_ENTRY &&
			       r.in[head[d]].complete_tick < e->submit_tick) {
				emit(&r, head[d]);
				head[d] = next[head[d]];
			}
			if (head[d] == FL_NO_ENTRY)
				tail[d] = FL_NO_ENTRY;
		} else if (fl_changes_data(e) && !(e->flags & FLUSHLOG_F_FUA)) {
			next[i] = FL_NO_ENTRY;
			if (tail[d] == FL_NO_ENTRY)
				head[d] = i;
			else
				next[tail[d]] = i;
			tail[d] = i;
			continue;
		}
		emit(&r, i);
	}
	/* what no flush covered, every device's, in completion order */
	for (unsigned int d = 0; d < FLUSHLOG_MAX_DEVICES; d++)
		for (uint64_t j = head[d]; j != FL_NO_ENTRY; j = next[j])
			waiting[nr_left++] = j;
	qsort(waiting, nr_left, sizeof(*waiting), cmp_u64);
	for (uint64_t j = 0; j < nr_left; j++)
		emit(&r, waiting[j]);
	free(waiting);
	free(next);
	free(log->entries);
	log->entries = r.out;
	log->entries_cap = n;
	return 0;
}

/*
 * A failed write, discard, write-zeroes or secure erase is never
 * guaranteed durable: in durability order it comes after every crash
 * point, the end's included, so that no prefix state holds it.  The
 * failed entries go last, in the order the log had them, in a log of
 * any version; the rest keep theirs.  The possibly durable writes of
 * every crash point from its submission on then include it, as they do a
 * write that no flush covered (states.c), and the newer-write rule keeps
 * it off the sectors a write submitted after it completed holds.
 */
int
fl_log_failed_last(struct fl_log *log, struct fl_error *err)
{
	uint64_t n = log->info.nr_entries, nr_failed = 0;
	struct reorder r = { .in = log->entries, .next_mark = log->marks };
	uint64_t *at_seq;	/* [seq]: where durability order put it */

	for (uint64_t i = 0; i < n; i++)
		nr_failed += failed_data(&log->entries[i]);
	log->nr_failed_last = nr_failed;
	if (!nr_failed)
		return 0;
	r.out = malloc(n * sizeof(*r.out));
	at_seq = malloc(n * sizeof(*at_seq));
	if (!r.out || !at_seq) {
		free(r.out);
		free(at_seq);
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory putting %" PRIu64 " entries in durability order",
				    n), -ENOMEM;
	}
	for (uint64_t i = 0; i < n; i++) {
		at_seq[r.in[i].seq] = i;
		if (!failed_data(&r.in[i]))
			emit(&r, i);
	}
	/* a flush may have taken one out of its queue: log order, by seq */
	for (uint64_t seq = 0; seq < n; seq++)
		if (failed_data(&r.in[at_seq[seq]]))
			emit(&r, at_seq[seq]);
	free(at_seq);
	free(log->entries);
	log->entries = r.out;
	log->entries_cap = n;
	return 0;
}

/* A FLUSH entry, by device and submit_tick, for the pairing below. */
struct flush_key {
	uint32_t device;
	uint64_t submit, complete;
};

static int
cmp_flush_key(const void *a, const void *b)
{
	const struct flush_key *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->submit < y->submit ? -1 : x->submit > y->submit;
}

/*
 * A bio with REQ_PREFLUSH and data, without REQ_FUA, is logged as a FLUSH
 * entry and a WRITE entry with F_PREFLUSH sharing its submit_tick.  The
 * block layer sends the data only once that flush completed, so the
 * data cannot be on the media before the writes the flush made durable:
 * taken as in flight from the shared tick, it would be offered without
 * them at a crash point completing while the flush ran (a FUA write or a
 * mark of another thread, another device's flush), an illegal state.
 * Each such write is given the completion of its FLUSH entry (same device,
 * same submit_tick) as the tick its data was sent at.  The ticks of one
 * target are all distinct, so there is one such entry; should a writer
 * give several, the latest is taken.  A flush that completed after the
 * write cannot be the one its data waited for.  A write with no FLUSH
 * entry (the format has one; the reading rules do not insist) keeps its
 * own submit_tick, as any write: the log does not say when its flush
 * completed, and a state missed is a bug missed, so every state it could
 * be in is offered, and perhaps some it could not (its data before its
 * flush).  The target never writes such a log: dm core hands it a flush
 * with data as an empty flush, then the data alone.
 */
int
fl_log_pair_preflush(struct fl_log *log)
{
	const struct fl_entry *ent = log->entries;
	uint64_t n = log->info.nr_entries, nr_writes = 0, nr_flushes = 0;
	struct flush_key *flushes;

	free(log->data_issue);
	log->data_issue = NULL;
	log->nr_data_issue = 0;
	if (log->info.format != FL_FORMAT_FLUSHLOG || !log->info.has_ticks)
		return 0;
	for (uint64_t i = 0; i < n; i++) {
		nr_writes += fl_data_after_flush(&ent[i]);
		nr_flushes += ent[i].op == FLUSHLOG_OP_FLUSH;
	}
	if (!nr_writes)
		return 0;
	log->data_issue = malloc(nr_writes * sizeof(*log->data_issue));
	flushes = malloc((nr_flushes ? nr_flushes : 1) * sizeof(*flushes));
	if (!log->data_issue || !flushes) {
		free(flushes);
		free(log->data_issue);
		log->data_issue = NULL;
		return -ENOMEM;
	}
	nr_flushes = 0;
	for (uint64_t i = 0; i < n; i++)
		if (ent[i].op == FLUSHLOG_OP_FLUSH)
			flushes[nr_flushes++] = (struct flush_key) {
				ent[i].device, ent[i].submit_tick,
				ent[i].complete_tick,
			};
	qsort(flushes, nr_flushes, sizeof(*flushes), cmp_flush_key);
	for (uint64_t i = 0; i < n; i++) {
		const struct fl_entry *e = &ent[i];
		struct flush_key key = { e->device, e->submit_tick, 0 };
		uint64_t tick = e->submit_tick, paired = 0;
		bool found = false;
		size_t lo = 0, hi = nr_flushes;

		if (!fl_data_after_flush(e))
			continue;
		while (lo < hi) {	/* the first flush not below the key */
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_flush_key(&flushes[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nr_flushes && !cmp_flush_key(&flushes[lo], &key); lo++)
			if (flushes[lo].complete <= e->complete_tick &&
			    (!found || flushes[lo].complete > paired)) {
				paired = flushes[lo].complete;
				found = true;
			}
		if (found)
			tick = paired;
		log->data_issue[log->nr_data_issue++] = (struct fl_data_issue) {
			i, tick,
		};
	}
	free(flushes);
	return 0;
}

/* fl_data_submit()'s slow path: entry i is a PREFLUSH write, listed. */
uint64_t
fl_data_issue_lookup(const struct fl_log *log, uint64_t i)
{
	size_t lo = 0, hi = log->nr_data_issue;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (log->data_issue[mid].entry < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < log->nr_data_issue && log->data_issue[lo].entry == i)
		return log->data_issue[lo].tick;
	return log->entries[i].submit_tick;
}
