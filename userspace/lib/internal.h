/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libflushlog internals shared between its files; not installed. */
#ifndef FLUSHLOG_INTERNAL_H
#define FLUSHLOG_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "checksum.h"
#include "flushlog.h"

/* A write whose data was sent later than its submit_tick says. */
struct fl_data_issue {
	uint64_t entry;		/* its index in fl_log.entries */
	uint64_t tick;		/* its data could reach the media after this */
};

struct fl_mark {
	uint64_t entry;		/* its index in fl_log.entries */
	/*
	 * Entries through the last flush or FUA before it (0: none): a crash
	 * at position p's epoch ends before the mark iff durable_end > p.
	 * It grows along the marks, as entry does.
	 */
	uint64_t durable_end;
	char *label;
};

struct fl_log {
	int fd;
	uint64_t size;			/* bytes of log when it was opened */
	struct fl_log_info info;
	struct fl_counts counts;
	struct fl_device devices[FLUSHLOG_MAX_DEVICES];	/* info.nr_devices */
	struct fl_entry *entries;	/* info.nr_entries of them */
	uint64_t entries_cap;
	struct fl_mark *marks;		/* in entry order */
	uint64_t nr_marks, marks_cap;
	/*
	 * Failed entries that change data come last in durability order
	 * (fl_log_failed_last()): never guaranteed, they are after every
	 * crash point, the end's included, which lies this many before the
	 * last entry.
	 */
	uint64_t nr_failed_last;
	/* each device's size in effect while the log is read, in log order */
	uint64_t size_now[FLUSHLOG_MAX_DEVICES];
	/* the marks by label, and a label's in entry order: mark:LABEL */
	const struct fl_mark **marks_by_label;
	/*
	 * The positions of the crash points of the writes whose flush came
	 * before their data (fl_point_before_data()), ascending: where an
	 * epoch ends though no entry ends there.  dm-log-writes logs only.
	 */
	uint64_t *early_flushes;
	uint64_t nr_early_flushes;
	/*
	 * The writes whose data went out after their own flush completed
	 * (fl_data_submit()), by entry: flushlog logs only, and only those
	 * that have such writes.
	 */
	struct fl_data_issue *data_issue;
	uint64_t nr_data_issue;
	uint64_t first_overtaking;	/* FL_ENTRY_OVERTAKES, or FL_NO_ENTRY */
	/* [k]: the earliest completion of the entries from k * FL_LATER_STEP
	 * on that change data; NULL if none overtakes (or out of memory) */
	uint64_t *later_complete;
};

/* flushlog.h's opaque lists, and a state */
struct fl_points {
	struct fl_point *v;
	size_t nr;
};

struct fl_state {
	uint64_t point;		/* the latest crash point it is legal at */
	uint64_t base;		/* entries [0, base) applied */
	uint64_t extra[FL_STATE_MAX_REORDER];	/* and these, ascending */
	unsigned int nr_extra;
	uint64_t torn;		/* an entry applied in part, or FL_NO_ENTRY */
	uint32_t torn_first, torn_count;	/* its sectors, from its start */
	bool keep_discards;	/* "%": discards applied left the old data */
};

struct fl_states {
	struct fl_state *v;
	size_t nr;
};

/*
 * Copy a caller's struct of caller_size bytes into ours (of size bytes),
 * as the kernel's copy_struct_from_user() does: a shorter one leaves our
 * later fields zero, a longer one must have zeroes past our size.
 */
int fl_copy_struct_in(void *ours, size_t size, const void *caller,
		      size_t caller_size);

__attribute__((format(printf, 5, 6))) int
fl_set_error(struct fl_error *err, enum fl_error_source source,
	     uint64_t entry, uint64_t offset, const char *fmt, ...);

int fl_scan_flushlog(struct fl_log *log, unsigned int flags,
		     struct fl_error *err);
int fl_scan_log_writes(struct fl_log *log, unsigned int flags,
		       struct fl_error *err);
int fl_log_add_entry(struct fl_log *log, const struct fl_entry *e,
		     const char *label, size_t label_len);
int fl_log_check_order(const struct fl_log *log, struct fl_error *err);
int fl_log_pair_preflush(struct fl_log *log);
uint64_t fl_data_issue_lookup(const struct fl_log *log, uint64_t i);
int fl_log_to_durability_order(struct fl_log *log, struct fl_error *err);
int fl_log_failed_last(struct fl_log *log, struct fl_error *err);
int fl_log_reserve(struct fl_log *log, uint64_t nr_entries);

/*
 * The index over the marks that answers a question about a position in
 * O(log marks), however long the log (log.c): built once the log is in
 * durability order.
 */
int fl_log_index_marks(struct fl_log *log);
/*
 * The first mark (its index in log->marks; nr_marks if none) at entry at
 * or later, or with after_epoch, the first logged after the end of the
 * epoch of a crash at position at (its next flush or FUA).
 */
