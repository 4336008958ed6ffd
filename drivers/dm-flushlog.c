// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flushlog: pass every bio through to a data device and record every
 * write, with its data and its REQ_PREFLUSH / REQ_FUA / discard /
 * write-zeroes flags, to a log device, so that the state of the disk at
 * every crash point can be rebuilt.
 *
 * This file is part of flushlog.
 */

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/crc32c.h>
#include <linux/device-mapper.h>
#include <linux/dm-flushlog.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/mempool.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uuid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#ifdef FLUSHLOG_OUT_OF_TREE
#include "dm-flushlog-compat.h"
#endif

#define DM_MSG_PREFIX "flushlog"

/*
 * Log order.  Every logged bio gets a tick (one counter for the whole
 * log) when it is mapped and another when it completes; a mark gets one
 * tick for both.  An entry is queued for the log when its bio completes
 * (with on_full=fail, when the clone that wrote the data device did: the
 * bio completes once its entry is logged), under the lock that hands out
 * the completion tick, so the log is in
 * completion order and a single ordered work item writes it out.  Nothing
 * waits in memory for the flush that makes it durable: a reader derives
 * durability order from the ticks (a write is durable once it completed
 * with REQ_FUA, or once a flush submitted after its completion completed),
 * as include/uapi/linux/dm-flushlog.h describes.  Device-mapper core splits
 * a flush with data into an empty flush and the write, so REQ_PREFLUSH
 * arrives on empty bios only.
 *
 * W means submitted, C completed, F a flush, FUA a FUA write:
 *
 *   Wa Wb Wc Cc Ca F FUAd Cb CFUAd CF
 *
 * is logged as c a b d F, which a reader puts in durability order as
 * d c a F (and b after the next flush).
 *
 * Data.  A logged write's data is copied into pages of the target's own
 * when the bio is mapped, and the data device is written from that copy,
 * so the log holds exactly the bytes the data device got even when the
 * submitter changes its pages under writeback.  The copy is the only pass
 * over the data before the log's checksum.
 *
 * Several devices.  Targets of different mapped devices may share one log
 * device, each with a device number of its own (the device=N feature):
 * they then share one log object, with its tick, its order, its worker and
 * its memory budget, and each entry names its device.  A flush of one
 * device makes only that device's writes durable; the reader sorts that
 * out from the ticks, as for one device.  Options that shape the log
 * (on_full, no_data, max_pending) must be the same for all
 * of them.
 *
 * Lifetime.  A log lives as long as some table holds its log device.  It
 * starts at the first resume of the first of them, lists each device in
 * its super block before that device's first entry, and is closed (a
 * clean super block) whenever no table of it is resumed.  A reload goes
 * on with the log, as lvm2's refresh and resize expect, unless its table
 * asks for a new one (new_log); a reload that changes a device's size
 * logs a RESIZE entry before the device's next bio.
 *
 * Durability.  With on_full=fail a bio completes once its entry is on
 * the log device, and a flush or a FUA write once the log device has
 * been flushed past its entry too, so that what the submitter was told
 * is durable is durable in the log as well.
 *
 * Memory.  The copies, headers and entries of writes not yet on the log
 * device are charged against max_pending; map waits while the budget is
 * spent, so no workload can make the target hold more.  Pages and entries
 * come from mempools, so that the writeback that frees memory can always
 * log.  Bios are split at FLUSHLOG_MAX_IO_SECTORS so that no entry needs
 * more than one reserve's worth of pages.
 */

#define FLUSHLOG_MAX_IO_SECTORS	2048	/* 1 MiB: the largest entry */
#define FLUSHLOG_MAX_IO_PAGES	(FLUSHLOG_MAX_IO_SECTORS >> (PAGE_SHIFT - SECTOR_SHIFT))
#define FLUSHLOG_MIN_ENTRIES	16	/* entries in reserve */
#define FLUSHLOG_DEFAULT_MAX_PENDING_MIB 64
#define FLUSHLOG_MIN_MAX_PENDING_MIB 2	/* the largest entry and then some */
#define FLUSHLOG_MAX_MAX_PENDING_MIB 65536
#define FLUSHLOG_BATCH_BYTES	SZ_1M	/* a log bio's worth */
#define FLUSHLOG_BATCH_DELAY	(HZ / 10)

/* What the target does with the log; status shows it. */
enum logging_state {
	LOGGING_IDLE,		/* not resumed yet: nothing written */
	LOGGING_ON,
	LOGGING_FULL,		/* on_full=stop and the log filled up: stopped */
	LOGGING_ERROR,		/* a log write failed */
};

static const char *const logging_state_names[] = {
	[LOGGING_IDLE] = "idle",
	[LOGGING_ON] = "logging",
	[LOGGING_FULL] = "stopped",
	[LOGGING_ERROR] = "error",
};

/* One entry, from its bio's map until it is in a log bio. */
struct pending_entry {
	struct list_head list;
	u64 seq;		/* its number in the log, once queued */
	u64 submit_tick;
	u64 complete_tick;
	u64 time_ns;
	sector_t sector;
	sector_t log_sectors;	/* log space reserved for it */
	u32 nr_sectors;
	u32 data_len;		/* bytes of data in pages[] */
	u16 op;
	u16 flags;
	u32 device;		/* the target's number in the log */
	u32 label_len;
	u8 label[FLUSHLOG_LABEL_MAX];
	unsigned int nr_pages;	/* of data */
	struct bio *held;	/* on_full=fail: completes once logged */
	/* the header block's page, then the data's copy: one allocation */
	struct page *pages[1 + FLUSHLOG_MAX_IO_PAGES];
};

static inline struct page **entry_header(struct pending_entry *e)
{
	return &e->pages[0];
}

static inline struct page **entry_data(struct pending_entry *e)
{
	return &e->pages[1];
}

/*
 * A data device of the log, as its super block lists it, and whose it is:
 * a number stays its device's until a new log starts.
 */
struct log_device {
	sector_t first_sectors;	/* when listed, as the super block says */
	sector_t sectors;	/* now; 0: no target has used this number yet */
	u32 block_size;
	struct mapped_device *owner;	/* NULL once retired */
	bool retired;		/* its device left: the number is spent */
};

/*
 * The log: one log device, and everything its targets share.  Created by
 * the first target of the log device, freed with the last (refs, under
 * flushlog_logs_lock like the list of members).
 */
struct flushlog_log {
	struct block_device *bdev;	/* each member holds it open */
	char name[16];			/* the log device, for messages */
	unsigned int refs;
	struct list_head members;	/* struct flushlog_c.members */
	struct list_head logs;		/* on flushlog_logs */
	bool on_full_fail;	/* fail writes when the log cannot take them */
	bool no_data;		/* log headers only */
	u64 max_pending;	/* bytes of logging memory allowed */
	u32 log_block_size;	/* bytes; one entry header each */
	sector_t log_capacity;	/* sectors of the log device */
	uuid_t uuid;
	u64 create_time_ns;

	/* lifecycle serializes resumes, suspends and the super block */
	struct mutex lifecycle;
	unsigned int nr_active;		/* members resumed */
	u32 nr_devices;			/* 1 + the highest listed */
	struct log_device devices[FLUSHLOG_MAX_DEVICES];

	atomic64_t tick;

	/* lock protects the fields up to the next blank line */
	spinlock_t lock;
	enum logging_state state;	/* WRITE_ONCE: map reads it unlocked */
	bool filled;			/* an entry did not fit */
	struct list_head ready;		/* completed, in log order */
	u64 ready_bytes;		/* their size in the log */
	sector_t reserved;		/* log sectors promised, super included */
	u64 pending;			/* bytes charged to max_pending */
	u64 peak_pending;
	u64 charge_ticket;		/* the next charger's place in line */
	u64 charge_turn;		/* the place whose turn it is */
	bool charger_waiting;		/* for memory: log what is ready now */
	u64 queued_seq;			/* the next entry's number */
	unsigned int nr_log_bios;	/* in flight, the log's flush too */
	struct list_head log_bios;	/* struct log_bio, in log order */
	sector_t logged_sector;		/* the log below it is written */
	sector_t durable_sector;	/* and below it flushed */
	sector_t flush_target;		/* logged_sector when the flush went */
	bool log_flush_running;		/* one at a time, queued or in flight */
	struct bio_list held;		/* struct pending_entry.held, in log order */
	wait_queue_head_t pending_wait;	/* woken under lock: see uncharge */
	wait_queue_head_t log_bios_wait;

	/* written by log_work only, with WRITE_ONCE: status reads them */
	u64 next_seq;
	sector_t next_sector;
	u64 nr_flush_points;
	u64 nr_marks;

	struct workqueue_struct *wq;
	struct delayed_work log_work;
	struct work_struct log_flush_work;	/* on_full=fail: flush the log */
	struct bio_set bs;		/* log bios and clones */
	mempool_t *page_pool;
	mempool_t *entry_pool;
	struct mutex page_pool_lock;	/* one waiter on the reserve at a time */
	atomic_t pool_waiters;		/* for the reserve: the others queue */
};

/* What a target's table says of its log: devices sharing it agree. */
struct log_options {
	bool on_full_fail, no_data;
	bool new_log;		/* the first resume starts a new log */
	unsigned int max_pending_mib;	/* 0: the default, not in the table */
};

/* A target: one data device, logging to a log it may share. */
struct flushlog_c {
	struct dm_dev *data_dev;
	struct dm_dev *log_dev;		/* this table's hold on log->bdev */
	struct flushlog_log *log;
	struct mapped_device *md;	/* tells a reload from another device */
	struct dm_table *table;		/* and from another target of its table */
	sector_t data_sectors;		/* sectors this target maps */
	u32 device;			/* its number in the log */
	bool device_given;		/* device=N was in the table */
	struct log_options opt;
	bool resumed;			/* counted in log->nr_active */
	bool ever_resumed;		/* new_log applies to the first resume */
	bool suspended;			/* under log->lock: marks refused */
	struct list_head members;	/* on log->members */
};

