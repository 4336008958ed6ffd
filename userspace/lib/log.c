// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Opening a log: recognise its format and build the in-memory index
 * (struct fl_entry, 64 bytes an entry) in one forward pass.  Reading it:
 * pread() into a window, which turns a log that shrank or failed a read
 * into an error naming the offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "internal.h"

#define LOG_WRITES_MAGIC	0x6a736677736872ULL

int
fl_set_error(struct fl_error *err, enum fl_error_source source,
	     uint64_t entry, uint64_t offset, const char *fmt, ...)
{
	size_t cut, size = sizeof(err->msg);
	va_list ap;
	int n;

	if (!err)
		return 0;
	err->source = source;
	err->entry = entry;
	err->offset = offset;
	memset(err->spare, 0, sizeof(err->spare));
	va_start(ap, fmt);
	n = vsnprintf(err->msg, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n < size)
		return 0;
	/*
	 * Cut where a character begins, not inside one, and say so: back at
	 * most 3 bytes, a UTF-8 character's continuation bytes (past those,
	 * the bytes are not UTF-8 and any cut will do).
	 */
	cut = size - 4;
	for (int k = 0; k < 3 && (err->msg[cut] & 0xc0) == 0x80; k++)
		cut--;
	memcpy(err->msg + cut, "...", 4);
	return 0;
}

/* See copy_struct_from_user() in the kernel's include/linux/uaccess.h. */
int
fl_copy_struct_in(void *ours, size_t size, const void *caller,
		  size_t caller_size)
{
	memset(ours, 0, size);
	if (caller_size > size) {
		const unsigned char *tail = (const unsigned char *)caller + size;

		for (size_t i = 0; i < caller_size - size; i++)
			if (tail[i])
				return -E2BIG;
	}
	if (caller_size)
		memcpy(ours, caller, caller_size < size ? caller_size : size);
	return 0;
}

const char *
fl_format_name(enum fl_format format)
{
	switch (format) {
	case FL_FORMAT_FLUSHLOG:
		return "flushlog";
	case FL_FORMAT_LOG_WRITES:
		return "dm-log-writes";
	}
	return "unknown";
}

