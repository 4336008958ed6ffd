// SPDX-License-Identifier: GPL-2.0
/*
 * Replaying entries onto an image.  The log is mapped, so data goes from
 * the mapping straight to pwritev(): runs of writes to consecutive sectors
 * become one call, and each entry's data checksum is checked just before
 * its data is used, so a bad entry is never applied.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
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
#define RUN_MAX_BYTES	(32U << 20)
#define PROGRESS_STEP	(256U << 20)	/* bytes of log between reports */

struct fl_replay {
	struct fl_log *log;
	int fd;
	bool is_blockdev;
	uint64_t image_bytes;
	uint64_t pos;			/* entries applied so far */
	fl_progress_fn progress;
	void *progress_arg;
	uint64_t next_report;		/* log offset of the next report */
	/* a run of pending writes to consecutive bytes of the image */
	struct iovec iov[RUN_MAX_IOV];
	int nr_iov;
	uint64_t run_start, run_len;
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
			  r->nr_iov == RUN_MAX_IOV ||
			  r->run_len + len > RUN_MAX_BYTES)) {
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

int
fl_replay_open(struct fl_log *log, int image_fd, struct fl_replay **rp,
	       struct fl_error *err)
{
	const struct fl_log_info *info = &log->info;
	struct fl_replay *r;
	struct stat st;
	uint64_t size;

	*rp = NULL;
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
	if (info->data_size_known &&
	    size < info->data_sectors << FLUSHLOG_SECTOR_SHIFT)
		return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
				    FL_NO_ENTRY,
				    "the image has %" PRIu64 " bytes, smaller than the logged device's %" PRIu64,
				    size,
				    info->data_sectors << FLUSHLOG_SECTOR_SHIFT),
		       -ENOSPC;
	r = calloc(1, sizeof(*r));
	if (!r)
		return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY,
				    FL_NO_ENTRY, "out of memory"), -ENOMEM;
	r->log = log;
	r->fd = image_fd;
	r->is_blockdev = S_ISBLK(st.st_mode);
	r->image_bytes = size;
	*rp = r;
	return 0;
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
	return 0;
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

static int
apply_entry(struct fl_replay *r, uint64_t seq, struct fl_error *err)
{
	const struct fl_log *log = r->log;
	const struct fl_entry *e = &log->entries[seq];
	uint64_t start = e->sector << FLUSHLOG_SECTOR_SHIFT;
	uint64_t len = (uint64_t)e->nr_sectors << FLUSHLOG_SECTOR_SHIFT;
	const unsigned char *data;
	int ret;

	if (e->op == FLUSHLOG_OP_FLUSH || e->op == FLUSHLOG_OP_MARK)
		return 0;
	if (start + len > r->image_bytes)
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
	data = log->map + e->offset + log->info.log_block_size;
	if (!log->info.data_verified && log->info.format == FL_FORMAT_FLUSHLOG) {
		uint32_t crc = fl_crc32c(data, e->data_len);

		if (crc != e->data_crc) {
			char why[96];

			snprintf(why, sizeof(why),
				 "data checksum mismatch (stored 0x%08x, computed 0x%08x)",
				 e->data_crc, crc);
			return entry_error(err, FL_ERR_LOG, seq, e->offset,
					   why, -EBADMSG);
		}
	}
	return queue_write(r, data, start, e->data_len, err);
}

int
fl_replay_to(struct fl_replay *r, uint64_t nr_applied, struct fl_error *err)
{
	const struct fl_log *log = r->log;
	int ret = 0, flush_ret;

	if (nr_applied > log->info.nr_entries)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot replay %" PRIu64 " entries: the log has %" PRIu64,
				    nr_applied, log->info.nr_entries), -ERANGE;
	if (nr_applied < r->pos)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot replay backwards from %" PRIu64 " to %" PRIu64 " entries",
				    r->pos, nr_applied), -EINVAL;
	for (; r->pos < nr_applied; r->pos++) {
		ret = apply_entry(r, r->pos, err);
		if (ret)
			break;
		if (r->progress && log->entries[r->pos].offset >= r->next_report) {
			r->progress(r->progress_arg, log->entries[r->pos].offset,
				    log->info.used_bytes);
			r->next_report = log->entries[r->pos].offset + PROGRESS_STEP;
		}
	}
	/* entries before a failed one are applied: pos says how many */
	flush_ret = r->nr_iov ? write_run(r, ret ? NULL : err) : 0;
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
	free(r);
}
