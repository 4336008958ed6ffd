// SPDX-License-Identifier: GPL-2.0
/*
 * fl-model: a model of the crash states that the documents define, made
 * without libflushlog's planner, and a differential test of `flushlog
 * check` against it.  The model is read from docs/log-format.md (Order and
 * time, Several devices, Ticks, A newer write keeps its sectors, Crash
 * points, dm-log-writes logs), docs/crash-models.md and flushlog-check(1);
 * it links libflushlog for the format's constants and xxh64 alone.
 *
 *   fl-model run [OPTIONS]            random logs, each compared both ways
 *   fl-model check [OPTIONS] SCRIPT   one script, as a failure prints it
 *   fl-model record OUT IMAGE         the checker `flushlog check` runs
 *
 * For each log, fl-mklog writes it from a script, `flushlog check --states
 * prefix,epoch,torn,discard` hands every state to `fl-model record`, which
 * appends the image's digest and FLUSHLOG_STATE_NAME to a file, and the
 * model then checks both ways: every image handed over is one the model
 * allows, and is the state its name describes; every state the model
 * allows (within the same bound K) was handed over.  A mismatch is shrunk
 * to a minimal script, which is printed with the differing state.
 *
 * The model, per device and in one tick domain:
 *   - durability order: a version 1 and a dm-log-writes log hold it; a
 *     version 2 or 3 log is put in it by the documented one-pass rule (a
 *     queue per device of data-changing entries without FUA, which a
 *     flush of that device takes from the front while they completed
 *     before it was submitted);
 *   - crash points: the start, each FLUSH, MARK and FUA entry, the end;
 *     the prefix state at position p applies entries 0..p-1;
 *   - a newer write keeps its sectors: an entry does not change a sector
 *     that an entry applied before it in the same state, issued after it
 *     completed, covers;
 *   - possibly durable at a crash point: every data-changing entry from
 *     its position on submitted before the next flush or FUA point
 *     completed (the end of its epoch; the rest of the log if there is
 *     none), and the entry that ends it; epoch states add up to K of them
 *     in durability order, a discard as zeroes;
 *   - torn: one possibly-durable WRITE in part, its first or its last
 *     blocks of its device, every cut;
 *   - discard: the prefix with every discard in it keeping its old data:
 *     each sector a discard changed last holds what it would hold had
 *     the discards never been issued; write-zeroes and secure erase are
 *     always zeroes;
 *   - a failed bio (FLUSHLOG_F_FAILED) is never guaranteed durable: a
 *     failed write, discard, write-zeroes or secure erase comes last in
 *     durability order, after the end point, in log order (every
 *     version); it is possibly durable at every crash point whose epoch
 *     ended after it was submitted, as a write that never completed
 *     would be; a failed flush takes nothing from its queue, and a
 *     failed flush or FUA write is no crash point;
 *   - a RESIZE changes its device's size where it stands, a single tick
 *     and no crash point; an image holds each device at its largest;
 *   - dm-log-writes logs have no ticks: the entry logged k-th gets
 *     submit = complete = k + 1.  A write with FLUSH and without FUA is a
 *     crash point for its preflush where it was logged; its data comes
 *     after the crash points logged before the next flush, and is only
 *     possibly durable until that flush.
 *
 * Run options:
 *   --flushlog PATH --mklog PATH   the programs (default: beside this one)
 *   --workdir DIR                  scratch space (default $TMPDIR or /tmp)
 *   --seed N --first I --count N   logs I.. of seed N (default 1, 0, 100)
 *   --seconds N                    stop starting logs after N seconds
 *   --max-ops N                    operations a log at most (default 24)
 *   --no-gaps                      leave out what the known gaps need:
 *                                  dm-log-writes PREFLUSH writes without
 *                                  FUA, FUA discards, ticks up to 2^64-1
 *   --jobs N                       flushlog check -j N (default 1)
 *   --keep-going                   go on after a mismatch (shrunk each)
 *   --no-shrink                    print a mismatching log as it is
 *   --verbose                      one line per log
 * SCRIPT is an fl-mklog script whose first line may say, as a comment,
 * "# fl-model: format=v1|v2|v3|log-writes K=1|2 base=0|1".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checksum.h"
#include "flushlog.h"

extern char **environ;

#define MAX_DEV		3
#define BASE_SEED	0xba5eULL

enum fmt { FMT_V1 = 1, FMT_V2 = 2, FMT_V3 = 3, FMT_LW = 4 };

/* One entry of a log, in the order the log holds it. */
struct ent {
	uint16_t op, flags;	/* FLUSHLOG_OP_*, FLUSHLOG_F_PREFLUSH/FUA/FAILED */
	uint32_t dev;
	uint64_t sector, nr;	/* the device's 512-byte sectors; a RESIZE's
				 * new size in sector */
	uint64_t seed;		/* a write's data: fl-mklog's fill(seed) */
	uint64_t submit, complete;
	char label[16];
};

/* A log as a script describes it, and the check's bound. */
struct log {
	enum fmt fmt;
	uint32_t ndev;
	uint64_t sectors[MAX_DEV];
	uint32_t block[MAX_DEV];
	uint32_t log_block;
	int base, K;
	size_t n;
	struct ent *e;
};

/* An entry in the model's durability order. */
struct ment {
	struct ent e;		/* ticks as the model reads them */
	size_t from;		/* its entry in log order */
	bool point;		/* ends a crash point */
	bool epoch_end;		/* a flush or FUA crash point: ends an epoch */
	uint64_t start;		/* its first sector in the whole image */
	uint64_t *hash;		/* a WRITE's sectors' digests */
};

/*
 * A crash point: its position (entries applied), kind, and whether it
 * ends the epoch of the points before it (a flush or FUA point), at its
 * tick; ENTRY is the entry that ends it, NO_ENTRY for the start, the end
 * and a dm-log-writes preflush (whose data comes later).
 */
struct point {
	size_t pos;
	const char *kind;
	bool epoch_end;
	uint64_t tick;
	size_t entry;
};

#define NO_ENTRY SIZE_MAX

struct model {
	const struct log *log;
	size_t n;
	struct ment *m;
	size_t npoints;
	struct point *points;
	uint64_t img;		/* sectors in the state image */
	uint64_t dev_start[MAX_DEV];
	uint64_t zero_hash;
	uint64_t *base_hash;	/* per image sector, with a base */
};

/* One image as the model builds it: per sector, what is there. */
enum { SRC_ZERO = 0, SRC_BASE = 1, SRC_ENTRY = 2 };	/* + entry index */
struct img {
	uint32_t *src;
	uint64_t *maxsub;	/* the latest submit tick applied here */
	uint8_t *cov;		/* some applied entry covers the sector */
	uint8_t *disc;		/* its last change is a discard's */
};

/* A set of digests, each with the first name and kind given to it. */
struct dset {
	size_t cap, len;
	uint64_t *key;
	char **name;
	const char **kind;
	bool *seen;
};

static const char *flushlog_bin, *mklog_bin, *workdir, *self_exe;
static int jobs = 1, verbose;

static struct {
	uint64_t logs, handed, model_states, newer_wins, pct_states, torn,
		 epoch, lw, multi, max_tick, fua_discards, lw_preflush, failed,
		 resizes;
} stats;

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fl-model: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

static char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

/* ---- data: fl-mklog's contents of a written sector ---------------------- */

/* fl-mklog's fill(): sector SECTOR of a write of seed SEED. */
static void
fill_sector(unsigned char *buf, uint64_t sector, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + sector + 1;

	for (int i = 0; i < 512; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
}

static uint64_t
sector_hash(uint64_t sector, uint64_t seed)
{
	unsigned char buf[512];

	fill_sector(buf, sector, seed);
	return fl_xxh64(buf, sizeof(buf));
}

/* The digest of an image: xxh64 of its sectors' xxh64s, little-endian. */
static uint64_t
digest_of(const uint64_t *hashes, uint64_t n)
{
	unsigned char *buf = xcalloc(n, 8);
	uint64_t d;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t le = htole64(hashes[i]);

		memcpy(buf + i * 8, &le, 8);
	}
	d = fl_xxh64(buf, n * 8);
	free(buf);
	return d;
}

/* ---- the checker --------------------------------------------------------- */

/*
 * record OUT IMAGE: append "DIGEST SECTORS NAME" to OUT; with
 * FL_MODEL_SAVE=DIR, keep the image as DIR/NAME.img too.
 */
static int
cmd_record(int argc, char **argv)
{
	const char *name = getenv("FLUSHLOG_STATE_NAME"), *save = getenv("FL_MODEL_SAVE");
	unsigned char buf[512];
	uint64_t *h = NULL, n = 0, cap = 0;
	char line[256];
	ssize_t got;
	int fd, len;

	if (argc != 4)
		die("usage: fl-model record OUT IMAGE");
	if (!name)
		die("record: FLUSHLOG_STATE_NAME is not set");
	fd = open(argv[3], O_RDONLY);
	if (fd < 0)
		die("cannot open '%s': %s", argv[3], strerror(errno));
	for (;;) {
		size_t have = 0;

		while (have < sizeof(buf) &&
		       (got = read(fd, buf + have, sizeof(buf) - have)) > 0)
			have += (size_t)got;
		if (!have)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			h = realloc(h, cap * 8);
			if (!h)
				die("out of memory");
		}
		h[n++] = fl_xxh64(buf, have);
		if (have < sizeof(buf))
			break;
	}
	close(fd);
	len = snprintf(line, sizeof(line), "%016" PRIx64 " %" PRIu64 " %s\n",
		       digest_of(h, n), n, name);
	fd = open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0 || write(fd, line, (size_t)len) != len || close(fd))
		die("cannot append to '%s'", argv[2]);
	if (save) {
		char *cmd = xasprintf("cp -- '%s' '%s/%s.img'", argv[3], save, name);

		if (system(cmd))
			die("cannot keep the image of state %s", name);
		free(cmd);
	}
	free(h);
	return 0;
}

