// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Replaying entries onto an image.  Each write's data goes from the log to
 * the image the cheapest way that keeps two promises: nothing of a write
 * whose data checksum does not match reaches the image, and the bytes
 * checked are the bytes written.
 *
 *  - A clone (FICLONERANGE) where the log and the image share a filesystem
 *    that shares blocks (XFS, btrfs) and the data is block aligned in both:
 *    nothing is copied, and the image shares those blocks with the log
 *    until either is written there.  Data with a checksum is read and
 *    checked first.  The first clone that fails turns cloning off for the
 *    replay.  A dm-log-writes log of a 4 KiB-sector device has all its data
 *    aligned; a flushlog log only with log blocks of the filesystem's block
 *    size (a log device of 4 KiB sectors), else just the writes that happen
 *    to land aligned.  A clone shares the log's blocks as they are when it
 *    runs: a log rewritten while it is replayed is not a log to replay.
 *  - A copy in the kernel (copy_file_range) of data with no checksum to
 *    check (dm-log-writes; a log whose checksums were checked when it was
 *    opened) where the log and the image share a filesystem: one copy and
 *    one call an entry, where reading and writing through a buffer copy
 *    twice in two calls.
 *  - Else the log is read with pread(), never mapped (log.c): into a
 *    window of 1 MiB, or, on a long replay with a second CPU, by a reader
 *    thread into a ring of buffers, which checks the checksums as it reads
 *    (prefetch.c).  Each entry's checksum is checked in the buffer its data
 *    is then written from, before any of it is; runs of writes to
 *    consecutive sectors go from there to the image in one pwritev().
 *
 * Memory is the window and the reader's four buffers of its size, 5 MiB,
 * whatever the log's size.  FLUSHLOG_NO_KERNEL_COPY (set) and FLUSHLOG_READER (0 or 1) force
 * the choices, for tests and measurements.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "internal.h"

#define RUN_MAX_IOV	512
#define WINDOW_SIZE	(1U << 20)	/* log bytes read at once */
#define PROGRESS_STEP	(256U << 20)	/* bytes of log between reports */
#define PREFETCH_MIN	(8U << 20)	/* data worth a reader thread */
#define PREFETCH_BUF	WINDOW_SIZE	/* each of its buffers: what the window takes */

struct fl_replay {
	struct fl_log *log;
	uint32_t device;		/* the image's device, or FL_ALL_DEVICES */
	int fd;
	bool is_blockdev;
	uint64_t image_bytes;
	uint64_t pos;			/* entries applied so far */
	fl_progress_fn progress;
	void *progress_arg;
	uint64_t next_report;		/* log offset of the next report */
	struct fl_log_window window;
	uint64_t read_limit;		/* log bytes worth reading ahead to */
	struct fl_prefetch *prefetch;	/* fl_replay_to's reader, or NULL */
	/* ways for data to reach the image without passing through us */
	bool can_clone;			/* FICLONERANGE from the log, so far */
	bool can_copy;			/* copy_file_range from the log */
	uint32_t clone_align;		/* image block: what a clone needs */
	struct fl_replay_stats stats;
	/* a run of pending writes to consecutive bytes of the image,
	 * from the window: written before the window is refilled */
	struct iovec iov[RUN_MAX_IOV];
	int nr_iov;
	uint64_t run_start, run_len;
	/* what entries that overtook older ones hold of the image */
	struct fl_newer newer;
	uint64_t checked;		/* the last entry whose data was checked */
	/* the callbacks' error; fl_state_apply: what the discards left */
	struct fl_error *err;
	struct fl_ranges *kept;
};

static int
write_run(struct fl_replay *r, struct fl_error *err)
{
	struct iovec *iov = r->iov;
	uint64_t off = r->run_start;
	int cnt = r->nr_iov;

	while (cnt) {
		ssize_t done = pwritev(r->fd, iov, cnt, (off_t)off);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
					    FL_NO_ENTRY,
					    "cannot write %" PRIu64 " bytes at image offset %" PRIu64 ": %s",
					    r->run_len, r->run_start,
					    done ? strerror(errno) : "no progress"),
			       done ? -errno : -EIO;
		off += done;
		while (cnt && (size_t)done >= iov->iov_len) {
			done -= iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (char *)iov->iov_base + done;
			iov->iov_len -= done;
		}
	}
	r->nr_iov = 0;
	r->run_len = 0;
	return 0;
}