uint64_t fl_log_first_mark(const struct fl_log *log, uint64_t at,
			   bool after_epoch);
/* The first mark labelled label (in log->marks), or NULL. */
const struct fl_mark *fl_log_find_mark(const struct fl_log *log,
				       const char *label);

/*
 * The log is read with pread(), never mapped: a log file that shrinks or a
 * device that fails a read then gives an error naming the offset, where a
 * mapping would kill the process with SIGBUS.  A window holds the log bytes
 * [lo, hi) in buf; reading one refills it from the offset wanted onwards.
 */
struct fl_log_window {
	const struct fl_log *log;
	unsigned char *buf;
	size_t cap;
	uint64_t lo, hi;
	/* fl_window_header(): where the last header was, after how many
	 * small entries in a row */
	uint64_t last_header;
	unsigned int small_steps;
};

int fl_log_pread(const struct fl_log *log, void *buf, size_t len,
		 uint64_t off, struct fl_error *err);
int fl_log_read(const struct fl_log *log, void *buf, size_t min, size_t max,
		uint64_t off, size_t *got, struct fl_error *err);
int fl_window_init(struct fl_log_window *w, const struct fl_log *log,
		   size_t cap);
void fl_window_free(struct fl_log_window *w);
int fl_window_read(struct fl_log_window *w, uint64_t off, size_t len,
		   uint64_t limit, const unsigned char **data,
		   struct fl_error *err);
int fl_window_header(struct fl_log_window *w, uint64_t off, size_t len,
		     const unsigned char **data, struct fl_error *err);
int fl_window_checksum(struct fl_log_window *w, uint64_t off, uint64_t len,
		       uint32_t *sum, struct fl_error *err);

static inline bool
fl_window_holds(const struct fl_log_window *w, uint64_t off, uint64_t len)
{
	return off >= w->lo && off <= w->hi && w->hi - off >= len;
}

/* Where entry e's range starts in an image of every device. */
static inline uint64_t
fl_entry_image_sector(const struct fl_log *log, const struct fl_entry *e)
{
	return log->devices[e->device].image_sector + e->sector;
}

/* The logical block of entry e's device, in sectors. */
static inline uint32_t
fl_entry_block_sectors(const struct fl_log *log, const struct fl_entry *e)
{
	uint32_t b = log->devices[e->device].block_size >> FLUSHLOG_SECTOR_SHIFT;

	return b ? b : 1;
}

/* A write whose data has a checksum still to check before it is used. */
static inline bool
fl_entry_needs_crc(const struct fl_log *log, const struct fl_entry *e)
{
	return e->op == FLUSHLOG_OP_WRITE && !(e->flags & FLUSHLOG_F_NO_DATA) &&
	       !log->info.data_verified && log->info.format == FL_FORMAT_FLUSHLOG;
}

/* Reading ahead of a long replay in a second thread (prefetch.c). */
struct fl_prefetch;

/* the entries [from, to) of device (FL_ALL_DEVICES: of every device) */
int fl_prefetch_start(const struct fl_log *log, uint64_t from, uint64_t to,
		      uint32_t device, uint64_t limit, size_t cap,
		      bool checked_only, struct fl_prefetch **pp);
bool fl_prefetch_has(const struct fl_prefetch *p, uint64_t seq);
bool fl_prefetch_holds(struct fl_prefetch *p, uint64_t seq);
int fl_prefetch_get(struct fl_prefetch *p, uint64_t seq,
		    const unsigned char **data, struct fl_error *err);
void fl_prefetch_stop(struct fl_prefetch *p);

/* Sorted, disjoint sector ranges [start, end) (states.c). */
struct fl_range {
	uint64_t start, end;
};

struct fl_ranges {
	struct fl_range *v;
	size_t n, cap;
};

int fl_ranges_add(struct fl_ranges *s, uint64_t start, uint64_t end);
int fl_ranges_remove(struct fl_ranges *s, uint64_t start, uint64_t end);
/*
 * Discards add their sectors, other data entries take theirs away: e's
 * nr_sectors from start on (where its range is in the image at hand).
 */
int fl_ranges_update(struct fl_ranges *s, uint64_t start,
		     const struct fl_entry *e);
void fl_ranges_free(struct fl_ranges *s);
/* The first range ending after sector at (touching: or at it). */
size_t fl_ranges_find(const struct fl_ranges *s, uint64_t at, bool touching);

/*
 * The data checksum of a log: CRC32C, or with FLUSHLOG_SF_DATA_XXH64 the
 * low 32 bits of XXH64 (xxh64.c), fed in pieces.
 */
struct fl_xxh64 {
	uint64_t v[4], total;
	unsigned char mem[32];
	size_t held;
};

struct fl_data_sum {
	bool xxh64;
	uint32_t crc;
	struct fl_xxh64 x;
};

