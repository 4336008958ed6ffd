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
#include <linux/xxhash.h>
#ifdef FLUSHLOG_OUT_OF_TREE
#include "dm-flushlog-compat.h"
#endif

#define DM_MSG_PREFIX "flushlog"

/*
 * Log order.  Every logged bio gets a tick (one counter for the whole
 * target) when it is mapped and another when it completes; a mark gets one
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
	LOGGING_FULL,		/* on_full=stop and the log filled up */
	LOGGING_ERROR,		/* a log write failed */
	LOGGING_RETIRED,	/* a reload of this device took over the log */
};

static const char *const logging_state_names[] = {
	[LOGGING_IDLE] = "idle",
	[LOGGING_ON] = "logging",
	[LOGGING_FULL] = "full",
	[LOGGING_ERROR] = "error",
	[LOGGING_RETIRED] = "retired",
};

/* One entry, from its bio's map until it is in a log bio. */
struct pending_entry {
	struct list_head list;
	u64 submit_tick;
	u64 complete_tick;
	u64 time_ns;
	sector_t sector;
	sector_t log_sectors;	/* log space reserved for it */
	u32 nr_sectors;
	u32 data_len;		/* bytes of data in pages[] */
	u16 op;
	u16 flags;
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

struct flushlog_c {
	struct dm_dev *data_dev;
	struct dm_dev *log_dev;
	struct mapped_device *md;	/* tells a reload from another device */
	struct dm_table *table;		/* and from another target of its table */
	bool on_full_fail;	/* fail writes when the log cannot take them */
	bool no_data;		/* log headers only */
	bool data_crc32c;	/* data checksums CRC32C, not XXH64 */
	unsigned int max_pending_mib;	/* 0: the default, not in the table */
	u64 max_pending;	/* bytes of logging memory allowed */
	u32 log_block_size;	/* bytes; one entry header each */
	sector_t log_capacity;	/* sectors of the log device */
	sector_t data_sectors;	/* sectors this target maps */
	uuid_t uuid;
	u64 create_time_ns;

	atomic64_t tick;

	/* lock protects the fields up to the next blank line */
	spinlock_t lock;
	enum logging_state state;	/* WRITE_ONCE: map reads it unlocked */
	bool suspended;
	bool filled;			/* an entry did not fit */
	struct list_head ready;		/* completed, in log order */
	u64 ready_bytes;		/* their size in the log */
	sector_t reserved;		/* log sectors promised, super included */
	u64 pending;			/* bytes charged to max_pending */
	u64 peak_pending;
	u64 charge_ticket;		/* the next charger's place in line */
	u64 charge_turn;		/* the place whose turn it is */
	bool charger_waiting;		/* for memory: log what is ready now */
	unsigned int nr_log_bios;	/* in flight */
	struct list_head log_bios;	/* struct log_bio, in log order */
	sector_t logged_sector;		/* the log below it is written */
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
	struct bio_set bs;		/* log bios and clones */
	mempool_t *page_pool;
	mempool_t *entry_pool;
	struct mutex page_pool_lock;	/* one waiter on the reserve at a time */

