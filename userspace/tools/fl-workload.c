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
 * usage: fl-workload [--seed S] [--ops N] [--procs N] [--mark CMD]
 *                    [--oracle FILE] [--verbose] DIR
 *        fl-workload --verify FILE [--last-mark L] [--until-mark M] DIR
 */
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
	unsigned int next_ino;
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
		exit(1);
	}
}

static void
touch_path(struct workload *w, unsigned int f)
{
	if (w->oracle >= 0)
		oracle_line(w, "touch %" PRIu64 " path %sd%u/f%u\n", ticket(w),
			    w->prefix, w->dir_of[f], f);
}

static void
touch_contents(struct workload *w, unsigned int f)
{
	if (w->oracle >= 0)
		oracle_line(w, "touch %" PRIu64 " inode %u\n", ticket(w),
			    w->ino_of[f]);
}

/* f's name and contents are durable now: before the mark that follows. */
static void
promise(struct workload *w, unsigned int f)
{
	char path[4096];
	uint64_t hash, size;

	if (w->oracle < 0)
		return;
	file_path(w, f, path, sizeof(path));
	if (hash_file(path, &hash, &size))
		oracle_line(w, "durable %" PRIu64 " %sd%u/f%u %u %" PRIu64 " %016" PRIx64 "\n",
			    ticket(w), w->prefix, w->dir_of[f], f, w->ino_of[f],
			    size, hash);
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
	if (!ret) {
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
 * --verify: the oracle's events, read back.  A promise is kept by the
 * latest "durable" line for its path whose ticket comes before the last
 * mark was logged; it still binds unless the path or its contents were
 * touched after it by an operation issued before the until mark was
 * logged (ticket before the mark's second).
 */
struct event {
	char kind;		/* 'd'urable, 'm'ark, 'p'ath touch, 'i'node touch */
	uint64_t ticket;	/* a mark: before it was logged */
	uint64_t logged;	/* a mark: after it was logged */
	char name[64];		/* path, or mark label */
	unsigned int ino;
	uint64_t size, hash;
};

static struct event *
read_events(const char *file, size_t *nr)
{
	struct event *v = NULL, e;
	size_t n = 0, cap = 0;
	char line[256], kind[16], what[16];
	FILE *f = fopen(file, "r");

	if (!f) {
		fprintf(stderr, "fl-workload: cannot read '%s': %s\n", file,
			strerror(errno));
		exit(2);
	}
	for (unsigned long lineno = 1; fgets(line, sizeof(line), f); lineno++) {
		memset(&e, 0, sizeof(e));
		if (sscanf(line, "%15s", kind) != 1)
			continue;
		if (!strcmp(kind, "durable") &&
		    sscanf(line, "durable %" SCNu64 " %63s %u %" SCNu64 " %" SCNx64,
			   &e.ticket, e.name, &e.ino, &e.size, &e.hash) == 5) {
			e.kind = 'd';
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
			exit(2);
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				exit(2);
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

static bool
touched(const struct event *v, size_t n, const struct event *d,
	uint64_t until)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].ticket > d->ticket && v[i].ticket < until &&
		    ((v[i].kind == 'p' && !strcmp(v[i].name, d->name)) ||
		     (v[i].kind == 'i' && v[i].ino == d->ino)))
			return true;
	return false;
}

/* Is d the latest promise for its path made before the last mark? */
static bool
latest(const struct event *v, size_t n, const struct event *d, uint64_t last)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == 'd' && v[i].ticket > d->ticket &&
		    v[i].ticket < last && !strcmp(v[i].name, d->name))
			return false;
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
	const char *state = getenv("FLUSHLOG_STATE_NAME");

	for (size_t i = 0; i < n; i++) {
		const struct event *d = &v[i];
		char path[4096];
		uint64_t hash, size;

		if (d->kind != 'd' || d->ticket >= last || !latest(v, n, d, last) ||
		    touched(v, n, d, until))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->name);
		if (!hash_file(path, &hash, &size)) {
			printf("fsync oracle: %s is missing (%s), made durable at ticket %" PRIu64 " before mark %s; state %s\n",
			       d->name, strerror(errno), d->ticket, last_mark,
			       state ? state : "?");
			broken++;
		} else if (size != d->size || hash != d->hash) {
			printf("fsync oracle: %s holds %" PRIu64 " bytes (hash %016" PRIx64 "), expected %" PRIu64 " (%016" PRIx64 ") made durable at ticket %" PRIu64 " before mark %s; state %s\n",
			       d->name, size, hash, d->size, d->hash, d->ticket,
			       last_mark, state ? state : "?");
			broken++;
		} else {
			printf("fsync oracle: kept %s (ticket %" PRIu64 ")\n",
			       d->name, d->ticket);
			kept++;
		}
	}
	printf("fsync oracle: %zu promises kept, %zu broken (last mark %s)\n",
	       kept, broken, last_mark && *last_mark ? last_mark : "none");
	free(v);
	return broken ? 1 : 0;
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
		"       fl-workload --verify FILE [--last-mark L] [--until-mark M] DIR\n\n"
		"Run N (default 200) file operations drawn from seed S (default 1) in\n"
		"DIR; after each successful fsync, fdatasync or sync, run 'CMD LABEL'.\n"
		"--procs runs P workloads (1 to 64) at once, the Kth in DIR/pK with\n"
		"seed S + K and marks pK-WHAT-N.\n"
		"Prints one line per operation.  Exit 0 unless DIR is unusable.\n"
		"--oracle writes down what each fsync promised; --verify checks, in a\n"
		"crash state mounted at DIR whose last mark is L, that every promise\n"
		"made before L holds (unless an operation issued before mark M, the\n"
		"first after the state's epoch, touched the file since): exit 1 and a\n"
		"line naming the file, the mark and $FLUSHLOG_STATE_NAME if not.\n");
	exit(status);
}