struct per_bio_data {
	struct pending_entry *entry;	/* NULL: the bio is not logged */
	struct flushlog_c *fc;
	sector_t log_end;		/* held: the log sector after its entry */
	bool durable;			/* held until the log is flushed to log_end */
};

/*
 * A log bio, from its allocation until it and every log bio before it
 * completed: the bio set's front pad.
 */
struct log_bio {
	struct list_head list;		/* on log->log_bios */
	sector_t end;			/* the log sector after it */
	bool done;
	struct bio bio;
};

/* Live logs, one per log device. */
static LIST_HEAD(flushlog_logs);
static DEFINE_MUTEX(flushlog_logs_lock);

static inline sector_t log_block_sectors(struct flushlog_log *log)
{
	return log->log_block_size >> SECTOR_SHIFT;
}

/* Log sectors an entry takes: a header block and the padded data. */
static sector_t entry_log_sectors(struct flushlog_log *log, u32 data_len)
{
	return log_block_sectors(log) +
	       (round_up(data_len, log->log_block_size) >> SECTOR_SHIFT);
}

/* The slab object an entry takes, from the kmalloc pool. */
static size_t entry_size(void)
{
	return kmalloc_size_roundup(sizeof(struct pending_entry));
}

/* Bytes an entry holds until its log write completes. */
static u64 entry_charge(unsigned int nr_pages)
{
	return (u64)(nr_pages + 1) * PAGE_SIZE + entry_size();
}

static u32 flushlog_crc(const void *buf, size_t len)
{
	return ~crc32c(~0U, buf, len);
}

/*
 * Memory budget.  Chargers take turns in arrival order, so that small
 * writes that fit cannot keep a large one waiting for ever.  Waking up
 * under log->lock keeps the waker from touching log after a waiter saw the
 * condition and went on to free it.
 */
static void charge_pending(struct flushlog_log *log, u64 bytes)
{
	u64 ticket;

	spin_lock_irq(&log->lock);
	ticket = log->charge_ticket++;
	wait_event_lock_irq(log->pending_wait, ticket == log->charge_turn,
			    log->lock);
	if (log->pending + bytes > log->max_pending) {
		/*
		 * What is ready gives its memory back once written: now, and
		 * so is what becomes ready while this charger waits, rather
		 * than a batch delay later.
		 */
		log->charger_waiting = true;
		mod_delayed_work(log->wq, &log->log_work, 0);
		wait_event_lock_irq(log->pending_wait,
				    log->pending + bytes <= log->max_pending,
				    log->lock);
		log->charger_waiting = false;
	}
	log->charge_turn++;
	log->pending += bytes;
	log->peak_pending = max(log->peak_pending, log->pending);
	/* the next in line may fit too */
	if (waitqueue_active(&log->pending_wait))
		wake_up_all(&log->pending_wait);
	spin_unlock_irq(&log->lock);
}

static void uncharge_pending(struct flushlog_log *log, u64 bytes)
{
	unsigned long flags;

	spin_lock_irqsave(&log->lock, flags);
	log->pending -= bytes;
	/* waiters queue up under log->lock, so this test cannot miss one */
	if (waitqueue_active(&log->pending_wait))
		wake_up_all(&log->pending_wait);
	spin_unlock_irqrestore(&log->lock, flags);
}

/*
 * Take nr pages from the pool.  Several submitters each holding part of
 * the reserve and waiting for the rest would deadlock, so as dm-crypt
 * does, only one at a time may wait, and it holds no pool page while it
 * waits for its turn.  Once one waits, the others queue behind it rather
 * than take what is free: under memory pressure a stream of small
 * writes would otherwise keep a large one waiting for as long as the
 * pressure lasts.
 */
static bool try_pool_pages(struct flushlog_log *log, struct page **pages,
			   unsigned int nr)
{
	unsigned int i;

	if (atomic_read(&log->pool_waiters))
		return false;
	for (i = 0; i < nr; i++) {
		pages[i] = mempool_alloc(log->page_pool,
					 GFP_NOWAIT | __GFP_NOWARN);
		if (!pages[i])
			break;
	}
	if (i == nr)
		return true;
	while (i--)
		mempool_free(pages[i], log->page_pool);
	return false;
}

static void alloc_pool_pages(struct flushlog_log *log, struct page **pages,
			     unsigned int nr)
{
	unsigned int i;

	if (try_pool_pages(log, pages, nr))
		return;
	atomic_inc(&log->pool_waiters);
	mutex_lock(&log->page_pool_lock);
	for (i = 0; i < nr; i++)
		pages[i] = mempool_alloc(log->page_pool, GFP_NOIO);
	mutex_unlock(&log->page_pool_lock);
	atomic_dec(&log->pool_waiters);
}

static struct pending_entry *alloc_pending_entry(struct flushlog_log *log,
						 unsigned int nr_pages)
{
	struct pending_entry *e;

	charge_pending(log, entry_charge(nr_pages));
	e = mempool_alloc(log->entry_pool, GFP_NOIO);
	memset(e, 0, offsetof(struct pending_entry, pages));
	INIT_LIST_HEAD(&e->list);
	e->nr_pages = nr_pages;
	alloc_pool_pages(log, e->pages, 1 + nr_pages);
	return e;
}

/* Give back an entry's memory, but for pages a log bio took over. */
static void free_pending_entry(struct flushlog_log *log, struct pending_entry *e)
{
	u64 bytes = entry_size();
	unsigned int i;

	for (i = 0; i < 1 + e->nr_pages; i++) {
		if (e->pages[i]) {
			mempool_free(e->pages[i], log->page_pool);
			bytes += PAGE_SIZE;
		}
	}
	mempool_free(e, log->entry_pool);
	uncharge_pending(log, bytes);
}

/*
 * Whole pages go through copy_page(), which moves eight bytes a step
 * where memcpy() may move one (rep movsb): the same on real hardware,
 * much cheaper where instructions are emulated.
 */
static void copy_to_page(struct page *dst, unsigned int off, struct page *src,
			 unsigned int src_off, unsigned int len)
{
	void *d, *s;

	if (off || src_off || len != PAGE_SIZE) {
		memcpy_page(dst, off, src, src_off, len);
		return;
	}
	d = kmap_local_page(dst);
	s = kmap_local_page(src);
	copy_page(d, s);
	kunmap_local(s);
	kunmap_local(d);
}

/*
 * Copy the bio's data into the entry's pages, and zero the rest of the
 * last log block: the log bio writes it as the entry's padding.
 */
static void copy_bio_data(struct flushlog_log *log, struct pending_entry *e,
			  struct bio *bio)
{
	unsigned int pos = 0, pad;
	struct bvec_iter iter;
	struct bio_vec bv;

	bio_for_each_segment(bv, bio, iter) {
		unsigned int done = 0;

		while (done < bv.bv_len) {
			struct page *dst = entry_data(e)[pos >> PAGE_SHIFT];
			unsigned int off = offset_in_page(pos);
			unsigned int len = min(bv.bv_len - done,
					       (unsigned int)PAGE_SIZE - off);

			copy_to_page(dst, off, bv.bv_page, bv.bv_offset + done,
				     len);
			done += len;
			pos += len;
		}
	}
	pad = round_up(pos, log->log_block_size) - pos;
	if (pad)
		memzero_page(entry_data(e)[pos >> PAGE_SHIFT], offset_in_page(pos),
			     pad);
}

static u16 bio_entry_op(struct bio *bio)
{
	switch (bio_op(bio)) {
	case REQ_OP_DISCARD:
		return FLUSHLOG_OP_DISCARD;
	case REQ_OP_WRITE_ZEROES:
		return FLUSHLOG_OP_WRITE_ZEROES;
	case REQ_OP_SECURE_ERASE:
		return FLUSHLOG_OP_SECURE_ERASE;
	default:
		return bio_sectors(bio) ? FLUSHLOG_OP_WRITE : FLUSHLOG_OP_FLUSH;
	}
}

static u16 bio_entry_flags(struct bio *bio)
{
	u16 flags = 0;

	if (bio->bi_opf & REQ_PREFLUSH)
		flags |= FLUSHLOG_F_PREFLUSH;
	if (bio->bi_opf & REQ_FUA)
		flags |= FLUSHLOG_F_FUA;
	if (bio->bi_opf & REQ_META)
		flags |= FLUSHLOG_F_META;
	if (bio->bi_opf & REQ_SYNC)
		flags |= FLUSHLOG_F_SYNC;
	if (bio->bi_opf & REQ_NOUNMAP)
		flags |= FLUSHLOG_F_NOUNMAP;
	return flags;
}

/* Entries are written: a full log still takes those it has room for. */
static bool logging(enum logging_state state)
{
	return state == LOGGING_ON || state == LOGGING_FULL;
}

/* Stop logging; true if this call did (the caller reports why, once). */
static bool stop_logging(struct flushlog_log *log, enum logging_state state)
{
	unsigned long flags;
	bool stopped = false;

	spin_lock_irqsave(&log->lock, flags);
	if (logging(log->state)) {
		WRITE_ONCE(log->state, state);
		stopped = true;
	}
	spin_unlock_irqrestore(&log->lock, flags);
	return stopped;
}

/*
 * Promise log space to an entry.  Returns 0, or the error the bio must
 * fail with (on_full=fail), or 1 when the bio goes on unlogged.
 */