/* ---- scripts ------------------------------------------------------------- */

static const char *
fmt_name(enum fmt f)
{
	return f == FMT_V1 ? "v1" : f == FMT_V2 ? "v2" : f == FMT_V3 ? "v3" : "log-writes";
}

static bool
is_data_op(unsigned op)
{
	return op >= FLUSHLOG_OP_WRITE && op <= FLUSHLOG_OP_SECURE_ERASE;
}

static void
print_entry(FILE *f, const struct log *l, const struct ent *e)
{
	static const char *const word[] = {
		[FLUSHLOG_OP_WRITE] = "write", [FLUSHLOG_OP_DISCARD] = "discard",
		[FLUSHLOG_OP_WRITE_ZEROES] = "zeroes",
		[FLUSHLOG_OP_SECURE_ERASE] = "erase",
	};
	bool ticks = l->fmt != FMT_LW;

	if (e->op == FLUSHLOG_OP_MARK) {
		fprintf(f, "mark %s", e->label);
		if (ticks)
			fprintf(f, " tick %" PRIu64, e->complete);
		fputc('\n', f);
		return;
	}
	if (e->op == FLUSHLOG_OP_RESIZE) {
		fprintf(f, "resize %" PRIu64 " tick %" PRIu64, e->sector, e->complete);
		if (e->dev)
			fprintf(f, " dev %u", e->dev);
		fputc('\n', f);
		return;
	}
	if (e->op == FLUSHLOG_OP_FLUSH)
		fprintf(f, "flush");
	else
		fprintf(f, "%s %" PRIu64 " %" PRIu64, word[e->op], e->sector, e->nr);
	if (e->flags & FLUSHLOG_F_FUA)
		fprintf(f, " fua");
	if (e->flags & FLUSHLOG_F_PREFLUSH && e->op != FLUSHLOG_OP_FLUSH)
		fprintf(f, " preflush");
	if (e->op == FLUSHLOG_OP_WRITE)
		fprintf(f, " seed %" PRIu64, e->seed);
	if (ticks)
		fprintf(f, " ticks %" PRIu64 " %" PRIu64, e->submit, e->complete);
	if (e->dev)
		fprintf(f, " dev %u", e->dev);
	if (e->flags & FLUSHLOG_F_FAILED)
		fprintf(f, " failed");
	fputc('\n', f);
}

static void
print_script(FILE *f, const struct log *l, const char *indent)
{
	fprintf(f, "%s# fl-model: format=%s K=%d base=%d\n", indent, fmt_name(l->fmt),
		l->K, l->base);
	for (uint32_t d = 0; d < l->ndev; d++)
		fprintf(f, "%s%s %" PRIu64 " %u\n", indent, d ? "adddevice" : "device",
			l->sectors[d], l->block[d]);
	if (l->fmt != FMT_LW)
		fprintf(f, "%sversion %d\n%slogblock %u\n", indent, (int)l->fmt, indent,
			l->log_block);
	for (size_t i = 0; i < l->n; i++) {
		fputs(indent, f);
		print_entry(f, l, &l->e[i]);
	}
}

static uint64_t
num(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno)
		die("not a number: '%s'", s);
	return v;
}

/* Read a script of the lines print_script() writes. */
static void
read_script(const char *path, struct log *l)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t cap = 0;
	uint64_t tick = 0;	/* fl-mklog's: the highest so far */

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	memset(l, 0, sizeof(*l));
	l->fmt = FMT_V1;
	l->K = 1;
	l->log_block = 512;
	while (fgets(line, sizeof(line), f)) {
		char *tok[32], *save = NULL, *t, *hash;
		struct ent e = { 0 };
		int n = 0;

		if (!strncmp(line, "# fl-model:", 11)) {
			for (t = strtok_r(line + 11, " \t\n", &save); t;
			     t = strtok_r(NULL, " \t\n", &save)) {
				if (!strcmp(t, "format=v1"))
					l->fmt = FMT_V1;
				else if (!strcmp(t, "format=v2"))
					l->fmt = FMT_V2;
				else if (!strcmp(t, "format=v3"))
					l->fmt = FMT_V3;
				else if (!strcmp(t, "format=log-writes"))
					l->fmt = FMT_LW;
				else if (!strncmp(t, "K=", 2) && num(t + 2) >= 1 && num(t + 2) <= 8)
					l->K = (int)num(t + 2);
				else if (!strncmp(t, "base=", 5))
					l->base = (int)num(t + 5);
				else
					die("%s: unknown setting '%s'", path, t);
			}
			continue;
		}
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		for (t = strtok_r(line, " \t\n", &save); t && n < 32;
		     t = strtok_r(NULL, " \t\n", &save))
			tok[n++] = t;
		if (!n)
			continue;
		if (!strcmp(tok[0], "device") || !strcmp(tok[0], "adddevice")) {
			if (n < 2 || l->ndev == MAX_DEV)
				die("%s: bad '%s' line", path, tok[0]);
			l->sectors[l->ndev] = num(tok[1]);
			l->block[l->ndev++] = n > 2 ? (uint32_t)num(tok[2]) : 512;
			continue;
		}
		if (!strcmp(tok[0], "version") && n == 2) {
			if (l->fmt != FMT_LW)
				l->fmt = (enum fmt)num(tok[1]);
			continue;
		}
		if (!strcmp(tok[0], "logblock") && n == 2) {
			l->log_block = (uint32_t)num(tok[1]);
			continue;
		}
		if (!strcmp(tok[0], "mark") && n >= 2) {
			e.op = FLUSHLOG_OP_MARK;
			snprintf(e.label, sizeof(e.label), "%s", tok[1]);
			if (n == 4 && !strcmp(tok[2], "tick"))
				e.submit = e.complete = num(tok[3]);
			else if (n != 2)
				die("%s: bad mark line", path);
		} else if (!strcmp(tok[0], "resize") && n >= 2) {
			e.op = FLUSHLOG_OP_RESIZE;
			e.sector = num(tok[1]);
			for (int i = 2; i < n; i++) {
				if (!strcmp(tok[i], "tick") && i + 1 < n)
					e.submit = e.complete = num(tok[++i]);
				else if (!strcmp(tok[i], "dev") && i + 1 < n)
					e.dev = (uint32_t)num(tok[++i]);
				else
					die("%s: bad resize line", path);
			}
		} else {
			int i = 1;

			if (!strcmp(tok[0], "flush")) {
				e.op = FLUSHLOG_OP_FLUSH;
				e.flags = FLUSHLOG_F_PREFLUSH;
			} else {
				if (!strcmp(tok[0], "write"))
					e.op = FLUSHLOG_OP_WRITE;
				else if (!strcmp(tok[0], "discard"))
					e.op = FLUSHLOG_OP_DISCARD;
				else if (!strcmp(tok[0], "zeroes"))
					e.op = FLUSHLOG_OP_WRITE_ZEROES;
				else if (!strcmp(tok[0], "erase"))
					e.op = FLUSHLOG_OP_SECURE_ERASE;
				else
					die("%s: cannot read '%s'", path, tok[0]);
				if (n < 3)
					die("%s: '%s' needs SECTOR NR", path, tok[0]);
				e.sector = num(tok[1]);
				e.nr = num(tok[2]);
				i = 3;
			}
			for (; i < n; i++) {
				if (!strcmp(tok[i], "fua"))
					e.flags |= FLUSHLOG_F_FUA;
				else if (!strcmp(tok[i], "preflush"))
					e.flags |= FLUSHLOG_F_PREFLUSH;
				else if (!strcmp(tok[i], "failed"))
					e.flags |= FLUSHLOG_F_FAILED;
				else if (!strcmp(tok[i], "seed") && i + 1 < n)
					e.seed = num(tok[++i]);
				else if (!strcmp(tok[i], "dev") && i + 1 < n)
					e.dev = (uint32_t)num(tok[++i]);
				else if (!strcmp(tok[i], "ticks") && i + 2 < n) {
					e.submit = num(tok[++i]);
					e.complete = num(tok[++i]);
				} else
					die("%s: unknown word '%s'", path, tok[i]);
			}
		}
		if (l->n == cap) {
			cap = cap ? 2 * cap : 64;
			l->e = realloc(l->e, cap * sizeof(*l->e));
			if (!l->e)
				die("out of memory");
		}
		/* fl-mklog's defaults: the next ticks, a seed from the entry */
		if ((e.op == FLUSHLOG_OP_MARK || e.op == FLUSHLOG_OP_RESIZE) && !e.complete)
			e.submit = e.complete = ++tick;
		if (!e.submit && !e.complete) {
			e.submit = ++tick;
			e.complete = ++tick;
		}
		if (e.complete > tick)
			tick = e.complete;
		if (e.op == FLUSHLOG_OP_WRITE && !e.seed)
			e.seed = l->n + 1;
		l->e[l->n++] = e;
	}
	fclose(f);
	if (!l->ndev)
		die("%s: no device line", path);
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].dev >= l->ndev)
			die("%s: entry %zu names device %u", path, i, l->e[i].dev);
}

/* ---- the model ----------------------------------------------------------- */

/*
 * A flush, in a log with ticks: a FLUSH, or a write with PREFLUSH and
 * FUA; one that failed made nothing durable.
 */
static bool
is_flush(const struct ent *e)
{
	if (e->flags & FLUSHLOG_F_FAILED)
		return false;
	return e->op == FLUSHLOG_OP_FLUSH ||
	       (e->op == FLUSHLOG_OP_WRITE && (e->flags & FLUSHLOG_F_PREFLUSH) &&
		(e->flags & FLUSHLOG_F_FUA));
}

static bool
is_point(const struct ent *e)
{
	if (e->flags & FLUSHLOG_F_FAILED)
		return false;	/* it guaranteed nothing */
	return e->op == FLUSHLOG_OP_FLUSH || e->op == FLUSHLOG_OP_MARK ||
	       (e->flags & FLUSHLOG_F_FUA);
}

