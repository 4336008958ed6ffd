// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading a log of the kernel's dm-log-writes target (also written by
 * QEMU's blklogwrites driver), as drivers/md/dm-log-writes.c lays it out:
 * in units of the data device's logical block size ("sectorsize"), a
 * super block in unit 0, then per entry one header unit and, for writes,
 * nr_sectors units of data.  Sectors and lengths count those units.  The
 * format has no checksums and no device size, and records only durability
 * order, so every entry is given ticks that say nothing was concurrent:
 * one an entry, in log order.
 *
 * The log is in durability order but for one kind of entry: the target
 * logs a write with PREFLUSH (and not FUA) when it completes, after the
 * writes its flush made durable, but only that flush is a guarantee
 * there; its data is durable once a later flush completes.  Such a write
 * is moved to where durability order wants it (defer_data()), unless the
 * caller asked for the order as logged (FL_OPEN_LOGGED_ORDER), which is
 * what fstests' replay-log numbers and replays.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LW_FLUSH	(1U << 0)
#define LW_FUA		(1U << 1)
#define LW_DISCARD	(1U << 2)
#define LW_MARK		(1U << 3)
#define LW_METADATA	(1U << 4)
#define LW_ALL		0x1fU

/* The layouts of dm-log-writes.c, fixed by that format. */
struct lw_super {
	__le64 magic;
	__le64 version;
	__le64 nr_entries;
	__le32 sectorsize;
} __attribute__((packed));

struct lw_entry {
	__le64 sector;
	__le64 nr_sectors;
	__le64 flags;
	__le64 data_len;
};

/* Bytes a log may describe, to keep sums of its fields from overflowing. */
#define LW_MAX_BYTES	(1ULL << 60)

static const char *
translate(const struct lw_entry *h, uint32_t ss, uint64_t max_label,
	  struct fl_entry *e, char *why, size_t len)
{
	uint64_t flags = fl_le64(h->flags), nr = fl_le64(h->nr_sectors);
	uint64_t sector = fl_le64(h->sector), data_len = fl_le64(h->data_len);
	uint64_t units = ss >> FLUSHLOG_SECTOR_SHIFT;

	if (flags & ~(uint64_t)LW_ALL)
		return snprintf(why, len, "unknown flags 0x%" PRIx64,
				flags & ~(uint64_t)LW_ALL), why;
	if (nr > LW_MAX_BYTES / ss || sector > LW_MAX_BYTES / ss ||
	    nr * ss > UINT32_MAX)
		return snprintf(why, len, "absurd range: sector %" PRIu64 ", %" PRIu64 " sectors of %u bytes",
				sector, nr, ss), why;
	e->sector = sector * units;
	e->nr_sectors = (uint32_t)(nr * units);
	if (flags & LW_FLUSH)
		e->flags |= FLUSHLOG_F_PREFLUSH;
	if (flags & LW_FUA)
		e->flags |= FLUSHLOG_F_FUA;
	if (flags & LW_METADATA)
		e->flags |= FLUSHLOG_F_META;
	if (flags & LW_MARK) {
		if (flags != LW_MARK || nr || !data_len || data_len > max_label)
			return snprintf(why, len, "invalid mark (flags 0x%" PRIx64 ", label of %" PRIu64 " bytes)",
					flags, data_len), why;
		e->op = FLUSHLOG_OP_MARK;
		e->sector = 0;
		e->flags |= FL_ENTRY_CRASH_POINT;
		return NULL;
	}
	if (data_len)
		return snprintf(why, len, "inline data entry (%" PRIu64 " bytes), which this reader does not support",
				data_len), why;
	if (flags & LW_DISCARD) {
		if (!nr || (flags & (LW_FLUSH | LW_FUA)))
			return snprintf(why, len, "invalid discard (flags 0x%" PRIx64 ", %" PRIu64 " sectors)",
					flags, nr), why;
		e->op = FLUSHLOG_OP_DISCARD;
		return NULL;
	}
	if (!nr) {
		if (!(flags & LW_FLUSH))
			return snprintf(why, len, "write of zero length"), why;
		e->op = FLUSHLOG_OP_FLUSH;
		e->sector = 0;
		e->flags |= FL_ENTRY_CRASH_POINT;
		return NULL;
	}
	e->op = FLUSHLOG_OP_WRITE;
	e->data_len = (uint32_t)(nr * ss);
	if (flags & (LW_FLUSH | LW_FUA))
		e->flags |= FL_ENTRY_CRASH_POINT;
	return NULL;
}