static int reserve_log_space(struct flushlog_log *log, sector_t sectors)
{
	unsigned long flags;
	int r = 0;

	spin_lock_irqsave(&log->lock, flags);
	if (log->state != LOGGING_ON) {
		if (log->on_full_fail)
			r = log->state == LOGGING_FULL ? -ENOSPC : -EIO;
		else
			r = 1;
	} else if (log->reserved + sectors > log->log_capacity) {
		if (!log->filled)
			DMWARN("%s: log device full, %s", log->name,
			       log->on_full_fail ? "failing writes that do not fit" :
						  "logging stopped");
		WRITE_ONCE(log->filled, true);
		r = log->on_full_fail ? -ENOSPC : 1;
		if (!log->on_full_fail)
			WRITE_ONCE(log->state, LOGGING_FULL);
	} else {
		log->reserved += sectors;
	}
	spin_unlock_irqrestore(&log->lock, flags);
	return r;
}

/* An entry that will not be logged gives its log space back. */
static void release_log_space(struct flushlog_log *log, sector_t sectors)
{
	unsigned long flags;

	spin_lock_irqsave(&log->lock, flags);
	log->reserved -= sectors;
	spin_unlock_irqrestore(&log->lock, flags);
}

/* The entry of a write-type bio, whose sector is already remapped. */
static int prepare_entry(struct flushlog_c *fc, struct bio *bio,
			 struct pending_entry **entry)
{
	struct flushlog_log *log = fc->log;
	u16 op = bio_entry_op(bio);
	bool keep_data = op == FLUSHLOG_OP_WRITE && !log->no_data;
	u32 data_len = keep_data ? bio->bi_iter.bi_size : 0;
	sector_t log_sectors = entry_log_sectors(log, data_len);
	struct pending_entry *e;
	int r;

	*entry = NULL;
	r = reserve_log_space(log, log_sectors);
	if (r)
		return r < 0 ? r : 0;
	/* max_io_len keeps every entry within pages[] */
	if (WARN_ON_ONCE(data_len > FLUSHLOG_MAX_IO_SECTORS << SECTOR_SHIFT)) {
		release_log_space(log, log_sectors);
		return -EIO;
	}
	e = alloc_pending_entry(log, DIV_ROUND_UP(data_len, PAGE_SIZE));
	if (keep_data)
		copy_bio_data(log, e, bio);
	e->op = op;
	e->flags = bio_entry_flags(bio);
	e->device = fc->device;
	if (op != FLUSHLOG_OP_FLUSH) {
		e->sector = bio->bi_iter.bi_sector;
		e->nr_sectors = bio_sectors(bio);
	}
	if (op == FLUSHLOG_OP_WRITE && log->no_data)
		e->flags |= FLUSHLOG_F_NO_DATA;
	e->data_len = data_len;
	e->log_sectors = log_sectors;
	e->submit_tick = atomic64_inc_return(&log->tick);
	*entry = e;
	return 0;
}

static void __queue_ready(struct flushlog_log *log, struct pending_entry *e);

/* Under log->lock: the bio completed, its entry joins the log's order. */
static void __entry_completed(struct flushlog_log *log, struct pending_entry *e)
{
	e->complete_tick = atomic64_inc_return(&log->tick);
	e->time_ns = ktime_get_ns();
	__queue_ready(log, e);
}

/*
 * A bio refused with BLK_STS_AGAIN (REQ_NOWAIT) changed nothing, and dm
 * may map it again.  Any other error may have come after a part of a
 * split bio was written, NOTSUPP too.
 */
static bool changed_nothing(blk_status_t status)
{
	return status == BLK_STS_AGAIN;
}

/*
 * The data device has what the clone wrote.  on_full=fail promises a
 * log entry for every write that succeeds, so there the bio is held
 * until its entry is on the log device, and a flush or FUA write until
 * the log device was flushed too (release_held); so is a failed bio,
 * which may have changed some of its blocks, until its entry (flagged
 * failed) is.  Elsewhere the bio completes now, and flushlog_end_io
 * queues its entry.
 */
static void logged_clone_end_io(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct flushlog_log *log = pb->fc->log;
	struct pending_entry *e = pb->entry;
	unsigned long flags;

	bio->bi_status = clone->bi_status;
	bio_put(clone);
	if (!log->on_full_fail || changed_nothing(bio->bi_status)) {
		bio_endio(bio);
		return;
	}
	spin_lock_irqsave(&log->lock, flags);
	if (!logging(log->state)) {
		/* flushlog_end_io fails it: it cannot be logged */
		spin_unlock_irqrestore(&log->lock, flags);
		bio_endio(bio);
		return;
	}
	if (bio->bi_status)
		e->flags |= FLUSHLOG_F_FAILED;
	pb->entry = NULL;
	e->held = bio;
	__entry_completed(log, e);
	spin_unlock_irqrestore(&log->lock, flags);
}

/*
 * Write the data device from the entry's copy: the log and the data
 * device then hold the same bytes whatever happens to the bio's pages.
 * Entries without data go through a clone too with on_full=fail, which
 * holds every logged bio until it is logged.  The bio completes, through
 * flushlog_end_io, when the clone has (and with on_full=fail, once
 * release_held lets it).
 */
static int submit_logged_clone(struct flushlog_c *fc, struct bio *bio,
			       struct pending_entry *e)
{
	struct flushlog_log *log = fc->log;
	struct bio *clone;
	u32 left = e->data_len;
	unsigned int i;

	if (!e->data_len) {
		/* fails only to clone an integrity payload */
		clone = bio_alloc_clone(fc->data_dev->bdev, bio, GFP_NOIO,
					&log->bs);
		if (!clone)
			return -ENOMEM;
		/* dm polls the bio it mapped, never this one */
		clone->bi_opf &= ~REQ_POLLED;
		goto submit;
	}
	clone = bio_alloc_bioset(fc->data_dev->bdev, e->nr_pages,
				 bio->bi_opf & ~REQ_POLLED, GFP_NOIO, &log->bs);
	clone->bi_iter.bi_sector = bio->bi_iter.bi_sector;
	clone->bi_ioprio = bio->bi_ioprio;
	/* charged to the writer's cgroup, not to whoever maps the bio */
	bio_clone_blkg_association(clone, bio);
#ifdef FLUSHLOG_HAVE_BIO_WRITE_HINT
	clone->bi_write_hint = bio->bi_write_hint;
#endif
	for (i = 0; left; i++) {
		u32 len = min_t(u32, left, PAGE_SIZE);

		__bio_add_page(clone, entry_data(e)[i], len, 0);
		left -= len;
	}
submit:
	clone->bi_private = bio;
	clone->bi_end_io = logged_clone_end_io;
	dm_submit_bio_remap(bio, clone);
	return 0;
}