static int
queue_write(struct fl_replay *r, const void *data, uint64_t off, uint32_t len,
	    struct fl_error *err)
{
	int ret;

	if (r->nr_iov && (r->run_start + r->run_len != off ||
			  r->nr_iov == RUN_MAX_IOV)) {
		ret = write_run(r, err);
		if (ret)
			return ret;
	}
	if (!r->nr_iov)
		r->run_start = off;
	r->iov[r->nr_iov].iov_base = (void *)data;
	r->iov[r->nr_iov].iov_len = len;
	r->nr_iov++;
	r->run_len += len;
	return 0;
}

static int
write_zeroes(int fd, uint64_t off, uint64_t len)
{
	static const char zeroes[1 << 16];

	while (len) {
		size_t n = len < sizeof(zeroes) ? len : sizeof(zeroes);
		ssize_t done = pwrite(fd, zeroes, n, (off_t)off);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return done ? -errno : -EIO;
		off += done;
		len -= done;
	}
	return 0;
}

int
fl_zero_range(int fd, uint64_t off, uint64_t len, bool is_blockdev)
{
	if (is_blockdev) {
		uint64_t range[2] = { off, len };

		if (!ioctl(fd, BLKZEROOUT, range))
			return 0;
	} else {
		if (!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       (off_t)off, (off_t)len))
			return 0;
		if (!fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			       (off_t)off, (off_t)len))
			return 0;
	}
	return write_zeroes(fd, off, len);
}

/*
 * Can the kernel move data from the log to the image itself?  A copy of
 * no bytes makes the same checks as any other (both regular files, one
 * filesystem or one that copies across): if it passes, copies will.
 * Whether a clone works only a clone tells: the first aligned one tries.
 * FLUSHLOG_NO_KERNEL_COPY (set, not empty) sends everything through our
 * buffers, for tests and measurements.
 */
static void
probe_kernel_copy(struct fl_replay *r, const struct stat *image)
{
	const char *no = getenv("FLUSHLOG_NO_KERNEL_COPY");
	loff_t in = 0, out = 0;

	if ((no && *no) || !S_ISREG(image->st_mode))
		return;
	r->can_copy = !copy_file_range(r->log->fd, &in, r->fd, &out, 0, 0);
	r->can_clone = r->can_copy;
	r->clone_align = image->st_blksize > FLUSHLOG_MIN_BLOCK_SIZE ?
			 (uint32_t)image->st_blksize : FLUSHLOG_MIN_BLOCK_SIZE;
}

int
fl_replay_open(struct fl_log *log, int image_fd, struct fl_replay **rp,
	       struct fl_error *err)
{
	return fl_replay_open_device(log, FL_ALL_DEVICES, image_fd, rp, err);
}

/* Whether entry e is one of the image's devices'. */
static bool
image_takes(const struct fl_replay *r, const struct fl_entry *e)
{
	return r->device == FL_ALL_DEVICES || e->device == r->device;
}

/* Where entry e's range starts in the image. */
static uint64_t
image_sector(const struct fl_replay *r, const struct fl_entry *e)
{
	return r->device == FL_ALL_DEVICES ? fl_entry_image_sector(r->log, e)
					   : e->sector;
}

int
fl_replay_open_device(struct fl_log *log, uint32_t device, int image_fd,
		      struct fl_replay **rp, struct fl_error *err)
{
	const struct fl_log_info *info = &log->info;
	const struct fl_device *dev = fl_log_device(log, device);
	uint64_t need = dev ? dev->sectors : info->image_sectors;
	struct fl_replay *r;
	struct stat st;
	uint64_t size;

