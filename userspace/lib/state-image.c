// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * State images: one image file that holds crash state after crash state,
 * so that a state costs what differs from the one before, never a copy of
 * the whole image.
 *
 * The image only moves forward through the log: entering a state replays
 * the entries up to its base, then applies its extras (reordered writes, a
 * torn write, discards that kept their data) after saving the bytes they
 * cover; leaving it writes those bytes back.  What is saved is read with
 * SEEK_DATA/SEEK_HOLE, so a hole stays a hole and the saving costs what
 * the extras write, not the size of the ranges they touch.
 *
 * A checker that was meant to only read may write anyway (a mount that
 * replays a journal, a repair).  Entering seals the image: its mtime is set
 * to a fixed time no write produces, and its ctime is noted.  Any write,
 * through the file, a mapping or a loop device, moves both; leaving finds
 * the seal broken and rebuilds the image from the base instead of undoing,
 * so one misbehaving checker can never poison the states after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "internal.h"

/* The seal: an mtime that a write, which sets the current time, never gives. */
static const struct timespec seal_mtime = { .tv_sec = 1, .tv_nsec = 0 };

/* Bytes of the image kept in the undo file while a state's extras are on. */
struct saved_extent {
	uint64_t image_off, len, undo_off;
};

struct fl_state_image {
	struct fl_log *log;
	struct fl_replay *replay;	/* the image, at the prefix replay->pos */
	int fd, base_fd, undo_fd;
	uint64_t size;
	char *path;
	/* the state entered, whose extras are on the image */
	bool entered;
	bool unknown;		/* a failure left the image's bytes unknown */
	struct fl_state state;
	struct fl_ranges touched;	/* sectors the extras may change */
	struct saved_extent *saved;
	size_t nr_saved, saved_cap;
	uint64_t undo_bytes;
	struct timespec sealed_ctime;
	uint64_t rebuilds;
};