static int flushlog_map(struct dm_target *ti, struct bio *bio)
{
	struct flushlog_c *fc = ti->private;
	struct flushlog_log *log = fc->log;
	struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));
	int r;

	pb->entry = NULL;
	pb->fc = fc;
	bio_set_dev(bio, fc->data_dev->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	if (bio_data_dir(bio) != WRITE ||
	    (!bio_sectors(bio) && !(bio->bi_opf & REQ_PREFLUSH)))
		return DM_MAPIO_REMAPPED;
	if (READ_ONCE(log->state) != LOGGING_ON && !log->on_full_fail)
		return DM_MAPIO_REMAPPED;

	r = prepare_entry(fc, bio, &pb->entry);
	if (!r && pb->entry && (pb->entry->data_len || log->on_full_fail)) {
		r = submit_logged_clone(fc, bio, pb->entry);
		if (!r)
			return DM_MAPIO_SUBMITTED;
		release_log_space(log, pb->entry->log_sectors);
		free_pending_entry(log, pb->entry);
		pb->entry = NULL;
	}
	if (r) {
		bio->bi_status = errno_to_blk_status(r);
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	return DM_MAPIO_REMAPPED;
}

/*
 * Under log->lock: an entry joined the ready list.  Entries go out in
 * batches, so that each log bio is large and a workload of small FUA
 * writes or frequent flushes does not cost a log bio each: at once after
 * a mark (a user marks a point to look at), when a log bio's worth is
 * ready, or when a charger waits for the memory ready entries hold;
 * otherwise FLUSHLOG_BATCH_DELAY later.  With on_full=fail every entry
 * goes at once: its bio is held until it is logged.
 */
static void __queue_ready(struct flushlog_log *log, struct pending_entry *e)
{
	e->seq = log->queued_seq++;
	list_add_tail(&e->list, &log->ready);
	log->ready_bytes += (u64)e->log_sectors << SECTOR_SHIFT;
	if (e->op == FLUSHLOG_OP_MARK || log->on_full_fail ||
	    log->ready_bytes >= FLUSHLOG_BATCH_BYTES || log->charger_waiting)
		mod_delayed_work(log->wq, &log->log_work, 0);
	else
		queue_delayed_work(log->wq, &log->log_work, FLUSHLOG_BATCH_DELAY);
}

static int flushlog_end_io(struct dm_target *ti, struct bio *bio,
			   blk_status_t *error)
{
	struct flushlog_c *fc = ti->private;
	struct flushlog_log *log = fc->log;
	struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct pending_entry *e = pb->entry;
	unsigned long flags;

	if (!e)
		return DM_ENDIO_DONE;
	pb->entry = NULL;
	/*
	 * on_full=fail promises a log entry for every write that succeeds:
	 * once logging has stopped, this one cannot have it.
	 */
	if (!*error && log->on_full_fail && !logging(READ_ONCE(log->state)))
		*error = BLK_STS_IOERR;
	else if (*error && !changed_nothing(*error))
		e->flags |= FLUSHLOG_F_FAILED;
	if (*error && !(e->flags & FLUSHLOG_F_FAILED)) {
		release_log_space(log, e->log_sectors);
		free_pending_entry(log, e);
		return DM_ENDIO_DONE;
	}

	/*
	 * A failed bio may have changed any of its blocks: its entry says
	 * so.  The tick and the queue under one lock: the log is in tick
	 * order.
	 */
	spin_lock_irqsave(&log->lock, flags);
	__entry_completed(log, e);
	spin_unlock_irqrestore(&log->lock, flags);
	return DM_ENDIO_DONE;
}

/* The data's CRC32C, as the header's: one checksum for the whole log. */
static u32 data_checksum(struct pending_entry *e)
{
	u32 crc = ~0U, left = e->data_len;
	unsigned int i;

	for (i = 0; left; i++) {
		u32 len = min_t(u32, left, PAGE_SIZE);
		void *p = kmap_local_page(entry_data(e)[i]);

		crc = crc32c(crc, p, len);
		kunmap_local(p);
		left -= len;
	}
	return ~crc;
}

static void fill_header(struct flushlog_log *log, struct pending_entry *e)
{
	struct flushlog_entry *h = page_address(*entry_header(e));

	memset(h, 0, log->log_block_size);
	h->magic = cpu_to_le32(FLUSHLOG_ENTRY_MAGIC);
	memcpy(&h->log_id, log->uuid.b, sizeof(h->log_id));
	h->seq = cpu_to_le64(e->seq);
	h->sector = cpu_to_le64(e->sector);
	h->nr_sectors = cpu_to_le32(e->nr_sectors);
	h->data_len = cpu_to_le32(e->data_len);
	h->op = cpu_to_le16(e->op);
	h->flags = cpu_to_le16(e->flags);
	h->data_crc = cpu_to_le32(e->data_len ? data_checksum(e) : 0);
	h->submit_tick = cpu_to_le64(e->submit_tick);
	h->complete_tick = cpu_to_le64(e->complete_tick);
	h->time_ns = cpu_to_le64(e->time_ns);
	h->label_len = cpu_to_le32(e->label_len);
	h->device = cpu_to_le32(e->device);
	memcpy(h->label, e->label, e->label_len);
	h->crc = cpu_to_le32(flushlog_crc(h, FLUSHLOG_HEADER_SIZE));
}

/*
 * Under log->lock: whether a held bio may complete.  A flush or a FUA
 * write promises durability, so it waits until the log is flushed past
 * its entry, which comes after the entries of every write it makes
 * durable (they completed before it was submitted); once it is written
 * otherwise.  *flush: the log must be flushed for it.
 */
static bool __may_release(struct flushlog_log *log, struct per_bio_data *pb,
			  bool *flush)
{
	if (pb->log_end > log->logged_sector)
		return false;
	/* a log device without a volatile cache is durable once written */
	if (!pb->durable || pb->log_end <= log->durable_sector ||
	    !bdev_write_cache(log->bdev) || log->state == LOGGING_ERROR)
		return true;
	*flush = true;
	return false;
}

/*
 * on_full=fail: complete the held bios whose entries are on the log
 * device, in log order; failed, once a log write failed (one of theirs
 * may have).  A flush of the log device goes out when one of them needs
 * it and none is running: its completion calls here again.
 */
static void release_held(struct flushlog_log *log)
{
	struct bio_list done = BIO_EMPTY_LIST;
	bool flush = false;
	blk_status_t status;
	unsigned long flags;
	struct bio *bio;

	spin_lock_irqsave(&log->lock, flags);
	status = log->state == LOGGING_ERROR ? BLK_STS_IOERR : BLK_STS_OK;
	while ((bio = bio_list_peek(&log->held))) {
		struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));

		if (!__may_release(log, pb, &flush))
			break;
		bio_list_add(&done, bio_list_pop(&log->held));
	}
	if (flush && !log->log_flush_running) {
		log->log_flush_running = true;
		/* counted from now: drain_log waits for it */
		log->nr_log_bios++;
		queue_work(log->wq, &log->log_flush_work);
	}
	spin_unlock_irqrestore(&log->lock, flags);
	while ((bio = bio_list_pop(&done))) {
		if (status)
			bio->bi_status = status;
		bio_endio(bio);
	}
}

/* The end of a log bio or of the log's flush: drain_log may go on. */
static void log_io_done(struct flushlog_log *log, u64 bytes)
{
	unsigned long flags;

	/* wake under the lock: drain_log's caller may free log next */
	spin_lock_irqsave(&log->lock, flags);
	log->pending -= bytes;
	/* as in uncharge_pending(): waiters queue up under log->lock */
	if (bytes && waitqueue_active(&log->pending_wait))
		wake_up_all(&log->pending_wait);
	if (!--log->nr_log_bios)
		wake_up(&log->log_bios_wait);
	spin_unlock_irqrestore(&log->lock, flags);
}

/*
 * The log device flushed its cache: every log bio that had completed
 * when the flush was submitted is durable.
 */
static void log_flush_end_io(struct bio *bio)
{
	struct flushlog_log *log = bio->bi_private;
	unsigned long flags;

	if (bio->bi_status && stop_logging(log, LOGGING_ERROR))
		DMERR("%s: log flush failed (%d), logging stopped",
		      log->name, blk_status_to_errno(bio->bi_status));
	spin_lock_irqsave(&log->lock, flags);
	if (!bio->bi_status)
		log->durable_sector = log->flush_target;
	log->log_flush_running = false;
	spin_unlock_irqrestore(&log->lock, flags);
	bio_put(bio);
	release_held(log);
	log_io_done(log, 0);
}

static void flushlog_flush_work(struct work_struct *work)
{
	struct flushlog_log *log = container_of(work, struct flushlog_log,
					     log_flush_work);
	struct bio *bio;

	bio = bio_alloc_bioset(log->bdev, 0,
			       REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC,
			       GFP_NOIO, &log->bs);
	bio->bi_end_io = log_flush_end_io;
	bio->bi_private = log;
	spin_lock_irq(&log->lock);
	log->flush_target = log->logged_sector;
	spin_unlock_irq(&log->lock);
	submit_bio(bio);
}

/*
 * Every page of a log bio is a pool page it owns, each in it once.  With
 * on_full=fail, log bios may complete out of order: logged_sector moves
 * up only over a run of completed ones, which are put only then, and the
 * bios held for their entries are released.
 */
static void log_end_io(struct bio *bio)
{
	struct log_bio *lb = container_of(bio, struct log_bio, bio);
	struct flushlog_log *log = bio->bi_private;
	struct bvec_iter_all iter;
	LIST_HEAD(finished);
	struct log_bio *tmp;
	struct bio_vec *bv;
	unsigned long flags;
	u64 bytes = 0;

	if (bio->bi_status && stop_logging(log, LOGGING_ERROR))
		DMERR("%s: log write failed (%d), logging stopped",
		      log->name, blk_status_to_errno(bio->bi_status));
	bio_for_each_segment_all(bv, bio, iter) {
		mempool_free(bv->bv_page, log->page_pool);
		bytes += PAGE_SIZE;
	}
	if (!log->on_full_fail) {
		bio_put(bio);
		goto account;
	}

	spin_lock_irqsave(&log->lock, flags);
	lb->done = true;
	list_for_each_entry_safe(lb, tmp, &log->log_bios, list) {
		if (!lb->done)
			break;
		log->logged_sector = lb->end;
		list_move_tail(&lb->list, &finished);
	}
	spin_unlock_irqrestore(&log->lock, flags);
	list_for_each_entry_safe(lb, tmp, &finished, list)
		bio_put(&lb->bio);
	release_held(log);

account:
	log_io_done(log, bytes);
}

static struct bio *new_log_bio(struct flushlog_log *log)
{
	struct log_bio *lb;
	struct bio *bio;

	/* with on_full=fail a writer waits for it: not a background write */
	bio = bio_alloc_bioset(log->bdev, BIO_MAX_VECS,
			       REQ_OP_WRITE | (log->on_full_fail ? REQ_SYNC : 0),
			       GFP_NOIO, &log->bs);
	bio->bi_iter.bi_sector = log->next_sector;
	bio->bi_end_io = log_end_io;
	bio->bi_private = log;
	lb = container_of(bio, struct log_bio, bio);
	lb->done = false;
	spin_lock_irq(&log->lock);
	if (log->on_full_fail)
		list_add_tail(&lb->list, &log->log_bios);
	log->nr_log_bios++;
	spin_unlock_irq(&log->lock);
	return bio;
}

static void submit_log_bio(struct bio *bio)
{
	container_of(bio, struct log_bio, bio)->end = bio_end_sector(bio);
	submit_bio(bio);
}

/* Add a page to the log bio, which is submitted and replaced when full. */
static void add_log_page(struct flushlog_log *log, struct bio **bio,
			 struct page *page, unsigned int len)
{
	if (!*bio)
		*bio = new_log_bio(log);
	if (bio_add_page(*bio, page, len, 0) != len) {
		submit_log_bio(*bio);
		*bio = new_log_bio(log);
		__bio_add_page(*bio, page, len, 0);
	}
	WRITE_ONCE(log->next_sector, log->next_sector + (len >> SECTOR_SHIFT));
}

/*
 * Write one entry: its header block, then its data, whose last page
 * carries the zero padding to a log block.  The log bio takes the pages.
 */
static void write_entry(struct flushlog_log *log, struct bio **bio,
			struct pending_entry *e)
{
	u32 left = round_up(e->data_len, log->log_block_size);
	unsigned int i;

