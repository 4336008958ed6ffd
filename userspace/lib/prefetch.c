// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading ahead of a long replay in a second thread.  The replay's own
 * thread spends its time copying data into the image (pwrite); reading
 * the log (pread) and checking each entry's CRC32C take about as long
 * again.  On a long replay a reader thread does the second half: it walks
 * the same entries in the same order, preads their data into a ring of
 * buffers, checks each checksum there and hands the buffers over in
 * order.  The replay writes from those very buffers, so the bytes checked
 * are the bytes written, and it writes an entry only once the reader said
 * it is good: a bad entry stops the reader, and the replay meets the
 * error when it reaches that entry, with everything before it applied.
 *
 * The reader takes the writes whose data fits a buffer, or with
 * checked_only those of them that have a checksum (fl_prefetch_has): the
 * replay reads anything else itself, as it does without a reader, or has
 * the kernel copy it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NR_BUFS		4

/* Log bytes [lo, hi): the data of entries [first, end), all checked. */
struct pf_buf {
	unsigned char *data;
	uint64_t lo, hi;
	uint64_t first, end;
	int error;		/* entry end could not be read or is bad */
	struct fl_error err;
};

/*
 * Buffers go round: the reader fills bufs[filled % NR_BUFS] and publishes
 * it by advancing filled; the replay uses bufs[used % NR_BUFS] and gives
 * it back by advancing used.  lock protects filled, used, stop and done,
 * and the buffers' fields while they change hands.
 */
struct fl_prefetch {
	const struct fl_log *log;
	uint64_t from, to;		/* the entries to read */
	uint32_t device;		/* theirs, or FL_ALL_DEVICES */
	uint64_t limit;			/* read no log byte beyond this */
	size_t cap;			/* bytes a buffer */
	bool checked_only;		/* leave data without a checksum */
	struct pf_buf bufs[NR_BUFS];
	uint64_t filled, used;
	bool stop, done;		/* replay gave up; reader finished */
	pthread_mutex_t lock;
	pthread_cond_t ready;		/* filled or done moved: replay waits */
	pthread_cond_t room;		/* half the ring free, or stop: reader waits */
	pthread_t thread;
};

bool
fl_prefetch_has(const struct fl_prefetch *p, uint64_t seq)
{
	const struct fl_entry *e = &p->log->entries[seq];

	return seq >= p->from && seq < p->to && e->op == FLUSHLOG_OP_WRITE &&
	       (p->device == FL_ALL_DEVICES || e->device == p->device) &&
	       !(e->flags & FLUSHLOG_F_NO_DATA) && e->data_len &&
	       e->data_len <= p->cap &&
	       (fl_entry_needs_crc(p->log, e) || !p->checked_only);
}

static bool
holds(const struct pf_buf *b, uint64_t off, uint64_t len)
{
	return off >= b->lo && off <= b->hi && b->hi - off >= len;
}

static uint64_t
data_offset(const struct fl_prefetch *p, const struct fl_entry *e)
{
	return e->offset + p->log->info.log_block_size;
}

/*
 * The next buffer to fill, once the replay gave it back; NULL: stop.  A
 * full ring waits until half of it is free, not one buffer: a wake-up per
 * buffer costs as much as the copy, more when the two threads share a
 * CPU (another job on the machine).
 */
static struct pf_buf *
next_free(struct fl_prefetch *p, uint64_t seq)
{
	struct pf_buf *b = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->filled - p->used == NR_BUFS)
		while (!p->stop && p->filled - p->used > NR_BUFS / 2)
			pthread_cond_wait(&p->room, &p->lock);
	if (!p->stop) {
		b = &p->bufs[p->filled % NR_BUFS];
		b->lo = b->hi = 0;
		b->first = b->end = seq;
		b->error = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return b;
}

static void
publish(struct fl_prefetch *p)
{
	pthread_mutex_lock(&p->lock);
	p->filled++;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->lock);
}

/* Read entry e's data into b, from its start on as far as is worth it. */
static int
fill(struct fl_prefetch *p, struct pf_buf *b, const struct fl_entry *e)
{
	uint64_t off = data_offset(p, e);
	size_t want = e->data_len, got;
	int ret;

	if (p->limit > off && p->limit - off > want)
		want = p->limit - off < p->cap ? p->limit - off : p->cap;
	ret = fl_log_read(p->log, b->data, e->data_len, want, off, &got,
			  &b->err);
	if (ret)
		return ret;
	b->lo = off;
	b->hi = off + got;
	return 0;
}