static int
copy_range(int from, int to, uint64_t from_off, uint64_t to_off, uint64_t len)
{
	char buf[1 << 14];	/* a fallback: no static, callers may be threads */

	while (len) {
		loff_t in = (loff_t)from_off, out = (loff_t)to_off;
		ssize_t n = copy_file_range(from, &in, to, &out, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {	/* not supported between these two: copy */
			n = pread(from, buf, len < sizeof(buf) ? len : sizeof(buf),
				  (off_t)from_off);
			if (n < 0)
				return -errno;
			if (!n)
				return -EIO;
			if (pwrite(to, buf, n, (off_t)to_off) != n)
				return errno ? -errno : -EIO;
		}
		from_off += n;
		to_off += n;
		len -= n;
	}
	return 0;
}

/*
 * The data extents of fd in [off, off + len): fn for each; a file system
 * that cannot tell holes gives one extent.
 */
static int
for_each_data(int fd, uint64_t off, uint64_t len,
	      int (*fn)(void *arg, uint64_t off, uint64_t len), void *arg)
{
	uint64_t end = off + len;
	int ret;

	while (off < end) {
		off_t data = lseek(fd, (off_t)off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			return 0;
		if (data < 0)	/* no SEEK_DATA here: all of it is data */
			return fn(arg, off, end - off);
		if ((uint64_t)data >= end)
			return 0;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		if ((uint64_t)hole > end)
			hole = (off_t)end;
		ret = fn(arg, (uint64_t)data, (uint64_t)(hole - data));
		if (ret)
			return ret;
		off = (uint64_t)hole;
	}
	return 0;
}

struct copy_ctx {
	int src, dst;
};

static int
copy_extent(void *arg, uint64_t off, uint64_t len)
{
	struct copy_ctx *c = arg;

	return copy_range(c->src, c->dst, off, off, len);
}

/* A regular file's or a block device's size in bytes; 0 if unknown. */
static uint64_t
file_bytes(int fd)
{
	struct stat st;
	uint64_t size = 0;

	if (fstat(fd, &st))
		return 0;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, &size) ? 0 : size;
	return (uint64_t)st.st_size;
}

int
fl_copy_sparse(int src, int dst)
{
	struct copy_ctx c = { src, dst };

	return for_each_data(src, 0, file_bytes(src), copy_extent, &c);
}

/* The image as the log began: the base (shared blocks if possible), or zeroes. */
static int
reset_to_base(struct fl_state_image *im)
{
	if (ftruncate(im->fd, 0) || ftruncate(im->fd, (off_t)im->size))
		return -errno;
	if (im->base_fd < 0 || !ioctl(im->fd, FICLONE, im->base_fd))
		return 0;
	return fl_copy_sparse(im->base_fd, im->fd);
}

static int
image_error(struct fl_state_image *im, struct fl_error *err, int ret,
	    const char *what)
{
	fl_set_error(err, ret == -ENOMEM ? FL_ERR_NOMEM : FL_ERR_OUTPUT,
		     FL_NO_ENTRY, FL_NO_ENTRY,
		     "state image '%s': cannot %s: %s", im->path, what,
		     strerror(-ret));
	return ret;
}

/* A file for the undo bytes beside the image, gone when closed. */
static int
open_undo_file(const char *image_path)
{
	char *dir = strdup(image_path), *slash;
	int fd;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	free(dir);
	return fd < 0 ? -errno : fd;
}

int
fl_state_image_open(struct fl_log *log, const char *path, int base_fd,
		    struct fl_state_image **imp, struct fl_error *err)
{
	struct fl_state_image *im = calloc(1, sizeof(*im));
	int ret;

	*imp = NULL;
	if (!im || !(im->path = strdup(path))) {
		free(im);
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory"), -ENOMEM;
	}
	im->log = log;
	im->base_fd = base_fd;
	im->undo_fd = -1;
	im->size = log->info.image_sectors << FLUSHLOG_SECTOR_SHIFT;
	if (base_fd >= 0) {
		uint64_t bytes = file_bytes(base_fd);

		if (bytes < im->size) {
			fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				     "the base has %" PRIu64 " bytes, smaller than the logged device%s %" PRIu64,
				     bytes, log->info.nr_devices > 1 ? "s'" : "'s",
				     im->size);
			ret = -EINVAL;
			goto fail;
		}
		im->size = bytes;
	}
	im->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (im->fd < 0) {
		ret = image_error(im, err, -errno, "create it");
		goto fail;
	}
	ret = reset_to_base(im);
	if (ret) {
		image_error(im, err, ret, "copy the base into it");
		goto fail_unlink;
	}
	im->undo_fd = open_undo_file(path);
	if (im->undo_fd < 0) {
		ret = image_error(im, err, im->undo_fd, "make its undo file");
		goto fail_unlink;
	}
	ret = fl_replay_open(log, im->fd, &im->replay, err);
	if (ret)
		goto fail_unlink;
	*imp = im;
	return 0;
fail_unlink:
	if (im->undo_fd >= 0)
		close(im->undo_fd);
	close(im->fd);
	unlink(path);
fail:
	free(im->path);
	free(im);
	return ret;
}

static int
touch_entry(struct fl_state_image *im, uint64_t seq, uint64_t first,
	    uint64_t count)
{
	const struct fl_entry *e = &im->log->entries[seq];

	if (!fl_changes_data(e) || !count)
		return 0;
	return fl_ranges_add(&im->touched, fl_entry_image_sector(im->log, e) + first,
			     fl_entry_image_sector(im->log, e) + first + count);
}

/*
 * The sectors entering state s may change: its extras' and its torn
 * part's, and where it keeps discards, every discard's it applies (a
 * superset of what the discards kept, cheaper to find than the set).
 */
static int
note_touched(struct fl_state_image *im, const struct fl_state *s)
{
	const struct fl_entry *e = im->log->entries;
	int ret = 0;

	im->touched.n = 0;
	for (unsigned int i = 0; i < s->nr_extra && !ret; i++)
		ret = touch_entry(im, s->extra[i], 0, e[s->extra[i]].nr_sectors);
	if (!ret && s->torn != FL_NO_ENTRY)
		ret = touch_entry(im, s->torn, s->torn_first, s->torn_count);
	for (uint64_t j = 0; s->keep_discards && j < s->base && !ret; j++)
		if (e[j].op == FLUSHLOG_OP_DISCARD)
			ret = touch_entry(im, j, 0, e[j].nr_sectors);
	return ret;
}