	fill_header(log, e);
	add_log_page(log, bio, *entry_header(e), log->log_block_size);
	*entry_header(e) = NULL;
	for (i = 0; left; i++) {
		u32 len = min_t(u32, left, PAGE_SIZE);

		add_log_page(log, bio, entry_data(e)[i], len);
		entry_data(e)[i] = NULL;
		left -= len;
	}
	/* entries are written in the order they were numbered, or not at all */
	WARN_ON_ONCE(e->seq != log->next_seq);
	WRITE_ONCE(log->next_seq, e->seq + 1);
	if (e->flags & FLUSHLOG_F_FAILED)
		return;
	if (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_FUA))
		WRITE_ONCE(log->nr_flush_points, log->nr_flush_points + 1);
	else if (e->op == FLUSHLOG_OP_MARK)
		WRITE_ONCE(log->nr_marks, log->nr_marks + 1);
}

/*
 * A held bio waits for its entry to be written: after the log up to
 * log_end is (release_held), or at once, failed, if it is not written.
 */
static void hold_until_logged(struct flushlog_log *log, struct bio_list *held,
			      struct pending_entry *e, bool logged)
{
	struct per_bio_data *pb = dm_per_bio_data(e->held, sizeof(*pb));

	pb->log_end = log->next_sector;
	/* a failed flush or FUA write promised nothing */
	pb->durable = !(e->flags & FLUSHLOG_F_FAILED) &&
		      (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_FUA));
	if (!logged)
		e->held->bi_status = BLK_STS_IOERR;
	bio_list_add(held, e->held);
}

static void flushlog_log_work(struct work_struct *work)
{
	struct flushlog_log *log = container_of(to_delayed_work(work),
					     struct flushlog_log, log_work);
	struct bio_list held = BIO_EMPTY_LIST, failed = BIO_EMPTY_LIST;
	struct pending_entry *e, *tmp;
	struct bio *bio = NULL;
	LIST_HEAD(batch);
	bool logged;

	spin_lock_irq(&log->lock);
	list_splice_init(&log->ready, &batch);
	log->ready_bytes = 0;
	logged = logging(log->state);
	spin_unlock_irq(&log->lock);

	list_for_each_entry_safe(e, tmp, &batch, list) {
		list_del(&e->list);
		if (logged)
			write_entry(log, &bio, e);
		else
			release_log_space(log, e->log_sectors);
		if (e->held)
			hold_until_logged(log, logged ? &held : &failed, e,
					  logged);
		free_pending_entry(log, e);
	}
	if (bio)
		submit_log_bio(bio);
	if (!bio_list_empty(&held)) {
		/* some of their log bios may have completed already */
		spin_lock_irq(&log->lock);
		bio_list_merge(&log->held, &held);
		spin_unlock_irq(&log->lock);
		release_held(log);
	}
	while ((bio = bio_list_pop(&failed)))
		bio_endio(bio);
}

/* Wait until every queued entry is on the log device. */
static void drain_log(struct flushlog_log *log)
{
	flush_delayed_work(&log->log_work);
	spin_lock_irq(&log->lock);
	wait_event_lock_irq(log->log_bios_wait, !log->nr_log_bios, log->lock);
	spin_unlock_irq(&log->lock);
}

static int write_super(struct flushlog_log *log, enum flushlog_state state)
{
	struct flushlog_super *sb;
	struct page *page;
	struct bio *bio;
	u32 flags = 0, d;
	int r;

	page = mempool_alloc(log->page_pool, GFP_NOIO);
	if (log->no_data)
		flags |= FLUSHLOG_SF_NO_DATA;
	if (READ_ONCE(log->filled))
		flags |= FLUSHLOG_SF_FULL;
	if (READ_ONCE(log->state) == LOGGING_ERROR)
		flags |= FLUSHLOG_SF_ERROR;
	sb = page_address(page);
	memset(sb, 0, log->log_block_size);
	sb->magic = cpu_to_le64(FLUSHLOG_SUPER_MAGIC);
	sb->log_block_size = cpu_to_le32(log->log_block_size);
	sb->data_block_size = cpu_to_le32(log->devices[0].block_size);
	sb->data_sectors = cpu_to_le64(log->devices[0].first_sectors);
	sb->log_sectors = cpu_to_le64(log->log_capacity);
	sb->nr_entries = cpu_to_le64(state == FLUSHLOG_STATE_CLEAN ?
				     log->next_seq : 0);
	sb->used_sectors = cpu_to_le64(state == FLUSHLOG_STATE_CLEAN ?
				       log->next_sector : 0);
	sb->state = cpu_to_le32(state);
	sb->flags = cpu_to_le32(flags);
	memcpy(sb->uuid, log->uuid.b, sizeof(sb->uuid));
	memcpy(&sb->log_id, log->uuid.b, sizeof(sb->log_id));
	sb->create_time_ns = cpu_to_le64(log->create_time_ns);
	/* one device 0 alone: version 2, which every reader takes */
	if (log->nr_devices == 1 && log->devices[0].sectors) {
		sb->version = cpu_to_le32(FLUSHLOG_VERSION_COMPLETION_ORDER);
	} else {
		sb->version = cpu_to_le32(FLUSHLOG_VERSION);
		sb->nr_devices = cpu_to_le32(log->nr_devices);
		for (d = 0; d < log->nr_devices; d++) {
			sb->devices[d].sectors =
				cpu_to_le64(log->devices[d].first_sectors);
			sb->devices[d].block_size =
				cpu_to_le32(log->devices[d].block_size);
		}
	}
	sb->crc = cpu_to_le32(flushlog_crc(sb, FLUSHLOG_HEADER_SIZE));

	/* PREFLUSH: the entries a clean super block counts are on the media */
	bio = bio_alloc_bioset(log->bdev, 1,
			       REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA | REQ_SYNC,
			       GFP_NOIO, &log->bs);
	bio->bi_iter.bi_sector = 0;
	__bio_add_page(bio, page, log->log_block_size, 0);
	r = submit_bio_wait(bio);
	bio_put(bio);
	mempool_free(page, log->page_pool);
	return r;
}

/*
 * Under log->lifecycle: whether another mapped device has entries in the
 * log, which new_log would throw away.
 */
static bool log_shared(struct flushlog_c *fc)
{
	struct flushlog_c *m;
	bool shared = false;

	mutex_lock(&flushlog_logs_lock);
	list_for_each_entry(m, &fc->log->members, members)
		shared |= m->md != fc->md && m->ever_resumed;
	mutex_unlock(&flushlog_logs_lock);
	return shared;
}

static unsigned long max_pending_ceiling_mib(void)
{
	return totalram_pages() >> (20 - PAGE_SHIFT) >> 1;
}

/* The default, on a machine too small for it, is what the ceiling allows. */
static u64 max_pending_bytes(const struct log_options *opt)
{
	unsigned long mib = opt->max_pending_mib;

	if (!mib)
		mib = clamp(max_pending_ceiling_mib(),
			    (unsigned long)FLUSHLOG_MIN_MAX_PENDING_MIB,
			    (unsigned long)FLUSHLOG_DEFAULT_MAX_PENDING_MIB);
	return (u64)mib << 20;
}

/* max_pending=64 and no max_pending are one budget */
static bool options_equal(const struct log_options *a,
			  const struct log_options *b)
{
	return a->on_full_fail == b->on_full_fail &&
	       a->no_data == b->no_data &&
	       max_pending_bytes(a) == max_pending_bytes(b);
}

static bool same_options(const struct flushlog_log *log,
			 const struct log_options *opt)
{
	return log->on_full_fail == opt->on_full_fail &&
	       log->no_data == opt->no_data &&
	       log->max_pending == max_pending_bytes(opt);
}

static void set_options(struct flushlog_log *log,
			const struct log_options *opt)
{
	log->on_full_fail = opt->on_full_fail;
	log->no_data = opt->no_data;
	log->max_pending = max_pending_bytes(opt);
}

static int check_log_device(struct flushlog_log *log, char **error)
{
	unsigned int block = bdev_logical_block_size(log->bdev);

	if (block > PAGE_SIZE) {
		*error = "Log device block size larger than a page";
		return -EINVAL;
	}
	/* the super block is rewritten in place */
	if (bdev_is_zoned(log->bdev)) {
		*error = "Log device is zoned";
		return -EINVAL;
	}
	log->log_block_size = max_t(unsigned int, block, FLUSHLOG_HEADER_SIZE);
	log->log_capacity = bdev_nr_sectors(log->bdev);
	/* the super block and one header at the least */
	if (log->log_capacity < 2 * log_block_sectors(log)) {
		*error = "Log device too small";
		return -EINVAL;
	}
	return 0;
}

/*
 * Under log->lifecycle, no member resumed and nothing in flight: a new,
 * empty log, with fc's options, on the log device as it is now.
 */
static int start_log(struct flushlog_log *log, struct flushlog_c *fc)
{
	char *error;
	int r;

	r = check_log_device(log, &error);
	if (r) {
		DMERR("%s: cannot start the log: %s", log->name, error);
		return r;
	}
	set_options(log, &fc->opt);
	uuid_gen(&log->uuid);
	log->create_time_ns = ktime_get_real_ns();
	log->nr_devices = 0;
	memset(log->devices, 0, sizeof(log->devices));
	WRITE_ONCE(log->next_seq, 0);
	WRITE_ONCE(log->nr_flush_points, 0);
	WRITE_ONCE(log->nr_marks, 0);
	WRITE_ONCE(log->next_sector, log_block_sectors(log));
	spin_lock_irq(&log->lock);
	WRITE_ONCE(log->state, LOGGING_IDLE);
	WRITE_ONCE(log->filled, false);
	log->reserved = log->next_sector;
	log->queued_seq = 0;
	log->logged_sector = log->next_sector;
	log->durable_sector = log->next_sector;
	log->peak_pending = log->pending;
	spin_unlock_irq(&log->lock);
	return 0;
}

/*
 * Under log->lifecycle: whether fc may start a new log in place of the
 * live one.  At a resume, a table of the log still resumed (one whose
 * device's resume failed after its preresume) may have entries on the
 * way; when a table is loaded, the old one is resumed as a matter of
 * course.
 */