/* One workload in w->dir: 0, or 1 if the folder is unusable. */
static int
run(struct workload *w, unsigned long ops, const char *tag)
{
	char path[4096];

	if (posix_memalign((void **)&w->buf, 4096, MAX_WRITE + 4096))
		return 1;
	snprintf(path, sizeof(path), "%s/d0", w->dir);
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "fl-workload: cannot create '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
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

/* --procs: P children, the Kth in DIR/pK; 1 if any of them failed. */
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
			failed = 1;
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
				_exit(1);
			}
			w->dir = dir;
			w->prefix = prefix;
			w->rng = (seed + k) * 0x9e3779b97f4a7c15ULL + 1;
			w->next_ino = k << 20;
			fflush(NULL);
			_exit(run(w, ops, tag) || fflush(stdout) ? 1 : 0);
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	return failed;
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct workload w = { .nr_dirs = 1, .prefix = "", .oracle = -1 };
	unsigned long ops = 200, seed = 1, procs = 1;
	const char *oracle = NULL, *verify_file = NULL, *last = NULL, *until = NULL;
	char *end;
	int c, ret;

	while ((c = getopt_long(argc, argv, "s:n:m:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 'n': ops = strtoul(optarg, NULL, 0); break;
		case 'P':
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
	if (optind != argc - 1)
		usage(2);
	if (verify_file)
		return verify(verify_file, last, until, argv[optind]);
	w.dir = argv[optind];
	if (oracle) {
		w.oracle = open(oracle, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
				O_CLOEXEC, 0644);
		if (w.oracle < 0) {
			fprintf(stderr, "fl-workload: cannot write '%s': %s\n",
				oracle, strerror(errno));
			return 1;
		}
	}
	w.tickets = mmap(NULL, sizeof(*w.tickets), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w.tickets == MAP_FAILED) {
		fprintf(stderr, "fl-workload: cannot map the ticket counter: %s\n",
			strerror(errno));
		return 1;
	}
	if (procs == 1) {
		w.rng = seed * 0x9e3779b97f4a7c15ULL + 1;
		ret = run(&w, ops, "");
	} else {
		ret = run_procs(&w, ops, seed, (unsigned int)procs);
	}
	if (w.oracle >= 0 && close(w.oracle)) {
		fprintf(stderr, "fl-workload: cannot write '%s': %s\n", oracle,
			strerror(errno));
		return 1;
	}
	return ret;
}
