// SPDX-License-Identifier: GPL-2.0
/*
 * Replaying entries onto an image.  The log is mapped, so data goes from
 * the mapping straight to pwritev(): runs of writes to consecutive sectors
 * become one call, and each entry's data checksum is checked just before
 * its data is used, so a bad entry is never applied.  On a long replay a
 * second thread checks the checksums ahead of the writing one: the first
 * touch of the log's pages and the CRC then overlap with the copying.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
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
#define VERIFY_AHEAD_MIN (64ULL << 20)	/* data worth a second thread */
#define VERIFY_AHEAD_MAX (64ULL << 20)	/* how far it may run ahead */
#define APPLIED_STEP	(4ULL << 20)	/* writer's progress reports */

/*
 * The checksum thread.  It checks entries [next, end) in order and
 * publishes how far it got; the replaying thread applies an entry only
 * once it is checked, and publishes how far it got, so that the checker
 * stays at most VERIFY_AHEAD_MAX bytes of log ahead (the pages it maps
 * are released behind the replay).  lock protects the sleeping and
 * waking only.
 */
struct verifier {
	const struct fl_log *log;
	pthread_t thread;
	uint64_t end;
	_Atomic uint64_t checked;	/* entries below this are good */
	_Atomic uint64_t bad;		/* first bad entry, or UINT64_MAX */
	_Atomic bool stop;
	_Atomic uint64_t applied_offset; /* log offset the replay reached */
	uint32_t bad_crc;		/* what the bad entry's data gave */
	pthread_mutex_t lock;
	pthread_cond_t progress;	/* checked moved: replayer waits */
	pthread_cond_t room;		/* applied_offset moved: checker waits */
	bool waiting;			/* the replaying thread sleeps */
	bool checker_waiting;		/* the checking thread sleeps */
};

struct fl_replay {
	struct fl_log *log;
	int fd;
	bool is_blockdev;
	uint64_t image_bytes;
	uint64_t pos;			/* entries applied so far */
	fl_progress_fn progress;
	void *progress_arg;
	uint64_t next_report;		/* log offset of the next report */
	uint64_t released;		/* map released up to here */
	struct verifier *verifier;	/* or NULL: check inline */
	/* a run of pending writes to consecutive bytes of the image */
	struct iovec iov[RUN_MAX_IOV];
	int nr_iov;
	uint64_t run_start, run_len;
	/* fl_state_apply: its error, and what the discards left */
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

static bool
needs_crc(const struct fl_log *log, const struct fl_entry *e)
{
	return e->op == FLUSHLOG_OP_WRITE && !(e->flags & FLUSHLOG_F_NO_DATA) &&
	       !log->info.data_verified && log->info.format == FL_FORMAT_FLUSHLOG;
}

static uint32_t
entry_crc(const struct fl_log *log, const struct fl_entry *e)
{
	return fl_crc32c(log->map + e->offset + log->info.log_block_size,
			 e->data_len);
}

static void
wake_replayer(struct verifier *v)
{
	pthread_mutex_lock(&v->lock);
	if (v->waiting)
		pthread_cond_signal(&v->progress);
	pthread_mutex_unlock(&v->lock);
}

static bool
too_far_ahead(struct verifier *v, uint64_t offset)
{
	return offset > atomic_load(&v->applied_offset) + VERIFY_AHEAD_MAX &&
	       !atomic_load(&v->stop);
}

static void
wait_for_room(struct verifier *v, uint64_t offset)
{
	while (too_far_ahead(v, offset)) {
		pthread_mutex_lock(&v->lock);
		v->checker_waiting = true;
		if (too_far_ahead(v, offset))
			pthread_cond_wait(&v->room, &v->lock);
		v->checker_waiting = false;
		pthread_mutex_unlock(&v->lock);
	}
}

/*
 * The replay reached offset: let the checker go on if it waits.  Reports
 * come every APPLIED_STEP bytes, or at once (force) when the replay is
 * about to wait for the entry at offset: the checker never waits for
 * room to check the entry the replay waits for.
 */
static void
report_applied(struct verifier *v, uint64_t offset, bool force)
{
	if (!force && offset < atomic_load(&v->applied_offset) + APPLIED_STEP)
		return;
	atomic_store(&v->applied_offset, offset);
	pthread_mutex_lock(&v->lock);
	if (v->checker_waiting)
		pthread_cond_signal(&v->room);
	pthread_mutex_unlock(&v->lock);
}

static void *
verify_ahead(void *arg)
{
	struct verifier *v = arg;
	uint64_t i = atomic_load(&v->checked), since_wake = 0;

	for (; i < v->end && !atomic_load(&v->stop); i++) {
		const struct fl_entry *e = &v->log->entries[i];

		wait_for_room(v, e->offset);
		if (needs_crc(v->log, e)) {
			uint32_t crc = entry_crc(v->log, e);

			if (crc != e->data_crc) {
				v->bad_crc = crc;
				atomic_store(&v->bad, i);
				break;
			}
			since_wake += e->data_len;
		}
		atomic_store(&v->checked, i + 1);
		if (since_wake >= (1U << 20)) {
			wake_replayer(v);
			since_wake = 0;
		}
	}
	atomic_store(&v->checked, i);
	wake_replayer(v);
	return NULL;
}

/* Wait until entry seq is checked; false if it is the bad one. */
static bool
wait_checked(struct verifier *v, uint64_t seq, uint32_t *bad_crc)
{
	if (atomic_load(&v->checked) <= seq)
		report_applied(v, v->log->entries[seq].offset, true);
	while (atomic_load(&v->checked) <= seq) {
		if (atomic_load(&v->bad) == seq) {
			*bad_crc = v->bad_crc;
			return false;
		}
		pthread_mutex_lock(&v->lock);
		v->waiting = true;
		if (atomic_load(&v->checked) <= seq &&
		    atomic_load(&v->bad) != seq)
			pthread_cond_wait(&v->progress, &v->lock);
		v->waiting = false;
		pthread_mutex_unlock(&v->lock);
	}
	return true;
}

static void
stop_verifier(struct fl_replay *r)
{
	struct verifier *v = r->verifier;

	if (!v)
		return;
	atomic_store(&v->stop, true);
	pthread_mutex_lock(&v->lock);
	pthread_cond_signal(&v->room);
	pthread_mutex_unlock(&v->lock);
	pthread_join(v->thread, NULL);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->progress);
	pthread_cond_destroy(&v->room);
	free(v);
	r->verifier = NULL;
}