	*rp = NULL;
	if ((!dev && device != FL_ALL_DEVICES) || (dev && !dev->sectors))
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "no device %u: the log holds %u%s", device,
				    info->nr_devices,
				    dev ? ", and lists that one as absent" : ""),
		       -EINVAL;
	if (fstat(image_fd, &st) < 0)
		return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
				    FL_NO_ENTRY, "cannot stat the image: %s",
				    strerror(errno)), -errno;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(image_fd, BLKGETSIZE64, &size) < 0)
			return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
					    FL_NO_ENTRY,
					    "cannot get the image's size: %s",
					    strerror(errno)), -errno;
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
	} else {
		return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
				    FL_NO_ENTRY,
				    "the image is not a regular file or block device"),
		       -EINVAL;
	}
	if (info->data_size_known && size < need << FLUSHLOG_SECTOR_SHIFT)
		return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
				    FL_NO_ENTRY,
				    "the image has %" PRIu64 " bytes, smaller than the logged device%s %" PRIu64,
				    size, dev ? "'s" : "s'",
				    need << FLUSHLOG_SECTOR_SHIFT),
		       -ENOSPC;
	r = calloc(1, sizeof(*r));
	if (!r || fl_window_init(&r->window, log, WINDOW_SIZE)) {
		free(r);
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY,
				    FL_NO_ENTRY, "out of memory"), -ENOMEM;
	}
	r->log = log;
	r->device = device;
	r->fd = image_fd;
	r->checked = FL_NO_ENTRY;
	r->is_blockdev = S_ISBLK(st.st_mode);
	r->image_bytes = size;
	probe_kernel_copy(r, &st);
	*rp = r;
	return 0;
}

/*
 * The image holds the first nr_applied entries: note what those of them
 * that overtook older entries hold.  Before the first of them, nothing.
 */
static int
note_applied(struct fl_replay *r, uint64_t nr_applied, struct fl_error *err)
{
	int ret = 0;

	fl_newer_clear(&r->newer);
	for (uint64_t i = r->log->first_overtaking; i < nr_applied && !ret; i++)
		if (image_takes(r, &r->log->entries[i]))
			ret = fl_newer_apply(&r->newer, r->log, i, 0,
					     r->log->entries[i].nr_sectors,
					     NULL, NULL, err);
	return ret;
}

/* The image is declared to hold the state after nr_applied entries. */
int
fl_replay_seek(struct fl_replay *r, uint64_t nr_applied, struct fl_error *err)
{
	if (nr_applied > r->log->info.nr_entries)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot start after entry %" PRIu64 ": the log has %" PRIu64 " entries",
				    nr_applied, r->log->info.nr_entries),
		       -ERANGE;
	r->pos = nr_applied;
	r->checked = FL_NO_ENTRY;	/* what is written is checked anew */
	return note_applied(r, nr_applied, err);
}

static int
entry_error(struct fl_error *err, enum fl_error_source source, uint64_t seq,
	    uint64_t off, const char *what, int ret)
{
	fl_set_error(err, source, seq, off,
		     "entry %" PRIu64 " at offset %" PRIu64 ": %s", seq, off,
		     what);
	return ret;
}

/* A log read failed (log.c names the offset): say for which entry. */
static int
name_entry(struct fl_error *err, uint64_t seq, int ret)
{
	if (ret && err && (err->source == FL_ERR_LOG || err->source == FL_ERR_IO) &&
	    err->entry == FL_NO_ENTRY)
		err->entry = seq;
	return ret;
}

static bool
prefetched(const struct fl_replay *r, uint64_t seq)
{
	return r->prefetch && fl_prefetch_has(r->prefetch, seq);
}

/*
 * Point *data at entry seq's data bytes [skip, skip + len): in the
 * reader's buffer if it reads the entry (and checked it), else in the
 * window.  Moving on to another buffer, or refilling the window, would
 * free what the pending run points to: write it first.
 */
static int
entry_data(struct fl_replay *r, uint64_t seq, uint64_t skip, uint32_t len,
	   const unsigned char **data, struct fl_error *err)
{
	const struct fl_entry *e = &r->log->entries[seq];
	uint64_t off = e->offset + r->log->info.log_block_size + skip;
	bool held;
	int ret;

	if (prefetched(r, seq))
		held = fl_prefetch_holds(r->prefetch, seq);
	else
		held = fl_window_holds(&r->window, off, len);
	if (r->nr_iov && !held) {
		ret = write_run(r, err);
		if (ret)
			return ret;
	}
	if (prefetched(r, seq)) {
		ret = fl_prefetch_get(r->prefetch, seq, data, err);
		if (!ret)
			*data += skip;
		return ret;
	}
	ret = fl_window_read(&r->window, off, len, r->read_limit, data, err);
	return name_entry(err, seq, ret);
}