/* A failed data-changing entry: last in durability order, past the end. */
static bool
failed_data(const struct ent *e)
{
	return is_data_op(e->op) && (e->flags & FLUSHLOG_F_FAILED);
}

static const char *
point_kind(const struct ent *e)
{
	if (e->op == FLUSHLOG_OP_MARK)
		return "mark";
	if (e->op == FLUSHLOG_OP_FLUSH || (e->flags & FLUSHLOG_F_PREFLUSH))
		return "flush";
	return "fua";
}

static void
push(struct model *md, const struct ent *e, size_t from)
{
	struct ment *m = &md->m[md->n++];

	memset(m, 0, sizeof(*m));
	m->e = *e;
	m->from = from;
	m->point = is_point(e);
	m->epoch_end = m->point && e->op != FLUSHLOG_OP_MARK;
}

/*
 * Completion order to durability order (log-format.md, From completion
 * order to durability order): a FIFO queue per device of data-changing
 * entries without FUA; a flush takes from its device's queue the entries
 * that completed before it was submitted, then comes itself; the others
 * come where they are; whatever is queued at the end comes last, in log
 * order.  QUEUED and FLUSH say which entries queue and which flush, for
 * the generator's use on dm-log-writes' rules too.
 */
static void
completion_to_durability(const struct ent *in, size_t n, struct ent *out, size_t *from,
			 bool (*queued)(const struct ent *), bool (*flush)(const struct ent *))
{
	size_t *q[MAX_DEV], head[MAX_DEV] = { 0 }, tail[MAX_DEV] = { 0 }, k = 0;

	for (int d = 0; d < MAX_DEV; d++)
		q[d] = xcalloc(n, sizeof(size_t));
	for (size_t i = 0; i < n; i++) {
		const struct ent *e = &in[i];

		if (flush(e)) {
			while (head[e->dev] < tail[e->dev] &&
			       in[q[e->dev][head[e->dev]]].complete < e->submit) {
				from[k] = q[e->dev][head[e->dev]++];
				out[k] = in[from[k]];
				k++;
			}
		} else if (queued(e)) {
			q[e->dev][tail[e->dev]++] = i;
			continue;
		}
		from[k] = i;
		out[k++] = *e;
	}
	/* the leftovers of every device, in log order */
	for (size_t i = 0; i < n; i++) {
		const struct ent *e = &in[i];

		for (size_t j = head[e->dev]; j < tail[e->dev]; j++)
			if (q[e->dev][j] == i) {
				from[k] = i;
				out[k++] = *e;
			}
	}
	for (int d = 0; d < MAX_DEV; d++)
		free(q[d]);
}

/* Waits for a flush: a failed entry never does, nothing makes it durable. */
static bool
queued_flushlog(const struct ent *e)
{
	return is_data_op(e->op) && !(e->flags & (FLUSHLOG_F_FUA | FLUSHLOG_F_FAILED));
}

/* dm-log-writes' flushes: a FLUSH, or any write with FLUSH, data and all */
static bool
is_lw_flush(const struct ent *e)
{
	return e->op == FLUSHLOG_OP_FLUSH ||
	       (e->op == FLUSHLOG_OP_WRITE && (e->flags & FLUSHLOG_F_PREFLUSH));
}

static void
add_point(struct model *md, const char *kind, bool epoch_end, uint64_t tick, size_t entry)
{
	md->points[md->npoints++] = (struct point){ md->n, kind, epoch_end, tick, entry };
}

/* Entry E, from log entry FROM, in durability order now; a point if it ends one. */
static void
push_entry(struct model *md, const struct ent *e, size_t from)
{
	push(md, e, from);
	if (md->m[md->n - 1].point)
		add_point(md, point_kind(e), md->m[md->n - 1].epoch_end, e->complete, md->n - 1);
}

/* The crash-point entries (or the others) logged in [FROM, TO), in order. */
static void
push_logged(struct model *md, size_t from, size_t to, bool points)
{
	for (size_t j = from; j < to; j++) {
		struct ent o = md->log->e[j];

		if (is_point(&o) != points)
			continue;
		o.submit = o.complete = j + 1;
		push_entry(md, &o, j);
	}
}

/*
 * A dm-log-writes log, read as log-format.md says (Durability order of a
 * dm-log-writes log): in durability order as logged, entry k at tick
 * k + 1, but for a write with FLUSH and not FUA.  Its flush is a crash
 * point where it was logged; its data is durable at the next flush logged
 * after it (a FLUSH, or a write with FLUSH), and comes after the crash
 * points logged between the two and before the other entries logged
 * there.
 */
static void
order_log_writes(struct model *md)
{
	const struct log *l = md->log;

	for (size_t k = 0; k < l->n;) {
		struct ent e = l->e[k];
		size_t next = k + 1;

		e.submit = e.complete = k + 1;
		if (!(e.op == FLUSHLOG_OP_WRITE && (e.flags & FLUSHLOG_F_PREFLUSH) &&
		      !(e.flags & FLUSHLOG_F_FUA))) {
			push_entry(md, &e, k++);
			continue;
		}
		add_point(md, "flush", true, k + 1, NO_ENTRY);
		while (next < l->n && !is_lw_flush(&l->e[next]))
			next++;
		push_logged(md, k + 1, next, true);
		push(md, &e, k);
		push_logged(md, k + 1, next, false);
		k = next;
	}
}

/*
 * log-format.md, A write with PREFLUSH: the block layer sends the data
 * only once its flush completed, so the WRITE counts as submitted at the
 * complete_tick of its FLUSH entry (its device's, with its submit_tick;
 * one that completed after the write cannot be it; of several, the
 * latest); without one, at its own submit_tick.
 */
static void
pair_preflush(struct model *md)
{
	for (size_t j = 0; j < md->n; j++) {
		struct ent *w = &md->m[j].e;
		uint64_t paired = 0;
		bool found = false;

		if (w->op != FLUSHLOG_OP_WRITE || !(w->flags & FLUSHLOG_F_PREFLUSH) ||
		    (w->flags & FLUSHLOG_F_FUA))
			continue;
		for (size_t k = 0; k < md->n; k++) {
			const struct ent *f = &md->m[k].e;

			if (f->op == FLUSHLOG_OP_FLUSH && f->dev == w->dev && f->submit == w->submit &&
			    f->complete <= w->complete && (!found || f->complete > paired)) {
				paired = f->complete;
				found = true;
			}
		}
		if (found)
			w->submit = paired;
	}
}

static void
model_build(struct model *md, const struct log *l)
{
	memset(md, 0, sizeof(*md));
	md->log = l;
	md->m = xcalloc(l->n + 1, sizeof(*md->m));
	md->points = xcalloc(l->n + 2, sizeof(*md->points));
	add_point(md, "start", false, 0, NO_ENTRY);
	if (l->fmt == FMT_LW) {
		order_log_writes(md);
	} else {
		struct ent *out = xcalloc(l->n, sizeof(*out));
		size_t *from = xcalloc(l->n, sizeof(size_t));

		if (l->fmt == FMT_V1) {
			memcpy(out, l->e, l->n * sizeof(*out));
			for (size_t i = 0; i < l->n; i++)
				from[i] = i;
		} else {
			completion_to_durability(l->e, l->n, out, from, queued_flushlog,
						 is_flush);
		}
		/* the failed ones last, past the end point, in log order */
		for (size_t i = 0; i < l->n; i++)
			if (!failed_data(&out[i]))
				push_entry(md, &out[i], from[i]);
		add_point(md, "end", false, 0, NO_ENTRY);
		for (size_t i = 0; i < l->n; i++)
			if (failed_data(&out[i]))
				push_entry(md, &out[i], from[i]);
		free(out);
		free(from);
	}
	if (l->fmt == FMT_LW)
		add_point(md, "end", false, 0, NO_ENTRY);
	if (l->fmt != FMT_LW)
		pair_preflush(md);

	/* the image: every device from a 4 KiB boundary after the one before */
	if (l->fmt == FMT_LW) {
		md->img = 0;
		for (size_t i = 0; i < l->n; i++)
			if (is_data_op(l->e[i].op) && l->e[i].sector + l->e[i].nr > md->img)
				md->img = l->e[i].sector + l->e[i].nr;
	} else {
		uint64_t largest[MAX_DEV];

		/* each device at the largest of its sizes */
		memcpy(largest, l->sectors, sizeof(largest));
		for (size_t i = 0; i < l->n; i++)
			if (l->e[i].op == FLUSHLOG_OP_RESIZE && l->e[i].sector > largest[l->e[i].dev])
				largest[l->e[i].dev] = l->e[i].sector;
		for (uint32_t d = 0; d < l->ndev; d++) {
			md->dev_start[d] = d ? (md->dev_start[d - 1] + largest[d - 1] + 7) / 8 * 8 : 0;
			md->img = md->dev_start[d] + largest[d];
		}
	}
	{
		unsigned char z[512] = { 0 };

		md->zero_hash = fl_xxh64(z, sizeof(z));
	}
	if (l->base) {
		md->base_hash = xcalloc(md->img, sizeof(uint64_t));
		for (uint64_t s = 0; s < md->img; s++)
			md->base_hash[s] = sector_hash(s, BASE_SEED);
	}
	for (size_t j = 0; j < md->n; j++) {
		struct ment *m = &md->m[j];

		m->start = md->dev_start[m->e.dev] + m->e.sector;
		if (m->e.op != FLUSHLOG_OP_WRITE)
			continue;
		m->hash = xcalloc(m->e.nr, sizeof(uint64_t));
		for (uint64_t s = 0; s < m->e.nr; s++)
			m->hash[s] = sector_hash(m->e.sector + s, m->e.seed);
	}
}

static void
model_free(struct model *md)
{
	for (size_t j = 0; j < md->n; j++)
		free(md->m[j].hash);
	free(md->m);
	free(md->points);
	free(md->base_hash);
}