static int
save_extent(void *arg, uint64_t off, uint64_t len)
{
	struct fl_state_image *im = arg;
	struct saved_extent *x;
	int ret;

	if (im->nr_saved == im->saved_cap) {
		size_t cap = im->saved_cap ? 2 * im->saved_cap : 16;

		x = realloc(im->saved, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		im->saved = x;
		im->saved_cap = cap;
	}
	ret = copy_range(im->fd, im->undo_fd, off, im->undo_bytes, len);
	if (ret)
		return ret;
	im->saved[im->nr_saved++] = (struct saved_extent) {
		.image_off = off, .len = len, .undo_off = im->undo_bytes,
	};
	im->undo_bytes += len;
	return 0;
}

/* Keep what the touched sectors hold now, holes as holes. */
static int
save_touched(struct fl_state_image *im)
{
	int ret = 0;

	im->nr_saved = 0;
	im->undo_bytes = 0;
	for (size_t i = 0; i < im->touched.n && !ret; i++) {
		uint64_t start = im->touched.v[i].start << FLUSHLOG_SECTOR_SHIFT;
		uint64_t end = im->touched.v[i].end << FLUSHLOG_SECTOR_SHIFT;

		if (end > im->size)
			return -ENOSPC;
		ret = for_each_data(im->fd, start, end - start, save_extent, im);
	}
	return ret;
}

static int
seal(struct fl_state_image *im)
{
	struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, seal_mtime };
	struct stat st;

	if (futimens(im->fd, times) || fstat(im->fd, &st))
		return -errno;
	im->sealed_ctime = st.st_ctim;
	return 0;
}

/* Has anything written to the image (or changed its times) since the seal? */
static bool
seal_broken(const struct fl_state_image *im)
{
	struct stat st, at_path;

	if (fstat(im->fd, &st))
		return true;
	/* a checker that renamed another file over the path replaced it */
	if (stat(im->path, &at_path) || at_path.st_dev != st.st_dev ||
	    at_path.st_ino != st.st_ino || st.st_nlink != 1)
		return true;
	return st.st_mtim.tv_sec != seal_mtime.tv_sec ||
	       st.st_mtim.tv_nsec != seal_mtime.tv_nsec ||
	       st.st_ctim.tv_sec != im->sealed_ctime.tv_sec ||
	       st.st_ctim.tv_nsec != im->sealed_ctime.tv_nsec ||
	       (uint64_t)st.st_size != im->size;
}

/* The image at the prefix of nr_applied entries, rebuilt from the base. */
static int
rebuild(struct fl_state_image *im, uint64_t nr_applied, struct fl_error *err)
{
	int ret = reset_to_base(im);

	im->unknown = true;
	if (ret)
		return image_error(im, err, ret, "rebuild it from the base");
	im->rebuilds++;
	ret = fl_replay_seek(im->replay, 0, err);
	if (!ret)
		ret = fl_replay_to(im->replay, nr_applied, err);
	im->unknown = ret != 0;
	return ret;
}

/* Put back what the extras covered: holes where there were holes. */
static int
undo_extras(struct fl_state_image *im)
{
	int ret = 0;

	for (size_t i = 0; i < im->touched.n && !ret; i++) {
		uint64_t off = im->touched.v[i].start << FLUSHLOG_SECTOR_SHIFT;
		uint64_t len = (im->touched.v[i].end - im->touched.v[i].start)
			       << FLUSHLOG_SECTOR_SHIFT;

		ret = fl_zero_range(im->fd, off, len, false);
	}
	for (size_t i = 0; i < im->nr_saved && !ret; i++)
		ret = copy_range(im->undo_fd, im->fd, im->saved[i].undo_off,
				 im->saved[i].image_off, im->saved[i].len);
	return ret;
}

/* Is the file at the path still the image (not one renamed over it)? */
static bool
path_is_image(const struct fl_state_image *im)
{
	struct stat st, at_path;

	return !fstat(im->fd, &st) && !stat(im->path, &at_path) &&
	       at_path.st_dev == st.st_dev && at_path.st_ino == st.st_ino;
}