/*
 * Data that fits the window stays there to be written; larger data (a
 * crafted or unusual log) is read twice, once to check it and once to
 * write it.
 */
static int
checksum_data(struct fl_replay *r, uint64_t seq, struct fl_error *err)
{
	const struct fl_entry *e = &r->log->entries[seq];
	const unsigned char *data;
	char why[96];
	uint32_t crc;
	int ret;

	if (e->data_len <= r->window.cap) {
		ret = entry_data(r, seq, 0, e->data_len, &data, err);
		crc = ret ? 0 : fl_data_checksum(r->log, data, e->data_len);
	} else {
		ret = r->nr_iov ? write_run(r, err) : 0;
		if (!ret)
			ret = fl_window_checksum(&r->window, e->offset +
					    r->log->info.log_block_size,
					    e->data_len, &crc, err);
	}
	if (ret)
		return name_entry(err, seq, ret);
	if (crc == e->data_crc)
		return 0;
	snprintf(why, sizeof(why),
		 "data checksum mismatch (stored 0x%08x, computed 0x%08x)",
		 e->data_crc, crc);
	return entry_error(err, FL_ERR_LOG, seq, e->offset, why, -EBADMSG);
}

/*
 * Entry seq's data matches its checksum.  The reader thread checks what it
 * reads: wait for its word.  Each entry is checked once, before any of it
 * is written, and also when newer entries leave none of it to write: a
 * log with bad data is refused whatever the path through it.
 */
static int
check_data(struct fl_replay *r, uint64_t seq, struct fl_error *err)
{
	const struct fl_entry *e = &r->log->entries[seq];
	const unsigned char *data;
	int ret;

	if (seq == r->checked)
		return 0;
	if (prefetched(r, seq))
		ret = entry_data(r, seq, 0, e->data_len, &data, err);
	else if (!fl_entry_needs_crc(r->log, e))
		ret = 0;
	else
		ret = checksum_data(r, seq, err);
	if (!ret)
		r->checked = seq;
	return ret;
}

/* Queue entry seq's data bytes [skip, skip + len) for image offset dst. */
static int
queue_data(struct fl_replay *r, uint64_t seq, uint64_t skip, uint64_t len,
	   uint64_t dst, struct fl_error *err)
{
	const unsigned char *data;
	int ret;

	r->stats.written_bytes += len;
	while (len) {
		uint32_t n = len < r->window.cap ? len : r->window.cap;

		ret = entry_data(r, seq, skip, n, &data, err);
		if (!ret)
			ret = queue_write(r, data, dst, n, err);
		if (ret)
			return ret;
		skip += n;
		dst += n;
		len -= n;
	}
	return 0;
}

/*
 * Share the log's blocks [src, src + len) with the image at dst.  The
 * first clone that fails (another filesystem, one that cannot share
 * blocks) turns cloning off for this replay: the data is copied instead.
 */
static uint64_t
clone_data(struct fl_replay *r, uint64_t src, uint64_t len, uint64_t dst)
{
	struct file_clone_range range = {
		.src_fd = r->log->fd,
		.src_offset = src,
		.src_length = len,
		.dest_offset = dst,
	};

	if (ioctl(r->fd, FICLONERANGE, &range)) {
		r->can_clone = false;
		return 0;
	}
	r->stats.cloned_bytes += len;
	return len;
}

/*
 * Have the kernel copy the log's bytes [src, src + len) to the image at
 * dst: one copy, against a read and a write through our buffers.  It
 * stops short where the log ends early (it shrank) or the kernel fails;
 * the buffers take the rest, and their read or write names what failed.
 */
static uint64_t
copy_data(struct fl_replay *r, uint64_t src, uint64_t len, uint64_t dst)
{
	uint64_t done = 0;

	while (done < len) {
		loff_t in = (loff_t)(src + done), out = (loff_t)(dst + done);
		ssize_t n = copy_file_range(r->log->fd, &in, r->fd, &out,
					    len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->can_copy = n == 0;
			break;
		}
		done += n;
	}
	r->stats.copied_bytes += done;
	return done;
}