static bool
is_position(const struct model *md, size_t pos)
{
	for (size_t i = 0; i < md->npoints; i++)
		if (md->points[i].pos == pos)
			return true;
	return false;
}

/*
 * Possibly durable at crash point C: every data-changing entry from its
 * position on that was submitted before its epoch ended, when the next
 * flush or FUA point completed (every one, if none does), and the entry
 * that ends it, in flight until then (a dm-log-writes log gives it one
 * tick for both).
 */
static bool
possibly_durable(const struct model *md, size_t c, size_t j)
{
	if (j < md->points[c].pos || j >= md->n || !is_data_op(md->m[j].e.op))
		return false;
	for (size_t q = c + 1; q < md->npoints; q++)
		if (md->points[q].epoch_end)
			return j == md->points[q].entry || md->m[j].e.submit < md->points[q].tick;
	return true;
}

static void
img_init(const struct model *md, struct img *im)
{
	im->src = xcalloc(md->img, sizeof(uint32_t));
	im->maxsub = xcalloc(md->img, sizeof(uint64_t));
	im->cov = xcalloc(md->img, 1);
	im->disc = xcalloc(md->img, 1);
	for (uint64_t s = 0; s < md->img; s++)
		im->src[s] = md->log->base ? SRC_BASE : SRC_ZERO;
}

static void
img_copy(const struct model *md, struct img *to, const struct img *from)
{
	memcpy(to->src, from->src, md->img * sizeof(uint32_t));
	memcpy(to->maxsub, from->maxsub, md->img * sizeof(uint64_t));
	memcpy(to->cov, from->cov, md->img);
	memcpy(to->disc, from->disc, md->img);
}

static void
img_free(struct img *im)
{
	free(im->src);
	free(im->maxsub);
	free(im->cov);
	free(im->disc);
}

/*
 * Apply sectors FROM..FROM+LEN-1 of entry J.  A newer write keeps its
 * sectors: a sector that an entry applied before J covers, and that entry
 * was submitted after J completed, keeps what it holds.  Returns how many
 * sectors the rule kept.
 */
static uint64_t
apply(const struct model *md, struct img *im, size_t j, uint64_t from, uint64_t len)
{
	const struct ment *m = &md->m[j];
	uint64_t kept = 0;

	if (!is_data_op(m->e.op))
		return 0;
	for (uint64_t s = m->start + from; s < m->start + from + len; s++) {
		if (im->cov[s] && im->maxsub[s] > m->e.complete) {
			kept++;
		} else {
			im->src[s] = m->e.op == FLUSHLOG_OP_WRITE ? SRC_ENTRY + (uint32_t)j : SRC_ZERO;
			im->disc[s] = m->e.op == FLUSHLOG_OP_DISCARD;
		}
		im->cov[s] = 1;
		if (m->e.submit > im->maxsub[s])
			im->maxsub[s] = m->e.submit;
	}
	return kept;
}

/*
 * The '%' state: every discard kept its old data.  A sector whose last
 * change in HELD (the entries applied, discards as zeroes) is a discard
 * holds what PASSED (the same entries but the discards, as if never
 * issued) holds; every other sector, what HELD holds: written since its
 * discards, it shows nothing of them.  Both follow the newer-write rule:
 * a discard issued after a write completed that durability order applies
 * later keeps that write out in HELD, not in PASSED.
 */
static void
keep_discards(const struct model *md, struct img *held, const struct img *passed)
{
	for (uint64_t s = 0; s < md->img; s++)
		if (held->disc[s])
			held->src[s] = passed->src[s];
}

static uint64_t
img_digest(const struct model *md, const struct img *im)
{
	uint64_t *h = xcalloc(md->img, sizeof(uint64_t)), d;

	for (uint64_t s = 0; s < md->img; s++) {
		uint32_t src = im->src[s];

		h[s] = src == SRC_ZERO ? md->zero_hash :
		       src == SRC_BASE ? md->base_hash[s] :
		       md->m[src - SRC_ENTRY].hash[s - md->m[src - SRC_ENTRY].start];
	}
	d = digest_of(h, md->img);
	free(h);
	return d;
}

/* ---- digest sets ---------------------------------------------------------- */

static ssize_t
dset_find(const struct dset *ds, uint64_t key)
{
	if (!ds->cap)
		return -1;
	for (size_t i = key % ds->cap;; i = (i + 1) % ds->cap) {
		if (!ds->name[i])
			return -1;
		if (ds->key[i] == key)
			return (ssize_t)i;
	}
}

static void
dset_add(struct dset *ds, uint64_t key, const char *name, const char *kind)
{
	size_t i;

	if (dset_find(ds, key) >= 0)
		return;
	if (2 * (ds->len + 1) > ds->cap) {
		struct dset old = *ds;

		ds->cap = ds->cap ? 2 * ds->cap : 256;
		ds->len = 0;
		ds->key = xcalloc(ds->cap, sizeof(uint64_t));
		ds->name = xcalloc(ds->cap, sizeof(char *));
		ds->kind = xcalloc(ds->cap, sizeof(char *));
		ds->seen = xcalloc(ds->cap, sizeof(bool));
		for (size_t k = 0; k < old.cap; k++)
			if (old.name[k]) {
				dset_add(ds, old.key[k], old.name[k], old.kind[k]);
				free(old.name[k]);
			}
		free(old.key);
		free(old.name);
		free(old.kind);
		free(old.seen);
	}
	for (i = key % ds->cap; ds->name[i]; i = (i + 1) % ds->cap)
		;
	ds->key[i] = key;
	ds->name[i] = strdup(name);
	ds->kind[i] = kind;
	ds->len++;
}

static void
dset_free(struct dset *ds)
{
	for (size_t i = 0; i < ds->cap; i++)
		free(ds->name[i]);
	free(ds->key);
	free(ds->name);
	free(ds->kind);
	free(ds->seen);
	memset(ds, 0, sizeof(*ds));
}

/* ---- the model's states ------------------------------------------------- */

/*
 * The epoch states at position POS: the prefix PRE and every set of up to
 * K of the NPD possibly-durable entries PD, from PD[FROM] on, added to the
 * DEPTH entries CHOSEN so far, applied in durability order.
 */
static void
epoch_sets(const struct model *md, struct dset *ds, const struct img *pre, struct img *tmp,
	   size_t pos, const size_t *pd, size_t npd, size_t from, size_t *chosen, int depth)
{
	for (size_t a = from; a < npd; a++) {
		char name[256];
		int len;

		chosen[depth] = pd[a];
		img_copy(md, tmp, pre);
		len = snprintf(name, sizeof(name), "%zu", pos);
		for (int i = 0; i <= depth; i++) {
			apply(md, tmp, chosen[i], 0, md->m[chosen[i]].e.nr);
			len += snprintf(name + len, sizeof(name) - (size_t)len, "%c%zu",
					i ? ',' : '+', chosen[i]);
		}
		dset_add(ds, img_digest(md, tmp), name, "epoch");
		if (depth + 1 < md->log->K)
			epoch_sets(md, ds, pre, tmp, pos, pd, npd, a + 1, chosen, depth + 1);
	}
}

/* Every state the model allows, by digest, named as flushlog names them. */
static void
enumerate(const struct model *md, struct dset *ds)
{
	struct img pre, pass, tmp;
	size_t applied = 0, pd[256], chosen[8];
	char name[128];

	img_init(md, &pre);
	img_init(md, &pass);
	img_init(md, &tmp);
	for (size_t p = 0; p < md->npoints; p++) {
		size_t pos = md->points[p].pos, npd = 0;

		/* points share a position, not always an epoch: each its own */
		if (!p || pos != md->points[p - 1].pos) {
			for (; applied < pos; applied++) {
				stats.newer_wins += apply(md, &pre, applied, 0,
							  md->m[applied].e.nr) > 0;
				if (md->m[applied].e.op != FLUSHLOG_OP_DISCARD)
					apply(md, &pass, applied, 0, md->m[applied].e.nr);
			}
			snprintf(name, sizeof(name), "%zu", pos);
			dset_add(ds, img_digest(md, &pre), name, "prefix");
			img_copy(md, &tmp, &pre);
			keep_discards(md, &tmp, &pass);
			snprintf(name, sizeof(name), "%zu%%", pos);
			dset_add(ds, img_digest(md, &tmp), name, "discard");
		}
		for (size_t j = pos; j < md->n && npd < 256; j++)
			if (possibly_durable(md, p, j))
				pd[npd++] = j;
		/* epoch: every set of up to K, in durability order */
		epoch_sets(md, ds, &pre, &tmp, pos, pd, npd, 0, chosen, 0);
		/* torn: a head or a tail of one write, cut at its device's blocks */
		for (size_t a = 0; a < npd; a++) {
			const struct ent *e = &md->m[pd[a]].e;
			uint64_t bs = md->log->fmt == FMT_LW ? md->log->block[0] / 512 :
				      md->log->block[e->dev] / 512;

			if (e->op != FLUSHLOG_OP_WRITE)
				continue;
			for (uint64_t cut = bs; cut < e->nr; cut += bs) {
				img_copy(md, &tmp, &pre);
				apply(md, &tmp, pd[a], 0, cut);
				snprintf(name, sizeof(name), "%zu~%zu:0+%" PRIu64, pos, pd[a], cut);
				dset_add(ds, img_digest(md, &tmp), name, "torn");
				img_copy(md, &tmp, &pre);
				apply(md, &tmp, pd[a], cut, e->nr - cut);
				snprintf(name, sizeof(name), "%zu~%zu:%" PRIu64 "+%" PRIu64, pos,
					 pd[a], cut, e->nr - cut);
				dset_add(ds, img_digest(md, &tmp), name, "torn");
			}
		}
	}
	img_free(&pre);
	img_free(&pass);
	img_free(&tmp);
}

/* A state name, parsed: N[+E,F...|~T:A+L][%] */
struct sname {
	size_t n, nextra, extra[16], torn;
	uint64_t from, len;
	bool is_torn, pct;
};