	struct list_head instances;	/* on flushlog_instances */
};

struct per_bio_data {
	struct pending_entry *entry;	/* NULL: the bio is not logged */
	struct flushlog_c *fc;
	sector_t log_end;		/* held: the log sector after its entry */
};

/*
 * A log bio, from its allocation until it and every log bio before it
 * completed: the bio set's front pad.
 */
struct log_bio {
	struct list_head list;		/* on fc->log_bios */
	sector_t end;			/* the log sector after it */
	bool done;
	struct bio bio;
};

/* Live targets by log device: one log, one mapped device. */
static LIST_HEAD(flushlog_instances);
static DEFINE_MUTEX(flushlog_instances_lock);

static inline sector_t log_block_sectors(struct flushlog_c *fc)
{
	return fc->log_block_size >> SECTOR_SHIFT;
}

/* Log sectors an entry takes: a header block and the padded data. */
static sector_t entry_log_sectors(struct flushlog_c *fc, u32 data_len)
{
	return log_block_sectors(fc) +
	       (round_up(data_len, fc->log_block_size) >> SECTOR_SHIFT);
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
 * under fc->lock keeps the waker from touching fc after a waiter saw the
 * condition and went on to free it.
 */
static void charge_pending(struct flushlog_c *fc, u64 bytes)
{
	u64 ticket;

	spin_lock_irq(&fc->lock);
	ticket = fc->charge_ticket++;
	wait_event_lock_irq(fc->pending_wait, ticket == fc->charge_turn,
			    fc->lock);
	if (fc->pending + bytes > fc->max_pending) {
		/*
		 * What is ready gives its memory back once written: now, and
		 * so is what becomes ready while this charger waits, rather
		 * than a batch delay later.
		 */
		fc->charger_waiting = true;
		mod_delayed_work(fc->wq, &fc->log_work, 0);
		wait_event_lock_irq(fc->pending_wait,
				    fc->pending + bytes <= fc->max_pending,
				    fc->lock);
		fc->charger_waiting = false;
	}
	fc->charge_turn++;
	fc->pending += bytes;
	fc->peak_pending = max(fc->peak_pending, fc->pending);
	/* the next in line may fit too */
	if (waitqueue_active(&fc->pending_wait))
		wake_up_all(&fc->pending_wait);
	spin_unlock_irq(&fc->lock);
}

static void uncharge_pending(struct flushlog_c *fc, u64 bytes)
{
	unsigned long flags;

	spin_lock_irqsave(&fc->lock, flags);
	fc->pending -= bytes;
	/* waiters queue up under fc->lock, so this test cannot miss one */
	if (waitqueue_active(&fc->pending_wait))
		wake_up_all(&fc->pending_wait);
	spin_unlock_irqrestore(&fc->lock, flags);
}

/*
 * Take nr pages from the pool.  Several submitters each holding part of
 * the reserve and waiting for the rest would deadlock, so as dm-crypt
 * does, only one at a time may wait, and it holds no pool page while it
 * waits for its turn; the others take what is free now.
 */
static void alloc_pool_pages(struct flushlog_c *fc, struct page **pages,
			     unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		pages[i] = mempool_alloc(fc->page_pool,
					 GFP_NOWAIT | __GFP_NOWARN);
		if (!pages[i])
			break;
	}
	if (i == nr)
		return;
	while (i--)
		mempool_free(pages[i], fc->page_pool);
	mutex_lock(&fc->page_pool_lock);
	for (i = 0; i < nr; i++)
		pages[i] = mempool_alloc(fc->page_pool, GFP_NOIO);
	mutex_unlock(&fc->page_pool_lock);
}

static struct pending_entry *alloc_pending_entry(struct flushlog_c *fc,
						 unsigned int nr_pages)
{
	struct pending_entry *e;

	charge_pending(fc, entry_charge(nr_pages));
	e = mempool_alloc(fc->entry_pool, GFP_NOIO);
	memset(e, 0, offsetof(struct pending_entry, pages));
	INIT_LIST_HEAD(&e->list);
	e->nr_pages = nr_pages;
	alloc_pool_pages(fc, e->pages, 1 + nr_pages);
	return e;
}

/* Give back an entry's memory, but for pages a log bio took over. */
static void free_pending_entry(struct flushlog_c *fc, struct pending_entry *e)
{
	u64 bytes = entry_size();
	unsigned int i;

	for (i = 0; i < 1 + e->nr_pages; i++) {
		if (e->pages[i]) {
			mempool_free(e->pages[i], fc->page_pool);
			bytes += PAGE_SIZE;
		}
	}
	mempool_free(e, fc->entry_pool);
	uncharge_pending(fc, bytes);
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
static void copy_bio_data(struct flushlog_c *fc, struct pending_entry *e,
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
	pad = round_up(pos, fc->log_block_size) - pos;
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
static bool stop_logging(struct flushlog_c *fc, enum logging_state state)
{
	unsigned long flags;
	bool stopped = false;

	spin_lock_irqsave(&fc->lock, flags);
	if (logging(fc->state)) {
		WRITE_ONCE(fc->state, state);
		stopped = true;
	}
	spin_unlock_irqrestore(&fc->lock, flags);
	return stopped;
}

/*
 * Promise log space to an entry.  Returns 0, or the error the bio must
 * fail with (on_full=fail), or 1 when the bio goes on unlogged.
 */
static int reserve_log_space(struct flushlog_c *fc, sector_t sectors)
{
	unsigned long flags;
	int r = 0;

	spin_lock_irqsave(&fc->lock, flags);
	if (fc->state != LOGGING_ON) {
		r = fc->on_full_fail ? -EIO : 1;
	} else if (fc->reserved + sectors > fc->log_capacity) {
		if (!fc->filled)
			DMWARN("%s: log device full, %s", fc->log_dev->name,
			       fc->on_full_fail ? "failing writes that do not fit" :
						  "logging stopped");
		WRITE_ONCE(fc->filled, true);
		r = fc->on_full_fail ? -ENOSPC : 1;
		if (!fc->on_full_fail)
			WRITE_ONCE(fc->state, LOGGING_FULL);
	} else {
		fc->reserved += sectors;
	}
	spin_unlock_irqrestore(&fc->lock, flags);
	return r;
}

/* An entry that will not be logged gives its log space back. */
static void release_log_space(struct flushlog_c *fc, sector_t sectors)
{
	unsigned long flags;

	spin_lock_irqsave(&fc->lock, flags);
	fc->reserved -= sectors;
	spin_unlock_irqrestore(&fc->lock, flags);
}

/* The entry of a write-type bio, whose sector is already remapped. */
static int prepare_entry(struct flushlog_c *fc, struct bio *bio,
			 struct pending_entry **entry)
{
	u16 op = bio_entry_op(bio);
	bool keep_data = op == FLUSHLOG_OP_WRITE && !fc->no_data;
	u32 data_len = keep_data ? bio->bi_iter.bi_size : 0;
	sector_t log_sectors = entry_log_sectors(fc, data_len);
	struct pending_entry *e;
	int r;

	*entry = NULL;
	r = reserve_log_space(fc, log_sectors);
	if (r)
		return r < 0 ? r : 0;
	/* max_io_len keeps every entry within pages[] */
	if (WARN_ON_ONCE(data_len > FLUSHLOG_MAX_IO_SECTORS << SECTOR_SHIFT)) {
		release_log_space(fc, log_sectors);
		return -EIO;
	}
	e = alloc_pending_entry(fc, DIV_ROUND_UP(data_len, PAGE_SIZE));
	if (keep_data)
		copy_bio_data(fc, e, bio);
	e->op = op;
	e->flags = bio_entry_flags(bio);
	if (op != FLUSHLOG_OP_FLUSH) {
		e->sector = bio->bi_iter.bi_sector;
		e->nr_sectors = bio_sectors(bio);
	}
	if (op == FLUSHLOG_OP_WRITE && fc->no_data)
		e->flags |= FLUSHLOG_F_NO_DATA;
	e->data_len = data_len;
	e->log_sectors = log_sectors;
	e->submit_tick = atomic64_inc_return(&fc->tick);
	*entry = e;
	return 0;
}

static void __queue_ready(struct flushlog_c *fc, struct pending_entry *e);

/* Under fc->lock: the bio completed, its entry joins the log's order. */
static void __entry_completed(struct flushlog_c *fc, struct pending_entry *e)
{
	e->complete_tick = atomic64_inc_return(&fc->tick);
	e->time_ns = ktime_get_ns();
	__queue_ready(fc, e);
}

/*
 * The data device has what the clone wrote.  on_full=fail promises a
 * log entry for every write that succeeds, so there the bio is held
 * until its entry is on the log device (release_held); elsewhere it
 * completes now, and flushlog_end_io queues its entry.
 */
static void logged_clone_end_io(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct flushlog_c *fc = pb->fc;
	struct pending_entry *e = pb->entry;
	unsigned long flags;

	bio->bi_status = clone->bi_status;
	bio_put(clone);
	if (!fc->on_full_fail || bio->bi_status) {
		bio_endio(bio);
		return;
	}
	spin_lock_irqsave(&fc->lock, flags);
	if (!logging(fc->state)) {
		/* flushlog_end_io fails it: it cannot be logged */
		spin_unlock_irqrestore(&fc->lock, flags);
		bio_endio(bio);
		return;
	}
	pb->entry = NULL;
	e->held = bio;
	__entry_completed(fc, e);
	spin_unlock_irqrestore(&fc->lock, flags);
}

/*
 * Write the data device from the entry's copy: the log and the data
 * device then hold the same bytes whatever happens to the bio's pages.
 * Entries without data go through a clone too with on_full=fail, which
 * holds every logged bio until it is logged.  The bio completes, through
 * flushlog_end_io, when the clone has (and with on_full=fail, its entry
 * is on the log device).
 */
static int submit_logged_clone(struct flushlog_c *fc, struct bio *bio,
			       struct pending_entry *e)
{
	struct bio *clone;
	u32 left = e->data_len;
	unsigned int i;

	if (!e->data_len) {
		/* fails only to clone an integrity payload */
		clone = bio_alloc_clone(fc->data_dev->bdev, bio, GFP_NOIO,
					&fc->bs);
		if (!clone)
			return -ENOMEM;
		/* dm polls the bio it mapped, never this one */
		clone->bi_opf &= ~REQ_POLLED;
		goto submit;
	}
	clone = bio_alloc_bioset(fc->data_dev->bdev, e->nr_pages,
				 bio->bi_opf & ~REQ_POLLED, GFP_NOIO, &fc->bs);
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
	if (READ_ONCE(fc->state) != LOGGING_ON && !fc->on_full_fail)
		return DM_MAPIO_REMAPPED;

	r = prepare_entry(fc, bio, &pb->entry);
	if (!r && pb->entry && (pb->entry->data_len || fc->on_full_fail)) {
		r = submit_logged_clone(fc, bio, pb->entry);
		if (!r)
			return DM_MAPIO_SUBMITTED;
		release_log_space(fc, pb->entry->log_sectors);
		free_pending_entry(fc, pb->entry);
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
 * Under fc->lock: an entry joined the ready list.  Entries go out in
 * batches, so that each log bio is large and a workload of small FUA
 * writes or frequent flushes does not cost a log bio each: at once after
 * a mark (a user marks a point to look at), when a log bio's worth is
 * ready, or when a charger waits for the memory ready entries hold;
 * otherwise FLUSHLOG_BATCH_DELAY later.  With on_full=fail every entry
 * goes at once: its bio is held until it is logged.
 */
static void __queue_ready(struct flushlog_c *fc, struct pending_entry *e)
{
	list_add_tail(&e->list, &fc->ready);
	fc->ready_bytes += (u64)e->log_sectors << SECTOR_SHIFT;
	if (e->op == FLUSHLOG_OP_MARK || fc->on_full_fail ||
	    fc->ready_bytes >= FLUSHLOG_BATCH_BYTES || fc->charger_waiting)
		mod_delayed_work(fc->wq, &fc->log_work, 0);
	else
		queue_delayed_work(fc->wq, &fc->log_work, FLUSHLOG_BATCH_DELAY);
}

static int flushlog_end_io(struct dm_target *ti, struct bio *bio,
			   blk_status_t *error)
{
	struct flushlog_c *fc = ti->private;
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
	if (!*error && fc->on_full_fail && !logging(READ_ONCE(fc->state)))
		*error = BLK_STS_IOERR;
	if (*error) {
		/* what a failed write left on the media is unknown */
		release_log_space(fc, e->log_sectors);
		free_pending_entry(fc, e);
		return DM_ENDIO_DONE;
	}

	/* the tick and the queue under one lock: the log is in tick order */
	spin_lock_irqsave(&fc->lock, flags);
	__entry_completed(fc, e);
	spin_unlock_irqrestore(&fc->lock, flags);
	return DM_ENDIO_DONE;
}

/* Data checksums: see FLUSHLOG_SF_DATA_XXH64 for why XXH64 by default. */
static u32 data_checksum(struct flushlog_c *fc, struct pending_entry *e)
{
	u32 crc = ~0U, left = e->data_len;
	struct xxh64_state xxh;
	unsigned int i;

	xxh64_reset(&xxh, 0);
	for (i = 0; left; i++) {
		u32 len = min_t(u32, left, PAGE_SIZE);
		void *p = kmap_local_page(entry_data(e)[i]);

		if (fc->data_crc32c)
			crc = crc32c(crc, p, len);
		else
			xxh64_update(&xxh, p, len);
		kunmap_local(p);
		left -= len;
	}
	return fc->data_crc32c ? ~crc : (u32)xxh64_digest(&xxh);
}

static void fill_header(struct flushlog_c *fc, struct pending_entry *e)
{
	struct flushlog_entry *h = page_address(*entry_header(e));

	memset(h, 0, fc->log_block_size);
	h->magic = cpu_to_le32(FLUSHLOG_ENTRY_MAGIC);
	memcpy(&h->log_id, fc->uuid.b, sizeof(h->log_id));
	h->seq = cpu_to_le64(fc->next_seq);
	h->sector = cpu_to_le64(e->sector);
	h->nr_sectors = cpu_to_le32(e->nr_sectors);
	h->data_len = cpu_to_le32(e->data_len);
	h->op = cpu_to_le16(e->op);
	h->flags = cpu_to_le16(e->flags);
	h->data_crc = cpu_to_le32(e->data_len ? data_checksum(fc, e) : 0);
	h->submit_tick = cpu_to_le64(e->submit_tick);
	h->complete_tick = cpu_to_le64(e->complete_tick);
	h->time_ns = cpu_to_le64(e->time_ns);
	h->label_len = cpu_to_le32(e->label_len);
	memcpy(h->label, e->label, e->label_len);
	h->crc = cpu_to_le32(flushlog_crc(h, FLUSHLOG_HEADER_SIZE));
}

/*
 * on_full=fail: complete the held bios whose entries lie wholly below
 * the written part of the log; failed, once a log write failed (one of
 * theirs may have).
 */
static void release_held(struct flushlog_c *fc)
{
	struct bio_list done = BIO_EMPTY_LIST;
	blk_status_t status;
	unsigned long flags;
	struct bio *bio;

	spin_lock_irqsave(&fc->lock, flags);
	status = fc->state == LOGGING_ERROR ? BLK_STS_IOERR : BLK_STS_OK;
	while ((bio = bio_list_peek(&fc->held))) {
		struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));

		if (pb->log_end > fc->logged_sector)
			break;
		bio_list_add(&done, bio_list_pop(&fc->held));
	}
	spin_unlock_irqrestore(&fc->lock, flags);
	while ((bio = bio_list_pop(&done))) {
		if (status)
			bio->bi_status = status;
		bio_endio(bio);
	}
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
	struct flushlog_c *fc = bio->bi_private;
	struct bvec_iter_all iter;
	LIST_HEAD(finished);
	struct log_bio *tmp;
	struct bio_vec *bv;
	unsigned long flags;
	u64 bytes = 0;

	if (bio->bi_status && stop_logging(fc, LOGGING_ERROR))
		DMERR("%s: log write failed (%d), logging stopped",
		      fc->log_dev->name, blk_status_to_errno(bio->bi_status));
	bio_for_each_segment_all(bv, bio, iter) {
		mempool_free(bv->bv_page, fc->page_pool);
		bytes += PAGE_SIZE;
	}
	if (!fc->on_full_fail) {
		bio_put(bio);
		goto account;
	}

	spin_lock_irqsave(&fc->lock, flags);
	lb->done = true;
	list_for_each_entry_safe(lb, tmp, &fc->log_bios, list) {
		if (!lb->done)
			break;
		fc->logged_sector = lb->end;
		list_move_tail(&lb->list, &finished);
	}
	spin_unlock_irqrestore(&fc->lock, flags);
	list_for_each_entry_safe(lb, tmp, &finished, list)
		bio_put(&lb->bio);
	release_held(fc);

account:
	/* wake under the lock: drain_log's caller may free fc next */
	spin_lock_irqsave(&fc->lock, flags);
	fc->pending -= bytes;
	/* as in uncharge_pending(): waiters queue up under fc->lock */
	if (waitqueue_active(&fc->pending_wait))
		wake_up_all(&fc->pending_wait);
	if (!--fc->nr_log_bios)
		wake_up(&fc->log_bios_wait);
	spin_unlock_irqrestore(&fc->lock, flags);
}

static struct bio *new_log_bio(struct flushlog_c *fc)
{
	struct log_bio *lb;
	struct bio *bio;

	/* with on_full=fail a writer waits for it: not a background write */
	bio = bio_alloc_bioset(fc->log_dev->bdev, BIO_MAX_VECS,
			       REQ_OP_WRITE | (fc->on_full_fail ? REQ_SYNC : 0),
			       GFP_NOIO, &fc->bs);
	bio->bi_iter.bi_sector = fc->next_sector;
	bio->bi_end_io = log_end_io;
	bio->bi_private = fc;
	lb = container_of(bio, struct log_bio, bio);
	lb->done = false;
	spin_lock_irq(&fc->lock);
	if (fc->on_full_fail)
		list_add_tail(&lb->list, &fc->log_bios);
	fc->nr_log_bios++;
	spin_unlock_irq(&fc->lock);
	return bio;
}

static void submit_log_bio(struct bio *bio)
{
	container_of(bio, struct log_bio, bio)->end = bio_end_sector(bio);
	submit_bio(bio);
}

/* Add a page to the log bio, which is submitted and replaced when full. */
static void add_log_page(struct flushlog_c *fc, struct bio **bio,
			 struct page *page, unsigned int len)
{
	if (!*bio)
		*bio = new_log_bio(fc);
	if (bio_add_page(*bio, page, len, 0) != len) {
		submit_log_bio(*bio);
		*bio = new_log_bio(fc);
		__bio_add_page(*bio, page, len, 0);
	}
	WRITE_ONCE(fc->next_sector, fc->next_sector + (len >> SECTOR_SHIFT));
}

/*
 * Write one entry: its header block, then its data, whose last page
 * carries the zero padding to a log block.  The log bio takes the pages.
 */
static void write_entry(struct flushlog_c *fc, struct bio **bio,
			struct pending_entry *e)
{
	u32 left = round_up(e->data_len, fc->log_block_size);
	unsigned int i;

	fill_header(fc, e);
	add_log_page(fc, bio, *entry_header(e), fc->log_block_size);
	*entry_header(e) = NULL;
	for (i = 0; left; i++) {
		u32 len = min_t(u32, left, PAGE_SIZE);

		add_log_page(fc, bio, entry_data(e)[i], len);
		entry_data(e)[i] = NULL;
		left -= len;
	}
	WRITE_ONCE(fc->next_seq, fc->next_seq + 1);
	if (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_FUA))
		WRITE_ONCE(fc->nr_flush_points, fc->nr_flush_points + 1);
	else if (e->op == FLUSHLOG_OP_MARK)
		WRITE_ONCE(fc->nr_marks, fc->nr_marks + 1);
}

/*
 * A held bio waits for its entry to be written: after the log up to
 * log_end is (release_held), or at once, failed, if it is not written.
 */
static void hold_until_logged(struct flushlog_c *fc, struct bio_list *held,
			      struct pending_entry *e, bool logged)
{
	struct per_bio_data *pb = dm_per_bio_data(e->held, sizeof(*pb));

	pb->log_end = fc->next_sector;
	if (!logged)
		e->held->bi_status = BLK_STS_IOERR;
	bio_list_add(held, e->held);
}

static void flushlog_log_work(struct work_struct *work)
{
	struct flushlog_c *fc = container_of(to_delayed_work(work),
					     struct flushlog_c, log_work);
	struct bio_list held = BIO_EMPTY_LIST, failed = BIO_EMPTY_LIST;
	struct pending_entry *e, *tmp;
	struct bio *bio = NULL;
	LIST_HEAD(batch);
	bool logged;

	spin_lock_irq(&fc->lock);
	list_splice_init(&fc->ready, &batch);
	fc->ready_bytes = 0;
	logged = logging(fc->state);
	spin_unlock_irq(&fc->lock);

	list_for_each_entry_safe(e, tmp, &batch, list) {
		list_del(&e->list);
		if (logged)
			write_entry(fc, &bio, e);
		if (e->held)
			hold_until_logged(fc, logged ? &held : &failed, e,
					  logged);
		free_pending_entry(fc, e);
	}
	if (bio)
		submit_log_bio(bio);
	if (!bio_list_empty(&held)) {
		/* some of their log bios may have completed already */
		spin_lock_irq(&fc->lock);
		bio_list_merge(&fc->held, &held);
		spin_unlock_irq(&fc->lock);
		release_held(fc);
	}
	while ((bio = bio_list_pop(&failed)))
		bio_endio(bio);
}

/* Wait until every queued entry is on the log device. */
static void drain_log(struct flushlog_c *fc)
{
	flush_delayed_work(&fc->log_work);
	spin_lock_irq(&fc->lock);
	wait_event_lock_irq(fc->log_bios_wait, !fc->nr_log_bios, fc->lock);
	spin_unlock_irq(&fc->lock);
}

static int write_super(struct flushlog_c *fc, enum flushlog_state state)
{
	struct flushlog_super *sb;
	struct page *page;
	struct bio *bio;
	u32 flags = 0;
	int r;

	page = mempool_alloc(fc->page_pool, GFP_NOIO);
	if (fc->no_data)
		flags |= FLUSHLOG_SF_NO_DATA;
	if (!fc->data_crc32c)
		flags |= FLUSHLOG_SF_DATA_XXH64;
	if (READ_ONCE(fc->filled))
		flags |= FLUSHLOG_SF_FULL;
	if (READ_ONCE(fc->state) == LOGGING_ERROR)
		flags |= FLUSHLOG_SF_ERROR;
	sb = page_address(page);
	memset(sb, 0, fc->log_block_size);
	sb->magic = cpu_to_le64(FLUSHLOG_SUPER_MAGIC);
	sb->version = cpu_to_le32(FLUSHLOG_VERSION_COMPLETION_ORDER);
	sb->log_block_size = cpu_to_le32(fc->log_block_size);
	sb->data_block_size =
		cpu_to_le32(bdev_logical_block_size(fc->data_dev->bdev));
	sb->data_sectors = cpu_to_le64(fc->data_sectors);
	sb->log_sectors = cpu_to_le64(fc->log_capacity);
	sb->nr_entries = cpu_to_le64(state == FLUSHLOG_STATE_CLEAN ?
				     fc->next_seq : 0);
	sb->used_sectors = cpu_to_le64(state == FLUSHLOG_STATE_CLEAN ?
				       fc->next_sector : 0);
	sb->state = cpu_to_le32(state);
	sb->flags = cpu_to_le32(flags);
	memcpy(sb->uuid, fc->uuid.b, sizeof(sb->uuid));
	memcpy(&sb->log_id, fc->uuid.b, sizeof(sb->log_id));
	sb->create_time_ns = cpu_to_le64(fc->create_time_ns);
	sb->crc = cpu_to_le32(flushlog_crc(sb, FLUSHLOG_HEADER_SIZE));

	/* PREFLUSH: the entries a clean super block counts are on the media */
	bio = bio_alloc_bioset(fc->log_dev->bdev, 1,
			       REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA | REQ_SYNC,
			       GFP_NOIO, &fc->bs);
	bio->bi_iter.bi_sector = 0;
	__bio_add_page(bio, page, fc->log_block_size, 0);
	r = submit_bio_wait(bio);
	bio_put(bio);
	mempool_free(page, fc->page_pool);
	return r;
}

/* A reload of this device starts a new log: the old table's is closed. */
static void retire_older_tables(struct flushlog_c *fc)
{
	struct flushlog_c *other;

	mutex_lock(&flushlog_instances_lock);
	list_for_each_entry(other, &flushlog_instances, instances) {
		if (other == fc || other->log_dev->bdev != fc->log_dev->bdev)
			continue;
		spin_lock_irq(&other->lock);
		WRITE_ONCE(other->state, LOGGING_RETIRED);
		spin_unlock_irq(&other->lock);
	}
	mutex_unlock(&flushlog_instances_lock);
}

/* Start a new log at the first resume, or mark it open again. */
static int flushlog_preresume(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;
	enum logging_state state = READ_ONCE(fc->state);
	int r;

	if (state == LOGGING_RETIRED)
		return 0;
	if (state == LOGGING_IDLE) {
		retire_older_tables(fc);
		uuid_gen(&fc->uuid);
		fc->create_time_ns = ktime_get_real_ns();
		WRITE_ONCE(fc->next_sector, log_block_sectors(fc));
		spin_lock_irq(&fc->lock);
		fc->reserved = fc->next_sector;
		fc->logged_sector = fc->next_sector;
		spin_unlock_irq(&fc->lock);
	}
	r = write_super(fc, FLUSHLOG_STATE_DIRTY);
	if (r && state == LOGGING_IDLE) {
		DMERR("%s: cannot start the log: super block write failed (%d)",
		      fc->log_dev->name, r);
		return r;
	}
	/* a log that failed later must not keep the data device suspended */
	if (r && stop_logging(fc, LOGGING_ERROR))
		DMERR("%s: log super block write failed (%d), logging stopped",
		      fc->log_dev->name, r);
	spin_lock_irq(&fc->lock);
	if (fc->state == LOGGING_IDLE)
		WRITE_ONCE(fc->state, LOGGING_ON);
	spin_unlock_irq(&fc->lock);
	return 0;
}

/* Marks are taken again only once the resume is sure to happen. */
static void flushlog_resume(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;

	spin_lock_irq(&fc->lock);
	fc->suspended = false;
	spin_unlock_irq(&fc->lock);
}

/*
 * Called only with no bio in flight and no mark to come.  Whatever the
 * state, no log bio may outlive fc.
 */
static void close_log(struct flushlog_c *fc)
{
	enum logging_state state = READ_ONCE(fc->state);

	drain_log(fc);
	if (state == LOGGING_IDLE || state == LOGGING_RETIRED)
		return;
	/*
	 * After a failed log write the entries counted are not all on the
	 * media: a dirty super (with FLUSHLOG_SF_ERROR) has readers take
	 * those that are, up to the first one missing, where a clean one
	 * would claim them all and have the log refused.
	 */
	if (write_super(fc, READ_ONCE(fc->state) == LOGGING_ERROR ?
			FLUSHLOG_STATE_DIRTY : FLUSHLOG_STATE_CLEAN))
		DMERR("%s: cannot write the log super block",
		      fc->log_dev->name);
}

/*
 * Suspended: no bio is in flight, and marks are refused from here on.
 * Everything completed is logged, then the super block says so.
 */
static void flushlog_postsuspend(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;

	spin_lock_irq(&fc->lock);
	fc->suspended = true;
	spin_unlock_irq(&fc->lock);
	close_log(fc);
}

static void flushlog_dtr(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;

	if (!fc)
		return;
	if (fc->wq) {
		close_log(fc);
		destroy_workqueue(fc->wq);
	}
	if (!list_empty(&fc->instances)) {
		mutex_lock(&flushlog_instances_lock);
		list_del(&fc->instances);
		mutex_unlock(&flushlog_instances_lock);
	}
	mempool_destroy(fc->entry_pool);
	mempool_destroy(fc->page_pool);
	bioset_exit(&fc->bs);
	if (fc->log_dev)
		dm_put_device(ti, fc->log_dev);
	if (fc->data_dev)
		dm_put_device(ti, fc->data_dev);
	kfree(fc);
}

static int parse_features(struct dm_arg_set *as, struct flushlog_c *fc,
			  struct dm_target *ti)
{
	static const struct dm_arg _args[] = {
		{0, 4, "Invalid number of feature arguments"},
	};
	bool have_on_full = false, have_checksum = false;
	unsigned int argc, mib;
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
			if (fc->no_data) {
				ti->error = "Duplicate no_data argument";
				return -EINVAL;
			}
			fc->no_data = true;
		} else if (!strncmp(arg, "on_full=", 8)) {
			if (have_on_full) {
				ti->error = "Duplicate on_full argument";
				return -EINVAL;
			}
			have_on_full = true;
			if (!strcmp(arg + 8, "fail")) {
				fc->on_full_fail = true;
			} else if (strcmp(arg + 8, "stop")) {
				ti->error = "Invalid on_full value (expected stop or fail)";
				return -EINVAL;
			}
		} else if (!strncmp(arg, "data_checksum=", 14)) {
			if (have_checksum) {
				ti->error = "Duplicate data_checksum argument";
				return -EINVAL;
			}
			have_checksum = true;
			if (!strcmp(arg + 14, "crc32c")) {
				fc->data_crc32c = true;
			} else if (strcmp(arg + 14, "xxh64")) {
				ti->error = "Invalid data_checksum (expected xxh64 or crc32c)";
				return -EINVAL;
			}
		} else if (!strncmp(arg, "max_pending=", 12)) {
			if (fc->max_pending_mib) {
				ti->error = "Duplicate max_pending argument";
				return -EINVAL;
			}
			if (sscanf(arg + 12, "%u%c", &mib, &dummy) != 1 ||
			    mib < FLUSHLOG_MIN_MAX_PENDING_MIB ||
			    mib > FLUSHLOG_MAX_MAX_PENDING_MIB) {
				ti->error = "Invalid max_pending (MiB, 2 to 65536)";
				return -EINVAL;
			}
			fc->max_pending_mib = mib;
		} else {
			ti->error = "Unrecognised flushlog feature requested";
			return -EINVAL;
		}
	}
	if (as->argc) {
		ti->error = "Invalid argument count";
		return -EINVAL;
	}
	if (fc->no_data && have_checksum) {
		ti->error = "data_checksum and no_data exclude each other";
		return -EINVAL;
	}
	return 0;
}

