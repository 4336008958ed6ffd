// SPDX-License-Identifier: GPL-2.0
/*
 * fl-workload: a deterministic file workload for crash testing.  The same
 * seed gives the same operations: creates, buffered / O_DIRECT / O_DSYNC
 * writes, appends, overwrites, truncates, fallocates, renames, links,
 * unlinks, mkdirs, fsyncs, fdatasyncs and syncs, in a folder.  After each
 * successful fsync, fdatasync or sync it runs "MARK-CMD LABEL" so that the
 * log has a mark where durability was promised.
 *
 * With --oracle FILE it also writes down what each promise was: the path,
 * size and hash of every file an fsync, fdatasync or sync made durable,
 * the marks, and every operation that touched a path or a file's
 * contents.  --verify reads that back in a crash state mounted at DIR:
 * every promise made before the state's last mark must hold, unless an
 * operation that may be in the state touched the file since (one issued
 * before --until-mark, the first mark after the state's epoch ended, or
 * any if there is none).
 *
 * --procs N runs N workloads at once, each in its own folder pK of DIR
 * with seed S + K, so that writes of several files are in flight
 * together.  Each oracle line carries a ticket from one counter the
 * processes share, taken where the line's order matters: before an
 * operation is issued (touch), after an fsync returned (durable), and
 * before and after the mark command (mark START END LABEL).  So "before
 * the mark" and "issued before the mark completed" hold across processes
 * too, whatever order the lines reach the file in.
 *
 * --ace seq-K runs one workload of a bounded, exhaustive space instead
 * (CrashMonkey's ACE): the sequence --index I of K operations, each
 * followed by a persistence point; --list prints the space.
 *
 * usage: fl-workload [--seed S] [--ops N] [--procs N] [--mark CMD]
 *                    [--oracle FILE] [--verbose] DIR
 *        fl-workload --ace seq-K --index I [--mark CMD] [--oracle FILE] DIR
 *        fl-workload --ace seq-K --list [--shard K/N]
 *        fl-workload --verify FILE [--last-mark L] [--until-mark M] DIR
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"	/* the exit codes, and the rule for the oracle's file */

#define MAX_FILES	64
#define MAX_DIRS	8
#define MAX_WRITE	(128 << 10)
#define MAX_SIZE	(1 << 20)
#define MAX_PROCS	64

enum op {
	OP_CREATE, OP_WRITE, OP_DIRECT, OP_DSYNC, OP_APPEND, OP_TRUNCATE,
	OP_FALLOCATE, OP_RENAME, OP_LINK, OP_UNLINK, OP_MKDIR, OP_FSYNC,
	OP_FDATASYNC, OP_SYNC, NR_OPS,
};

static const char *const op_names[NR_OPS] = {
	"create", "write", "write-direct", "write-dsync", "append", "truncate",
	"fallocate", "rename", "link", "unlink", "mkdir", "fsync",
	"fdatasync", "sync",
};

/* How often each operation is drawn. */
static const unsigned int op_weights[NR_OPS] = {
	8, 14, 5, 5, 8, 4, 3, 4, 2, 4, 2, 6, 4, 2,
};

struct workload {
	const char *dir;
	const char *prefix;		/* "pK/" of --procs, or "" */
	const char *mark_cmd;
	uint64_t rng;
	bool verbose;
	unsigned int nr_dirs;
	bool file_exists[MAX_FILES];
	unsigned int dir_of[MAX_FILES];	/* the folder a file is in */
	unsigned int marks;
	char *buf;
	int oracle;			/* O_APPEND: a line a write */
	uint64_t *tickets;		/* shared by every process */
	unsigned int ino_of[MAX_FILES];	/* which contents a name has */
	bool name_durable[MAX_FILES];	/* promised, untouched since */
	unsigned int next_ino;
	uint64_t next_ticket;		/* one process: its own counter */
};

static uint64_t
next_random(struct workload *w)
{
	/* xorshift64* */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dULL;
}

static uint64_t
pick(struct workload *w, uint64_t n)
{
	return n ? next_random(w) % n : 0;
}

static void
file_path(const struct workload *w, unsigned int f, char *buf, size_t len)
{
	snprintf(buf, len, "%s/d%u/f%u", w->dir, w->dir_of[f], f);
}

static void
fill(struct workload *w, size_t len)
{
	uint64_t x = next_random(w) | 1;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(w->buf + i, &x, 8);
	}
}

/* FNV-1a of a file's contents, and its size; false if it cannot be read. */
static bool
hash_file(const char *path, uint64_t *hash, uint64_t *size)
{
	unsigned char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	*hash = 1469598103934665603ULL;
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			*hash = (*hash ^ buf[i]) * 1099511628211ULL;
		*size += (uint64_t)n;
	}
	close(fd);
	return n == 0;
}

static uint64_t
ticket(struct workload *w)
{
	return __atomic_fetch_add(w->tickets, 1, __ATOMIC_SEQ_CST);
}

/* One line of the oracle, in one write: lines of processes never mix. */
static void __attribute__((format(printf, 2, 3)))
oracle_line(struct workload *w, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || write(w->oracle, line, n) != n) {
		fprintf(stderr, "fl-workload: cannot write the oracle: %s\n",
			n < 0 || (size_t)n >= sizeof(line) ? "line too long" : strerror(errno));
		exit(EXIT_BROKEN_RUN);
	}
}

/* An operation on the name NAME (relative to DIR) is about to be issued. */
static void
touch_name(struct workload *w, const char *name)
{
	if (w->oracle >= 0)
		oracle_line(w, "touch %" PRIu64 " path %s%s\n", ticket(w),
			    w->prefix, name);
}

static void
touch_path(struct workload *w, unsigned int f)
{
	char name[32];

	snprintf(name, sizeof(name), "d%u/f%u", w->dir_of[f], f);
	touch_name(w, name);
	w->name_durable[f] = false;
}

/* An operation on the contents of inode INO is about to be issued. */
static void
touch_inode(struct workload *w, unsigned int ino)
{
	if (w->oracle >= 0)
		oracle_line(w, "touch %" PRIu64 " inode %u\n", ticket(w), ino);
}

static void
touch_contents(struct workload *w, unsigned int f)
{
	touch_inode(w, w->ino_of[f]);
}

/*
 * The file NAME (inode INO) has its name and contents durable now: before
 * the mark that follows.
 */