/* Worth a thread: enough unchecked data ahead, and a second CPU. */
static void
start_verifier(struct fl_replay *r, uint64_t end)
{
	const struct fl_log *log = r->log;
	uint64_t bytes = 0;
	struct verifier *v;

	if (log->info.data_verified || log->info.format != FL_FORMAT_FLUSHLOG ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	for (uint64_t i = r->pos; i < end && bytes < VERIFY_AHEAD_MIN; i++)
		bytes += log->entries[i].data_len;
	if (bytes < VERIFY_AHEAD_MIN)
		return;
	v = calloc(1, sizeof(*v));
	if (!v)
		return;		/* check inline instead */
	v->log = log;
	v->end = end;
	atomic_init(&v->checked, r->pos);
	atomic_init(&v->bad, UINT64_MAX);
	atomic_init(&v->stop, false);
	atomic_init(&v->applied_offset, log->entries[r->pos].offset);
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->progress, NULL);
	pthread_cond_init(&v->room, NULL);
	if (pthread_create(&v->thread, NULL, verify_ahead, v)) {
		pthread_mutex_destroy(&v->lock);
		pthread_cond_destroy(&v->progress);
		pthread_cond_destroy(&v->room);
		free(v);
		return;
	}
	r->verifier = v;
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
	if (needs_crc(log, e)) {
		uint32_t crc = e->data_crc;

		if (r->verifier ? !wait_checked(r->verifier, seq, &crc) :
				  (crc = entry_crc(log, e)) != e->data_crc) {
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
	start_verifier(r, nr_applied);
	for (; r->pos < nr_applied; r->pos++) {
		ret = apply_entry(r, r->pos, err);
		if (ret)
			break;
		if (r->verifier)
			report_applied(r->verifier, log->entries[r->pos].offset,
				       false);
		/* queued writes still point into the map: keep those pages */
		fl_log_release(r->log, &r->released, r->nr_iov ?
			       (uint64_t)((const unsigned char *)r->iov[0].iov_base - log->map) :
			       log->entries[r->pos].offset);
		if (r->progress && log->entries[r->pos].offset >= r->next_report) {
			r->progress(r->progress_arg, log->entries[r->pos].offset,
				    log->info.used_bytes);
			r->next_report = log->entries[r->pos].offset + PROGRESS_STEP;
		}
	}
	stop_verifier(r);
	/* entries before a failed one are applied: pos says how many */
	flush_ret = r->nr_iov ? write_run(r, ret ? NULL : err) : 0;
	if (r->pos)
		fl_log_release(r->log, &r->released,
			       log->entries[r->pos - 1].offset);
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

/* Entry seq's sectors [first, first + count) only: a torn write. */
static int
apply_part(struct fl_replay *r, uint64_t seq, uint64_t first, uint64_t count,
	   struct fl_error *err)
{
	const struct fl_log *log = r->log;
	const struct fl_entry *e = &log->entries[seq];
	uint64_t off, len = count << FLUSHLOG_SECTOR_SHIFT;
	uint64_t skip = first << FLUSHLOG_SECTOR_SHIFT;

	/* 64-bit sums of 32-bit parts: none of these can wrap */
	if (e->op != FLUSHLOG_OP_WRITE || (e->flags & FLUSHLOG_F_NO_DATA) ||
	    first + count > e->nr_sectors || skip + len > e->data_len)
		return entry_error(err, FL_ERR_ARG, seq, e->offset,
				   "only a write with its data can be torn", -EINVAL);
	if (e->sector > (r->image_bytes >> FLUSHLOG_SECTOR_SHIFT) ||
	    (e->sector << FLUSHLOG_SECTOR_SHIFT) + skip + len > r->image_bytes)
		return entry_error(err, FL_ERR_OUTPUT, seq, e->offset,
				   "range ends beyond the end of the image", -ENOSPC);
	off = (e->sector << FLUSHLOG_SECTOR_SHIFT) + skip;
	if (needs_crc(log, e) && entry_crc(log, e) != e->data_crc)
		return entry_error(err, FL_ERR_LOG, seq, e->offset,
				   "data checksum mismatch", -EBADMSG);
	return queue_write(r, log->map + e->offset + log->info.log_block_size + skip,
			   off, (uint32_t)len, err);
}

/*
 * The entries a state applies, in log order, as (entry, first sector,
 * sector count): the first s->base whole, the extras whole, the torn one
 * in part.  from: skip the first entries.
 */
static int
for_each_applied(const struct fl_log *log, const struct fl_state *s,
		 uint64_t from,
		 int (*fn)(void *arg, uint64_t seq, uint64_t first, uint64_t count),
		 void *arg)
{
	bool torn_done = s->torn == FL_NO_ENTRY;
	unsigned int i = 0;
	int ret = 0;

	for (uint64_t j = from; j < s->base && !ret; j++)
		ret = fn(arg, j, 0, log->entries[j].nr_sectors);
	while (!ret && (i < s->nr_extra || !torn_done)) {
		if (!torn_done && (i == s->nr_extra || s->torn < s->extra[i])) {
			ret = fn(arg, s->torn, s->torn_first, s->torn_count);
			torn_done = true;
		} else {
			ret = fn(arg, s->extra[i], 0,
				 log->entries[s->extra[i]].nr_sectors);
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

	part.sector += first;
	part.nr_sectors = (uint32_t)count;
	return fl_ranges_update(r->kept, &part);
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
	uint64_t start = e->sector + first, end = start + count;
	const struct fl_ranges *kept = r->kept;
	int ret = 0;

	if (e->op == FLUSHLOG_OP_DISCARD || e->op == FLUSHLOG_OP_FLUSH ||
	    e->op == FLUSHLOG_OP_MARK)
		return 0;
	for (size_t i = fl_ranges_find(kept, start, false);
	     i < kept->n && kept->v[i].start < end && !ret; i++) {
		uint64_t a = kept->v[i].start > start ? kept->v[i].start : start;
		uint64_t b = kept->v[i].end < end ? kept->v[i].end : end;

		if (e->op == FLUSHLOG_OP_WRITE) {
			ret = apply_part(r, seq, a - e->sector, b - a, r->err);
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
	ret = for_each_applied(r->log, s, 0, note_discard, r);
	if (ret) {
		fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY, FL_NO_ENTRY,
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
	if (!ret && kept.n)
		ret = for_each_applied(r->log, s, 0, restore_entry, r);
out:
	fl_ranges_free(&kept);
	r->kept = NULL;
	return ret;
}

static int
apply_one(void *arg, uint64_t seq, uint64_t first, uint64_t count)
{
	struct fl_replay *r = arg;
	const struct fl_entry *e = &r->log->entries[seq];

	if (first || count != e->nr_sectors)
		return apply_part(r, seq, first, count, r->err);
	return apply_entry(r, seq, r->err);
}

int
fl_state_apply_base(struct fl_log *log, int image_fd, int base_fd,
		    const struct fl_state *s, struct fl_error *err)
{
	struct fl_replay *r;
	int ret;

	ret = fl_replay_open(log, image_fd, &r, err);
	if (ret)
		return ret;
	r->err = err;
	/* the extras and the torn entry, merged in log order */
	ret = for_each_applied(log, s, s->base, apply_one, r);
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
fl_state_apply(struct fl_log *log, int image_fd, const struct fl_state *s,
	       struct fl_error *err)
{
	return fl_state_apply_base(log, image_fd, -1, s, err);
}