static char *new_log_error(struct flushlog_c *fc, bool resuming)
{
	if (log_shared(fc))
		return "A new log (new_log) would drop another device's entries";
	if (resuming && fc->log->nr_active)
		return "A new log (new_log) while a table of the log is resumed";
	return NULL;
}

/*
 * Under log->lifecycle: whether fc may go on with the live log.  A
 * reader checks each entry against its device as the log describes it,
 * so a number keeps its device, and a device its number and block size,
 * until a new log starts; a size may change, as a RESIZE entry says.
 */
static char *continue_log_error(struct flushlog_c *fc)
{
	struct flushlog_log *log = fc->log;
	struct log_device *dev = &log->devices[fc->device];
	u32 d;

	if (!same_options(log, &fc->opt))
		return "Log options differ from the live log's (new_log starts a new log)";
	if (dev->retired)
		return "Device number spent: its device left the log";
	if (dev->sectors && dev->owner != fc->md)
		return "Device number is another device's in the log";
	if (dev->sectors &&
	    dev->block_size != bdev_logical_block_size(fc->data_dev->bdev))
		return "Logical block size changed (new_log starts a new log)";
	for (d = 0; d < log->nr_devices; d++)
		if (d != fc->device && log->devices[d].sectors &&
		    log->devices[d].owner == fc->md)
			return "Device number changed (new_log starts a new log)";
	return NULL;
}

/*
 * An entry of the log's own (a mark, a resize) with log space and
 * memory for it, or NULL when the log cannot take it.
 */
static struct pending_entry *alloc_event_entry(struct flushlog_c *fc, u16 op)
{
	struct flushlog_log *log = fc->log;
	sector_t sectors = entry_log_sectors(log, 0);
	struct pending_entry *e;

	if (reserve_log_space(log, sectors))
		return NULL;
	e = alloc_pending_entry(log, 0);
	e->op = op;
	e->device = fc->device;
	e->log_sectors = sectors;
	return e;
}

/* Under log->lock: an event happens at one tick, when it is queued. */
static void __queue_event(struct flushlog_log *log, struct pending_entry *e)
{
	e->submit_tick = atomic64_inc_return(&log->tick);
	e->complete_tick = e->submit_tick;
	e->time_ns = ktime_get_ns();
	__queue_ready(log, e);
}

/*
 * Under log->lifecycle, fc about to resume with a size its device did
 * not have in the log: the log says so before the device's next bio.
 * Without that entry no later one could be read, so a log that cannot
 * take it stops.
 */
static void log_resize(struct flushlog_c *fc)
{
	struct flushlog_log *log = fc->log;
	struct pending_entry *e;

	e = alloc_event_entry(fc, FLUSHLOG_OP_RESIZE);
	if (!e) {
		WRITE_ONCE(log->filled, true);
		if (stop_logging(log, LOGGING_FULL))
			DMERR("%s: no room in the log for %s's resize, logging stopped",
			      log->name, dm_device_name(fc->md));
		return;
	}
	e->sector = fc->data_sectors;
	spin_lock_irq(&log->lock);
	__queue_event(log, e);
	spin_unlock_irq(&log->lock);
}

/*
 * Under log->lifecycle: whether fc's resume starts a new log.  The first
 * resume of the log device's first table does; so does a table's first
 * with new_log, unless another device has entries in the log.  Every
 * other resume, a reload's too, goes on with the log.
 */
static int start_or_continue(struct flushlog_c *fc, bool *start)
{
	struct flushlog_log *log = fc->log;
	char *error = NULL;

	*start = READ_ONCE(log->state) == LOGGING_IDLE;
	if (!*start && fc->opt.new_log && !fc->ever_resumed) {
		error = new_log_error(fc, true);
		*start = !error;
	}
	if (*start)
		return start_log(log, fc);
	if (!error)
		error = continue_log_error(fc);
	if (error) {
		DMERR("%s: %s cannot resume as device %u: %s", log->name,
		      dm_device_name(fc->md), fc->device, error);
		return -EBUSY;
	}
	return 0;
}

/*
 * Start a new log or go on with the live one, and list the device (or
 * log its new size) before it maps a bio.
 */
static int flushlog_preresume(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;
	struct flushlog_log *log = fc->log;
	struct log_device *dev = &log->devices[fc->device];
	bool start;
	int r;

	mutex_lock(&log->lifecycle);
	r = start_or_continue(fc, &start);
	if (r)
		goto out;
	if (!dev->sectors)
		dev->first_sectors = fc->data_sectors;
	else if (dev->sectors != fc->data_sectors)
		log_resize(fc);
	dev->sectors = fc->data_sectors;
	dev->block_size = bdev_logical_block_size(fc->data_dev->bdev);
	dev->owner = fc->md;
	log->nr_devices = max(log->nr_devices, fc->device + 1);
	r = write_super(log, FLUSHLOG_STATE_DIRTY);
	if (r && start) {
		DMERR("%s: cannot start the log: super block write failed (%d)",
		      log->name, r);
		goto out;
	}
	/* a log that failed later must not keep the data device suspended */
	if (r && stop_logging(log, LOGGING_ERROR))
		DMERR("%s: log super block write failed (%d), logging stopped",
		      log->name, r);
	r = 0;
	spin_lock_irq(&log->lock);
	if (log->state == LOGGING_IDLE)
		WRITE_ONCE(log->state, LOGGING_ON);
	spin_unlock_irq(&log->lock);
	if (!fc->resumed)
		log->nr_active++;
	fc->resumed = true;
	WRITE_ONCE(fc->ever_resumed, true);
out:
	mutex_unlock(&log->lifecycle);
	return r;
}

/* Marks are taken again only once the resume is sure to happen. */
static void flushlog_resume(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;

	spin_lock_irq(&fc->log->lock);
	fc->suspended = false;
	spin_unlock_irq(&fc->log->lock);
}

/*
 * Called only with no bio of any member in flight and no mark to come.
 * Whatever the state, no log bio may outlive the log.
 */
static void close_log(struct flushlog_log *log)
{
	enum logging_state state = READ_ONCE(log->state);

	drain_log(log);
	if (state == LOGGING_IDLE)
		return;
	/*
	 * After a failed log write the entries counted are not all on the
	 * media: a dirty super (with FLUSHLOG_SF_ERROR) has readers take
	 * those that are, up to the first one missing, where a clean one
	 * would claim them all and have the log refused.
	 */
	if (write_super(log, READ_ONCE(log->state) == LOGGING_ERROR ?
			FLUSHLOG_STATE_DIRTY : FLUSHLOG_STATE_CLEAN))
		DMERR("%s: cannot write the log super block", log->name);
}

/* Under log->lifecycle: fc stops counting among the resumed members. */
static void deactivate(struct flushlog_c *fc)
{
	struct flushlog_log *log = fc->log;

	if (!fc->resumed)
		return;
	fc->resumed = false;
	if (--log->nr_active) {
		/* its entries go out; the others keep the log open */
		flush_delayed_work(&log->log_work);
		return;
	}
	close_log(log);
}

/*
 * Suspended: no bio is in flight, and marks are refused from here on.
 * Everything completed is logged, and once no member is resumed, the
 * super block says so.
 */
static void flushlog_postsuspend(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;
	struct flushlog_log *log = fc->log;

	spin_lock_irq(&log->lock);
	fc->suspended = true;
	spin_unlock_irq(&log->lock);
	mutex_lock(&log->lifecycle);
	deactivate(fc);
	mutex_unlock(&log->lifecycle);
}

/*
 * The last member closed the log when it was deactivated; nothing here
 * writes to the log device, which a new log may already be using.
 */
static void free_log(struct flushlog_log *log)
{
	WARN_ON_ONCE(log->nr_active);
	if (log->wq) {
		drain_log(log);
		destroy_workqueue(log->wq);
	}
	mempool_destroy(log->entry_pool);
	mempool_destroy(log->page_pool);
	bioset_exit(&log->bs);
	mutex_destroy(&log->page_pool_lock);
	mutex_destroy(&log->lifecycle);
	kfree(log);
}

/*
 * Under log->lifecycle and flushlog_logs_lock, fc leaving: the last
 * table of its device with its number spends the number.
 */
static void retire_number(struct flushlog_c *fc)
{
	struct log_device *dev = &fc->log->devices[fc->device];
	struct flushlog_c *m;

	if (dev->owner != fc->md)
		return;
	list_for_each_entry(m, &fc->log->members, members)
		if (m != fc && m->md == fc->md && m->device == fc->device)
			return;
	dev->retired = true;
	/*
	 * The mapped device may be freed now, and a new one take its
	 * address: it must not be taken for this number's owner.
	 */
	dev->owner = NULL;
}

/* The last member frees the log, before its hold on the device goes. */
static void leave_log(struct flushlog_c *fc)
{
	struct flushlog_log *log = fc->log;
	bool last;

	mutex_lock(&log->lifecycle);
	deactivate(fc);
	mutex_lock(&flushlog_logs_lock);
	retire_number(fc);
	list_del(&fc->members);
	last = !--log->refs;
	if (last)
		list_del(&log->logs);
	mutex_unlock(&flushlog_logs_lock);
	mutex_unlock(&log->lifecycle);
	if (last)
		free_log(log);
}

static void flushlog_dtr(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;

	if (!fc)
		return;
	if (fc->log)
		leave_log(fc);
	if (fc->log_dev)
		dm_put_device(ti, fc->log_dev);
	if (fc->data_dev)
		dm_put_device(ti, fc->data_dev);
	kfree(fc);
}