static bool
parse_name(const char *s, struct sname *sn)
{
	char *end;

	memset(sn, 0, sizeof(*sn));
	if (*s < '0' || *s > '9')
		return false;
	sn->n = strtoull(s, &end, 10);
	s = end;
	if (*s == '+') {
		do {
			s++;
			if (*s < '0' || *s > '9' || sn->nextra == 16)
				return false;
			sn->extra[sn->nextra++] = strtoull(s, &end, 10);
			s = end;
		} while (*s == ',');
	} else if (*s == '~') {
		sn->is_torn = true;
		sn->torn = strtoull(s + 1, &end, 10);
		if (end == s + 1 || *end != ':')
			return false;
		s = end + 1;
		sn->from = strtoull(s, &end, 10);
		if (end == s || *end != '+')
			return false;
		s = end + 1;
		sn->len = strtoull(s, &end, 10);
		if (end == s)
			return false;
		s = end;
	}
	if (*s == '%') {
		sn->pct = true;
		s++;
	}
	return !*s;
}

/* Entries 0..N-1, the extra ones or the torn part; without the discards. */
static void
apply_named(const struct model *md, const struct sname *sn, struct img *im, bool pass)
{
	for (size_t j = 0; j < sn->n; j++)
		if (!pass || md->m[j].e.op != FLUSHLOG_OP_DISCARD)
			apply(md, im, j, 0, md->m[j].e.nr);
	for (size_t i = 0; i < sn->nextra; i++) {
		size_t j = sn->extra[i];

		if (!pass || md->m[j].e.op != FLUSHLOG_OP_DISCARD)
			apply(md, im, j, 0, md->m[j].e.nr);
	}
	if (sn->is_torn)
		apply(md, im, sn->torn, sn->from, sn->len);
}

/*
 * The state a name describes, as the model builds it: entries 0..N-1,
 * then the extra ones or the torn part, the discards among them keeping
 * their data with '%'.  Returns false when the name points outside the
 * log.
 */
static bool
build_named(const struct model *md, const struct sname *sn, struct img *im)
{
	if (sn->n > md->n)
		return false;
	for (size_t i = 0; i < sn->nextra; i++)
		if (sn->extra[i] >= md->n)
			return false;
	if (sn->is_torn && (sn->torn >= md->n || sn->from + sn->len > md->m[sn->torn].e.nr ||
			    !is_data_op(md->m[sn->torn].e.op)))
		return false;
	apply_named(md, sn, im, false);
	if (sn->pct) {
		struct img passed;

		img_init(md, &passed);
		apply_named(md, sn, &passed, true);
		keep_discards(md, im, &passed);
		img_free(&passed);
	}
	return true;
}

/*
 * Crash point P's position, or entries from it to N that change no data
 * (flushes, marks, resizes, failed flushes), lie just before N: a name
 * counts those in N (flushlog-check(1)), so N is P's state.
 */
static bool
reaches(const struct model *md, size_t p, size_t n)
{
	if (md->points[p].pos > n)
		return false;
	for (size_t j = md->points[p].pos; j < n; j++)
		if (is_data_op(md->m[j].e.op))
			return false;
	return true;
}

/*
 * Is the name one of the model's states?  N+E,F: E and F possibly durable
 * at a crash point at position P <= N, with the data entries of P..N-1
 * among them too (flushlog names P+P as P+1), at most K in all.
 * N~T:A+L: T a write possibly durable at a crash point that N reaches,
 * cut at its device's blocks into a head or a tail.  N%: N reaches a crash
 * point, nothing added.
 */
static const char *
name_problem(const struct model *md, const struct sname *sn)
{
	const struct log *l = md->log;

	if (sn->pct) {
		bool at_point = false;

		for (size_t p = 0; p < md->npoints; p++)
			at_point |= reaches(md, p, sn->n);
		return sn->nextra || sn->is_torn ? "a '%' state with other writes added" :
		       at_point ? NULL : "'%' at a position that is no crash point";
	}
	if (sn->is_torn) {
		const struct ent *e = &md->m[sn->torn].e;
		uint64_t bs = (l->fmt == FMT_LW ? l->block[0] : l->block[e->dev]) / 512;
		bool pd = false, at_point = false;

		for (size_t p = 0; p < md->npoints; p++) {
			at_point |= reaches(md, p, sn->n);
			pd |= reaches(md, p, sn->n) && possibly_durable(md, p, sn->torn);
		}
		if (!at_point)
			return "a torn state at a position that is no crash point";
		if (!pd)
			return "the torn entry is not possibly durable there";
		if (e->op != FLUSHLOG_OP_WRITE)
			return "the torn entry is no write";
		if (!sn->len || sn->from % bs || sn->len % bs)
			return "the torn part is not whole blocks of its device";
		if (!((sn->from == 0 && sn->len < e->nr) ||
		      (sn->from > 0 && sn->from + sn->len == e->nr)))
			return "the torn part is neither a head nor a tail";
		return NULL;
	}
	for (size_t i = 1; i < sn->nextra; i++)
		if (sn->extra[i] <= sn->extra[i - 1])
			return "the added entries are not in durability order";
	for (size_t p = 0; p < md->npoints; p++) {
		size_t pos = md->points[p].pos, added = sn->nextra;
		bool ok = pos <= sn->n;

		for (size_t j = pos; ok && j < sn->n; j++)
			if (is_data_op(md->m[j].e.op)) {
				ok = possibly_durable(md, p, j);
				added++;
			}
		ok = ok && added <= (size_t)l->K;
		for (size_t i = 0; ok && i < sn->nextra; i++)
			ok = sn->extra[i] >= sn->n && possibly_durable(md, p, sn->extra[i]);
		if (ok)
			return NULL;
	}
	return sn->nextra || !is_position(md, sn->n) ?
	       "the added entries are not possibly durable at one crash point, or more than K" :
	       NULL;
}

/* ---- describing a state -------------------------------------------------- */

/* Runs of sectors by what they hold: "0-7 e3  8-15 zero  16-63 base". */
static void
describe_img(FILE *f, const struct model *md, const uint32_t *src, const char *indent)
{
	const struct log *l = md->log;
	uint32_t ndev = l->fmt == FMT_LW ? 1 : l->ndev;

	for (uint32_t d = 0; d < ndev; d++) {
		uint64_t start = md->dev_start[d],
			 end = l->fmt == FMT_LW ? md->img : start + l->sectors[d];

		fprintf(f, "%sdevice %u:", indent, d);
		for (uint64_t s = start; s < end;) {
			uint64_t t = s;

			while (t < end && src[t] == src[s])
				t++;
			fprintf(f, " %" PRIu64 "-%" PRIu64 " ", s - start, t - 1 - start);
			if (src[s] == SRC_ZERO)
				fprintf(f, "zero");
			else if (src[s] == SRC_BASE)
				fprintf(f, "base");
			else if (src[s] == UINT32_MAX)
				fprintf(f, "UNKNOWN");
			else
				fprintf(f, "e%u", src[s] - SRC_ENTRY);
			s = t;
		}
		fputc('\n', f);
	}
}

/* What an image file holds, sector by sector, in the model's terms. */
static bool
decode_image(const struct model *md, const char *path, uint32_t *src)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[512];

	if (!f)
		return false;
	for (uint64_t s = 0; s < md->img; s++) {
		uint64_t h;

		if (fread(buf, 1, sizeof(buf), f) != sizeof(buf)) {
			fclose(f);
			return false;
		}
		h = fl_xxh64(buf, sizeof(buf));
		src[s] = UINT32_MAX;
		if (h == md->zero_hash)
			src[s] = SRC_ZERO;
		else if (md->base_hash && h == md->base_hash[s])
			src[s] = SRC_BASE;
		for (size_t j = 0; j < md->n && src[s] == UINT32_MAX; j++) {
			const struct ment *m = &md->m[j];

			if (m->hash && s >= m->start && s < m->start + m->e.nr &&
			    m->hash[s - m->start] == h)
				src[s] = SRC_ENTRY + (uint32_t)j;
		}
	}
	fclose(f);
	return true;
}

/* ---- one log, both ways ---------------------------------------------------- */

/* What went wrong with one log, the first finding of each class. */
struct finding {
	char cls[32];		/* what kind of mismatch: kept while shrinking */
	char *what;		/* the message */
	char *state;		/* the state that differs */
	bool model_side;	/* STATE is the model's name (missing), else flushlog's */
};

struct verdict {
	int n;
	struct finding f[16];
};

static void __attribute__((format(printf, 5, 6)))
verdict_add(struct verdict *v, const char *cls, const char *state, bool model_side,
	    const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->f[i].cls, cls))
			return;
	if (v->n == 16)
		return;
	f = &v->f[v->n++];
	snprintf(f->cls, sizeof(f->cls), "%s", cls);
	va_start(ap, fmt);
	if (vasprintf(&f->what, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	f->state = state ? strdup(state) : NULL;
	f->model_side = model_side;
}

static const struct finding *
verdict_find(const struct verdict *v, const char *cls)
{
	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->f[i].cls, cls))
			return &v->f[i];
	return NULL;
}

static void
verdict_free(struct verdict *v)
{
	for (int i = 0; i < v->n; i++) {
		free(v->f[i].what);
		free(v->f[i].state);
	}
	v->n = 0;
}