static int check_devices(struct flushlog_c *fc, struct dm_target *ti)
{
	struct block_device *log_bdev = fc->log_dev->bdev;
	unsigned int block = bdev_logical_block_size(log_bdev);

	if (fc->data_dev->bdev == log_bdev) {
		ti->error = "Data and log devices must differ";
		return -EINVAL;
	}
	if (block > PAGE_SIZE) {
		ti->error = "Log device block size larger than a page";
		return -EINVAL;
	}
	fc->log_block_size = max_t(unsigned int, block, FLUSHLOG_HEADER_SIZE);
	fc->log_capacity = bdev_nr_sectors(log_bdev);
	/* the super block and one header at the least */
	if (fc->log_capacity < 2 * log_block_sectors(fc)) {
		ti->error = "Log device too small";
		return -EINVAL;
	}
	return 0;
}

/*
 * One log, one target: two would write over each other's entries.  A
 * reload of the same device is fine; its first resume retires the old
 * table, which was suspended (its log drained and closed) just before.
 */
static int register_instance(struct flushlog_c *fc, struct dm_target *ti)
{
	struct flushlog_c *other;
	int r = 0;

	mutex_lock(&flushlog_instances_lock);
	list_for_each_entry(other, &flushlog_instances, instances) {
		if (other->log_dev->bdev != fc->log_dev->bdev)
			continue;
		if (other->md != fc->md) {
			ti->error = "Log device in use by another flushlog device";
			r = -EBUSY;
			goto out;
		}
		if (other->table == fc->table) {
			ti->error = "Log device in use by another target of this table";
			r = -EBUSY;
			goto out;
		}
	}
	list_add_tail(&fc->instances, &flushlog_instances);
out:
	mutex_unlock(&flushlog_instances_lock);
	return r;
}