static void
promise_name(struct workload *w, const char *name, unsigned int ino)
{
	char path[4096];
	uint64_t hash, size;

	if (w->oracle < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", w->dir, name);
	if (hash_file(path, &hash, &size))
		oracle_line(w, "durable %" PRIu64 " %s%s %u %" PRIu64 " %016" PRIx64 "\n",
			    ticket(w), w->prefix, name, ino, size, hash);
}

static void
promise(struct workload *w, unsigned int f)
{
	char name[32];

	snprintf(name, sizeof(name), "d%u/f%u", w->dir_of[f], f);
	promise_name(w, name, w->ino_of[f]);
	w->name_durable[f] = true;
}

static void
run_mark(struct workload *w, const char *label)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid == 0) {
		execlp(w->mark_cmd, w->mark_cmd, label, (char *)NULL);
		fprintf(stderr, "fl-workload: cannot run '%s': %s\n",
			w->mark_cmd, strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fprintf(stderr, "fl-workload: mark '%s' failed\n", label);
}

/*
 * A mark after a promise: WHAT-N, or pK-WHAT-N under --procs.  Its first
 * ticket is taken before the mark is logged, its second after.
 */
static void
mark(struct workload *w, const char *what)
{
	uint64_t start = ticket(w);
	int len = (int)strlen(w->prefix);
	char label[64];

	++w->marks;
	if (len)
		snprintf(label, sizeof(label), "%.*s-%s-%u", len - 1, w->prefix,
			 what, w->marks);
	else
		snprintf(label, sizeof(label), "%s-%u", what, w->marks);
	if (w->mark_cmd)
		run_mark(w, label);
	if (w->oracle >= 0)
		oracle_line(w, "mark %" PRIu64 " %" PRIu64 " %s\n", start,
			    ticket(w), label);
}

static int
write_file(struct workload *w, unsigned int f, int extra_flags, bool append)
{
	char path[4096];
	size_t len = 512 * (1 + pick(w, MAX_WRITE / 512));
	off_t off;
	struct stat st;
	int fd, ret = 0;

	file_path(w, f, path, sizeof(path));
	fd = open(path, O_WRONLY | extra_flags);
	if (fd < 0 && errno == EINVAL && (extra_flags & O_DIRECT))
		fd = open(path, O_WRONLY);	/* no O_DIRECT here */
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (append) {
		off = st.st_size;
	} else {
		off = (off_t)pick(w, MAX_SIZE / 4096) * 4096;
		if (!(extra_flags & O_DIRECT))
			off += (off_t)pick(w, 4096);
	}
	if ((extra_flags & O_DIRECT) || append) {
		off = (off + 4095) & ~(off_t)4095;
		len = (len + 4095) & ~(size_t)4095;
	}
	if (off + (off_t)len > MAX_SIZE * 2)
		off = 0;
	fill(w, len);
	touch_contents(w, f);
	if (pwrite(fd, w->buf, len, off) != (ssize_t)len)
		ret = -errno;
	if (w->verbose)
		printf("  %s: %zu bytes at %lld\n", path, len, (long long)off);
out:
	close(fd);
	return ret;
}

static int
sync_file(struct workload *w, unsigned int f, bool data_only)
{
	char path[4096];
	int fd, ret = 0;

	file_path(w, f, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (data_only ? fdatasync(fd) : fsync(fd))
		ret = -errno;
	close(fd);
	/*
	 * fdatasync makes the contents durable, not the name (a link or a
	 * rename may be lost): the promise binds through a name only if
	 * the name itself was durable already.
	 */
	if (!ret) {
		if (!data_only || w->name_durable[f])
			promise(w, f);
		mark(w, data_only ? "fdatasync" : "fsync");
	}
	return ret;
}

/* Pick a file that exists (want true) or not; -1 if there is none. */
static int
pick_file(struct workload *w, bool want)
{
	unsigned int start = (unsigned int)pick(w, MAX_FILES);

	for (unsigned int i = 0; i < MAX_FILES; i++) {
		unsigned int f = (start + i) % MAX_FILES;

		if (w->file_exists[f] == want)
			return (int)f;
	}
	return -1;
}

static int
do_op(struct workload *w, enum op op)
{
	char path[4096], path2[4096];
	int f = pick_file(w, op != OP_CREATE), g, fd, ret = 0;

	if (op == OP_MKDIR) {
		if (w->nr_dirs == MAX_DIRS)
			return 1;	/* skipped */
		snprintf(path, sizeof(path), "%s/d%u", w->dir, w->nr_dirs);
		if (mkdir(path, 0755))
			return -errno;
		w->nr_dirs++;
		return 0;
	}
	if (op == OP_SYNC) {
		fd = open(w->dir, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			return -errno;
		ret = syncfs(fd) ? -errno : 0;
		close(fd);
		if (ret)
			return ret;
		for (unsigned int i = 0; i < MAX_FILES; i++)
			if (w->file_exists[i])
				promise(w, i);
		mark(w, "sync");
		return 0;
	}
	if (f < 0)
		return 1;
	if (op == OP_CREATE)
		w->dir_of[f] = (unsigned int)pick(w, w->nr_dirs);
	file_path(w, (unsigned int)f, path, sizeof(path));
	switch (op) {
	case OP_CREATE:
		w->ino_of[f] = w->next_ino++;
		touch_path(w, (unsigned int)f);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return -errno;
		close(fd);
		w->file_exists[f] = true;
		return write_file(w, (unsigned int)f, 0, true);
	case OP_WRITE:
		return write_file(w, (unsigned int)f, 0, false);
	case OP_DIRECT:
		return write_file(w, (unsigned int)f, O_DIRECT, false);
	case OP_DSYNC:
		return write_file(w, (unsigned int)f, O_DSYNC, false);
	case OP_APPEND:
		return write_file(w, (unsigned int)f, 0, true);
	case OP_TRUNCATE:
		touch_contents(w, (unsigned int)f);
		return truncate(path, (off_t)pick(w, MAX_SIZE)) ? -errno : 0;
	case OP_FALLOCATE:
		touch_contents(w, (unsigned int)f);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			return -errno;
		ret = fallocate(fd, pick(w, 2) ? FALLOC_FL_KEEP_SIZE : 0,
				(off_t)pick(w, MAX_SIZE / 4096) * 4096,
				(off_t)(1 + pick(w, 64)) * 4096);
		ret = ret && errno != EOPNOTSUPP ? -errno : 0;
		close(fd);
		return ret;
	case OP_RENAME:
	case OP_LINK:
		g = pick_file(w, false);
		if (g < 0)
			return 1;
		w->dir_of[g] = (unsigned int)pick(w, w->nr_dirs);
		w->ino_of[g] = w->ino_of[f];
		touch_path(w, (unsigned int)g);
		if (op == OP_RENAME)
			touch_path(w, (unsigned int)f);
		file_path(w, (unsigned int)g, path2, sizeof(path2));
		if (op == OP_RENAME ? rename(path, path2) : link(path, path2))
			return -errno;
		w->file_exists[g] = true;
		if (op == OP_RENAME)
			w->file_exists[f] = false;
		return 0;
	case OP_UNLINK:
		touch_path(w, (unsigned int)f);
		if (unlink(path))
			return -errno;
		w->file_exists[f] = false;
		return 0;
	case OP_FSYNC:
		return sync_file(w, (unsigned int)f, false);
	case OP_FDATASYNC:
		return sync_file(w, (unsigned int)f, true);
	default:
		return 1;
	}
}

/*
 * --ace seq-K: the bounded space of CrashMonkey's ACE.  Every sequence of
 * K operations over a small fixed namespace, each followed by a
 * persistence point (none, or an fsync, fdatasync, directory fsync or
 * sync of what it changed; the last one never none), after a setup that
 * makes A/, foo and A/foo durable.  Sequences whose operations cannot run
 * (a name that is not there, one that already is) are not in the space,
 * nor are fsyncs of two names of one inode after a link: the inode is
 * what is synced.  The sequences are numbered in one fixed order, so an
 * index names the same workload everywhere.
 */
enum ace_name { N_FOO, N_BAR, N_A_FOO, N_A_BAR, N_B_FOO, N_A, N_B, N_ROOT, NR_NAMES };
#define ACE_FILES	N_A		/* names below it are files */

static const char *const ace_names[NR_NAMES] = {
	"foo", "bar", "A/foo", "A/bar", "B/foo", "A", "B", ".",
};

static const enum ace_name ace_parent[NR_NAMES] = {
	N_ROOT, N_ROOT, N_A, N_A, N_B, N_ROOT, N_ROOT, N_ROOT,
};

enum ace_kind {
	/* operations */
	K_CREAT, K_MKDIR, K_LINK, K_UNLINK, K_RENAME, K_WRITE, K_DIRECT,
	K_APPEND, K_TRUNCATE, K_FALLOC_KEEP, K_FALLOC,
	/* persistence points */
	K_FSYNC, K_FDATASYNC, K_FSYNC_DIR, K_SYNC, K_NONE,
};

static const char *const ace_kinds[] = {
	"creat", "mkdir", "link", "unlink", "rename", "write", "write-direct",
	"append", "truncate", "fallocate-keep-size", "fallocate", "fsync",
	"fdatasync", "fsync", "sync", "none",
};

struct ace_step {
	enum ace_kind kind;
	enum ace_name a, b;
};

/*
 * What the namespace holds: which names exist, and each file's inode; and,
 * as a sequence runs, which names were promised and not touched since.
 */
struct ace_model {
	bool exists[NR_NAMES];
	unsigned int ino[ACE_FILES];
	unsigned int next_ino;
	bool durable[NR_NAMES];
};

#define ACE_MAX_LEN	3
#define ACE_MAX_STEPS	64

static const struct ace_model ace_setup_model = {
	.exists = { [N_FOO] = true, [N_A_FOO] = true, [N_A] = true, [N_ROOT] = true },
	.ino = { [N_FOO] = 1, [N_A_FOO] = 2 },
	.next_ino = 3,
};

static void
ace_apply(struct ace_model *m, const struct ace_step *s)
{
	switch (s->kind) {
	case K_CREAT:
		m->exists[s->a] = true;
		m->ino[s->a] = m->next_ino++;
		break;
	case K_MKDIR:
		m->exists[s->a] = true;
		break;
	case K_LINK:
	case K_RENAME:
		m->exists[s->b] = true;
		m->ino[s->b] = m->ino[s->a];
		if (s->kind == K_RENAME)
			m->exists[s->a] = false;
		break;
	case K_UNLINK:
		m->exists[s->a] = false;
		break;
	default:
		break;
	}
}

/* The operations that can run on m, in the space's fixed order. */
static unsigned int
ace_operations(const struct ace_model *m, struct ace_step *out)
{
	unsigned int n = 0;

	for (int a = 0; a < ACE_FILES; a++) {
		bool here = m->exists[a], room = m->exists[ace_parent[a]];

		if (!here && room)
			out[n++] = (struct ace_step){ K_CREAT, a, a };
		if (!here)
			continue;
		for (int k = K_WRITE; k <= K_FALLOC; k++)
			out[n++] = (struct ace_step){ k, a, a };
		out[n++] = (struct ace_step){ K_UNLINK, a, a };
		for (int b = 0; b < ACE_FILES; b++) {
			if (b == a || !m->exists[ace_parent[b]])
				continue;
			if (!m->exists[b])
				out[n++] = (struct ace_step){ K_LINK, a, b };
			/* over an existing name too: rename replaces it */
			if (m->ino[b] != m->ino[a] || !m->exists[b])
				out[n++] = (struct ace_step){ K_RENAME, a, b };
		}
	}
	if (!m->exists[N_B])
		out[n++] = (struct ace_step){ K_MKDIR, N_B, N_B };
	return n;
}

/* At most: 5 files, each 12 ways, and a mkdir; 2 files, 2 folders, 2. */
#if ACE_FILES * (1 + 6 + 1 + 2 * (ACE_FILES - 1)) + 1 > ACE_MAX_STEPS
#error "ACE_MAX_STEPS is too small for the namespace"
#endif

static void
ace_add_dir(struct ace_step *out, unsigned int *n, enum ace_name d)
{
	for (unsigned int i = 0; i < *n; i++)
		if (out[i].kind == K_FSYNC_DIR && out[i].a == d)
			return;
	out[(*n)++] = (struct ace_step){ K_FSYNC_DIR, d, d };
}

/*
 * The persistence points after op, with m the namespace after it: fsync
 * and fdatasync of each file it left (one name an inode), fsync of each
 * folder it changed or that holds what it changed, sync, and none unless
 * it is the last.
 */
static unsigned int
ace_persistence(const struct ace_model *m, const struct ace_step *op,
		bool last, struct ace_step *out)
{
	enum ace_name names[2] = { op->b, op->a };
	unsigned int n = 0;

	for (int i = 0; i < 2; i++) {
		enum ace_name f = names[i];

		if (f >= ACE_FILES || !m->exists[f] ||
		    (i == 1 && m->exists[op->b] && m->ino[op->b] == m->ino[f]))
			continue;
		out[n++] = (struct ace_step){ K_FSYNC, f, f };
		out[n++] = (struct ace_step){ K_FDATASYNC, f, f };
	}
	if (op->kind == K_MKDIR)
		ace_add_dir(out, &n, op->a);
	/* a link changes the folder of its new name only */
	if (op->kind == K_CREAT || op->kind == K_MKDIR || op->kind == K_LINK ||
	    op->kind == K_UNLINK || op->kind == K_RENAME)
		ace_add_dir(out, &n, ace_parent[op->b]);
	if (op->kind == K_RENAME)
		ace_add_dir(out, &n, ace_parent[op->a]);
	out[n++] = (struct ace_step){ K_SYNC, N_ROOT, N_ROOT };
	if (!last)
		out[n++] = (struct ace_step){ K_NONE, N_ROOT, N_ROOT };
	return n;
}

static void
ace_describe(const struct ace_step *s, unsigned int nr, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < nr && used < len; i++) {
		const char *sep = used ? "; " : "";

		if (s[i].kind == K_NONE)
			continue;
		if (s[i].kind == K_LINK || s[i].kind == K_RENAME)
			used += snprintf(buf + used, len - used, "%s%s %s %s", sep,
					 ace_kinds[s[i].kind], ace_names[s[i].a],
					 ace_names[s[i].b]);
		else if (s[i].kind == K_SYNC)
			used += snprintf(buf + used, len - used, "%ssync", sep);
		else
			used += snprintf(buf + used, len - used, "%s%s %s", sep,
					 ace_kinds[s[i].kind], ace_names[s[i].a]);
	}
}

struct ace_walk {
	unsigned int len;		/* operations a sequence */
	uint64_t index;			/* the next sequence's */
	uint64_t shard, shards;		/* list: index % shards == shard */
	uint64_t want;			/* find: this one */
	bool list;
	struct ace_step seq[2 * ACE_MAX_LEN];
	bool found;
};

/* Every sequence that starts with seq[0..depth) from m, in order. */
static void
ace_walk(struct ace_walk *wk, const struct ace_model *m, unsigned int depth)
{
	struct ace_step ops[ACE_MAX_STEPS], points[ACE_MAX_STEPS];
	unsigned int nr_ops = ace_operations(m, ops);

	for (unsigned int i = 0; i < nr_ops && !wk->found; i++) {
		struct ace_model next = *m;
		bool last = depth / 2 + 1 == wk->len;
		unsigned int nr_points;

		ace_apply(&next, &ops[i]);
		nr_points = ace_persistence(&next, &ops[i], last, points);
		wk->seq[depth] = ops[i];
		for (unsigned int j = 0; j < nr_points && !wk->found; j++) {
			wk->seq[depth + 1] = points[j];
			if (!last) {
				ace_walk(wk, &next, depth + 2);
				continue;
			}
			if (wk->list && wk->index % wk->shards == wk->shard) {
				char text[512];

				ace_describe(wk->seq, depth + 2, text, sizeof(text));
				printf("%" PRIu64 "\t%s\n", wk->index, text);
			}
			wk->found = !wk->list && wk->index == wk->want;
			wk->index++;
		}
	}
}

/* "seq-K" as K, or 0. */
static unsigned int
ace_length(const char *spec)
{
	if (!strncmp(spec, "seq-", 4) && spec[4] >= '1' &&
	    spec[4] <= '0' + ACE_MAX_LEN && !spec[5])
		return (unsigned int)(spec[4] - '0');
	return 0;
}

static int
compare_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/*
 * The names in folder PATH, sorted and joined by commas ("-" if none;
 * lost+found is mkfs's, not the workload's); false if it cannot be read.
 */
static bool
list_folder(const char *path, char *buf, size_t len)
{
	char *names[256];
	unsigned int n = 0;
	size_t used = 0;
	struct dirent *de;
	DIR *d = opendir(path);
	int err = 0;

	if (!d)
		return false;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			err = errno;	/* 0 at the end */
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "lost+found"))
			continue;
		if (n == 256 || !(names[n] = strdup(de->d_name))) {
			err = n == 256 ? E2BIG : ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), compare_names);
	snprintf(buf, len, "-");
	for (unsigned int i = 0; i < n; i++) {
		used += snprintf(buf + used, used < len ? len - used : 0, "%s%s",
				 i ? "," : "", names[i]);
		free(names[i]);
	}
	if (!err && used >= len)
		err = ENAMETOOLONG;	/* more names than a line holds */
	errno = err;
	return !err;
}