/* A new file at the path, the old one dropped: then rebuilt by the caller. */
static int
recreate(struct fl_state_image *im, struct fl_error *err)
{
	int fd, ret;

	unlink(im->path);
	fd = open(im->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return image_error(im, err, -errno, "create it again");
	fl_replay_close(im->replay);
	im->replay = NULL;
	close(im->fd);
	im->fd = fd;
	im->unknown = true;
	if (ftruncate(fd, (off_t)im->size))
		return image_error(im, err, -errno, "size it");
	ret = fl_replay_open(im->log, fd, &im->replay, err);
	return ret;
}

int
fl_state_image_leave(struct fl_state_image *im, struct fl_error *err)
{
	int ret;

	if (!im->entered)
		return 0;
	im->entered = false;
	if (seal_broken(im)) {
		ret = path_is_image(im) ? 0 : recreate(im, err);
		if (!ret)
			ret = rebuild(im, im->state.base, err);
		return ret ? ret : 1;
	}
	ret = undo_extras(im);
	if (ret) {
		im->unknown = true;
		return image_error(im, err, ret, "undo a state's extra entries");
	}
	return 0;
}

static bool
has_extras(const struct fl_state *s)
{
	return s->nr_extra || s->torn != FL_NO_ENTRY || s->keep_discards;
}

int
fl_state_image_enter(struct fl_state_image *im, const struct fl_state *s,
		     struct fl_error *err)
{
	int ret = fl_state_image_leave(im, err);

	if (ret < 0)
		return ret;
	if (!im->replay)	/* recreating it failed: nothing to replay onto */
		return image_error(im, err, -EIO, "replay onto it");
	im->touched.n = 0;
	im->nr_saved = 0;
	if (im->unknown || s->base < fl_replay_position(im->replay))
		ret = rebuild(im, s->base, err);
	else
		ret = fl_replay_to(im->replay, s->base, err);
	if (ret) {
		im->unknown = true;	/* it may have stopped midway */
		return ret;
	}
	if (has_extras(s)) {
		ret = note_touched(im, s);
		if (!ret)
			ret = save_touched(im);
		if (ret)
			return image_error(im, err, ret,
					   ret == -ENOSPC ? "save bytes beyond its end" :
					   "save the bytes a state's extra entries cover");
		ret = fl_replay_apply_state(im->log, im->replay, im->fd,
					    im->base_fd, s, err);
		if (ret) {
			/* what is on the image now is unknown: start over */
			int again = rebuild(im, s->base, NULL);

			return again ? again : ret;
		}
	}
	ret = seal(im);
	if (ret) {
		im->unknown = true;	/* the extras may be on it */
		return image_error(im, err, ret, "set its modification time");
	}
	im->state = *s;
	im->entered = true;
	return 0;
}

int
fl_state_image_copy(struct fl_state_image *im, const char *path,
		    struct fl_error *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644), ret;

	if (fd < 0)
		return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot create '%s': %s", path,
				    strerror(errno)), -errno;
	ret = ioctl(fd, FICLONE, im->fd) ? -errno : 0;
	if (ret) {
		ret = ftruncate(fd, (off_t)im->size) ? -errno : 0;
		if (!ret)
			ret = fl_copy_sparse(im->fd, fd);
	}
	if (ret) {
		close(fd);
		unlink(path);
		return fl_set_error(err, FL_ERR_OUTPUT, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot copy the state to '%s': %s", path,
				    strerror(-ret)), ret;
	}
	return fd;
}

const char *
fl_state_image_path(const struct fl_state_image *im)
{
	return im->path;
}

uint64_t
fl_state_image_rebuilds(const struct fl_state_image *im)
{
	return im->rebuilds;
}

void
fl_state_image_close(struct fl_state_image *im)
{
	if (!im)
		return;
	fl_replay_close(im->replay);
	close(im->undo_fd);
	close(im->fd);
	unlink(im->path);
	fl_ranges_free(&im->touched);
	free(im->saved);
	free(im->path);
	free(im);
}