static int create_pools(struct flushlog_c *fc, struct dm_target *ti)
{
	/* log bios, data copies and clones in flight, the super's bio */
	if (bioset_init(&fc->bs, 64, offsetof(struct log_bio, bio),
			BIOSET_NEED_BVECS)) {
		ti->error = "Cannot allocate log bioset";
		return -ENOMEM;
	}
	fc->page_pool = mempool_create_page_pool(FLUSHLOG_MAX_IO_PAGES + 1, 0);
	fc->entry_pool = mempool_create_kmalloc_pool(FLUSHLOG_MIN_ENTRIES,
						     sizeof(struct pending_entry));
	if (!fc->page_pool || !fc->entry_pool) {
		ti->error = "Cannot allocate memory pools";
		return -ENOMEM;
	}
	fc->wq = alloc_ordered_workqueue(DM_MSG_PREFIX "/%s", WQ_MEM_RECLAIM,
					 dm_table_device_name(ti->table));
	if (!fc->wq) {
		ti->error = "Cannot allocate workqueue";
		return -ENOMEM;
	}
	return 0;
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
 *                    not fit, -EIO once a log write failed
 *   no_data          log the headers of writes but not their data
 *   data_checksum=xxh64|crc32c
 *                    the data's checksum (xxh64)
 *   max_pending=MiB  memory for writes not yet on the log device (64)
 *
 * The log starts afresh when the table is first resumed.
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
	spin_lock_init(&fc->lock);
	INIT_LIST_HEAD(&fc->ready);
	INIT_LIST_HEAD(&fc->log_bios);
	bio_list_init(&fc->held);
	INIT_LIST_HEAD(&fc->instances);
	init_waitqueue_head(&fc->pending_wait);
	init_waitqueue_head(&fc->log_bios_wait);
	mutex_init(&fc->page_pool_lock);
	INIT_DELAYED_WORK(&fc->log_work, flushlog_log_work);
	fc->state = LOGGING_IDLE;
	fc->data_sectors = ti->len;
	fc->md = dm_table_get_md(ti->table);
	fc->table = ti->table;

	as.argc = argc;
	as.argv = argv;
	data_path = dm_shift_arg(&as);
	log_path = dm_shift_arg(&as);
	r = parse_features(&as, fc, ti);
	if (r)
		goto bad;
	fc->max_pending = (u64)(fc->max_pending_mib ?:
				FLUSHLOG_DEFAULT_MAX_PENDING_MIB) << 20;

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
	r = check_devices(fc, ti);
	if (r)
		goto bad;
	r = create_pools(fc, ti);
	if (r)
		goto bad;
	r = register_instance(fc, ti);
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
	return 0;

bad:
	flushlog_dtr(ti);
	return r;
}