const char *
fl_op_name(unsigned int op)
{
	static const char *const names[] = {
		[FLUSHLOG_OP_WRITE] = "write",
		[FLUSHLOG_OP_DISCARD] = "discard",
		[FLUSHLOG_OP_WRITE_ZEROES] = "write-zeroes",
		[FLUSHLOG_OP_SECURE_ERASE] = "secure-erase",
		[FLUSHLOG_OP_FLUSH] = "flush",
		[FLUSHLOG_OP_MARK] = "mark",
		[FLUSHLOG_OP_RESIZE] = "resize",
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "unknown";
}

static void
count_entry(struct fl_counts *c, const struct fl_entry *e)
{
	switch (e->op) {
	case FLUSHLOG_OP_WRITE:
		c->writes++;
		break;
	case FLUSHLOG_OP_DISCARD:
		c->discards++;
		break;
	case FLUSHLOG_OP_WRITE_ZEROES:
		c->write_zeroes++;
		break;
	case FLUSHLOG_OP_SECURE_ERASE:
		c->secure_erases++;
		break;
	case FLUSHLOG_OP_FLUSH:
		c->flushes++;
		break;
	case FLUSHLOG_OP_MARK:
		c->marks++;
		break;
	case FLUSHLOG_OP_RESIZE:
		c->resizes++;
		break;
	}
	if (fl_entry_failed(e))
		c->failed++;
	/* a write that carried a flush which completed with it */
	if ((e->flags & FLUSHLOG_F_PREFLUSH) && e->op != FLUSHLOG_OP_FLUSH &&
	    (e->flags & FL_ENTRY_CRASH_POINT))
		c->flushes++;
	if (e->flags & FLUSHLOG_F_FUA)
		c->fua++;
	if (e->flags & FL_ENTRY_CRASH_POINT)
		c->crash_points++;
	c->data_bytes += e->data_len;
}

/* Size the index exactly when the entry count is known beforehand. */
int
fl_log_reserve(struct fl_log *log, uint64_t nr_entries)
{
	struct fl_entry *p;

	if (nr_entries <= log->entries_cap)
		return 0;
	p = realloc(log->entries, nr_entries * sizeof(*p));
	if (!p)
		return -ENOMEM;
	log->entries = p;
	log->entries_cap = nr_entries;
	return 0;
}

int
fl_log_add_entry(struct fl_log *log, const struct fl_entry *e,
		 const char *label, size_t label_len)
{
	uint64_t n = log->info.nr_entries;

	/* grow by a quarter: the index stays near 64 bytes an entry */
	if (n == log->entries_cap &&
	    fl_log_reserve(log, log->entries_cap + log->entries_cap / 4 + 1024))
		return -ENOMEM;
	if (e->op == FLUSHLOG_OP_MARK) {
		struct fl_mark *m;

		if (log->nr_marks == log->marks_cap) {
			uint64_t cap = log->marks_cap ? log->marks_cap * 2 : 16;

			m = realloc(log->marks, cap * sizeof(*m));
			if (!m)
				return -ENOMEM;
			log->marks = m;
			log->marks_cap = cap;
		}
		m = &log->marks[log->nr_marks];
		m->label = strndup(label, label_len);
		if (!m->label)
			return -ENOMEM;
		m->entry = n;
		log->nr_marks++;
	}
	/* both scanners add entries in the order the log holds them */
	log->entries[n] = *e;
	log->entries[n].seq = n;
	log->info.nr_entries = n + 1;
	count_entry(&log->counts, e);
	return 0;
}

/*
 * The log at path, or (fd not -1) a duplicate of the caller's fd, which
 * stays the caller's to close.  Messages name it by path.
 */
static int
open_log(struct fl_log *log, const char *path, int fd, struct fl_error *err)
{
	bool callers = fd >= 0;
	struct stat st;
	uint64_t size;

	if (callers)
		log->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	else
		log->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (log->fd < 0)
		return fl_set_error(err, FL_ERR_IO, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot open '%s': %s", path,
				    strerror(errno)), -errno;
	if (fstat(log->fd, &st) < 0)
		return fl_set_error(err, FL_ERR_IO, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot stat '%s': %s", path,
				    strerror(errno)), -errno;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(log->fd, BLKGETSIZE64, &size) < 0)
			return fl_set_error(err, FL_ERR_IO, FL_NO_ENTRY,
					    FL_NO_ENTRY,
					    "cannot get the size of '%s': %s",
					    path, strerror(errno)), -errno;
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
	} else {
		return fl_set_error(err, callers ? FL_ERR_ARG : FL_ERR_LOG,
				    FL_NO_ENTRY, FL_NO_ENTRY,
				    "'%s' is not a regular file or block device",
				    path), -EINVAL;
	}
	if (size < FLUSHLOG_HEADER_SIZE)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
				    "'%s' is too small to hold a log super block (%llu bytes)",
				    path, (unsigned long long)size), -EBADMSG;
	log->size = size;
	log->info.log_bytes = size;
	/* a duplicate shares the caller's open file, and its read-ahead */
	if (!callers)
		posix_fadvise(log->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/*
 * Read at least min and at most max bytes at off into buf; *got says how
 * many.  Fewer than min is an error naming the offset: the log shrank
 * (it had the bytes when it was opened) or the device failed.
 */
int
fl_log_read(const struct fl_log *log, void *buf, size_t min, size_t max,
	    uint64_t off, size_t *got, struct fl_error *err)
{
	struct stat st;

	for (*got = 0; *got < min;) {
		ssize_t n = pread(log->fd, (char *)buf + *got, max - *got,
				  (off_t)(off + *got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fl_set_error(err, FL_ERR_IO, FL_NO_ENTRY, off,
					    "cannot read the log at offset %" PRIu64 ": %s",
					    off + *got, strerror(errno)), -errno;
		if (!n) {
			if (fstat(log->fd, &st) || !S_ISREG(st.st_mode))
				st.st_size = (off_t)(off + *got);
			return fl_set_error(err, FL_ERR_IO, FL_NO_ENTRY, off,
					    "the log shrank to %" PRIu64 " bytes: cannot read %zu bytes at offset %" PRIu64,
					    (uint64_t)st.st_size, min, off),
			       -ENODATA;
		}
		*got += n;
	}
	return 0;
}

/* len bytes at off, all of them, or an error naming the offset. */
int
fl_log_pread(const struct fl_log *log, void *buf, size_t len, uint64_t off,
	     struct fl_error *err)
{
	size_t got;

	return fl_log_read(log, buf, len, len, off, &got, err);
}

int
fl_window_init(struct fl_log_window *w, const struct fl_log *log, size_t cap)
{
	*w = (struct fl_log_window) { .log = log, .cap = cap };
	w->buf = malloc(cap);
	return w->buf ? 0 : -ENOMEM;
}

void
fl_window_free(struct fl_log_window *w)
{
	free(w->buf);
	w->buf = NULL;
	w->lo = w->hi = 0;
}

/*
 * Point *data at the log bytes [off, off + len), len at most the window's
 * size.  A refill reads from off up to limit (the end of what the caller
 * will want next) or as much as fits: it invalidates earlier pointers.
 */
int
fl_window_read(struct fl_log_window *w, uint64_t off, size_t len,
	       uint64_t limit, const unsigned char **data, struct fl_error *err)
{
	uint64_t want = len;
	size_t got;
	int ret;

	if (len > w->cap)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, off,
				    "cannot hold %zu bytes of log at offset %" PRIu64 " at once",
				    len, off), -E2BIG;
	if (!fl_window_holds(w, off, len)) {
		if (limit > off && limit - off > want)
			want = limit - off < w->cap ? limit - off : w->cap;
		w->lo = w->hi = 0;
		ret = fl_log_read(w->log, w->buf, len, want, off, &got, err);
		if (ret)
			return ret;
		w->lo = off;
		w->hi = off + got;
	}
	*data = w->buf + (off - w->lo);
	return 0;
}

/*
 * An entry header at off, read while indexing: the log is walked header
 * to header, data skipped.  Reading ahead fetches the next headers in the
 * same call where entries are small (flushes, marks, no-data logs, 4 KiB
 * writes), but past a larger entry it only copies data to skip it: more
 * than about 8 KiB copied costs more than a second call.  An entry's size
 * is known only once its header is read, so the entries before it
 * predict it: after a run of small ones, read ahead as many of that size
 * as the run is long (up to HEADER_AHEAD), so that a run of tiny entries
 * soon comes in large reads and the end of a run wastes little.
 */
#define HEADER_AHEAD	(64U << 10)
#define SMALL_STEP	(8U << 10)

int
fl_window_header(struct fl_log_window *w, uint64_t off, size_t len,
		 const unsigned char **data, struct fl_error *err)
{
	uint64_t step = off - w->last_header, ahead = len;

	if (off > w->last_header && step <= SMALL_STEP)
		w->small_steps++;
	else
		w->small_steps = 0;
	w->last_header = off;
	if (w->small_steps >= 2)
		ahead = w->small_steps * step;
	if (ahead > HEADER_AHEAD)
		ahead = HEADER_AHEAD;
	return fl_window_read(w, off, len, off + ahead, data, err);
}

/* The data checksum of the log bytes [off, off + len), a window at a time. */
int
fl_window_checksum(struct fl_log_window *w, uint64_t off, uint64_t len,
		   uint32_t *sum, struct fl_error *err)
{
	const unsigned char *p;
	struct fl_data_sum s;
	int ret;

	fl_data_sum_init(&s, w->log);
	while (len) {
		size_t n = len < w->cap ? len : w->cap;

		ret = fl_window_read(w, off, n, off + len, &p, err);
		if (ret)
			return ret;
		fl_data_sum_update(&s, p, n);
		off += n;
		len -= n;
	}
	*sum = fl_data_sum_final(&s);
	return 0;
}

/*
 * An image of every device holds them one after another, each from a
 * 4 KiB boundary (a loop device's offset, a dm-linear table's start), so
 * that one image, one undo file and one set of sector ranges serve a
 * state of several devices.  scan-flushlog.c keeps the whole below 2^54
 * sectors, as one device's size is kept: no sum wraps, nor its bytes.
 */
#define FL_DEVICE_ALIGN	8	/* sectors */

static void
place_devices(struct fl_log *log)
{
	uint64_t at = 0;

	for (uint32_t d = 0; d < log->info.nr_devices; d++) {
		if (d)
			at = (at + FL_DEVICE_ALIGN - 1) & ~(uint64_t)(FL_DEVICE_ALIGN - 1);
		log->devices[d].image_sector = at;
		at += log->devices[d].sectors;
	}
	log->info.image_sectors = at;
}

static int
log_open(const char *path, int fd, unsigned int flags, struct fl_log **logp,
	 struct fl_error *err)
{
	struct fl_log *log;
	char fd_name[32];
	uint64_t magic;
	int ret;

	*logp = NULL;
	log = calloc(1, sizeof(*log));
	if (!log)
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory"), -ENOMEM;
	log->fd = -1;
	if (!path) {
		snprintf(fd_name, sizeof(fd_name), "file descriptor %d", fd);
		path = fd_name;
	}
	ret = open_log(log, path, fd, err);
	if (ret)
		goto out_close;
	ret = fl_log_pread(log, &magic, sizeof(magic), 0, err);
	if (ret)
		goto out_close;
	magic = fl_le64(magic);
	if (magic == FLUSHLOG_SUPER_MAGIC) {
		ret = fl_scan_flushlog(log, flags, err);
	} else if (magic == LOG_WRITES_MAGIC) {
		ret = fl_scan_log_writes(log, flags, err);
	} else {
		fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
			     "'%s' is not a flushlog or dm-log-writes log (magic 0x%016llx at offset 0)",
			     path, (unsigned long long)magic);
		ret = -EBADMSG;
	}
	if (!ret && !log->info.nr_devices) {
		/* a format of one device, which says nothing of it */
		log->info.nr_devices = 1;
		log->devices[0] = (struct fl_device) {
			.sectors = log->info.data_sectors,
			.block_size = log->info.data_block_size,
			.first_sectors = log->info.data_sectors,
		};
	}
	if (!ret)
		place_devices(log);
	if (!ret && (flags & FL_OPEN_CHECK_ORDER) && log->info.has_ticks) {
		ret = fl_log_check_order(log, err);
		log->info.order_verified = !ret;
	}
	if (ret)
		goto out_close;
	/* the ticks of the data sent after its flush, which overtaking needs */
	if (fl_log_pair_preflush(log)) {
		fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
			     "out of memory pairing the writes with their flushes");
		ret = -ENOMEM;
		goto out_close;
	}
	fl_log_mark_overtaking(log);
	if (fl_log_index_marks(log)) {
		fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, FL_NO_ENTRY,
			     "out of memory indexing %" PRIu64 " marks",
			     log->nr_marks);
		ret = -ENOMEM;
		goto out_close;
	}
	if (log->info.nr_entries && log->info.nr_entries < log->entries_cap) {
		struct fl_entry *p = realloc(log->entries,
					     log->info.nr_entries * sizeof(*p));

		if (p) {
			log->entries = p;
			log->entries_cap = log->info.nr_entries;
		}
	}
	log->info.index_bytes = log->entries_cap * sizeof(struct fl_entry) +
				log->nr_early_flushes * sizeof(uint64_t) +
				log->nr_data_issue * sizeof(*log->data_issue) +
				log->marks_cap * sizeof(struct fl_mark) +
				log->nr_marks * sizeof(*log->marks_by_label);
	for (uint64_t i = 0; i < log->nr_marks; i++)
		log->info.index_bytes += strlen(log->marks[i].label) + 1;
	*logp = log;
	return 0;

