// SPDX-License-Identifier: GPL-2.0
/*
 * Opening a log: map it, recognise its format and build the in-memory
 * index (struct fl_entry, 48 bytes an entry) in one forward pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "internal.h"

#define LOG_WRITES_MAGIC	0x6a736677736872ULL

int
fl_set_error(struct fl_error *err, enum fl_error_source source,
	     uint64_t entry, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return 0;
	err->source = source;
	err->entry = entry;
	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
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
	}
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

	/* grow by a quarter: the index stays near 48 bytes an entry */
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
	log->entries[n] = *e;
	log->info.nr_entries = n + 1;
	count_entry(&log->info.counts, e);
	return 0;
}

static int
map_log(struct fl_log *log, const char *path, struct fl_error *err)
{
	struct stat st;
	uint64_t size;

	log->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (log->fd < 0)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot open '%s': %s", path,
				    strerror(errno)), -errno;
	if (fstat(log->fd, &st) < 0)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot stat '%s': %s", path,
				    strerror(errno)), -errno;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(log->fd, BLKGETSIZE64, &size) < 0)
			return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY,
					    FL_NO_ENTRY,
					    "cannot get the size of '%s': %s",
					    path, strerror(errno)), -errno;
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
	} else {
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "'%s' is not a regular file or block device",
				    path), -EINVAL;
	}
	if (size < FLUSHLOG_HEADER_SIZE)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
				    "'%s' is too small to hold a log super block (%llu bytes)",
				    path, (unsigned long long)size), -EBADMSG;
	log->map = mmap(NULL, size, PROT_READ, MAP_SHARED, log->fd, 0);
	if (log->map == MAP_FAILED) {
		log->map = NULL;
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "cannot map '%s': %s", path,
				    strerror(errno)), -errno;
	}
	log->map_len = size;
	log->info.log_bytes = size;
	madvise((void *)log->map, size, MADV_SEQUENTIAL);
	return 0;
}

int
fl_log_open(const char *path, unsigned int flags, struct fl_log **logp,
	    struct fl_error *err)
{
	struct fl_log *log;
	uint64_t magic;
	int ret;

	*logp = NULL;
	log = calloc(1, sizeof(*log));
	if (!log)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, FL_NO_ENTRY,
				    "out of memory"), -ENOMEM;
	log->fd = -1;
	ret = map_log(log, path, err);
	if (ret)
		goto out_close;

	memcpy(&magic, log->map, sizeof(magic));
	magic = fl_le64(magic);
	if (magic == FLUSHLOG_SUPER_MAGIC) {
		ret = fl_scan_flushlog(log, flags, err);
	} else if (magic == LOG_WRITES_MAGIC) {
		ret = fl_scan_log_writes(log, err);
	} else {
		fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
			     "'%s' is not a flushlog or dm-log-writes log (magic 0x%016llx at offset 0)",
			     path, (unsigned long long)magic);
		ret = -EBADMSG;
	}
	if (!ret && (flags & FL_OPEN_CHECK_ORDER) && log->info.has_ticks) {
		ret = fl_log_check_order(log, err);
		log->info.order_verified = !ret;
	}
	if (ret)
		goto out_close;
	if (log->info.nr_entries && log->info.nr_entries < log->entries_cap) {
		struct fl_entry *p = realloc(log->entries,
					     log->info.nr_entries * sizeof(*p));

		if (p) {
			log->entries = p;
			log->entries_cap = log->info.nr_entries;
		}
	}
	log->info.index_bytes = log->entries_cap * sizeof(struct fl_entry) +
				log->marks_cap * sizeof(struct fl_mark);
	for (uint64_t i = 0; i < log->nr_marks; i++)
		log->info.index_bytes += strlen(log->marks[i].label) + 1;
	*logp = log;
	return 0;

out_close:
	fl_log_close(log);
	return ret;
}

void
fl_log_close(struct fl_log *log)
{
	if (!log)
		return;
	for (uint64_t i = 0; i < log->nr_marks; i++)
		free(log->marks[i].label);
	free(log->marks);
	free(log->entries);
	if (log->map)
		munmap((void *)log->map, log->map_len);
	if (log->fd >= 0)
		close(log->fd);
	free(log);
}

/*
 * Drop the mapping's pages from *released up to offset from this process,
 * in steps, and advance *released (each pass keeps its own): a forward pass
 * over a log larger than memory then keeps a bounded resident set (the
 * pages stay in the page cache).
 */
void
fl_log_release(struct fl_log *log, uint64_t *released, uint64_t offset)
{
	const uint64_t step = 32ULL << 20;
	uint64_t to = offset & ~(step - 1);

	if (to <= *released)
		return;
	madvise((void *)(log->map + *released), to - *released,
		MADV_DONTNEED);
	*released = to;
}

const struct fl_log_info *
fl_log_info(const struct fl_log *log)
{
	return &log->info;
}

const struct fl_entry *
fl_log_entries(const struct fl_log *log)
{
	return log->entries;
}

const char *
fl_log_label(const struct fl_log *log, uint64_t entry)
{
	uint64_t lo = 0, hi = log->nr_marks;

	/* marks are appended in entry order: binary search */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (log->marks[mid].entry == entry)
			return log->marks[mid].label;
		if (log->marks[mid].entry < entry)
			lo = mid + 1;
		else
			hi = mid;
	}
	return "";
}