/* The names in folder NAME are durable now: before the mark that follows. */
static void
promise_folder(struct workload *w, const char *name)
{
	char path[4096], names[192];

	if (w->oracle < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", w->dir, name);
	if (list_folder(path, names, sizeof(names)))
		oracle_line(w, "listing %" PRIu64 " %s%s %s\n", ticket(w),
			    w->prefix, name, names);
	else	/* fewer promises: never a wrong one */
		fprintf(stderr, "fl-workload: the names in %s are not promised: %s\n",
			path, strerror(errno));
}

static int
ace_write(struct workload *w, const char *path, enum ace_kind kind)
{
	int flags = kind == K_DIRECT ? O_DIRECT : kind == K_APPEND ? O_APPEND : 0;
	size_t len = kind == K_APPEND ? 4096 + 100 : 4096;
	off_t off = kind == K_DIRECT ? 8192 : 4096;
	int fd = open(path, O_WRONLY | flags), ret = 0;
	ssize_t n;

	if (fd < 0 && errno == EINVAL && kind == K_DIRECT)
		fd = open(path, O_WRONLY);	/* no O_DIRECT here */
	if (fd < 0)
		return -errno;
	fill(w, len);
	n = kind == K_APPEND ? write(fd, w->buf, len) : pwrite(fd, w->buf, len, off);
	if (n != (ssize_t)len)
		ret = n < 0 ? -errno : -EIO;	/* short: ENOSPC, most likely */
	close(fd);
	return ret;
}

static int
ace_fallocate(const char *path, enum ace_kind kind)
{
	struct stat st;
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) ||
	    fallocate(fd, kind == K_FALLOC_KEEP ? FALLOC_FL_KEEP_SIZE : 0,
		      (st.st_size + 4095) & ~(off_t)4095, 16384))
		ret = errno == EOPNOTSUPP ? 1 : -errno;
	close(fd);
	return ret;
}