static int parse_features(struct dm_arg_set *as, struct flushlog_c *fc,
			  struct dm_target *ti)
{
	struct log_options *opt = &fc->opt;
	static const struct dm_arg _args[] = {
		{0, 5, "Invalid number of feature arguments"},
	};
	bool have_on_full = false;
	unsigned int argc, mib, device;
	const char *arg;
	char dummy;
	int r;

	if (!as->argc)
		return 0;
	r = dm_read_arg_group(_args, as, &argc, &ti->error);
	if (r)
		return r;
	while (argc--) {
		arg = dm_shift_arg(as);
		if (!strcmp(arg, "no_data")) {
			if (opt->no_data) {
				ti->error = "Duplicate no_data argument";
				return -EINVAL;
			}
			opt->no_data = true;
		} else if (!strcmp(arg, "new_log")) {
			if (opt->new_log) {
				ti->error = "Duplicate new_log argument";
				return -EINVAL;
			}
			opt->new_log = true;
		} else if (!strncmp(arg, "on_full=", 8)) {
			if (have_on_full) {
				ti->error = "Duplicate on_full argument";
				return -EINVAL;
			}
			have_on_full = true;
			if (!strcmp(arg + 8, "fail")) {
				opt->on_full_fail = true;
			} else if (strcmp(arg + 8, "stop")) {
				ti->error = "Invalid on_full value (expected stop or fail)";
				return -EINVAL;
			}
		} else if (!strncmp(arg, "max_pending=", 12)) {
			if (opt->max_pending_mib) {
				ti->error = "Duplicate max_pending argument";
				return -EINVAL;
			}
			if (sscanf(arg + 12, "%u%c", &mib, &dummy) != 1 ||
			    mib < FLUSHLOG_MIN_MAX_PENDING_MIB ||
			    mib > FLUSHLOG_MAX_MAX_PENDING_MIB) {
				ti->error = "Invalid max_pending (MiB, 2 to 65536)";
				return -EINVAL;
			}
			/* what the log holds is memory that cannot be reclaimed */
			if (mib > max_pending_ceiling_mib()) {
				ti->error = "max_pending larger than half of memory";
				return -EINVAL;
			}
			opt->max_pending_mib = mib;
		} else if (!strncmp(arg, "device=", 7)) {
			if (fc->device_given) {
				ti->error = "Duplicate device argument";
				return -EINVAL;
			}
			if (sscanf(arg + 7, "%u%c", &device, &dummy) != 1 ||
			    device >= FLUSHLOG_MAX_DEVICES) {
				ti->error = "Invalid device number (0 to 15)";
				return -EINVAL;
			}
			fc->device = device;
			fc->device_given = true;
		} else {
			ti->error = "Unrecognised flushlog feature requested";
			return -EINVAL;
		}
	}
	if (as->argc) {
		ti->error = "Invalid argument count";
		return -EINVAL;
	}
	return 0;
}

static int create_pools(struct flushlog_log *log, struct dm_target *ti)
{
	/* log bios, data copies and clones in flight, the super's bio */
	if (bioset_init(&log->bs, 64, offsetof(struct log_bio, bio),
			BIOSET_NEED_BVECS)) {
		ti->error = "Cannot allocate log bioset";
		return -ENOMEM;
	}
	log->page_pool = mempool_create_page_pool(FLUSHLOG_MAX_IO_PAGES + 1, 0);
	log->entry_pool = mempool_create_kmalloc_pool(FLUSHLOG_MIN_ENTRIES,
						      sizeof(struct pending_entry));
	if (!log->page_pool || !log->entry_pool) {
		ti->error = "Cannot allocate memory pools";
		return -ENOMEM;
	}
	log->wq = alloc_ordered_workqueue(DM_MSG_PREFIX "/%s", WQ_MEM_RECLAIM,
					  log->name);
	if (!log->wq) {
		ti->error = "Cannot allocate workqueue";
		return -ENOMEM;
	}
	return 0;
}

/* A log for fc's log device, with fc's options; not started yet. */
static struct flushlog_log *create_log(struct flushlog_c *fc,
				       struct dm_target *ti)
{
	struct flushlog_log *log;
	int r;

	log = kzalloc(sizeof(*log), GFP_KERNEL);
	if (!log) {
		ti->error = "Cannot allocate log context";
		return ERR_PTR(-ENOMEM);
	}
	spin_lock_init(&log->lock);
	mutex_init(&log->lifecycle);
	INIT_LIST_HEAD(&log->members);
	INIT_LIST_HEAD(&log->ready);
	INIT_LIST_HEAD(&log->log_bios);
	bio_list_init(&log->held);
	init_waitqueue_head(&log->pending_wait);
	init_waitqueue_head(&log->log_bios_wait);
	mutex_init(&log->page_pool_lock);
	INIT_DELAYED_WORK(&log->log_work, flushlog_log_work);
	INIT_WORK(&log->log_flush_work, flushlog_flush_work);
	log->state = LOGGING_IDLE;
	log->bdev = fc->log_dev->bdev;
	strscpy(log->name, fc->log_dev->name, sizeof(log->name));
	set_options(log, &fc->opt);
	r = check_log_device(log, &ti->error);
	if (!r)
		r = create_pools(log, ti);
	if (r) {
		free_log(log);
		return ERR_PTR(r);
	}
	return log;
}

/*
 * Whether fc may join the log: two targets of one table, or two devices
 * with one number, would write over each other's entries; devices that
 * share a log agree on its options, and each keeps its number.
 */
static int may_join(struct flushlog_log *log, struct flushlog_c *fc,
		    struct dm_target *ti)
{
	bool shared = false, renumbered = false;
	struct flushlog_c *m;

	list_for_each_entry(m, &log->members, members) {
		if (m->table == fc->table) {
			ti->error = "Log device in use by another target of this table";
			return -EBUSY;
		}
		if (m->md == fc->md) {
			renumbered |= m->device != fc->device;
			continue;
		}
		if (m->device == fc->device) {
			ti->error = "Device number in use on this log by another device";
			return -EBUSY;
		}
		if (!options_equal(&m->opt, &fc->opt)) {
			ti->error = "Log options differ from another device's on this log";
			return -EINVAL;
		}
		shared = true;
	}
	if (shared && renumbered) {
		ti->error = "A device sharing its log cannot change its device number";
		return -EINVAL;
	}
	return 0;
}

/*
 * Under flushlog_logs_lock: a device that is one flushlog target's data
 * device and another's log device would have each write over the other.
 * Only the same block device is caught, not one stacked on the other.
 */
static int check_crossed_devices(struct flushlog_c *fc, struct dm_target *ti)
{
	struct flushlog_log *l;
	struct flushlog_c *m;

	list_for_each_entry(l, &flushlog_logs, logs) {
		if (l->bdev == fc->data_dev->bdev) {
			ti->error = "Data device is the log device of a flushlog target";
			return -EBUSY;
		}
		list_for_each_entry(m, &l->members, members) {
			if (m->data_dev->bdev == fc->log_dev->bdev) {
				ti->error = "Log device is the data device of a flushlog target";
				return -EBUSY;
			}
		}
	}
	return 0;
}

/*
 * A table that cannot go on with the live log, or start a new one, is
 * refused when it is loaded, while the device's old table still serves
 * it, rather than at its resume, which would leave the device suspended.
 * Preresume checks again: a log can change between the two.
 */
static int check_live_log(struct flushlog_c *fc, struct dm_target *ti)
{
	struct flushlog_log *log = fc->log;
	char *error = NULL;

	mutex_lock(&log->lifecycle);
	if (READ_ONCE(log->state) == LOGGING_IDLE)
		error = NULL;
	else if (!fc->opt.new_log)
		error = continue_log_error(fc);
	else
		error = new_log_error(fc, false);
	mutex_unlock(&log->lifecycle);
	if (!error)
		return 0;
	ti->error = error;
	return -EBUSY;
}

/* Join the log of fc's log device, or make it. */
static int join_log(struct flushlog_c *fc, struct dm_target *ti)
{
	struct flushlog_log *log = NULL, *l;
	int r;

	mutex_lock(&flushlog_logs_lock);
	r = check_crossed_devices(fc, ti);
	if (r)
		goto out;
	list_for_each_entry(l, &flushlog_logs, logs) {
		if (l->bdev == fc->log_dev->bdev) {
			log = l;
			break;
		}
	}
	if (log) {
		r = may_join(log, fc, ti);
	} else {
		log = create_log(fc, ti);
		if (IS_ERR(log))
			r = PTR_ERR(log);
		else
			list_add_tail(&log->logs, &flushlog_logs);
	}
	if (!r) {
		log->refs++;
		list_add_tail(&fc->members, &log->members);
		fc->log = log;
	}
out:
	mutex_unlock(&flushlog_logs_lock);
	return r;
}

/*
 * Construct a flushlog mapping:
 *
 *   flushlog <data_dev_path> <log_dev_path> [<#feature args> [<arg>]*]
 *
 * Feature arguments:
 *   on_full=stop     when the log device is full, stop logging and go on
 *                    serving I/O (the default)
 *   on_full=fail     fail writes the log cannot take: -ENOSPC when they do
 *                    not fit, -EIO once a log write failed; a write
 *                    completes once its entry is on the log device, a
 *                    flush or FUA write once the log device is flushed
 *   no_data          log the headers of writes but not their data
 *   max_pending=MiB  memory for writes not yet on the log device (64; at
 *                    most half of the machine's memory)
 *   device=N         this device's number (0 to 15) in a log shared with
 *                    other flushlog devices, each with a number of its
 *                    own and the same other options (0)
 *   new_log          this table's first resume starts a new log, where a
 *                    reload would go on with the live one; refused when
 *                    another device has entries in the log.  Spent at
 *                    that resume: the table status shows it until then
 *
 * A log starts when the first table of its log device is first resumed,
 * and goes on across reloads and resizes while a table holds the device.
 */