out_close:
	fl_log_close(log);
	return ret;
}

int
fl_log_open(const char *path, unsigned int flags, struct fl_log **logp,
	    struct fl_error *err)
{
	if (!path || !logp)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "no log path or result pointer"), -EINVAL;
	return log_open(path, -1, flags, logp, err);
}

int
fl_log_open_fd(int fd, unsigned int flags, struct fl_log **logp,
	       struct fl_error *err)
{
	if (fd < 0 || !logp)
		return fl_set_error(err, FL_ERR_ARG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "bad file descriptor %d or no result pointer",
				    fd), -EINVAL;
	return log_open(NULL, fd, flags, logp, err);
}

void
fl_log_close(struct fl_log *log)
{
	if (!log)
		return;
	for (uint64_t i = 0; i < log->nr_marks; i++)
		free(log->marks[i].label);
	free(log->marks);
	free(log->marks_by_label);
	free(log->entries);
	free(log->later_complete);
	free(log->early_flushes);
	free(log->data_issue);
	if (log->fd >= 0)
		close(log->fd);
	free(log);
}

const struct fl_log_info *
fl_log_info(const struct fl_log *log)
{
	return &log->info;
}

const struct fl_counts *
fl_log_counts(const struct fl_log *log)
{
	return &log->counts;
}