static int add_mark(struct flushlog_c *fc, const char *label)
{
	size_t len = strlen(label);
	struct pending_entry *e;
	const char *why = NULL;
	int r;

	if (!len || len > FLUSHLOG_LABEL_MAX) {
		DMWARN("%s: mark label must be 1 to %d bytes",
		       fc->log_dev->name, FLUSHLOG_LABEL_MAX);
		return -EINVAL;
	}
	spin_lock_irq(&fc->lock);
	if (fc->suspended)
		why = "suspended";
	else if (fc->state != LOGGING_ON)
		why = logging_state_names[fc->state];
	spin_unlock_irq(&fc->lock);
	if (why) {
		DMWARN_LIMIT("%s: mark '%s' not logged: the log is %s",
			     fc->log_dev->name, label, why);
		return -EBUSY;
	}
	r = reserve_log_space(fc, entry_log_sectors(fc, 0));
	if (r) {
		DMWARN_LIMIT("%s: mark '%s' not logged: the log is full",
			     fc->log_dev->name, label);
		return -ENOSPC;
	}
	e = alloc_pending_entry(fc, 0);
	e->op = FLUSHLOG_OP_MARK;
	e->label_len = len;
	e->log_sectors = entry_log_sectors(fc, 0);
	memcpy(e->label, label, len);

	/* a suspend that started meanwhile has not drained the log yet */
	spin_lock_irq(&fc->lock);
	if (fc->suspended) {
		spin_unlock_irq(&fc->lock);
		release_log_space(fc, e->log_sectors);
		free_pending_entry(fc, e);
		return -EBUSY;
	}
	e->submit_tick = atomic64_inc_return(&fc->tick);
	e->complete_tick = e->submit_tick;
	e->time_ns = ktime_get_ns();
	__queue_ready(fc, e);
	spin_unlock_irq(&fc->lock);
	return 0;
}