static bool
can_clone(const struct fl_replay *r, uint64_t src, uint64_t len, uint64_t dst)
{
	uint32_t align = r->clone_align;

	return r->can_clone && len && !(src % align) && !(dst % align) &&
	       !(len % align);
}

/*
 * Put entry seq's data bytes [skip, skip + len), already checked, at image
 * offset dst.  Where the kernel can, it moves them itself: a clone where
 * they are block aligned in the log and the image and the filesystem
 * shares blocks, else a copy in the kernel if there is no checksum to
 * check (a checksum needs the bytes read here, and then they are written
 * from where they were checked).  Anything else goes through the buffers.
 */
static int
write_data(struct fl_replay *r, uint64_t seq, uint64_t skip, uint64_t len,
	   uint64_t dst, struct fl_error *err)
{
	const struct fl_entry *e = &r->log->entries[seq];
	uint64_t src = e->offset + r->log->info.log_block_size + skip, done = 0;
	bool copy = r->can_copy && !fl_entry_needs_crc(r->log, e);
	int ret;

	if (!copy && !can_clone(r, src, len, dst))
		return queue_data(r, seq, skip, len, dst, err);
	/* the kernel writes now: what is pending goes first */
	ret = r->nr_iov ? write_run(r, err) : 0;
	if (ret)
		return ret;
	if (can_clone(r, src, len, dst))
		done = clone_data(r, src, len, dst);
	if (!done && copy)
		done = copy_data(r, src, len, dst);
	if (done == len)
		return 0;
	return queue_data(r, seq, skip + done, len - done, dst + done, err);
}

/*
 * Entry seq's sectors [first, first + count): all of them, or the part a
 * torn write or a newer entry left it.
 */
static int
apply_sectors(struct fl_replay *r, uint64_t seq, uint64_t first,
	      uint64_t count, struct fl_error *err)
{
	const struct fl_log *log = r->log;
	const struct fl_entry *e = &log->entries[seq];
	uint64_t skip = first << FLUSHLOG_SECTOR_SHIFT;
	uint64_t len = count << FLUSHLOG_SECTOR_SHIFT;
	uint64_t at = image_sector(r, e);
	uint64_t start = (at << FLUSHLOG_SECTOR_SHIFT) + skip;
	int ret;

	if (!fl_changes_data(e))
		return 0;
	/* 64-bit sums of 32-bit parts: none of these can wrap */
	if (first + count > e->nr_sectors)
		return entry_error(err, FL_ERR_ARG, seq, e->offset,
				   "sectors to apply beyond the entry's", -EINVAL);
	if (at > r->image_bytes >> FLUSHLOG_SECTOR_SHIFT ||
	    start + len > r->image_bytes)
		return entry_error(err, FL_ERR_OUTPUT, seq, e->offset,
				   "range ends beyond the end of the image", -ENOSPC);
	if (e->op != FLUSHLOG_OP_WRITE) {
		ret = r->nr_iov ? write_run(r, err) : 0;
		if (ret)
			return ret;
		ret = fl_zero_range(r->fd, start, len, r->is_blockdev);
		if (ret)
			return fl_set_error(err, FL_ERR_OUTPUT, seq, e->offset,
					    "cannot zero image bytes %" PRIu64 "+%" PRIu64 " for entry %" PRIu64 ": %s",
					    start, len, seq, strerror(-ret)),
			       ret;
		return 0;
	}
	if (e->flags & FLUSHLOG_F_NO_DATA)
		return entry_error(err, FL_ERR_LOG, seq, e->offset,
				   "write logged without its data (a no_data log) cannot be replayed",
				   -ENODATA);
	if (!first && count == e->nr_sectors)
		len = e->data_len;
	else if (skip + len > e->data_len)
		return entry_error(err, FL_ERR_LOG, seq, e->offset,
				   "sectors to apply beyond the entry's data", -EINVAL);
	ret = check_data(r, seq, err);
	if (ret)
		return ret;
	return write_data(r, seq, skip, len, start, err);
}

static int
apply_piece(void *arg, uint64_t seq, uint64_t first, uint64_t count)
{
	struct fl_replay *r = arg;

	return apply_sectors(r, seq, first, count, r->err);
}

typedef int (*piece_fn)(void *arg, uint64_t seq, uint64_t first,
			uint64_t count);