const struct fl_device *
fl_log_device(const struct fl_log *log, uint32_t device)
{
	return device < log->info.nr_devices ? &log->devices[device] : NULL;
}

const struct fl_entry *
fl_log_entry(const struct fl_log *log, uint64_t number)
{
	return number < log->info.nr_entries ? &log->entries[number] : NULL;
}

uint64_t
fl_log_first_mark(const struct fl_log *log, uint64_t at, bool after_epoch)
{
	uint64_t lo = 0, hi = log->nr_marks;

	/* both keys grow along the marks: binary search */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct fl_mark *m = &log->marks[mid];

		if (after_epoch ? m->durable_end > at : m->entry >= at)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

const char *
fl_log_label(const struct fl_log *log, uint64_t entry)
{
	uint64_t k = fl_log_first_mark(log, entry, false);

	return k < log->nr_marks && log->marks[k].entry == entry ?
	       log->marks[k].label : "";
}

const struct fl_mark *
fl_log_find_mark(const struct fl_log *log, const char *label)
{
	uint64_t lo = 0, hi = log->nr_marks;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (strcmp(log->marks_by_label[mid]->label, label) >= 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < log->nr_marks && !strcmp(log->marks_by_label[lo]->label, label) ?
	       log->marks_by_label[lo] : NULL;
}

static int
by_label(const void *a, const void *b)
{
	const struct fl_mark *x = *(const struct fl_mark *const *)a;
	const struct fl_mark *y = *(const struct fl_mark *const *)b;
	int c = strcmp(x->label, y->label);

	return c ? c : x->entry < y->entry ? -1 : x->entry > y->entry;
}

int
fl_log_index_marks(struct fl_log *log)
{
	uint64_t durable_end = 0, k = 0, f = 0;

	for (uint64_t i = 0; i < log->info.nr_entries && k < log->nr_marks; i++) {
		/* a flush before its write's data, at position i or before */
		for (; f < log->nr_early_flushes && log->early_flushes[f] <= i; f++)
			if (log->early_flushes[f] > durable_end)
				durable_end = log->early_flushes[f];
		if (i == log->marks[k].entry)
			log->marks[k++].durable_end = durable_end;
		else if (fl_makes_durable(&log->entries[i]))
			durable_end = i + 1;
	}
	if (!log->nr_marks)
		return 0;
	log->marks_by_label = malloc(log->nr_marks * sizeof(*log->marks_by_label));
	if (!log->marks_by_label)
		return -ENOMEM;
	for (uint64_t i = 0; i < log->nr_marks; i++)
		log->marks_by_label[i] = &log->marks[i];
	qsort(log->marks_by_label, log->nr_marks, sizeof(*log->marks_by_label),
	      by_label);
	return 0;
}

#define FL_STR_(x)	#x
#define FL_STR(x)	FL_STR_(x)

const char *
fl_version(void)
{
	return FL_STR(FL_LIB_VERSION_MAJOR) "." FL_STR(FL_LIB_VERSION_MINOR) "."
	       FL_STR(FL_LIB_VERSION_PATCH);
}