static int
check(struct fl_prefetch *p, struct pf_buf *b, uint64_t seq)
{
	const struct fl_entry *e = &p->log->entries[seq];
	uint32_t crc;

	if (!fl_entry_needs_crc(p->log, e))
		return 0;
	crc = fl_data_checksum(p->log, b->data + (data_offset(p, e) - b->lo),
			       e->data_len);
	if (crc == e->data_crc)
		return 0;
	fl_set_error(&b->err, FL_ERR_LOG, seq, e->offset,
		     "entry %" PRIu64 " at offset %" PRIu64 ": data checksum mismatch (stored 0x%08x, computed 0x%08x)",
		     seq, e->offset, e->data_crc, crc);
	return -EBADMSG;
}

static void *
reader(void *arg)
{
	struct fl_prefetch *p = arg;
	struct pf_buf *b = next_free(p, p->from);
	uint64_t seq;

	for (seq = p->from; b && seq < p->to; seq++) {
		const struct fl_entry *e = &p->log->entries[seq];
		uint64_t off = data_offset(p, e);

		if (!fl_prefetch_has(p, seq))
			continue;
		if (b->hi && !holds(b, off, e->data_len)) {
			publish(p);
			b = next_free(p, seq);
			if (!b)
				break;
		}
		b->error = b->hi ? 0 : fill(p, b, e);
		if (!b->error)
			b->error = check(p, b, seq);
		if (b->error) {
			if (b->err.entry == FL_NO_ENTRY)
				b->err.entry = seq;
			break;
		}
		b->end = seq + 1;
	}
	if (b) {
		if (!b->error)
			b->end = p->to;
		publish(p);
	}
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int
fl_prefetch_start(const struct fl_log *log, uint64_t from, uint64_t to,
		  uint32_t device, uint64_t limit, size_t cap,
		  bool checked_only, struct fl_prefetch **pp)
{
	struct fl_prefetch *p;
	sigset_t all, old;
	int i, ret;

	*pp = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = (struct fl_prefetch) {
		.log = log, .from = from, .to = to, .device = device,
		.limit = limit, .cap = cap, .checked_only = checked_only,
	};
	for (i = 0; i < NR_BUFS; i++) {
		p->bufs[i].data = malloc(cap);
		if (!p->bufs[i].data) {
			ret = -ENOMEM;
			goto out_free_bufs;
		}
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->room, NULL);
	/* signals are the caller's business: the reader takes none */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&p->thread, NULL, reader, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto out_destroy;
	*pp = p;
	return 0;

out_destroy:
	pthread_cond_destroy(&p->room);
	pthread_cond_destroy(&p->ready);
	pthread_mutex_destroy(&p->lock);
out_free_bufs:
	while (i--)
		free(p->bufs[i].data);
	free(p);
	return ret;
}

/* The buffer the replay reads from now, or NULL before the first. */
static struct pf_buf *
current(struct fl_prefetch *p)
{
	return p->used < p->filled ? &p->bufs[p->used % NR_BUFS] : NULL;
}

/* Does the buffer in use hold entry seq (writes pending from it stay valid)? */
bool
fl_prefetch_holds(struct fl_prefetch *p, uint64_t seq)
{
	struct pf_buf *b;

	pthread_mutex_lock(&p->lock);
	b = current(p);
	pthread_mutex_unlock(&p->lock);
	return b && seq >= b->first && seq < b->end;
}

/*
 * Entry seq's data (fl_prefetch_has), checked: wait for the buffer that
 * holds it, giving back those before it.  The reader's error, if seq is
 * where it stopped.
 */
int
fl_prefetch_get(struct fl_prefetch *p, uint64_t seq,
		const unsigned char **data, struct fl_error *err)
{
	const struct fl_entry *e = &p->log->entries[seq];
	struct pf_buf *b;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		b = current(p);
		if (b && seq >= b->first && seq < b->end)
			break;
		if (b && b->error && seq >= b->end) {
			/* the reader stopped at seq: in order, never later */
			if (err)
				*err = b->err;
			pthread_mutex_unlock(&p->lock);
			return b->error;
		}
		if (b) {
			/* given back: wake the reader when half is free */
			if (p->filled - ++p->used == NR_BUFS / 2)
				pthread_cond_signal(&p->room);
		} else if (p->done) {
			/* cannot be: the reader covers every entry it has */
			pthread_mutex_unlock(&p->lock);
			return fl_set_error(err, FL_ERR_LOG, seq, e->offset,
					    "entry %" PRIu64 " was not read ahead",
					    seq), -EIO;
		} else {
			pthread_cond_wait(&p->ready, &p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
	*data = b->data + (data_offset(p, e) - b->lo);
	return 0;
}

void
fl_prefetch_stop(struct fl_prefetch *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->room);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->room);
	pthread_cond_destroy(&p->ready);
	pthread_mutex_destroy(&p->lock);
	for (int i = 0; i < NR_BUFS; i++)
		free(p->bufs[i].data);
	free(p);
}
