// SPDX-License-Identifier: GPL-2.0
/*
 * dm-flushlog: pass every bio through to a data device and record every
 * write, with its data and its REQ_PREFLUSH / REQ_FUA / discard /
 * write-zeroes flags, to a log device, in durability order.
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
#include <linux/module.h>
#include <linux/mutex.h>
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
 * Log ordering.  A write is durable on a device with a volatile cache only
 * once it completed with REQ_FUA, or once a cache flush that was issued
 * after the write completed has itself completed.  The log is kept in
 * that order, so that the writes of entries 0..k are exactly those
 * guaranteed to be on the media when entry k (a flush, a FUA write or a
 * mark) was logged:
 *
 *  - a completed write goes onto the unflushed list, in completion order;
 *  - a completed FUA write is queued for the log at once;
 *  - a completed flush queues every unflushed write that had completed
 *    before the flush was issued, then itself;
 *  - a mark is queued at once.
 *
 * W means submitted, C completed, F a flush, FUA a FUA write:
 *
 *   Wa Wb Wc Cc Ca F FUAd Cb CFUAd CF
 *
 * is logged as
 *
 *   d c a F              (and b after the next flush)
 *
 * Every logged bio carries the tick (one counter for the whole target) of
 * its submission and of its completion, so that a reader can also tell
 * which later writes were in flight, and so might be durable, at any
 * point.  Device-mapper core splits a flush with data into an empty flush
 * and the data, so this target sees REQ_PREFLUSH on empty bios only.
 *
 * The log device holds a super block and then the entries, one header
 * block each followed by the data; include/uapi/linux/dm-flushlog.h
 * describes the format.  Entries are written by an ordered work item in
 * large sequential bios; the data path never waits for the log.
 */

enum log_state {
	LOG_IDLE,	/* not resumed yet: nothing written */
	LOG_LOGGING,
	LOG_FULL,	/* on_full=stop and the log filled up */
	LOG_ERROR,	/* a log write failed */
	LOG_RETIRED,	/* a newer table took over the log device */
};

static const char *const log_state_names[] = {
	[LOG_IDLE] = "idle",
	[LOG_LOGGING] = "logging",
	[LOG_FULL] = "full",
	[LOG_ERROR] = "error",
	[LOG_RETIRED] = "retired",
};

/* One entry waiting for its place in the log. */
struct pending_entry {
	struct list_head list;
	u64 submit_tick;
	u64 complete_tick;
	u64 time_ns;
	sector_t sector;
	u32 nr_sectors;
	u32 data_len;		/* bytes of data in pages[] */
	u16 op;
	u16 flags;
	u32 label_len;
	u8 label[FLUSHLOG_LABEL_MAX];
	unsigned int nr_pages;
	struct page *pages[];	/* the data, copied when the bio was mapped */
};

struct flushlog_c {
	struct dm_dev *data_dev;
	struct dm_dev *log_dev;
	bool on_full_fail;	/* fail writes with -ENOSPC when full */
	bool no_data;		/* log headers only */
	u32 log_block_size;	/* bytes; one entry header each */
	sector_t log_capacity;	/* sectors of the log device */
	sector_t data_sectors;	/* sectors this target maps */
	uuid_t uuid;
	u64 create_time_ns;

	atomic64_t tick;

	/* lock protects the fields up to the next blank line */
	spinlock_t lock;
	enum log_state state;
	bool filled;			/* an entry did not fit */
	struct list_head unflushed;	/* completed, no flush covers them yet */
	struct list_head ready;		/* in log order, to be written */
	sector_t reserved;		/* log sectors promised, super included */

	/* owned by log_work; read locklessly by status */
	u64 next_seq;
	sector_t next_sector;
	u64 nr_flush_points;
	u64 nr_marks;
	struct page *hdr_page;		/* headers are carved out of it */
	unsigned int hdr_offset;