static int
ace_sync(const struct ace_step *s, const char *path)
{
	int fd = open(path, O_RDONLY | (s->kind == K_FSYNC_DIR ? O_DIRECTORY : 0));
	int ret;

	if (fd < 0)
		return -errno;
	if (s->kind == K_SYNC)
		ret = syncfs(fd);
	else if (s->kind == K_FDATASYNC)
		ret = fdatasync(fd);
	else
		ret = fsync(fd);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * What a persistence point that returned made durable, and its mark: WHAT-N,
 * or the point's own name if WHAT is NULL.  An fsync promises its file's
 * name too, as Linux filesystems keep it (fl-workload(1)); an fdatasync
 * only the contents, so it binds through a name that was durable already.
 */
static void
ace_promise(struct workload *w, struct ace_model *m, const struct ace_step *s,
	    const char *what)
{
	for (int n = 0; n < NR_NAMES; n++) {
		bool all = s->kind == K_SYNC && m->exists[n];
		bool file = n < ACE_FILES && (all || (n == (int)s->a &&
						      s->kind != K_FSYNC_DIR));
		bool folder = n >= ACE_FILES && (all || (n == (int)s->a &&
							 s->kind == K_FSYNC_DIR));

		if (file && (s->kind != K_FDATASYNC || m->durable[n]))
			promise_name(w, ace_names[n], m->ino[n]);
		if (folder)
			promise_folder(w, ace_names[n]);
		if ((file && s->kind != K_FDATASYNC) || folder)
			m->durable[n] = true;
		/* a folder's fsync: the names in it */
		if (s->kind == K_FSYNC_DIR && m->exists[n] && n != N_ROOT &&
		    ace_parent[n] == s->a)
			m->durable[n] = true;
	}
	if (!what)
		what = s->kind == K_FSYNC_DIR ? "fsync-dir" : ace_kinds[s->kind];
	mark(w, what);
}

/* One step, with its oracle lines: 0, 1 if skipped, or -errno. */
static int
ace_step(struct workload *w, struct ace_model *m, const struct ace_step *s)
{
	char a[4096], b[4096];
	int ret;

	snprintf(a, sizeof(a), "%s/%s", w->dir, ace_names[s->a]);
	snprintf(b, sizeof(b), "%s/%s", w->dir, ace_names[s->b]);
	if (s->kind >= K_WRITE && s->kind <= K_FALLOC)
		touch_inode(w, m->ino[s->a]);
	else if (s->kind < K_WRITE && s->kind != K_LINK)
		touch_name(w, ace_names[s->a]);
	if (s->kind == K_LINK || s->kind == K_RENAME)
		touch_name(w, ace_names[s->b]);
	if (s->kind < K_WRITE) {
		/* a link leaves its old name as it was */
		m->durable[s->a] = s->kind == K_LINK && m->durable[s->a];
		m->durable[s->b] = false;
	}
	switch (s->kind) {
	case K_CREAT:
		ret = open(a, O_WRONLY | O_CREAT | O_EXCL, 0644);
		ret = ret < 0 ? -errno : close(ret);
		break;
	case K_MKDIR:
		ret = mkdir(a, 0755) ? -errno : 0;
		break;
	case K_LINK:
		ret = link(a, b) ? -errno : 0;
		break;
	case K_UNLINK:
		ret = unlink(a) ? -errno : 0;
		break;
	case K_RENAME:
		ret = rename(a, b) ? -errno : 0;
		break;
	case K_WRITE:
	case K_DIRECT:
	case K_APPEND:
		ret = ace_write(w, a, s->kind);
		break;
	case K_TRUNCATE:
		ret = truncate(a, 6000) ? -errno : 0;
		break;
	case K_FALLOC_KEEP:
	case K_FALLOC:
		ret = ace_fallocate(a, s->kind);
		break;
	case K_NONE:
		return 1;
	default:
		ret = ace_sync(s, s->kind == K_SYNC ? w->dir : a);
		if (!ret)
			ace_promise(w, m, s, NULL);
		return ret;
	}
	if (!ret)
		ace_apply(m, s);
	return ret;
}

/*
 * Sequence INDEX of seq-LEN in w->dir: the setup (A/, foo and A/foo of
 * 16 KiB, synced, mark setup-1), then its steps.  0, 1 if there is no such
 * sequence, 2 if the setup failed, 3 if a step failed: what ran is not the
 * sequence asked for, and its verdict would be about a weaker one.
 */
static int
ace_run(struct workload *w, unsigned int len, uint64_t index)
{
	struct ace_walk wk = { .len = len, .want = index };
	struct ace_model m = ace_setup_model;
	static const struct ace_step setup_sync = { K_SYNC, N_ROOT, N_ROOT };
	char path[4096], text[512];

	ace_walk(&wk, &ace_setup_model, 0);
	if (!wk.found) {
		fprintf(stderr, "fl-workload: seq-%u has %" PRIu64 " sequences, not %" PRIu64 "\n",
			len, wk.index, index + 1);
		return EXIT_USAGE;
	}
	if (posix_memalign((void **)&w->buf, 4096, 16384))
		return EXIT_BROKEN_RUN;
	w->rng = (index + 1) * 0x9e3779b97f4a7c15ULL;
	snprintf(path, sizeof(path), "%s/A", w->dir);
	if (mkdir(path, 0755) && errno != EEXIST)
		goto setup_failed;
	for (int i = 0; i < 2; i++) {
		static const enum ace_name setup_files[] = { N_FOO, N_A_FOO };
		int fd;

		snprintf(path, sizeof(path), "%s/%s", w->dir, ace_names[setup_files[i]]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		fill(w, 16384);
		if (fd < 0 || write(fd, w->buf, 16384) != 16384 || close(fd))
			goto setup_failed;
	}
	if (ace_sync(&setup_sync, w->dir))
		goto setup_failed;
	ace_promise(w, &m, &setup_sync, "setup");
	ace_describe(wk.seq, 2 * len, text, sizeof(text));
	printf("seq-%u #%" PRIu64 ": %s\n", len, index, text);
	for (unsigned int i = 0; i < 2 * len; i++) {
		int ret = ace_step(w, &m, &wk.seq[i]);

		ace_describe(&wk.seq[i], 1, text, sizeof(text));
		if (wk.seq[i].kind != K_NONE)
			printf("%u %s %s\n", i, text,
			       ret > 0 ? "skipped" : ret ? strerror(-ret) : "ok");
		if (ret < 0) {
			fprintf(stderr, "fl-workload: seq-%u #%" PRIu64 ": step %u '%s' failed: %s\n",
				len, index, i, text, strerror(-ret));
			free(w->buf);
			return EXIT_BROKEN_RUN;
		}
	}
	free(w->buf);
	return EXIT_OK;
setup_failed:
	fprintf(stderr, "fl-workload: the setup of seq-%u failed at '%s': %s\n",
		len, path, strerror(errno));
	free(w->buf);
	return EXIT_BROKEN_RUN;
}

/*
 * --verify: the oracle's events, read back.  A promise is kept by the
 * latest "durable" line for its path (or "listing" line for its folder)
 * whose ticket comes before the last mark was logged; it still binds
 * unless the path or its contents (a name in the folder, or the folder)
 * were touched after it by an operation issued before the until mark was
 * logged (ticket before the mark's second).
 */
struct event {
	char kind;		/* 'd'urable, 'l'isting, 'm'ark, 'p'ath touch, 'i'node touch */
	uint64_t ticket;	/* a mark: before it was logged */
	uint64_t logged;	/* a mark: after it was logged */
	char name[64];		/* path, folder or mark label */
	unsigned int ino;
	uint64_t size, hash;
	char names[192];	/* a listing: the folder's names */
};

static struct event *
read_events(const char *file, size_t *nr)
{
	struct event *v = NULL, e;
	size_t n = 0, cap = 0;
	char line[256], kind[16], what[16];
	FILE *f = fopen(file, "r");

	if (!f) {
		fprintf(stderr, "fl-workload: cannot open '%s': %s\n", file,
			strerror(errno));
		exit(EXIT_USAGE);
	}
	for (unsigned long lineno = 1; fgets(line, sizeof(line), f); lineno++) {
		memset(&e, 0, sizeof(e));
		if (sscanf(line, "%15s", kind) != 1)
			continue;
		if (!strcmp(kind, "durable") &&
		    sscanf(line, "durable %" SCNu64 " %63s %u %" SCNu64 " %" SCNx64,
			   &e.ticket, e.name, &e.ino, &e.size, &e.hash) == 5) {
			e.kind = 'd';
		} else if (!strcmp(kind, "listing") &&
			   sscanf(line, "listing %" SCNu64 " %63s %191s", &e.ticket,
				  e.name, e.names) == 3) {
			e.kind = 'l';
		} else if (!strcmp(kind, "mark") &&
			   sscanf(line, "mark %" SCNu64 " %" SCNu64 " %63s",
				  &e.ticket, &e.logged, e.name) == 3) {
			e.kind = 'm';
		} else if (!strcmp(kind, "touch") &&
			   sscanf(line, "touch %" SCNu64 " %15s %63s", &e.ticket,
				  what, e.name) == 3 &&
			   (!strcmp(what, "path") || !strcmp(what, "inode"))) {
			e.kind = what[0];
			e.ino = (unsigned int)strtoul(e.name, NULL, 10);
		} else {
			fprintf(stderr, "fl-workload: %s:%lu: not an oracle line: %s",
				file, lineno, line);
			exit(EXIT_USAGE);
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				exit(EXIT_BROKEN_RUN);
		}
		v[n++] = e;
	}
	fclose(f);
	*nr = n;
	return v;
}

static const struct event *
find_mark(const struct event *v, size_t n, const char *label)
{
	for (size_t i = 0; label && *label && i < n; i++)
		if (v[i].kind == 'm' && !strcmp(v[i].name, label))
			return &v[i];
	return NULL;
}

/* Is NAME in FOLDER ("." for DIR itself)? */
static bool
in_folder(const char *name, const char *folder)
{
	const char *slash = strrchr(name, '/');

	if (!slash)
		return !strcmp(folder, ".");
	return strlen(folder) == (size_t)(slash - name) &&
	       !strncmp(name, folder, (size_t)(slash - name));
}

static bool
touched(const struct event *v, size_t n, const struct event *d,
	uint64_t until)
{
	for (size_t i = 0; i < n; i++) {
		const struct event *t = &v[i];

		if (t->ticket <= d->ticket || t->ticket >= until)
			continue;
		if (d->kind == 'l' && t->kind == 'p' &&
		    (in_folder(t->name, d->name) || !strcmp(t->name, d->name)))
			return true;
		if (d->kind == 'd' &&
		    ((t->kind == 'p' && !strcmp(t->name, d->name)) ||
		     (t->kind == 'i' && t->ino == d->ino)))
			return true;
	}
	return false;
}

/* Is d the latest promise for its path made before the last mark? */
static bool
latest(const struct event *v, size_t n, const struct event *d, uint64_t last)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == d->kind && v[i].ticket > d->ticket &&
		    v[i].ticket < last && !strcmp(v[i].name, d->name))
			return false;
	return true;
}