/*
 * Entry seq's sectors [first, first + count), less what newer ones hold,
 * through fn.  Applied (fn apply_piece), its data is checked even when
 * newer entries hold all of its sectors.
 */
static int
newest(struct fl_replay *r, uint64_t seq, uint64_t first, uint64_t count,
       piece_fn fn, void *arg)
{
	const struct fl_entry *e = &r->log->entries[seq];

	if (!image_takes(r, e))	/* another device's image has it */
		return 0;
	if (fn == apply_piece && r->newer.n && e->op == FLUSHLOG_OP_WRITE &&
	    !(e->flags & FLUSHLOG_F_NO_DATA)) {
		int ret = check_data(r, seq, r->err);

		if (ret)
			return ret;
	}
	return fl_newer_apply(&r->newer, r->log, seq, first, count, fn, arg,
			      r->err);
}

/*
 * The window reads ahead over the entries to apply, not past them: up to
 * the end of the last of them in the log.  That is the last entry in a
 * version 1 log, but not always in a version 2 log, whose entries were
 * logged in completion order and are applied in durability order.
 * *to_read: how many bytes of their data must pass through our buffers.
 */
static uint64_t
read_ahead_limit(const struct fl_replay *r, uint64_t to, uint64_t *to_read)
{
	const struct fl_log *log = r->log;
	uint64_t limit = 0;

	*to_read = 0;
	for (uint64_t i = r->pos; i < to; i++) {
		const struct fl_entry *e = &log->entries[i];
		uint64_t end = e->offset + log->info.log_block_size + e->data_len;

		if (!image_takes(r, e))
			continue;	/* another device's: never read */

		if (end > limit)
			limit = end;
		if (fl_entry_needs_crc(log, e) || !r->can_copy)
			*to_read += e->data_len;
	}
	return limit;
}

/* May this process run on more than one CPU? */
static bool
several_cpus(void)
{
	cpu_set_t cpus;

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return sysconf(_SC_NPROCESSORS_ONLN) > 1;
	return CPU_COUNT(&cpus) > 1;
}

/*
 * A long replay gets a reader thread (prefetch.c) if there is a second
 * CPU for it to run on; without one the replay reads for itself.  Data
 * the kernel will copy is not read.  FLUSHLOG_READER=0 or 1 says never
 * or always, for tests and measurements.
 */
static void
start_prefetch(struct fl_replay *r, uint64_t to, uint64_t to_read)
{
	const char *force = getenv("FLUSHLOG_READER");
	bool want = to_read >= PREFETCH_MIN && several_cpus();

	if (force && *force)
		want = strcmp(force, "0") && to_read;
	if (want && fl_prefetch_start(r->log, r->pos, to, r->device,
				      r->read_limit, PREFETCH_BUF, r->can_copy,
				      &r->prefetch))
		r->prefetch = NULL;
}

int
fl_replay_to(struct fl_replay *r, uint64_t nr_applied, struct fl_error *err)
{
	const struct fl_log *log = r->log;
	int ret = 0, flush_ret;
	uint64_t to_read;

	if (nr_applied > log->info.nr_entries)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot replay %" PRIu64 " entries: the log has %" PRIu64,
				    nr_applied, log->info.nr_entries), -ERANGE;
	if (nr_applied < r->pos)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot replay backwards from %" PRIu64 " to %" PRIu64 " entries",
				    r->pos, nr_applied), -EINVAL;
	r->err = err;
	r->read_limit = read_ahead_limit(r, nr_applied, &to_read);
	start_prefetch(r, nr_applied, to_read);
	for (; r->pos < nr_applied; r->pos++) {
		ret = newest(r, r->pos, 0, log->entries[r->pos].nr_sectors,
			     apply_piece, r);
		if (ret)
			break;
		if (r->progress && log->entries[r->pos].offset >= r->next_report) {
			r->progress(r->progress_arg, log->entries[r->pos].offset,
				    log->info.used_bytes);
			r->next_report = log->entries[r->pos].offset + PROGRESS_STEP;
		}
	}
	r->read_limit = 0;
	/* entries before a failed one are applied: pos says how many */
	flush_ret = r->nr_iov ? write_run(r, ret ? NULL : err) : 0;
	/* the run pointed into its buffers: only now can they go */
	fl_prefetch_stop(r->prefetch);
	r->prefetch = NULL;
	if (flush_ret && !ret) {
		r->pos = nr_applied;	/* unknown how much landed */
		return flush_ret;
	}
	return ret;
}