static int
run_cmd(char *const argv[], const char *out, const char *save)
{
	posix_spawn_file_actions_t fa;
	char **env = environ, *extra = NULL;
	pid_t pid;
	int status;

	if (save) {
		size_t n = 0;

		while (environ[n])
			n++;
		env = xcalloc(n + 2, sizeof(char *));
		memcpy(env, environ, n * sizeof(char *));
		env[n] = extra = xasprintf("FL_MODEL_SAVE=%s", save);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, env))
		die("cannot run '%s': %s", argv[0], strerror(errno));
	posix_spawn_file_actions_destroy(&fa);
	if (env != environ) {
		free(extra);
		free(env);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = xcalloc((size_t)len + 1, 1);
	if (fread(buf, 1, (size_t)len, f) != (size_t)len)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static void
write_base(const struct model *md, const char *path)
{
	FILE *f = fopen(path, "wb");
	unsigned char buf[512];

	if (!f)
		die("cannot create '%s': %s", path, strerror(errno));
	for (uint64_t s = 0; s < md->img; s++) {
		fill_sector(buf, s, BASE_SEED);
		if (fwrite(buf, 1, sizeof(buf), f) != sizeof(buf))
			die("cannot write '%s'", path);
	}
	if (fclose(f))
		die("cannot write '%s'", path);
}

/*
 * Write L's log, run flushlog check on it, and compare.  DIR is the log's
 * folder; SAVE, if set, keeps every image handed to the checker there.
 */
static void
check_log(const struct log *l, const char *dir, const char *save, struct verdict *v)
{
	char *script = xasprintf("%s/log.fls", dir), *logp = xasprintf("%s/log", dir),
	     *base = xasprintf("%s/base.img", dir), *rec = xasprintf("%s/states", dir),
	     *out = xasprintf("%s/check.out", dir), *kbuf = xasprintf("%d", l->K),
	     *text = NULL, *line, *save_ptr = NULL;
	struct model md;
	struct dset ds = { 0 };
	unsigned long long count = 0, points = 0;
	uint64_t handed = 0;
	FILE *f;
	int rc;

	v->n = 0;
	model_build(&md, l);
	f = fopen(script, "w");
	if (!f)
		die("cannot create '%s': %s", script, strerror(errno));
	print_script(f, l, "");
	if (fclose(f))
		die("cannot write '%s'", script);
	if (l->base)
		write_base(&md, base);
	{
		char *argv[] = { (char *)mklog_bin, "-f", l->fmt == FMT_LW ? "log-writes" : "flushlog",
				 "-o", logp, script, NULL };

		if (run_cmd(argv, out, NULL)) {
			text = slurp(out);
			verdict_add(v, "mklog", NULL, false, "fl-mklog cannot write the log: %s", text);
			goto out;
		}
	}
	unlink(rec);
	{
		char jbuf[16];
		char *argv[32];
		int a = 0;

		snprintf(jbuf, sizeof(jbuf), "%d", jobs);
		argv[a++] = (char *)flushlog_bin;
		argv[a++] = "check";
		argv[a++] = "-q";
		argv[a++] = "-k";
		/* every state handed over, alike or not: they are compared */
		argv[a++] = "--every-state";
		argv[a++] = "-j";
		argv[a++] = jbuf;
		argv[a++] = "-w";
		argv[a++] = (char *)dir;
		argv[a++] = "--states";
		argv[a++] = "prefix,epoch,torn,discard";
		argv[a++] = "-K";
		argv[a++] = kbuf;
		argv[a++] = "--max-torn";
		argv[a++] = "1024";
		if (l->base) {
			argv[a++] = "-b";
			argv[a++] = base;
		}
		argv[a++] = logp;
		argv[a++] = "--";
		argv[a++] = (char *)self_exe;
		argv[a++] = "record";
		argv[a++] = rec;
		argv[a++] = "{}";
		argv[a] = NULL;
		rc = run_cmd(argv, out, save);
	}
	text = slurp(out);
	if (rc) {
		char *nl = strchr(text, '\n');

		verdict_add(v, "exit", NULL, false, "flushlog check exited %d: %s", rc,
			    nl && nl[1] ? nl + 1 : text);
		goto out;
	}
	if (sscanf(text, "%llu states at %llu crash points", &count, &points) != 2) {
		verdict_add(v, "exit", NULL, false, "flushlog check printed no count: %s", text);
		goto out;
	}
	if (points != md.npoints)
		verdict_add(v, "points", NULL, false,
			    "flushlog counts %llu crash points, the model %zu", points, md.npoints);

	enumerate(&md, &ds);
	free(text);
	text = slurp(rec);
	for (line = strtok_r(text, "\n", &save_ptr); line; line = strtok_r(NULL, "\n", &save_ptr)) {
		unsigned long long key, sectors;
		char name[128];
		struct sname sn;
		struct img im;
		ssize_t at;
		const char *problem;

		if (sscanf(line, "%llx %llu %127s", &key, &sectors, name) != 3)
			die("bad line in '%s': %s", rec, line);
		handed++;
		stats.epoch += strchr(name, '+') && !strchr(name, '~');
		stats.torn += strchr(name, '~') != NULL;
		stats.pct_states += strchr(name, '%') != NULL;
		at = dset_find(&ds, key);
		if (at < 0) {
			problem = parse_name(name, &sn) ? name_problem(&md, &sn) : "no state name";
			verdict_add(v, sectors != md.img ? "size" : "illegal", name, false,
				    "flushlog handed state %s, an image of %llu sectors that no state "
				    "of the model has (the model's are %" PRIu64 " sectors)%s%s",
				    name, sectors, md.img, problem ? "; its name: " : "",
				    problem ? problem : "");
			continue;
		}
		ds.seen[at] = true;
		if (!parse_name(name, &sn)) {
			verdict_add(v, "name", name, false, "flushlog handed state '%s', which is no state name", name);
			continue;
		}
		img_init(&md, &im);
		if (!build_named(&md, &sn, &im))
			verdict_add(v, "name", name, false, "state %s names entries the log does not have", name);
		else if (img_digest(&md, &im) != key)
			verdict_add(v, "name", name, false,
				    "state %s holds what the model's %s holds, not what its name says",
				    name, ds.name[at]);
		else if ((problem = name_problem(&md, &sn)))
			verdict_add(v, "name", name, false, "state %s is not legal by its name: %s",
				    name, problem);
		img_free(&im);
	}
	if (count != handed)
		verdict_add(v, "count", NULL, false, "flushlog counted %llu states but handed over %" PRIu64,
			    count, handed);
	for (size_t i = 0; i < ds.cap; i++)
		if (ds.name[i] && !ds.seen[i]) {
			char cls[64];

			snprintf(cls, sizeof(cls), "missing-%s", ds.kind[i]);
			verdict_add(v, cls, ds.name[i], true,
				    "the model's %s state %s was never handed to the checker",
				    ds.kind[i], ds.name[i]);
		}
	stats.handed += handed;
	stats.model_states += ds.len;
out:
	dset_free(&ds);
	model_free(&md);
	free(text);
	free(script);
	free(logp);
	free(base);
	free(rec);
	free(out);
	free(kbuf);
}

/* ---- random logs ---------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool
chance(unsigned percent)
{
	return below(100) < percent;
}

static int max_ops = 24;
static bool no_gaps;

/* An operation of the simulated workload, before it is logged. */
struct sop {
	struct ent e;
	bool split;		/* a PREFLUSH write without FUA: a flush, then the data */
	int done;		/* completions so far */
};

/* A range on e's device, of size sectors where e is submitted. */
static void
gen_range(const struct log *l, struct ent *e, uint64_t hot, uint64_t sectors)
{
	uint64_t bs = l->block[e->dev] / 512, blocks = sectors / bs,
		 span = hot < blocks ? hot : blocks, first = below(span),
		 len = 1 + below(bs == 1 ? 8 : 3);

	if (first + len > blocks)
		len = blocks - first;
	e->sector = first * bs;
	e->nr = len * bs;
}

/*
 * A random log: a workload of up to max_ops operations on 1-3 small
 * devices, up to DEPTH in flight at once, each submitted and completed at
 * its own tick, logged as the format's writer would.
 */
static void
gen_log(struct log *l, uint64_t seed)
{
	struct sop *ops, **inflight;
	struct ent *done;
	size_t nops, nsub = 0, nin = 0, ndone = 0, depth;
	uint64_t tick = 0, hot, next_seed = 1;
	struct ent recent[8];	/* data entries completed lately, without FUA */
	size_t nrecent = 0;
	int marks = 0, resizes = 0;
	uint64_t size[MAX_DEV];	/* each device's size where the log is */

	rng_state = seed;
	memset(l, 0, sizeof(*l));
	switch (below(8)) {
	case 0: case 1: l->fmt = FMT_V2; break;
	case 2: l->fmt = FMT_V1; break;
	case 3: case 4: case 5: l->fmt = FMT_V3; break;
	default: l->fmt = FMT_LW; break;
	}
	l->ndev = l->fmt == FMT_V3 ? 1 + (uint32_t)below(MAX_DEV) : 1;
	for (uint32_t d = 0; d < l->ndev; d++) {
		l->block[d] = chance(60) ? 512 : 4096;
		l->sectors[d] = 64 + 8 * below(25);
		size[d] = l->sectors[d];
	}
	l->log_block = chance(70) ? 512 : 4096;
	l->K = 1 + (int)below(2);
	l->base = chance(40);
	/* small logs mostly, some of up to max_ops */
	nops = 3 + below(1 + below((uint64_t)max_ops - 2));
	depth = (size_t[]){ 1, 2, 4, 8, 12 }[below(5)];
	hot = (uint64_t[]){ 4, 8, 16, 64 }[below(4)];

	ops = xcalloc(nops, sizeof(*ops));
	inflight = xcalloc(nops, sizeof(*inflight));
	done = xcalloc(2 * nops + 4, sizeof(*done));
	while (nsub < nops || nin) {
		bool submit = nsub < nops && nin < depth && (!nin || chance(55));

		/*
		 * A table reload that grows a device: nothing in flight (a
		 * reload suspends the device), a RESIZE of one tick; the
		 * ranges after it may use the new sectors.
		 */
		if (submit && !nin && l->fmt != FMT_LW && resizes < 2 && chance(4)) {
			uint32_t d = (uint32_t)below(l->ndev);

			size[d] += 8 * (1 + below(8));
			done[ndone++] = (struct ent){ .op = FLUSHLOG_OP_RESIZE, .dev = d,
						      .sector = size[d], .submit = tick + 1,
						      .complete = tick + 1 };
			tick++;
			resizes++;
		}
		if (submit) {
			struct sop *o = &ops[nsub++];
			struct ent *e = &o->e;
			unsigned r = (unsigned)below(100);

			e->dev = (uint32_t)below(l->ndev);
			if (r < 50) {
				e->op = FLUSHLOG_OP_WRITE;
				if (chance(25))
					e->flags |= FLUSHLOG_F_FUA;
				if (chance(10) && !(l->fmt == FMT_LW && no_gaps &&
						    !(e->flags & FLUSHLOG_F_FUA)))
					e->flags |= FLUSHLOG_F_PREFLUSH;
			} else if (r < 60) {
				e->op = FLUSHLOG_OP_DISCARD;
			} else if (r < 66 && l->fmt != FMT_LW) {
				e->op = FLUSHLOG_OP_WRITE_ZEROES;
			} else if (r < 69 && l->fmt != FMT_LW) {
				e->op = FLUSHLOG_OP_SECURE_ERASE;
			} else if (r < 88) {
				e->op = FLUSHLOG_OP_FLUSH;
				e->flags = FLUSHLOG_F_PREFLUSH;
			} else if (r < 94) {
				e->op = FLUSHLOG_OP_MARK;
				e->dev = 0;
				snprintf(e->label, sizeof(e->label), "m%d", ++marks);
			} else {
				e->op = FLUSHLOG_OP_WRITE;
				e->flags = FLUSHLOG_F_PREFLUSH | (chance(50) ? FLUSHLOG_F_FUA : 0);
				if (l->fmt == FMT_LW && no_gaps)
					e->flags |= FLUSHLOG_F_FUA;
			}
			if (is_data_op(e->op) && e->op != FLUSHLOG_OP_WRITE && l->fmt != FMT_LW &&
			    chance(15) && !(no_gaps && e->op == FLUSHLOG_OP_DISCARD))
				e->flags |= FLUSHLOG_F_FUA;
			if (e->op == FLUSHLOG_OP_WRITE)
				e->seed = next_seed++;
			if (is_data_op(e->op))
				gen_range(l, e, hot, size[e->dev]);
			/*
			 * A FUA operation often overlaps a write that completed
			 * before it was issued, which it overtakes on its way to
			 * durability: the newer-write rule's case.
			 */
			if (is_data_op(e->op) && (e->flags & FLUSHLOG_F_FUA) && nrecent &&
			    chance(60)) {
				const struct ent *r = &recent[below(nrecent)];

				e->dev = r->dev;
				e->sector = r->sector;
				e->nr = r->nr;
			}
			e->submit = ++tick;
			if (e->op == FLUSHLOG_OP_MARK) {
				e->complete = e->submit;
				done[ndone++] = *e;
				continue;
			}
			o->split = l->fmt != FMT_LW && e->op == FLUSHLOG_OP_WRITE &&
				   (e->flags & FLUSHLOG_F_PREFLUSH) && !(e->flags & FLUSHLOG_F_FUA);
			inflight[nin++] = o;
		} else {
			size_t i = below(nin);
			struct sop *o = inflight[i];

			if (o->split && !o->done++) {
				/* its preflush completed: a FLUSH of its own */
				struct ent f = { .op = FLUSHLOG_OP_FLUSH, .flags = FLUSHLOG_F_PREFLUSH,
						 .dev = o->e.dev, .submit = o->e.submit,
						 .complete = ++tick };

				done[ndone++] = f;
				continue;
			}
			o->e.complete = ++tick;
			/* a bio that failed: its outcome unknown, never durable */
			if (l->fmt != FMT_LW && chance(8))
				o->e.flags |= FLUSHLOG_F_FAILED;
			done[ndone++] = o->e;
			inflight[i] = inflight[--nin];
			if (is_data_op(o->e.op) && !(o->e.flags & FLUSHLOG_F_FUA))
				recent[nrecent < 8 ? nrecent++ : below(8)] = o->e;
		}
	}
	/* now and then, ticks that end at 2^64-1 on a crash point */
	if (l->fmt != FMT_LW && !no_gaps && chance(5)) {
		uint64_t shift;

		if (chance(75)) {
			done[ndone++] = (struct ent){ .op = FLUSHLOG_OP_FLUSH,
				.flags = FLUSHLOG_F_PREFLUSH, .submit = tick + 1, .complete = tick + 2 };
			tick += 2;
		} else {
			done[ndone++] = (struct ent){ .op = FLUSHLOG_OP_MARK, .submit = tick + 1,
						      .complete = tick + 1, .label = "last" };
			tick++;
		}
		shift = UINT64_MAX - tick;
		for (size_t i = 0; i < ndone; i++) {
			done[i].submit += shift;
			done[i].complete += shift;
		}
		stats.max_tick++;
	}

	/* the log's order: completion order, or durability order as written */
	l->n = ndone;
	l->e = xcalloc(ndone, sizeof(*l->e));
	if (l->fmt == FMT_V2 || l->fmt == FMT_V3) {
		memcpy(l->e, done, ndone * sizeof(*done));
	} else {
		size_t *from = xcalloc(ndone, sizeof(size_t));

		completion_to_durability(done, ndone, l->e, from, queued_flushlog,
					 l->fmt == FMT_LW ? is_lw_flush : is_flush);
		free(from);
	}
	free(ops);
	free(inflight);
	free(done);
}

/* ---- shrinking and reporting ----------------------------------------------- */

static bool
still_fails(const struct log *l, const char *dir, const char *cls)
{
	struct verdict v = { 0 };
	bool same;

	check_log(l, dir, NULL, &v);
	same = verdict_find(&v, cls) != NULL;
	verdict_free(&v);
	return same;
}

static void
log_copy(struct log *to, const struct log *from)
{
	*to = *from;
	to->e = xcalloc(from->n, sizeof(*to->e));
	memcpy(to->e, from->e, from->n * sizeof(*to->e));
}

/* Keep CAND in L if it still fails with CLS; free it otherwise. */
static bool
try_log(struct log *l, struct log *cand, const char *dir, const char *cls)
{
	if (cand->n && still_fails(cand, dir, cls)) {
		free(l->e);
		*l = *cand;
		return true;
	}
	free(cand->e);
	return false;
}

/*
 * Make L as small as it can be while it still fails with CLS: drop
 * entries (halves first, then fewer), then K, the base, flags, lengths
 * and unused devices.
 */
static void
shrink(struct log *l, const char *dir, const char *cls)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t chunk = l->n / 2; chunk >= 1; chunk /= 2)
			for (size_t i = 0; i + chunk <= l->n && l->n > 1;) {
				struct log cand;

				log_copy(&cand, l);
				memmove(cand.e + i, cand.e + i + chunk,
					(cand.n - i - chunk) * sizeof(*cand.e));
				cand.n -= chunk;
				if (try_log(l, &cand, dir, cls))
					changed = true;
				else
					i += chunk;
			}
		if (l->K > 1) {
			struct log cand;

			log_copy(&cand, l);
			cand.K = 1;
			changed |= try_log(l, &cand, dir, cls);
		}
		if (l->base) {
			struct log cand;

			log_copy(&cand, l);
			cand.base = 0;
			changed |= try_log(l, &cand, dir, cls);
		}
		for (size_t i = 0; i < l->n; i++) {
			static const uint16_t flags[] = { FLUSHLOG_F_FUA, FLUSHLOG_F_PREFLUSH };
			uint64_t bs = l->block[l->e[i].dev] / 512;

			for (size_t k = 0; k < 2; k++) {
				struct log cand;

				if (!(l->e[i].flags & flags[k]) || l->e[i].op == FLUSHLOG_OP_FLUSH)
					continue;
				log_copy(&cand, l);
				cand.e[i].flags &= (uint16_t)~flags[k];
				changed |= try_log(l, &cand, dir, cls);
			}
			if (is_data_op(l->e[i].op) && l->e[i].nr > bs) {
				struct log cand;

				log_copy(&cand, l);
				cand.e[i].nr = bs;
				changed |= try_log(l, &cand, dir, cls);
			}
		}
		while (l->ndev > 1) {
			bool used = false;
			struct log cand;

			for (size_t i = 0; i < l->n; i++)
				used |= l->e[i].dev == l->ndev - 1;
			if (used)
				break;
			log_copy(&cand, l);
			cand.ndev--;
			if (!try_log(l, &cand, dir, cls))
				break;
			changed = true;
		}
	}
}