/* Does the state at DIR keep promise d?  Says so either way. */
static bool
kept_promise(const struct event *d, const char *dir, const char *last_mark)
{
	const char *state = getenv("FLUSHLOG_STATE_NAME");
	char path[4096], names[sizeof(d->names)];
	uint64_t hash, size;

	snprintf(path, sizeof(path), "%s/%s", dir, d->name);
	if (d->kind == 'l' && !list_folder(path, names, sizeof(names))) {
		printf("fsync oracle: folder %s cannot be listed (%s), its names made durable at ticket %" PRIu64 " before mark %s; state %s\n",
		       d->name, strerror(errno), d->ticket, last_mark,
		       state ? state : "?");
		return false;
	} else if (d->kind == 'l' && strcmp(names, d->names)) {
		printf("fsync oracle: folder %s holds %s, expected %s made durable at ticket %" PRIu64 " before mark %s; state %s\n",
		       d->name, names, d->names, d->ticket, last_mark,
		       state ? state : "?");
		return false;
	} else if (d->kind == 'd' && !hash_file(path, &hash, &size)) {
		printf("fsync oracle: %s is missing (%s), made durable at ticket %" PRIu64 " before mark %s; state %s\n",
		       d->name, strerror(errno), d->ticket, last_mark,
		       state ? state : "?");
		return false;
	} else if (d->kind == 'd' && (size != d->size || hash != d->hash)) {
		printf("fsync oracle: %s holds %" PRIu64 " bytes (hash %016" PRIx64 "), expected %" PRIu64 " (%016" PRIx64 ") made durable at ticket %" PRIu64 " before mark %s; state %s\n",
		       d->name, size, hash, d->size, d->hash, d->ticket,
		       last_mark, state ? state : "?");
		return false;
	}
	printf("fsync oracle: kept %s%s (ticket %" PRIu64 ")\n",
	       d->kind == 'l' ? "folder " : "", d->name, d->ticket);
	return true;
}