static int
scan_entries(struct fl_log *log, struct fl_log_window *w, struct fl_error *err)
{
	struct fl_log_info *info = &log->info;
	uint32_t ss = info->log_block_size;
	uint64_t off = ss, high = 0;
	char why[160];
	int ret;

	for (uint64_t seq = 0; seq < info->super_entries; seq++) {
		struct fl_entry e = { .offset = off };
		const unsigned char *unit;
		struct lw_entry h;
		const char *label;

		if (off > log->size || log->size - off < ss)
			return fl_set_error(err, FL_ERR_LOG, seq, off,
					    "entry %" PRIu64 " at offset %" PRIu64 ": header past the end of the log (%" PRIu64 " bytes; super block says %" PRIu64 " entries)",
					    seq, off, log->size,
					    info->super_entries), -EBADMSG;
		/* the header alone: the rest of its unit matters to a mark */
		ret = fl_window_header(w, off, sizeof(h), &unit, err);
		if (ret)
			return ret;
		memcpy(&h, unit, sizeof(h));
		if (translate(&h, ss, ss - sizeof(h), &e, why, sizeof(why)))
			return fl_set_error(err, FL_ERR_LOG, seq, off,
					    "entry %" PRIu64 " at offset %" PRIu64 ": %s",
					    seq, off, why), -EBADMSG;
		if (log->size - off - ss < e.data_len)
			return fl_set_error(err, FL_ERR_LOG, seq, off,
					    "entry %" PRIu64 " at offset %" PRIu64 ": %u bytes of data run past the end of the log (%" PRIu64 " bytes)",
					    seq, off, e.data_len, log->size),
			       -EBADMSG;
		e.submit_tick = e.complete_tick = seq + 1;
		/* a label lies in the header's unit, after the header */
		if (e.op == FLUSHLOG_OP_MARK) {
			ret = fl_window_read(w, off, ss, off + ss, &unit, err);
			if (ret)
				return ret;
		}
		label = (const char *)unit + sizeof(h);
		ret = fl_log_add_entry(log, &e, label,
				       e.op == FLUSHLOG_OP_MARK ?
				       strnlen(label, fl_le64(h.data_len)) : 0);
		if (ret)
			return fl_set_error(err, FL_ERR_NOMEM, seq, off,
					    "out of memory indexing entry %" PRIu64,
					    seq), ret;
		if (e.nr_sectors && e.sector + e.nr_sectors > high)
			high = e.sector + e.nr_sectors;
		off += ss + e.data_len;
	}
	info->used_bytes = off;
	info->data_sectors = high;
	return 0;
}

/* A flush the target logged: an empty one, or a write's PREFLUSH. */
static bool
is_flush(const struct fl_entry *e)
{
	return e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_PREFLUSH);
}

/*
 * Put the data of each write whose flush came first (PREFLUSH, not FUA)
 * where durability order wants it.  The log has no ticks to say whether
 * the next flush logged after it was issued after it completed, so that
 * flush is taken to cover it (the target splices the writes completed
 * when a flush is issued; this one was logged at its completion, and
 * never spliced).  Its data moves past the crash points (marks, FUA
 * writes) logged between it and that flush, which must not hold it,
 * but stays before the writes logged there, which completed after it
 * was issued.  Its flush stays a crash point where the write was logged:
 * log->early_flushes.  seq keeps each entry's place in the log; only
 * the moved writes and the crash points they pass change entry numbers.
 * O(N): the entries between a write and its flush are looked at once.
 */
static int
defer_data(struct fl_log *log)
{
	struct fl_entry *e = log->entries;
	uint64_t n = log->info.nr_entries, nr = 0, k = 0;

	for (uint64_t i = 0; i < n; i++)
		nr += fl_point_before_data(&e[i]);
	if (!nr)
		return 0;
	log->early_flushes = malloc(nr * sizeof(*log->early_flushes));
	if (!log->early_flushes)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t last = i;	/* the last crash point before the flush */
		struct fl_entry w = e[i];

		if (!fl_point_before_data(&w))
			continue;
		/* the entries before it here are those logged before it */
		log->early_flushes[log->nr_early_flushes++] = i;
		for (uint64_t j = i + 1; j < n && !is_flush(&e[j]); j++)
			if (e[j].flags & FL_ENTRY_CRASH_POINT)
				last = j;
		memmove(&e[i], &e[i + 1], (last - i) * sizeof(*e));
		e[last] = w;
		i = last;
	}
	/* the marks keep their order, and some moved one entry down */
	for (uint64_t i = 0; i < n && k < log->nr_marks; i++)
		if (e[i].op == FLUSHLOG_OP_MARK)
			log->marks[k++].entry = i;
	return 0;
}

int
fl_scan_log_writes(struct fl_log *log, unsigned int flags,
		   struct fl_error *err)
{
	struct fl_log_info *info = &log->info;
	struct fl_log_window w;
	struct lw_super sb;
	uint64_t version;
	uint32_t ss;
	int ret;

	ret = fl_log_pread(log, &sb, sizeof(sb), 0, err);
	if (ret)
		return ret;
	version = fl_le64(sb.version);
	ss = fl_le32(sb.sectorsize);
	if (version != FL_LOG_WRITES_VERSION)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
				    "super block: unsupported dm-log-writes version %" PRIu64 " (this reader knows %d)",
				    version, FL_LOG_WRITES_VERSION), -EBADMSG;
	if (!fl_is_pow2(ss) || ss < FLUSHLOG_MIN_BLOCK_SIZE ||
	    ss > FLUSHLOG_MAX_BLOCK_SIZE || ss > log->size)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
				    "super block: invalid sector size %u", ss),
		       -EBADMSG;
	info->format = FL_FORMAT_LOG_WRITES;
	info->version = FL_LOG_WRITES_VERSION;
	info->log_block_size = ss;
	info->data_block_size = ss;
	info->super_entries = fl_le64(sb.nr_entries);
	info->clean = true;
	info->data_verified = false;
	info->data_size_known = false;

	if (info->super_entries > log->size / ss)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
				    "super block: %" PRIu64 " entries cannot fit in a log of %" PRIu64 " bytes",
				    info->super_entries, log->size),
		       -EBADMSG;
	if (fl_log_reserve(log, info->super_entries) ||
	    fl_window_init(&w, log, 1U << 20))
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, 0,
				    "out of memory for an index of %" PRIu64 " entries",
				    info->super_entries), -ENOMEM;
	ret = scan_entries(log, &w, err);
	fl_window_free(&w);
	if (!ret && !(flags & FL_OPEN_LOGGED_ORDER) && defer_data(log))
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory putting %" PRIu64 " entries in durability order",
				    info->nr_entries), -ENOMEM;
	return ret;
}