void fl_xxh64_init(struct fl_xxh64 *s);
void fl_xxh64_update(struct fl_xxh64 *s, const void *buf, size_t len);
uint64_t fl_xxh64_final(const struct fl_xxh64 *s);
void fl_data_sum_init(struct fl_data_sum *s, const struct fl_log *log);
void fl_data_sum_update(struct fl_data_sum *s, const void *buf, size_t len);
uint32_t fl_data_sum_final(const struct fl_data_sum *s);
uint32_t fl_data_checksum(const struct fl_log *log, const void *buf,
			  size_t len);

/*
 * What the entries an image holds that overtook older ones (overtake.c)
 * hold of it: sector ranges and the tick each was issued at, sorted and
 * disjoint.  Empty in a log none overtook.
 */
struct fl_newer_range {
	uint64_t start, end, tick;
};

#define FL_LATER_STEP	1024

struct fl_newer {
	struct fl_newer_range *v;
	size_t n, cap;
	size_t prune_at;		/* look for ranges no entry can need */
	/* discards are not applied: they neither hold nor raise sectors */
	bool pass_discards;
};

void fl_log_mark_overtaking(struct fl_log *log);
int fl_newer_apply(struct fl_newer *m, const struct fl_log *log, uint64_t seq,
		   uint64_t first, uint64_t count,
		   int (*fn)(void *arg, uint64_t seq, uint64_t first,
			     uint64_t count),
		   void *arg, struct fl_error *err);
void fl_newer_clear(struct fl_newer *m);
int fl_newer_copy(struct fl_newer *to, const struct fl_newer *from);
int fl_replay_apply_state(struct fl_log *log, const struct fl_replay *at_base,
			  int image_fd, int base_fd, const struct fl_state *s,
			  struct fl_error *err);
void fl_newer_free(struct fl_newer *m);

/*
 * A crash-point write whose crash point comes before its data: a
 * dm-log-writes write with PREFLUSH and not FUA, whose flush is the
 * guarantee and whose data waits for the next flush.  Its crash point
 * lies at its position in log->early_flushes, not after it.  (A flushlog
 * log has such a bio's flush as an entry of its own.)
 */
static inline bool
fl_point_before_data(const struct fl_entry *e)
{
	return (e->flags & FL_ENTRY_CRASH_POINT) && e->op == FLUSHLOG_OP_WRITE &&
	       (e->flags & FLUSHLOG_F_PREFLUSH) && !(e->flags & FLUSHLOG_F_FUA);
}

/*
 * A flush or FUA write: it ends an epoch, making the writes before it
 * durable.  Not a write whose flush came before its data: that flush
 * ends an epoch elsewhere (log->early_flushes).
 */
static inline bool
fl_makes_durable(const struct fl_entry *e)
{
	return (e->flags & FL_ENTRY_CRASH_POINT) && e->op != FLUSHLOG_OP_MARK &&
	       !fl_point_before_data(e);
}

/*
 * A flushlog WRITE with F_PREFLUSH and not F_FUA: the data of a bio whose
 * flush the log holds as a FLUSH entry of its own, with the same
 * submit_tick.
 */
static inline bool
fl_data_after_flush(const struct fl_entry *e)
{
	return e->op == FLUSHLOG_OP_WRITE && (e->flags & FLUSHLOG_F_PREFLUSH) &&
	       !(e->flags & FLUSHLOG_F_FUA) && !(e->flags & FL_ENTRY_CRASH_POINT);
}

/*
 * The tick after which entry i's data could reach the media, what "in
 * flight" and "issued after" mean for it: its submit_tick, but for a
 * PREFLUSH write, whose data the block layer sends only once its flush
 * completed (fl_log_pair_preflush()).
 */
static inline uint64_t
fl_data_submit(const struct fl_log *log, uint64_t i)
{
	const struct fl_entry *e = &log->entries[i];

	if (!log->nr_data_issue || !fl_data_after_flush(e))
		return e->submit_tick;
	return fl_data_issue_lookup(log, i);
}

/* A write, discard, write-zeroes or secure erase: an entry with a range. */
static inline bool
fl_changes_data(const struct fl_entry *e)
{
	return e->op != FLUSHLOG_OP_FLUSH && e->op != FLUSHLOG_OP_MARK &&
	       e->op != FLUSHLOG_OP_RESIZE;
}

/*
 * A bio that failed (FLUSHLOG_F_FAILED): what it left is unknown, so it
 * is never guaranteed durable, and a failed flush makes nothing durable.
 */
static inline bool
fl_entry_failed(const struct fl_entry *e)
{
	return e->flags & FLUSHLOG_F_FAILED;
}

/*
 * The position of the end crash point: every entry but the failed ones
 * that change data, which come last and which no crash point guarantees.
 */
static inline uint64_t
fl_log_end(const struct fl_log *log)
{
	return log->info.nr_entries - log->nr_failed_last;
}

static inline uint64_t
fl_round_up(uint64_t x, uint64_t align)
{
	return (x + align - 1) & ~(align - 1);
}

static inline bool
fl_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

#endif /* FLUSHLOG_INTERNAL_H */