static int
verify(const char *file, const char *last_mark, const char *until_mark,
       const char *dir)
{
	size_t n, kept = 0, broken = 0;
	struct event *v = read_events(file, &n);
	const struct event *last_ev = find_mark(v, n, last_mark);
	const struct event *until_ev = find_mark(v, n, until_mark);
	uint64_t last = last_ev ? last_ev->ticket : 0;
	uint64_t until = until_ev ? until_ev->logged : UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		const struct event *d = &v[i];

		if ((d->kind != 'd' && d->kind != 'l') || d->ticket >= last ||
		    !latest(v, n, d, last) || touched(v, n, d, until))
			continue;
		if (kept_promise(d, dir, last_mark))
			kept++;
		else
			broken++;
	}
	printf("fsync oracle: %zu promises kept, %zu broken (last mark %s)\n",
	       kept, broken, last_mark && *last_mark ? last_mark : "none");
	free(v);
	return broken ? EXIT_FAILED : EXIT_OK;
}

static enum op
draw_op(struct workload *w)
{
	unsigned int total = 0, r;

	for (int i = 0; i < NR_OPS; i++)
		total += op_weights[i];
	r = (unsigned int)pick(w, total);
	for (int i = 0; i < NR_OPS; i++) {
		if (r < op_weights[i])
			return (enum op)i;
		r -= op_weights[i];
	}
	return OP_WRITE;
}