	struct workqueue_struct *wq;
	struct work_struct log_work;
	struct bio_set bs;
	atomic_t log_ios;		/* log bios in flight */
	wait_queue_head_t log_io_wait;
	bool log_error_reported;

	struct list_head instances;	/* on flushlog_instances */
};

struct per_bio_data {
	struct pending_entry *entry;	/* NULL: the bio is not logged */
};

/* Targets by log device, so that a new table retires the old one. */
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

static u32 flushlog_crc(const void *buf, size_t len)
{
	return ~crc32c(~0U, buf, len);
}

static void free_pending_entry(struct pending_entry *e)
{
	unsigned int i;

	for (i = 0; i < e->nr_pages; i++)
		if (e->pages[i])
			__free_page(e->pages[i]);
	kfree(e);
}

static void free_entry_list(struct list_head *head)
{
	struct pending_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, head, list) {
		list_del(&e->list);
		free_pending_entry(e);
	}
}

static struct pending_entry *alloc_pending_entry(unsigned int nr_pages,
						 gfp_t gfp)
{
	struct pending_entry *e;

	e = kzalloc(struct_size(e, pages, nr_pages), gfp);
	if (!e)
		return NULL;
	INIT_LIST_HEAD(&e->list);
	e->nr_pages = nr_pages;
	return e;
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

/* Copy the bio's data: it may change once the bio has completed. */
static int copy_bio_data(struct pending_entry *e, struct bio *bio)
{
	struct bvec_iter iter;
	struct bio_vec bv;
	unsigned int i, pos = 0;

	for (i = 0; i < e->nr_pages; i++) {
		e->pages[i] = alloc_page(GFP_NOIO);
		if (!e->pages[i])
			return -ENOMEM;
	}
	bio_for_each_segment(bv, bio, iter) {
		unsigned int done = 0;

		while (done < bv.bv_len) {
			struct page *dst = e->pages[pos >> PAGE_SHIFT];
			unsigned int off = offset_in_page(pos);
			unsigned int len = min(bv.bv_len - done,
					       (unsigned int)PAGE_SIZE - off);

			copy_to_page(dst, off, bv.bv_page, bv.bv_offset + done,
				     len);
			done += len;
			pos += len;
		}
	}
	return 0;
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

/*
 * Promise log space to an entry.  Returns false when the entry must not
 * be logged; *fail then says whether the bio must fail (on_full=fail).
 */
static bool reserve_log_space(struct flushlog_c *fc, sector_t sectors,
			      bool *fail)
{
	unsigned long flags;
	bool ok = false;

	*fail = false;
	spin_lock_irqsave(&fc->lock, flags);
	if (fc->state != LOG_LOGGING)
		goto out;
	if (fc->reserved + sectors > fc->log_capacity) {
		if (!fc->filled)
			DMWARN("%s: log device full, %s", fc->log_dev->name,
			       fc->on_full_fail ? "failing writes that do not fit" :
						  "logging stopped");
		fc->filled = true;
		if (fc->on_full_fail)
			*fail = true;
		else
			fc->state = LOG_FULL;
		goto out;
	}
	fc->reserved += sectors;
	ok = true;
out:
	spin_unlock_irqrestore(&fc->lock, flags);
	return ok;
}

/* Build the entry of a write-type bio; NULL with *fail if it must fail. */
static struct pending_entry *prepare_entry(struct flushlog_c *fc,
					   struct dm_target *ti,
					   struct bio *bio, bool *fail)
{
	u16 op = bio_entry_op(bio);
	bool keep_data = op == FLUSHLOG_OP_WRITE && !fc->no_data;
	u32 data_len = keep_data ? bio->bi_iter.bi_size : 0;
	struct pending_entry *e;

	if (!reserve_log_space(fc, entry_log_sectors(fc, data_len), fail))
		return NULL;
	e = alloc_pending_entry(DIV_ROUND_UP(data_len, PAGE_SIZE), GFP_NOIO);
	if (!e || (keep_data && copy_bio_data(e, bio))) {
		/* the bio goes on; its log would now have a hole */
		DMERR_LIMIT("%s: out of memory for a log entry, logging stopped",
			    fc->log_dev->name);
		if (e)
			free_pending_entry(e);
		spin_lock_irq(&fc->lock);
		if (fc->state == LOG_LOGGING)
			fc->state = LOG_ERROR;
		spin_unlock_irq(&fc->lock);
		return NULL;
	}
	e->op = op;
	e->flags = bio_entry_flags(bio);
	if (op != FLUSHLOG_OP_FLUSH) {
		e->sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
		e->nr_sectors = bio_sectors(bio);
	}
	if (op == FLUSHLOG_OP_WRITE && fc->no_data)
		e->flags |= FLUSHLOG_F_NO_DATA;
	e->data_len = data_len;
	e->submit_tick = atomic64_inc_return(&fc->tick);
	return e;
}

/*
 * Under fc->lock: a flush issued at submit_tick has completed, so every
 * write that completed before that tick is now durable.
 */
static void __queue_covered_writes(struct flushlog_c *fc, u64 submit_tick)
{
	struct pending_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &fc->unflushed, list) {
		if (e->complete_tick >= submit_tick)
			break;	/* the list is in completion order */
		list_move_tail(&e->list, &fc->ready);
	}
}

/*
 * Construct a flushlog mapping:
 *
 *   flushlog <data_dev_path> <log_dev_path> [<#feature args> [<arg>]*]
 *
 * Feature arguments:
 *   on_full=stop   when the log device is full, stop logging and go on
 *                  serving I/O (the default)
 *   on_full=fail   when the log device is full, fail writes with -ENOSPC
 *   no_data        log the headers of writes but not their data
 *
 * The log starts afresh when the table is first resumed.
 */
static int parse_features(struct dm_arg_set *as, struct flushlog_c *fc,
			  struct dm_target *ti)
{
	static const struct dm_arg _args[] = {
		{0, 2, "Invalid number of feature arguments"},
	};
	bool have_on_full = false;
	unsigned int argc;
	const char *arg;
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

static void flushlog_dtr(struct dm_target *ti);
static void flushlog_log_work(struct work_struct *work);

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
	INIT_LIST_HEAD(&fc->unflushed);
	INIT_LIST_HEAD(&fc->ready);
	INIT_LIST_HEAD(&fc->instances);
	init_waitqueue_head(&fc->log_io_wait);
	atomic_set(&fc->log_ios, 0);
	INIT_WORK(&fc->log_work, flushlog_log_work);
	fc->state = LOG_IDLE;
	fc->data_sectors = ti->len;

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
	r = check_devices(fc, ti);
	if (r)
		goto bad;

	r = bioset_init(&fc->bs, 64, 0, BIOSET_NEED_BVECS);
	if (r) {
		ti->error = "Cannot allocate log bioset";
		goto bad;
	}
	fc->wq = alloc_ordered_workqueue("dm-" DM_MSG_PREFIX, WQ_MEM_RECLAIM);
	if (!fc->wq) {
		ti->error = "Cannot allocate workqueue";
		r = -ENOMEM;
		goto bad;
	}

	mutex_lock(&flushlog_instances_lock);
	list_add_tail(&fc->instances, &flushlog_instances);
	mutex_unlock(&flushlog_instances_lock);

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

/* Called from log_work only: take the next header slot. */
static struct flushlog_entry *next_header_slot(struct flushlog_c *fc,
					       struct page **page,
					       unsigned int *offset)
{
	if (!fc->hdr_page || fc->hdr_offset + fc->log_block_size > PAGE_SIZE) {
		if (fc->hdr_page)
			put_page(fc->hdr_page);
		fc->hdr_page = alloc_page(GFP_NOIO | __GFP_ZERO);
		fc->hdr_offset = 0;
		if (!fc->hdr_page)
			return NULL;
	}
	*page = fc->hdr_page;
	*offset = fc->hdr_offset;
	fc->hdr_offset += fc->log_block_size;
	get_page(*page);	/* the log bio's reference */
	return page_address(*page) + *offset;
}

static u32 data_crc(struct pending_entry *e)
{
	u32 crc = ~0U, left = e->data_len;
	unsigned int i;

	for (i = 0; left; i++) {
		u32 len = min_t(u32, left, PAGE_SIZE);
		void *p = kmap_local_page(e->pages[i]);

		crc = crc32c(crc, p, len);
		kunmap_local(p);
		left -= len;
	}
	return ~crc;
}

static void fill_header(struct flushlog_c *fc, struct flushlog_entry *h,
			struct pending_entry *e)
{
	memset(h, 0, fc->log_block_size);
	h->magic = cpu_to_le32(FLUSHLOG_ENTRY_MAGIC);
	memcpy(&h->log_id, fc->uuid.b, sizeof(h->log_id));
	h->seq = cpu_to_le64(fc->next_seq);
	h->sector = cpu_to_le64(e->sector);
	h->nr_sectors = cpu_to_le32(e->nr_sectors);
	h->data_len = cpu_to_le32(e->data_len);
	h->op = cpu_to_le16(e->op);
	h->flags = cpu_to_le16(e->flags);
	h->data_crc = cpu_to_le32(e->data_len ? data_crc(e) : 0);
	h->submit_tick = cpu_to_le64(e->submit_tick);
	h->complete_tick = cpu_to_le64(e->complete_tick);
	h->time_ns = cpu_to_le64(e->time_ns);
	h->label_len = cpu_to_le32(e->label_len);
	memcpy(h->label, e->label, e->label_len);
	h->crc = cpu_to_le32(flushlog_crc(h, FLUSHLOG_HEADER_SIZE));
}

static void log_end_io(struct bio *bio)
{
	struct flushlog_c *fc = bio->bi_private;
	struct bvec_iter_all iter;
	struct bio_vec *bv;
	unsigned long flags;

	if (bio->bi_status) {
		spin_lock_irqsave(&fc->lock, flags);
		if (fc->state == LOG_LOGGING || fc->state == LOG_FULL)
			fc->state = LOG_ERROR;
		spin_unlock_irqrestore(&fc->lock, flags);
		if (!xchg(&fc->log_error_reported, true))
			DMERR("%s: log write failed (%d), logging stopped",
			      fc->log_dev->name,
			      blk_status_to_errno(bio->bi_status));
	}
	bio_for_each_segment_all(bv, bio, iter)
		put_page(bv->bv_page);
	bio_put(bio);
	if (atomic_dec_and_test(&fc->log_ios))
		wake_up(&fc->log_io_wait);
}

static struct bio *new_log_bio(struct flushlog_c *fc)
{
	struct bio *bio;

	bio = bio_alloc_bioset(fc->log_dev->bdev, BIO_MAX_VECS, REQ_OP_WRITE,
			       GFP_NOIO, &fc->bs);
	bio->bi_iter.bi_sector = fc->next_sector;
	bio->bi_end_io = log_end_io;
	bio->bi_private = fc;
	atomic_inc(&fc->log_ios);
	return bio;
}

/*
 * Add a page to the log bio, which is submitted and replaced when full.
 * The bio takes over one reference to the page.
 */
static void add_log_page(struct flushlog_c *fc, struct bio **bio,
			 struct page *page, unsigned int len,
			 unsigned int offset)
{
	if (!*bio)
		*bio = new_log_bio(fc);
	if (bio_add_page(*bio, page, len, offset) != len) {
		submit_bio(*bio);
		*bio = new_log_bio(fc);
		__bio_add_page(*bio, page, len, offset);
	}
	fc->next_sector += len >> SECTOR_SHIFT;
}

/* Write one entry: its header, then its data, padded to a log block. */
static int write_entry(struct flushlog_c *fc, struct bio **bio,
		       struct pending_entry *e)
{
	u32 pad = round_up(e->data_len, fc->log_block_size) - e->data_len;
	struct flushlog_entry *h;
	struct page *page;
	unsigned int i, offset;
	u32 left = e->data_len;

	h = next_header_slot(fc, &page, &offset);
	if (!h)
		return -ENOMEM;
	fill_header(fc, h, e);
	add_log_page(fc, bio, page, fc->log_block_size, offset);
	for (i = 0; left; i++) {
		u32 len = min_t(u32, left, PAGE_SIZE);

		add_log_page(fc, bio, e->pages[i], len, 0);
		e->pages[i] = NULL;	/* the bio owns it now */
		left -= len;
	}
	if (pad) {
		get_page(ZERO_PAGE(0));
		add_log_page(fc, bio, ZERO_PAGE(0), pad, 0);
	}
	fc->next_seq++;
	if (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_FUA))
		fc->nr_flush_points++;
	else if (e->op == FLUSHLOG_OP_MARK)
		fc->nr_marks++;
	return 0;
}

static void flushlog_log_work(struct work_struct *work)
{
	struct flushlog_c *fc = container_of(work, struct flushlog_c, log_work);
	struct pending_entry *e, *tmp;
	struct bio *bio = NULL;
	LIST_HEAD(batch);
	bool logging;

	spin_lock_irq(&fc->lock);
	list_splice_init(&fc->ready, &batch);
	logging = fc->state == LOG_LOGGING || fc->state == LOG_FULL;
	spin_unlock_irq(&fc->lock);

	list_for_each_entry_safe(e, tmp, &batch, list) {
		list_del(&e->list);
		if (logging && write_entry(fc, &bio, e)) {
			DMERR("%s: out of memory for a log header, logging stopped",
			      fc->log_dev->name);
			spin_lock_irq(&fc->lock);
			fc->state = LOG_ERROR;
			spin_unlock_irq(&fc->lock);
			logging = false;
		}
		free_pending_entry(e);
	}
	if (bio)
		submit_bio(bio);
}

static void queue_log_work(struct flushlog_c *fc)
{
	queue_work(fc->wq, &fc->log_work);
}

/* Wait until every queued entry is on the log device. */
static void drain_log(struct flushlog_c *fc)
{
	flush_workqueue(fc->wq);
	wait_event(fc->log_io_wait, !atomic_read(&fc->log_ios));
}

static int write_super(struct flushlog_c *fc, enum flushlog_state state)
{
	struct flushlog_super *sb;
	struct page *page;
	struct bio *bio;
	u32 flags = 0;
	int r;

	page = alloc_page(GFP_NOIO | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	if (fc->no_data)
		flags |= FLUSHLOG_SF_NO_DATA;
	if (fc->filled)
		flags |= FLUSHLOG_SF_FULL;
	if (fc->state == LOG_ERROR)
		flags |= FLUSHLOG_SF_ERROR;
	sb = page_address(page);
	sb->magic = cpu_to_le64(FLUSHLOG_SUPER_MAGIC);
	sb->version = cpu_to_le32(FLUSHLOG_VERSION);
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
	bio = bio_alloc(fc->log_dev->bdev, 1,
			REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA | REQ_SYNC,
			GFP_NOIO);
	bio->bi_iter.bi_sector = 0;
	__bio_add_page(bio, page, fc->log_block_size, 0);
	r = submit_bio_wait(bio);
	bio_put(bio);
	__free_page(page);
	return r;
}

/* Stop every other target logging to the same device: it is ours now. */
static void retire_other_instances(struct flushlog_c *fc)
{
	struct flushlog_c *other;

	mutex_lock(&flushlog_instances_lock);
	list_for_each_entry(other, &flushlog_instances, instances) {
		if (other == fc || other->log_dev->bdev != fc->log_dev->bdev)
			continue;
		spin_lock_irq(&other->lock);
		other->state = LOG_RETIRED;
		spin_unlock_irq(&other->lock);
	}
	mutex_unlock(&flushlog_instances_lock);
}

/* Start a new log, or mark the log open again after a suspend. */
static int flushlog_preresume(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;
	int r;

	if (fc->state == LOG_RETIRED)
		return 0;
	if (fc->state == LOG_IDLE) {
		retire_other_instances(fc);
		uuid_gen(&fc->uuid);
		fc->create_time_ns = ktime_get_real_ns();
		fc->next_sector = log_block_sectors(fc);
		fc->reserved = fc->next_sector;
	}
	r = write_super(fc, FLUSHLOG_STATE_DIRTY);
	if (r) {
		DMERR("%s: cannot write the log super block: %d",
		      fc->log_dev->name, r);
		return r;
	}
	spin_lock_irq(&fc->lock);
	if (fc->state == LOG_IDLE)
		fc->state = LOG_LOGGING;
	spin_unlock_irq(&fc->lock);
	return 0;
}

/*
 * Suspended: no bio is in flight.  Everything durable is logged and the
 * super block says so; writes no flush covers yet stay in memory, to be
 * logged when a flush covers them or when the target goes away.
 */
static void flushlog_postsuspend(struct dm_target *ti)
{
	struct flushlog_c *fc = ti->private;

	if (fc->state == LOG_IDLE || fc->state == LOG_RETIRED)
		return;
	drain_log(fc);
	if (write_super(fc, FLUSHLOG_STATE_CLEAN))
		DMERR("%s: cannot write the log super block",
		      fc->log_dev->name);
}

/* Close the log: the writes no flush covered go last, then the super. */
static void close_log(struct flushlog_c *fc)
{
	if (fc->state == LOG_IDLE || fc->state == LOG_RETIRED)
		return;
	spin_lock_irq(&fc->lock);
	list_splice_tail_init(&fc->unflushed, &fc->ready);
	spin_unlock_irq(&fc->lock);
	queue_log_work(fc);
	drain_log(fc);
	if (write_super(fc, FLUSHLOG_STATE_CLEAN))
		DMERR("%s: cannot write the log super block",
		      fc->log_dev->name);
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
	free_entry_list(&fc->unflushed);
	free_entry_list(&fc->ready);
	if (fc->hdr_page)
		put_page(fc->hdr_page);
	bioset_exit(&fc->bs);
	if (fc->log_dev)
		dm_put_device(ti, fc->log_dev);
	if (fc->data_dev)
		dm_put_device(ti, fc->data_dev);
	kfree(fc);
}

static int flushlog_map(struct dm_target *ti, struct bio *bio)
{
	struct flushlog_c *fc = ti->private;
	struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));
	bool fail;

	pb->entry = NULL;
	bio_set_dev(bio, fc->data_dev->bdev);
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	if (bio_data_dir(bio) != WRITE ||
	    READ_ONCE(fc->state) != LOG_LOGGING ||
	    (!bio_sectors(bio) && !(bio->bi_opf & REQ_PREFLUSH)))
		return DM_MAPIO_REMAPPED;

	pb->entry = prepare_entry(fc, ti, bio, &fail);
	if (fail) {
		bio->bi_status = BLK_STS_NOSPC;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	return DM_MAPIO_REMAPPED;
}

static int flushlog_end_io(struct dm_target *ti, struct bio *bio,
			   blk_status_t *error)
{
	struct flushlog_c *fc = ti->private;
	struct per_bio_data *pb = dm_per_bio_data(bio, sizeof(*pb));
	struct pending_entry *e = pb->entry;
	unsigned long flags;
	bool ready = true;

	if (!e)
		return DM_ENDIO_DONE;
	pb->entry = NULL;
	if (*error) {
		/* what a failed write left on the media is unknown */
		free_pending_entry(e);
		return DM_ENDIO_DONE;
	}

	spin_lock_irqsave(&fc->lock, flags);
	e->complete_tick = atomic64_inc_return(&fc->tick);
	e->time_ns = ktime_get_ns();
	if (e->op == FLUSHLOG_OP_FLUSH)
		__queue_covered_writes(fc, e->submit_tick);
	if (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_FUA)) {
		list_add_tail(&e->list, &fc->ready);
	} else {
		list_add_tail(&e->list, &fc->unflushed);
		ready = false;
	}
	spin_unlock_irqrestore(&fc->lock, flags);
	if (ready)
		queue_log_work(fc);
	return DM_ENDIO_DONE;
}