uint64_t
fl_replay_position(const struct fl_replay *r)
{
	return r->pos;
}

_Static_assert(sizeof(struct fl_replay_stats) == FL_REPLAY_STATS_SIZE_VER0,
	       "struct fl_replay_stats grew without a new size");

int
fl_replay_stats(const struct fl_replay *r, struct fl_replay_stats *stats,
		size_t size)
{
	if (size < FL_REPLAY_STATS_SIZE_VER0)
		return -EINVAL;
	/* a caller's struct from an older flushlog.h gets what it knows */
	memcpy(stats, &r->stats, size < sizeof(r->stats) ? size : sizeof(r->stats));
	if (size > sizeof(r->stats))
		memset((char *)stats + sizeof(r->stats), 0,
		       size - sizeof(r->stats));
	return 0;
}

void
fl_replay_set_progress(struct fl_replay *r, fl_progress_fn fn, void *arg)
{
	r->progress = fn;
	r->progress_arg = arg;
	r->next_report = 0;
}

void
fl_replay_close(struct fl_replay *r)
{
	if (!r)
		return;
	fl_window_free(&r->window);
	fl_newer_free(&r->newer);
	free(r);
}

/*
 * The entries a state applies after the first "from", in log order, as
 * (entry, first sector, sector count): up to s->base whole, the extras
 * whole, the torn one in part; each less what newer entries applied
 * before it hold.  The map says what the first "from" hold already.
 */
static int
for_each_applied(struct fl_replay *r, const struct fl_state *s, uint64_t from,
		 piece_fn fn, void *arg)
{
	const struct fl_log *log = r->log;
	bool torn_done = s->torn == FL_NO_ENTRY;
	unsigned int i = 0;
	int ret = 0;

	r->checked = FL_NO_ENTRY;	/* each pass checks what it writes */
	for (uint64_t j = from; j < s->base && !ret; j++)
		ret = newest(r, j, 0, log->entries[j].nr_sectors, fn, arg);
	while (!ret && (i < s->nr_extra || !torn_done)) {
		if (!torn_done && (i == s->nr_extra || s->torn < s->extra[i])) {
			ret = newest(r, s->torn, s->torn_first, s->torn_count,
				     fn, arg);
			torn_done = true;
		} else {
			ret = newest(r, s->extra[i], 0,
				     log->entries[s->extra[i]].nr_sectors,
				     fn, arg);
			i++;
		}
	}
	return ret;
}

/* What the discards of a state left: sectors last changed by a discard. */
static int
note_discard(void *arg, uint64_t seq, uint64_t first, uint64_t count)
{
	struct fl_replay *r = arg;
	const struct fl_entry *e = &r->log->entries[seq];
	struct fl_entry part = *e;

	part.nr_sectors = (uint32_t)count;
	return fl_ranges_update(r->kept, image_sector(r, e) + first, &part);
}

static int
copy_from_base(struct fl_replay *r, int base_fd, uint64_t off, uint64_t len,
	       struct fl_error *err)
{
	static char buf[1 << 16];

	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t got = pread(base_fd, buf, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || pwrite(r->fd, buf, got, (off_t)off) != got)
			return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
					    FL_NO_ENTRY,
					    "cannot copy the base's bytes at %" PRIu64 " back: %s",
					    off, got < 0 ? strerror(errno) :
					    "short read or write"), -EIO;
		off += got;
		len -= got;
	}
	return 0;
}