static void
usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: fl-workload [--seed S] [--ops N] [--procs P] [--mark CMD]\n"
		"                   [--oracle FILE] [--verbose] DIR\n"
		"       fl-workload --ace seq-K --index I [--mark CMD] [--oracle FILE] DIR\n"
		"       fl-workload --ace seq-K --list [--shard K/N]\n"
		"       fl-workload --verify FILE [--last-mark L] [--until-mark M] DIR\n\n"
		"Run N (default 200) file operations drawn from seed S (default 1) in\n"
		"DIR; after each successful fsync, fdatasync or sync, run 'CMD LABEL'.\n"
		"--procs runs P workloads (1 to 64) at once, the Kth in DIR/pK with\n"
		"seed S + K and marks pK-WHAT-N.\n"
		"Prints one line per operation.  Exit 0 unless DIR is unusable (4).\n"
		"--oracle writes down what each fsync promised (a file replaced at the\n"
		"end, a FIFO written as it goes; not '-'); --verify checks, in a\n"
		"crash state mounted at DIR whose last mark is L, that every promise\n"
		"made before L holds (unless an operation issued before mark M, the\n"
		"first after the state's epoch, touched the file since): exit 1 and a\n"
		"line naming the file, the mark and $FLUSHLOG_STATE_NAME if not.\n"
		"--ace seq-K (K 1 to 3) runs, instead, sequence I of every sequence\n"
		"of K operations over foo, bar, A/foo, A/bar, B/foo, each followed by\n"
		"a persistence point, after a setup marked setup-1; --list prints the\n"
		"sequences ('I<tab>steps'), --shard K/N those whose I %% N is K.\n\n"
		"exit status (flushlog(1) EXIT STATUS): 0 ok, 1 a promise broken,\n"
		"2 usage error, 4 the workload could not be run\n");
	exit(status);
}

/* One workload in w->dir: 0, or EXIT_BROKEN_RUN if the folder is unusable. */
static int
run(struct workload *w, unsigned long ops, const char *tag)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/d0", w->dir);
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "fl-workload: cannot create '%s': %s\n", path,
			strerror(errno));
		return EXIT_BROKEN_RUN;
	}
	if (posix_memalign((void **)&w->buf, 4096, MAX_WRITE + 4096))
		return EXIT_BROKEN_RUN;
	for (unsigned long i = 0; i < ops; i++) {
		enum op op = draw_op(w);
		int ret;

		ret = do_op(w, op);

		printf("%s%lu %s %s\n", tag, i, op_names[op],
		       ret > 0 ? "skipped" : ret ? strerror(-ret) : "ok");
	}
	free(w->buf);
	return 0;
}

/* --procs: P children, the Kth in DIR/pK; EXIT_BROKEN_RUN if any failed. */
static int
run_procs(struct workload *w, unsigned long ops, unsigned long seed,
	  unsigned int procs)
{
	int failed = 0, status;

	/* a line at a time, or the children's lines mix */
	setvbuf(stdout, NULL, _IOLBF, 0);
	fflush(NULL);
	for (unsigned int k = 0; k < procs; k++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "fl-workload: cannot fork: %s\n",
				strerror(errno));
			failed = EXIT_BROKEN_RUN;
			break;
		}
		if (pid == 0) {
			static char dir[4096], prefix[16], tag[16];

			snprintf(dir, sizeof(dir), "%s/p%u", w->dir, k);
			snprintf(prefix, sizeof(prefix), "p%u/", k);
			snprintf(tag, sizeof(tag), "p%u ", k);
			if (mkdir(dir, 0755) && errno != EEXIST) {
				fprintf(stderr, "fl-workload: cannot create '%s': %s\n",
					dir, strerror(errno));
				_exit(EXIT_BROKEN_RUN);
			}
			w->dir = dir;
			w->prefix = prefix;
			w->rng = (seed + k) * 0x9e3779b97f4a7c15ULL + 1;
			w->next_ino = k << 20;
			fflush(NULL);
			_exit(run(w, ops, tag) || fflush(stdout) ?
			      EXIT_BROKEN_RUN : EXIT_OK);
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = EXIT_BROKEN_RUN;
	return failed;
}