static int flushlog_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct flushlog_c *fc;
	struct dm_arg_set as;
	const char *data_path, *log_path;
	int r;

	if (argc < 2) {
		ti->error = "Invalid argument count";
		return -EINVAL;
	}
	fc = kzalloc(sizeof(*fc), GFP_KERNEL);
	if (!fc) {
		ti->error = "Cannot allocate context";
		return -ENOMEM;
	}
	ti->private = fc;
	INIT_LIST_HEAD(&fc->members);
	fc->data_sectors = ti->len;
	fc->md = dm_table_get_md(ti->table);
	fc->table = ti->table;
	fc->suspended = true;	/* no mark before its device is listed */

	as.argc = argc;
	as.argv = argv;
	data_path = dm_shift_arg(&as);
	log_path = dm_shift_arg(&as);
	r = parse_features(&as, fc, ti);
	if (r)
		goto bad;

	r = dm_get_device(ti, data_path, dm_table_get_mode(ti->table),
			  &fc->data_dev);
	if (r) {
		ti->error = "Data device lookup failed";
		goto bad;
	}
#ifdef FLUSHLOG_HAVE_BLK_OPEN
	r = dm_get_device(ti, log_path, BLK_OPEN_READ | BLK_OPEN_WRITE,
			  &fc->log_dev);
#else
	r = dm_get_device(ti, log_path, FMODE_READ | FMODE_WRITE,
			  &fc->log_dev);
#endif
	if (r) {
		ti->error = "Log device lookup failed";
		goto bad;
	}
	if (fc->data_dev->bdev == fc->log_dev->bdev) {
		ti->error = "Data and log devices must differ";
		r = -EINVAL;
		goto bad;
	}
	r = join_log(fc, ti);
	if (!r)
		r = check_live_log(fc, ti);
	if (r)
		goto bad;
	r = dm_set_target_max_io_len(ti, FLUSHLOG_MAX_IO_SECTORS);
	if (r) {
		ti->error = "Cannot set the split size";
		goto bad;
	}

	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->per_io_data_size = sizeof(struct per_bio_data);
	/* each logged write takes memory: swap must not take it all */
	ti->limit_swap_bios = true;
	return 0;

bad:
	flushlog_dtr(ti);
	return r;
}

/* A mark, whose number in the log goes to *seq. */
static int add_mark(struct flushlog_c *fc, const char *label, u64 *seq)
{
	struct flushlog_log *log = fc->log;
	size_t len = strlen(label);
	struct pending_entry *e;
	const char *why = NULL;

	if (!len || len > FLUSHLOG_LABEL_MAX) {
		DMWARN("%s: mark label must be 1 to %d bytes",
		       log->name, FLUSHLOG_LABEL_MAX);
		return -EINVAL;
	}
	spin_lock_irq(&log->lock);
	if (fc->suspended)
		why = "suspended";
	else if (log->state != LOGGING_ON)
		why = logging_state_names[log->state];
	spin_unlock_irq(&log->lock);
	if (why) {
		DMWARN_LIMIT("%s: mark '%s' not logged: the log is %s",
			     log->name, label, why);
		return -EBUSY;
	}
	e = alloc_event_entry(fc, FLUSHLOG_OP_MARK);
	if (!e) {
		DMWARN_LIMIT("%s: mark '%s' not logged: the log is full",
			     log->name, label);
		return -ENOSPC;
	}
	e->label_len = len;
	memcpy(e->label, label, len);

	/* a suspend that started meanwhile has not drained the log yet */
	spin_lock_irq(&log->lock);
	if (fc->suspended) {
		spin_unlock_irq(&log->lock);
		release_log_space(log, e->log_sectors);
		free_pending_entry(log, e);
		return -EBUSY;
	}
	__queue_event(log, e);
	*seq = e->seq;
	spin_unlock_irq(&log->lock);
	return 0;
}

static int flushlog_message(struct dm_target *ti, unsigned int argc,
			    char **argv, char *result, unsigned int maxlen)
{
	struct flushlog_c *fc = ti->private;
	unsigned int sz = 0;
	u64 seq;
	int r;

	if (argc == 2 && !strcasecmp(argv[0], "mark")) {
		r = add_mark(fc, argv[1], &seq);
		if (r)
			return r;
		/* the mark's entry number, as dm-dust answers its queries */
		DMEMIT("%llu", seq);
		return 1;
	}
	DMWARN_LIMIT("%s: unrecognised message '%s' (expected: mark <label>)",
		     fc->log->name, argc ? argv[0] : "");
	return -EINVAL;
}

/*
 * Status: this device's, then its log's, which other devices may share.
 *   INFO:  <state> device=<n> log=<uuid> entries=<n> flush_points=<n>
 *          marks=<n> used_sectors=<n> free_sectors=<n> full=<0|1>
 *          pending_bytes=<n> peak_pending_bytes=<n>
 *          state: idle (never resumed), logging, suspended, stopped (the
 *          log filled with on_full=stop) or error (a log write failed);
 *          used and free count the log device's sectors taken or promised
 *          (super block and entries, in flight too) and the rest; full:
 *          an entry did not fit.
 *   TABLE: <data_dev> <log_dev> [<#feature args> <feature args>...]
 */
static void emit_info(struct flushlog_c *fc, char *result, unsigned int maxlen)
{
	struct flushlog_log *log = fc->log;
	u64 pending, peak_pending;
	unsigned int sz = 0;
	const char *state;
	sector_t reserved;
	bool filled;

	spin_lock_irq(&log->lock);
	state = logging_state_names[log->state];
	if (!READ_ONCE(fc->ever_resumed))
		state = "idle";
	else if (fc->suspended)
		state = "suspended";
	reserved = min(log->reserved, log->log_capacity);
	filled = log->filled;
	pending = log->pending;
	peak_pending = log->peak_pending;
	spin_unlock_irq(&log->lock);
	DMEMIT("%s device=%u log=%pUb entries=%llu flush_points=%llu marks=%llu",
	       state, fc->device, &log->uuid, READ_ONCE(log->next_seq),
	       READ_ONCE(log->nr_flush_points), READ_ONCE(log->nr_marks));
	DMEMIT(" used_sectors=%llu free_sectors=%llu full=%d",
	       (unsigned long long)reserved,
	       (unsigned long long)(log->log_capacity - reserved), filled);
	DMEMIT(" pending_bytes=%llu peak_pending_bytes=%llu", pending,
	       peak_pending);
}

static void emit_table(struct flushlog_c *fc, char *result,
		       unsigned int maxlen)
{
	unsigned int sz = 0, nr_features;
	bool new_log;

	/* new_log is spent at the first resume: a copy of the table goes on */
	new_log = fc->opt.new_log && !READ_ONCE(fc->ever_resumed);
	nr_features = fc->opt.on_full_fail + fc->opt.no_data +
		      !!fc->opt.max_pending_mib + fc->device_given + new_log;
	DMEMIT("%s %s", fc->data_dev->name, fc->log_dev->name);
	if (nr_features)
		DMEMIT(" %u", nr_features);
	if (fc->opt.on_full_fail)
		DMEMIT(" on_full=fail");
	if (fc->opt.no_data)
		DMEMIT(" no_data");
	if (fc->opt.max_pending_mib)
		DMEMIT(" max_pending=%u", fc->opt.max_pending_mib);
	if (fc->device_given)
		DMEMIT(" device=%u", fc->device);
	if (new_log)
		DMEMIT(" new_log");
}

static void flushlog_status(struct dm_target *ti, status_type_t type,
			    unsigned int status_flags, char *result,
			    unsigned int maxlen)
{
	struct flushlog_c *fc = ti->private;

	switch (type) {
	case STATUSTYPE_INFO:
		emit_info(fc, result, maxlen);
		break;
	case STATUSTYPE_TABLE:
		emit_table(fc, result, maxlen);
		break;
	case STATUSTYPE_IMA:
		*result = '\0';
		break;
	}
}

static int flushlog_iterate_devices(struct dm_target *ti,
				    iterate_devices_callout_fn fn, void *data)
{
	struct flushlog_c *fc = ti->private;

	return fn(ti, fc->data_dev, 0, ti->len, data);
}

/*
 * No prepare_ioctl: what SG_IO and the other ioctls dm hands to the data
 * device write would reach it unlogged, so dm refuses them (ENOTTY), as
 * it does for dm-crypt.  The block layer's own ioctls (BLKDISCARD,
 * BLKZEROOUT) come through as bios and are logged.  Persistent
 * reservations, which write no data, still reach the data device
 * through iterate_devices, but for pr_clear, which takes this path.
 */
static struct target_type flushlog_target = {
	.name = "flushlog",
	.version = {1, 0, 0},
	.module = THIS_MODULE,
	.ctr = flushlog_ctr,
	.dtr = flushlog_dtr,
	.map = flushlog_map,
	.end_io = flushlog_end_io,
	.postsuspend = flushlog_postsuspend,
	.preresume = flushlog_preresume,
	.resume = flushlog_resume,
	.status = flushlog_status,
	.message = flushlog_message,
	.iterate_devices = flushlog_iterate_devices,
};

#ifdef FLUSHLOG_HAVE_MODULE_DM
module_dm(flushlog);
#else
static int __init dm_flushlog_init(void)
{
	int r = dm_register_target(&flushlog_target);

	if (r < 0)
		DMERR("register failed %d", r);
	return r;
}

static void __exit dm_flushlog_exit(void)
{
	dm_unregister_target(&flushlog_target);
}

module_init(dm_flushlog_init);
module_exit(dm_flushlog_exit);
#endif

MODULE_DESCRIPTION(DM_NAME " target logging writes with their flushes, for crash states");
MODULE_LICENSE("GPL");