/* Print the state NAME: as the model builds it, and as flushlog made it. */
static void
report_state(const struct model *md, const char *name, const char *saved)
{
	struct sname sn;
	struct img im;

	img_init(md, &im);
	if (parse_name(name, &sn) && build_named(md, &sn, &im)) {
		printf("#   state %s, as the model builds it from its name:\n", name);
		describe_img(stdout, md, im.src, "#     ");
	}
	if (saved) {
		uint32_t *src = xcalloc(md->img + 1, sizeof(uint32_t));

		if (decode_image(md, saved, src)) {
			printf("#   state %s, as flushlog made it:\n", name);
			describe_img(stdout, md, src, "#     ");
		}
		free(src);
	}
	img_free(&im);
}

/* The minimal log, the finding, the entries and the state that differs. */
static void
report(const struct log *l, const char *dir, const char *cls)
{
	char *save = xasprintf("%s/images", dir);
	struct verdict v = { 0 };
	const struct finding *f;
	struct model md;

	mkdir(save, 0755);
	check_log(l, dir, save, &v);
	f = verdict_find(&v, cls);
	if (!f) {
		printf("# (the minimal log no longer fails with %s: a flaky run?)\n", cls);
		goto out;
	}
	printf("# %s: %s\n", f->cls, f->what);
	printf("# minimal log (`fl-model check FILE` checks it again; fl-mklog%s writes it):\n",
	       l->fmt == FMT_LW ? " -f log-writes" : "");
	print_script(stdout, l, "    ");
	model_build(&md, l);
	printf("# the model's durability order (entry: log line, ticks as the model reads them):\n");
	for (size_t j = 0; j < md.n; j++) {
		printf("#   e%zu: line %zu, ticks %" PRIu64 " %" PRIu64 "%s%s: ", j,
		       md.m[j].from, md.m[j].e.submit, md.m[j].e.complete,
		       md.m[j].point ? ", crash point " : "",
		       md.m[j].point ? point_kind(&md.m[j].e) : "");
		print_entry(stdout, l, &md.m[j].e);
	}
	printf("#   crash points at positions:");
	for (size_t p = 0; p < md.npoints; p++)
		printf(" %zu (%s)", md.points[p].pos, md.points[p].kind);
	printf("\n");
	if (f->state) {
		char *img = xasprintf("%s/%s.img", save, f->state);

		report_state(&md, f->state, f->model_side ? NULL : img);
		free(img);
	}
	{
		char *rec = xasprintf("%s/states", dir), *text = slurp(rec), *line, *sp = NULL;

		printf("# flushlog handed:");
		for (line = strtok_r(text, "\n", &sp); line; line = strtok_r(NULL, "\n", &sp))
			printf(" %s", strrchr(line, ' ') + 1);
		printf("\n");
		free(text);
		free(rec);
	}
	model_free(&md);
out:
	verdict_free(&v);
	free(save);
}