static int flushlog_message(struct dm_target *ti, unsigned int argc,
			    char **argv, char *result, unsigned int maxlen)
{
	struct flushlog_c *fc = ti->private;

	if (argc == 2 && !strcasecmp(argv[0], "mark"))
		return add_mark(fc, argv[1]);
	DMWARN_LIMIT("%s: unrecognised message '%s' (expected: mark <label>)",
		     fc->log_dev->name, argc ? argv[0] : "");
	return -EINVAL;
}

/*
 * Status:
 *   INFO:  <state> <entries> <flush points> <marks> <log sectors used>
 *          <log sectors free> <memory bytes> <peak memory bytes>
 *   TABLE: <data_dev> <log_dev> [<#feature args> <feature args>...]
 */
static void flushlog_status(struct dm_target *ti, status_type_t type,
			    unsigned int status_flags, char *result,
			    unsigned int maxlen)
{
	struct flushlog_c *fc = ti->private;
	unsigned int sz = 0, nr_features;
	u64 pending, peak_pending;
	const char *state;
	sector_t reserved;

	switch (type) {
	case STATUSTYPE_INFO:
		spin_lock_irq(&fc->lock);
		state = logging_state_names[fc->state];
		if (fc->state == LOGGING_ON && fc->filled)
			state = "full";	/* on_full=fail: full, still logging */
		if (fc->suspended && fc->state != LOGGING_RETIRED)
			state = "suspended";
		reserved = fc->reserved;
		pending = fc->pending;
		peak_pending = fc->peak_pending;
		spin_unlock_irq(&fc->lock);
		DMEMIT("%s %llu %llu %llu %llu %llu %llu %llu", state,
		       READ_ONCE(fc->next_seq), READ_ONCE(fc->nr_flush_points),
		       READ_ONCE(fc->nr_marks),
		       (unsigned long long)READ_ONCE(fc->next_sector),
		       (unsigned long long)(fc->log_capacity -
					    min(reserved, fc->log_capacity)),
		       pending, peak_pending);
		break;
	case STATUSTYPE_TABLE:
		nr_features = fc->on_full_fail + fc->no_data +
			      fc->data_crc32c + !!fc->max_pending_mib;
		DMEMIT("%s %s", fc->data_dev->name, fc->log_dev->name);
		if (nr_features)
			DMEMIT(" %u", nr_features);
		if (fc->on_full_fail)
			DMEMIT(" on_full=fail");
		if (fc->no_data)
			DMEMIT(" no_data");
		if (fc->data_crc32c)
			DMEMIT(" data_checksum=crc32c");
		if (fc->max_pending_mib)
			DMEMIT(" max_pending=%u", fc->max_pending_mib);
		break;
	case STATUSTYPE_IMA:
		*result = '\0';
		break;
	}
}

/* Ioctls go to the data device and are not logged, as with dm-log-writes. */
static int flushlog_prepare_ioctl(struct dm_target *ti,
				  struct block_device **bdev)
{
	struct flushlog_c *fc = ti->private;

	*bdev = fc->data_dev->bdev;
	return ti->len != bdev_nr_sectors(*bdev);
}

static int flushlog_iterate_devices(struct dm_target *ti,
				    iterate_devices_callout_fn fn, void *data)
{
	struct flushlog_c *fc = ti->private;

	return fn(ti, fc->data_dev, 0, ti->len, data);
}

static struct target_type flushlog_target = {
	.name = "flushlog",
	.version = {2, 1, 0},
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
	.prepare_ioctl = flushlog_prepare_ioctl,
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

MODULE_DESCRIPTION(DM_NAME " target logging writes with their durability order");
MODULE_LICENSE("GPL");