/* "N" as a number below LIMIT, or false. */
static bool
parse_below(const char *s, uint64_t limit, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return *s >= '0' && *s <= '9' && !*end && !errno && *out < limit;
}

/* "K/N" with K below N. */
static bool
parse_shard(const char *s, uint64_t *k, uint64_t *n)
{
	const char *slash = strchr(s, '/');
	char head[24];

	if (!slash || slash - s >= (long)sizeof(head))
		return false;
	memcpy(head, s, (size_t)(slash - s));
	head[slash - s] = '\0';
	return parse_below(slash + 1, UINT64_MAX, n) && *n &&
	       parse_below(head, *n, k);
}

/*
 * The oracle's file, by flushlog's output rule (a temporary renamed over
 * it at the end, a FIFO or /dev/null written as it is); every process of
 * --procs appends to it.  Not stdout: the operations are printed there.
 */
static int
open_oracle(struct workload *w, const char *path, struct cli_output *out)
{
	int ret = cli_output_open(out, "fl-workload", path, OUTPUT_STREAM,
				  OUTPUT_APPEND | OUTPUT_NOT_STDOUT, NULL, 0);

	w->oracle = ret ? -1 : out->fd;
	return ret;
}

/* The run's status, the oracle kept if it succeeded (else removed). */
static int
close_oracle(struct workload *w, struct cli_output *out, int ret)
{
	if (w->oracle < 0)
		return ret;
	w->oracle = -1;
	if (ret) {
		cli_output_abort(out);
		return ret;
	}
	return cli_output_close(out);
}

/* fl-workload --ace ...: list the space, or run one sequence of it. */
static int
ace_main(const char *spec, const char *index, bool list, const char *shard,
	 bool other_opts, struct workload *w, const char *oracle, int nargs,
	 char **args)
{
	struct ace_walk wk = { .shards = 1, .list = true };
	struct cli_output out;
	uint64_t want;
	int ret;

	wk.len = spec ? ace_length(spec) : 0;
	if (!wk.len)
		return fprintf(stderr, "fl-workload: --ace takes seq-1, seq-2 or seq-3, not '%s'\n",
			       spec ? spec : "(nothing)"), 2;
	if (other_opts)
		return fprintf(stderr, "fl-workload: --ace takes none of --seed, --ops, --procs, --verbose, --verify, --last-mark, --until-mark\n"), 2;
	if (list == !!index || (list ? nargs != 0 || oracle || w->mark_cmd : nargs != 1) ||
	    (shard && !list))
		return fprintf(stderr, "fl-workload: --ace takes --list [--shard K/N], or --index I and DIR\n"), 2;
	if (shard && !parse_shard(shard, &wk.shard, &wk.shards))
		return fprintf(stderr, "fl-workload: --shard takes K/N with K below N, not '%s'\n",
			       shard), 2;
	if (list) {
		ace_walk(&wk, &ace_setup_model, 0);
		return fflush(stdout) ? EXIT_BROKEN_RUN : EXIT_OK;
	}
	if (!parse_below(index, UINT64_MAX, &want))
		return fprintf(stderr, "fl-workload: --index takes a number, not '%s'\n", index), 2;
	w->dir = args[0];
	if (oracle && (ret = open_oracle(w, oracle, &out)))
		return ret;
	w->tickets = &w->next_ticket;
	return close_oracle(w, &out, ace_run(w, wk.len, want));
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "procs", required_argument, NULL, 'P' },
		{ "mark", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "oracle", required_argument, NULL, 'o' },
		{ "verify", required_argument, NULL, 'V' },
		{ "last-mark", required_argument, NULL, 'L' },
		{ "until-mark", required_argument, NULL, 'U' },
		{ "ace", required_argument, NULL, 'A' },
		{ "index", required_argument, NULL, 'I' },
		{ "list", no_argument, NULL, 'l' },
		{ "shard", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct workload w = { .nr_dirs = 1, .prefix = "", .oracle = -1 };
	struct cli_output out;
	unsigned long ops = 200, seed = 1, procs = 1;
	const char *oracle = NULL, *verify_file = NULL, *last = NULL, *until = NULL;
	const char *ace = NULL, *index = NULL, *shard = NULL;
	bool list = false, random_opts = false;
	char *end;
	int c, ret;

	while ((c = getopt_long(argc, argv, "s:n:m:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoul(optarg, NULL, 0); random_opts = true; break;
		case 'n': ops = strtoul(optarg, NULL, 0); random_opts = true; break;
		case 'A': ace = optarg; break;
		case 'I': index = optarg; break;
		case 'l': list = true; break;
		case 'S': shard = optarg; break;
		case 'P':
			random_opts = true;
			procs = strtoul(optarg, &end, 10);
			if (*end || procs < 1 || procs > MAX_PROCS) {
				fprintf(stderr, "fl-workload: --procs takes 1 to %d, not '%s'\n",
					MAX_PROCS, optarg);
				return 2;
			}
			break;
		case 'm': w.mark_cmd = optarg; break;
		case 'v': w.verbose = true; break;
		case 'o': oracle = optarg; break;
		case 'V': verify_file = optarg; break;
		case 'L': last = optarg; break;
		case 'U': until = optarg; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (ace || index || list || shard)
		return ace_main(ace, index, list, shard,
				random_opts || verify_file || last || until || w.verbose,
				&w, oracle, argc - optind, argv + optind);
	if (optind != argc - 1)
		usage(2);
	if (verify_file)
		return verify(verify_file, last, until, argv[optind]);
	w.dir = argv[optind];
	if (oracle && (ret = open_oracle(&w, oracle, &out)))
		return ret;
	w.tickets = mmap(NULL, sizeof(*w.tickets), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w.tickets == MAP_FAILED) {
		fprintf(stderr, "fl-workload: cannot map the ticket counter: %s\n",
			strerror(errno));
		return close_oracle(&w, &out, EXIT_BROKEN_RUN);
	}
	if (procs == 1) {
		w.rng = seed * 0x9e3779b97f4a7c15ULL + 1;
		ret = run(&w, ops, "");
	} else {
		ret = run_procs(&w, ops, seed, (unsigned int)procs);
	}
	return close_oracle(&w, &out, ret);
}