static int
rm_tree(const char *path)
{
	char *argv[] = { "/bin/rm", "-rf", "--", (char *)path, NULL };

	return run_cmd(argv, "/dev/null", NULL);
}

/* ---- commands ------------------------------------------------------------- */

static void
find_programs(const char *argv0)
{
	static char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *dir;

	if (n <= 0)
		die("cannot find this program: %s", strerror(errno));
	exe[n] = '\0';
	self_exe = exe;
	(void)argv0;
	dir = strdup(exe);
	*strrchr(dir, '/') = '\0';
	if (!mklog_bin)
		mklog_bin = xasprintf("%s/fl-mklog", dir);
	if (!flushlog_bin)
		flushlog_bin = xasprintf("%s/../flushlog", dir);
	if (!workdir)
		workdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	free(dir);
}

static uint64_t
log_seed(uint64_t seed, uint64_t i)
{
	uint64_t saved = rng_state, s;

	rng_state = seed * 0x2545f4914f6cdd1dULL + i;
	s = rnd();
	rng_state = saved;
	return s;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
note_log(const struct log *l)
{
	stats.logs++;
	stats.lw += l->fmt == FMT_LW;
	stats.multi += l->ndev > 1;
	for (size_t i = 0; i < l->n; i++) {
		stats.fua_discards += l->e[i].op == FLUSHLOG_OP_DISCARD &&
				      (l->e[i].flags & FLUSHLOG_F_FUA);
		stats.lw_preflush += l->fmt == FMT_LW && l->e[i].op == FLUSHLOG_OP_WRITE &&
				     (l->e[i].flags & FLUSHLOG_F_PREFLUSH) &&
				     !(l->e[i].flags & FLUSHLOG_F_FUA);
		stats.failed += (l->e[i].flags & FLUSHLOG_F_FAILED) != 0;
		stats.resizes += l->e[i].op == FLUSHLOG_OP_RESIZE;
	}
}

/* The counts, and a line of them for a test to read: "coverage: KEY=N ...". */
static void
print_stats(uint64_t seed, uint64_t first, double secs, int failed)
{
	printf("%" PRIu64 " logs (seed %" PRIu64 ", logs %" PRIu64 "-%" PRIu64 ") in %.0f s: %"
	       PRIu64 " states handed by flushlog check, %" PRIu64 " states in the model; %d mismatching\n",
	       stats.logs, seed, first, first + stats.logs - (stats.logs > 0), secs, stats.handed,
	       stats.model_states, failed);
	printf("coverage: logs=%" PRIu64 " log-writes=%" PRIu64 " several-devices=%" PRIu64
	       " last-tick=%" PRIu64 " states=%" PRIu64 " epoch=%" PRIu64 " torn=%" PRIu64
	       " discard=%" PRIu64 " newer-write-kept=%" PRIu64 " fua-discards=%" PRIu64
	       " log-writes-preflush=%" PRIu64 " failed=%" PRIu64 " resizes=%" PRIu64 "\n",
	       stats.logs, stats.lw, stats.multi, stats.max_tick, stats.handed, stats.epoch,
	       stats.torn, stats.pct_states, stats.newer_wins, stats.fua_discards, stats.lw_preflush,
	       stats.failed, stats.resizes);
}

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
cmd_run(uint64_t seed, uint64_t first, uint64_t count, double seconds, bool keep_going,
	bool no_shrink)
{
	char *dir = xasprintf("%s/fl-model.XXXXXX", workdir);
	double start = now();
	int failed = 0;

	/* a signal ends the run after the log being checked, tidily */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!mkdtemp(dir))
		die("cannot make a folder in '%s': %s", workdir, strerror(errno));
	for (uint64_t i = first; i < first + count; i++) {
		struct verdict v = { 0 };
		struct log l;

		if (stop || (seconds > 0 && now() - start > seconds))
			break;
		gen_log(&l, log_seed(seed, i));
		note_log(&l);
		check_log(&l, dir, NULL, &v);
		if (verbose)
			printf("# log %" PRIu64 ": %s, %u device%s, %zu entries, K=%d%s: %s\n", i,
			       fmt_name(l.fmt), l.ndev, l.ndev > 1 ? "s" : "", l.n, l.K,
			       l.base ? ", base" : "", v.n ? v.f[0].cls : "ok");
		if (v.n) {
			char cls[32];

			failed++;
			snprintf(cls, sizeof(cls), "%s", v.f[0].cls);
			printf("not ok log %" PRIu64 " of seed %" PRIu64 " (fl-model run --seed %" PRIu64
			       " --first %" PRIu64 " --count 1): %s\n", i, seed, seed, i, v.f[0].what);
			for (int k = 1; k < v.n; k++)
				printf("#   also %s: %s\n", v.f[k].cls, v.f[k].what);
			fflush(stdout);
			if (!no_shrink)
				shrink(&l, dir, cls);
			report(&l, dir, cls);
			fflush(stdout);
		}
		verdict_free(&v);
		free(l.e);
		if (failed && !keep_going)
			break;
	}
	print_stats(seed, first, now() - start, failed);
	rm_tree(dir);
	free(dir);
	return failed ? 1 : 0;
}

static int
cmd_check(const char *path)
{
	char *dir = xasprintf("%s/fl-model.XXXXXX", workdir);
	struct verdict v = { 0 };
	struct log l;
	int rc = 0;

	if (!mkdtemp(dir))
		die("cannot make a folder in '%s': %s", workdir, strerror(errno));
	read_script(path, &l);
	check_log(&l, dir, NULL, &v);
	if (v.n) {
		for (int k = 1; k < v.n; k++)
			printf("#   also %s: %s\n", v.f[k].cls, v.f[k].what);
		report(&l, dir, v.f[0].cls);
		rc = 1;
	} else {
		printf("%s: %" PRIu64 " states handed by flushlog check, %" PRIu64
		       " distinct states in the model, the same\n", path, stats.handed, stats.model_states);
	}
	verdict_free(&v);
	free(l.e);
	rm_tree(dir);
	free(dir);
	return rc;
}

static void __attribute__((noreturn))
usage(void)
{
	die("usage: fl-model run [--seed N] [--first I] [--count N] [--seconds N] [--max-ops N] "
	    "[--no-gaps] [--jobs N] [--keep-going] [--no-shrink] [--verbose] [--flushlog PATH] "
	    "[--mklog PATH] "
	    "[--workdir DIR]\n"
	    "       fl-model check [--flushlog PATH] [--mklog PATH] [--workdir DIR] SCRIPT\n"
	    "       fl-model record OUT IMAGE");
}

int
main(int argc, char **argv)
{
	uint64_t seed = 1, first = 0, count = 100;
	double seconds = 0;
	bool keep_going = false, no_shrink = false;
	const char *script = NULL;
	int i;

	/* the checker, once a state: _exit skips a sanitizer's leak scan */
	if (argc >= 2 && !strcmp(argv[1], "record"))
		_exit(cmd_record(argc, argv));
	if (argc < 2 || (strcmp(argv[1], "run") && strcmp(argv[1], "check")))
		usage();
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;

		if (!strcmp(a, "--seed") && more)
			seed = num(argv[++i]);
		else if (!strcmp(a, "--first") && more)
			first = num(argv[++i]);
		else if (!strcmp(a, "--count") && more)
			count = num(argv[++i]);
		else if (!strcmp(a, "--seconds") && more)
			seconds = (double)num(argv[++i]);
		else if (!strcmp(a, "--max-ops") && more)
			max_ops = (int)num(argv[++i]);
		else if (!strcmp(a, "--jobs") && more)
			jobs = (int)num(argv[++i]);
		else if (!strcmp(a, "--flushlog") && more)
			flushlog_bin = argv[++i];
		else if (!strcmp(a, "--mklog") && more)
			mklog_bin = argv[++i];
		else if (!strcmp(a, "--workdir") && more)
			workdir = argv[++i];
		else if (!strcmp(a, "--no-gaps"))
			no_gaps = true;
		else if (!strcmp(a, "--keep-going"))
			keep_going = true;
		else if (!strcmp(a, "--no-shrink"))
			no_shrink = true;
		else if (!strcmp(a, "--verbose"))
			verbose = 1;
		else if (a[0] != '-' && !script && !strcmp(argv[1], "check"))
			script = a;
		else
			usage();
	}
	if (max_ops < 3)
		die("--max-ops takes 3 or more");
	find_programs(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "check")) {
		if (!script)
			usage();
		return cmd_check(script);
	}
	return cmd_run(seed, first, count, seconds, keep_going, no_shrink);
}