/* Write entry seq's part over the kept sectors it covers. */
static int
restore_entry(void *arg, uint64_t seq, uint64_t first, uint64_t count)
{
	struct fl_replay *r = arg;
	const struct fl_entry *e = &r->log->entries[seq];
	uint64_t at = image_sector(r, e), start = at + first, end = start + count;
	const struct fl_ranges *kept = r->kept;
	int ret = 0;

	if (e->op == FLUSHLOG_OP_DISCARD || !fl_changes_data(e))
		return 0;
	for (size_t i = fl_ranges_find(kept, start, false);
	     i < kept->n && kept->v[i].start < end && !ret; i++) {
		uint64_t a = kept->v[i].start > start ? kept->v[i].start : start;
		uint64_t b = kept->v[i].end < end ? kept->v[i].end : end;

		if (e->op == FLUSHLOG_OP_WRITE) {
			ret = apply_sectors(r, seq, a - at, b - a, r->err);
		} else {
			ret = r->nr_iov ? write_run(r, r->err) : 0;
			if (!ret)
				ret = fl_zero_range(r->fd, a << FLUSHLOG_SECTOR_SHIFT,
						    (b - a) << FLUSHLOG_SECTOR_SHIFT,
						    r->is_blockdev);
		}
	}
	return ret;
}

/*
 * Give the sectors the state's discards left (not written since) their
 * old contents back: the base's, then each earlier entry's over them, in
 * log order.  The image holds the state with the discards' zeroes.
 */
static int
keep_discards(struct fl_replay *r, int base_fd, const struct fl_state *s,
	      struct fl_error *err)
{
	struct fl_ranges kept = { 0 };
	int ret;

	r->kept = &kept;
	r->err = err;
	fl_newer_clear(&r->newer);
	ret = for_each_applied(r, s, 0, note_discard, r);
	if (ret) {
		fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
			     "out of memory listing discarded sectors");
		goto out;
	}
	for (size_t i = 0; i < kept.n && !ret; i++) {
		uint64_t off = kept.v[i].start << FLUSHLOG_SECTOR_SHIFT;
		uint64_t len = (kept.v[i].end - kept.v[i].start) << FLUSHLOG_SECTOR_SHIFT;

		if (kept.v[i].end > r->image_bytes >> FLUSHLOG_SECTOR_SHIFT) {
			fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY, FL_NO_ENTRY,
				     "a discard ends beyond the end of the image");
			ret = -ENOSPC;
		} else if (base_fd >= 0) {
			ret = copy_from_base(r, base_fd, off, len, err);
		} else {
			ret = fl_zero_range(r->fd, off, len, r->is_blockdev);
			if (ret)
				fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY, FL_NO_ENTRY,
					     "cannot zero image bytes %" PRIu64 "+%" PRIu64 ": %s",
					     off, len, strerror(-ret));
		}
	}
	if (!ret && kept.n) {
		/* the discards kept their sectors' data: none overtook */
		fl_newer_clear(&r->newer);
		r->newer.pass_discards = true;
		ret = for_each_applied(r, s, 0, restore_entry, r);
		r->newer.pass_discards = false;
	}
out:
	fl_ranges_free(&kept);
	r->kept = NULL;
	return ret;
}

/*
 * The image holds the first s->base entries; at_base, if not NULL, is a
 * replay that applied them, whose map of newer entries' sectors saves
 * working it out again from the log.
 */
int
fl_replay_apply_state(struct fl_log *log, const struct fl_replay *at_base,
		      int image_fd, int base_fd, const struct fl_state *s,
		      struct fl_error *err)
{
	struct fl_replay *r;
	int ret;

	ret = fl_replay_open(log, image_fd, &r, err);
	if (ret)
		return ret;
	r->err = err;
	if (at_base)
		ret = fl_newer_copy(&r->newer, &at_base->newer);
	else
		ret = note_applied(r, s->base, err);
	if (ret == -ENOMEM && at_base)
		fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
			     "out of memory copying which sectors newer entries hold");
	/* the extras and the torn entry, merged in log order */
	if (!ret)
		ret = for_each_applied(r, s, s->base, apply_piece, r);
	if (!ret && s->keep_discards)
		ret = keep_discards(r, base_fd, s, err);
	if (r->nr_iov) {
		int flush_ret = write_run(r, ret ? NULL : err);

		ret = ret ? ret : flush_ret;
	}
	fl_replay_close(r);
	return ret;
}

int
fl_state_apply_base(struct fl_log *log, int image_fd, int base_fd,
		    const struct fl_state *s, struct fl_error *err)
{
	return fl_replay_apply_state(log, NULL, image_fd, base_fd, s, err);
}

int
fl_state_apply(struct fl_log *log, int image_fd, const struct fl_state *s,
	       struct fl_error *err)
{
	return fl_state_apply_base(log, image_fd, -1, s, err);
}