static int add_mark(struct flushlog_c *fc, const char *label)
{
	size_t len = strlen(label);
	struct pending_entry *e;
	bool fail;

	if (!len || len > FLUSHLOG_LABEL_MAX) {
		DMWARN("%s: mark label must be 1 to %d bytes",
		       fc->log_dev->name, FLUSHLOG_LABEL_MAX);
		return -EINVAL;
	}
	if (!reserve_log_space(fc, entry_log_sectors(fc, 0), &fail)) {
		DMWARN("%s: mark '%s' not logged: the log is %s",
		       fc->log_dev->name, label,
		       log_state_names[READ_ONCE(fc->state)]);
		return -ENOSPC;
	}
	e = alloc_pending_entry(0, GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->op = FLUSHLOG_OP_MARK;
	e->label_len = len;
	memcpy(e->label, label, len);

	spin_lock_irq(&fc->lock);
	e->submit_tick = atomic64_inc_return(&fc->tick);
	e->complete_tick = e->submit_tick;
	e->time_ns = ktime_get_ns();
	list_add_tail(&e->list, &fc->ready);
	spin_unlock_irq(&fc->lock);
	queue_log_work(fc);
	return 0;
}

static int flushlog_message(struct dm_target *ti, unsigned int argc,
			    char **argv, char *result, unsigned int maxlen)
{
	struct flushlog_c *fc = ti->private;

	if (argc == 2 && !strcasecmp(argv[0], "mark"))
		return add_mark(fc, argv[1]);
	DMWARN("%s: unrecognised message '%s' (expected: mark <label>)",
	       fc->log_dev->name, argc ? argv[0] : "");
	return -EINVAL;
}

/*
 * Status:
 *   INFO:  <state> <entries> <flush points> <marks> <log sectors used>
 *          <log sectors free>
 *   TABLE: <data_dev> <log_dev> [<#feature args> <feature args>...]
 */
static void flushlog_status(struct dm_target *ti, status_type_t type,
			    unsigned int status_flags, char *result,
			    unsigned int maxlen)
{
	struct flushlog_c *fc = ti->private;
	unsigned int sz = 0, nr_features;
	enum log_state state;
	sector_t reserved;

	switch (type) {
	case STATUSTYPE_INFO:
		spin_lock_irq(&fc->lock);
		state = fc->state;
		if (state == LOG_LOGGING && fc->filled)
			state = LOG_FULL;	/* on_full=fail: full, still logging */
		reserved = fc->reserved;
		spin_unlock_irq(&fc->lock);
		DMEMIT("%s %llu %llu %llu %llu %llu", log_state_names[state],
		       READ_ONCE(fc->next_seq), READ_ONCE(fc->nr_flush_points),
		       READ_ONCE(fc->nr_marks),
		       (unsigned long long)READ_ONCE(fc->next_sector),
		       (unsigned long long)(fc->log_capacity -
					    min(reserved, fc->log_capacity)));
		break;
	case STATUSTYPE_TABLE:
		nr_features = fc->on_full_fail + fc->no_data;
		DMEMIT("%s %s", fc->data_dev->name, fc->log_dev->name);
		if (nr_features)
			DMEMIT(" %u%s%s", nr_features,
			       fc->on_full_fail ? " on_full=fail" : "",
			       fc->no_data ? " no_data" : "");
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

MODULE_DESCRIPTION(DM_NAME " target logging writes in durability order");
MODULE_LICENSE("GPL");
