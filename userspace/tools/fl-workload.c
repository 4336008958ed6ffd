// SPDX-License-Identifier: GPL-2.0
/*
 * fl-workload: a deterministic file workload for crash testing.  The same
 * seed gives the same operations: creates, buffered / O_DIRECT / O_DSYNC
 * writes, appends, overwrites, truncates, fallocates, renames, links,
 * unlinks, mkdirs, fsyncs, fdatasyncs and syncs, in a folder.  After each
 * successful fsync, fdatasync or sync it runs "MARK-CMD LABEL" so that the
 * log has a mark where durability was promised.
 *
 * usage: fl-workload [--seed S] [--ops N] [--mark CMD] [--verbose] DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FILES	64
#define MAX_DIRS	8
#define MAX_WRITE	(128 << 10)
#define MAX_SIZE	(1 << 20)

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
	const char *mark_cmd;
	uint64_t rng;
	bool verbose;
	unsigned int nr_dirs;
	bool file_exists[MAX_FILES];
	unsigned int dir_of[MAX_FILES];	/* the folder a file is in */
	unsigned int marks;
	char *buf;
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

static void
mark(struct workload *w, const char *what)
{
	char label[64];
	pid_t pid;
	int status;

	if (!w->mark_cmd)
		return;
	snprintf(label, sizeof(label), "%s-%u", what, ++w->marks);
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
	if (!ret)
		mark(w, data_only ? "fdatasync" : "fsync");
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
		if (!ret)
			mark(w, "sync");
		return ret;
	}
	if (f < 0)
		return 1;
	if (op == OP_CREATE)
		w->dir_of[f] = (unsigned int)pick(w, w->nr_dirs);
	file_path(w, (unsigned int)f, path, sizeof(path));
	switch (op) {
	case OP_CREATE:
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
		return truncate(path, (off_t)pick(w, MAX_SIZE)) ? -errno : 0;
	case OP_FALLOCATE:
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
		file_path(w, (unsigned int)g, path2, sizeof(path2));
		if (op == OP_RENAME ? rename(path, path2) : link(path, path2))
			return -errno;
		w->file_exists[g] = true;
		if (op == OP_RENAME)
			w->file_exists[f] = false;
		return 0;
	case OP_UNLINK:
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
		"usage: fl-workload [--seed S] [--ops N] [--mark CMD] [--verbose] DIR\n\n"
		"Run N (default 200) file operations drawn from seed S (default 1) in\n"
		"DIR; after each successful fsync, fdatasync or sync, run 'CMD LABEL'.\n"
		"Prints one line per operation.  Exit 0 unless DIR is unusable.\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "mark", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct workload w = { .nr_dirs = 1 };
	unsigned long ops = 200, seed = 1;
	char path[4096];
	int c;

	while ((c = getopt_long(argc, argv, "s:n:m:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 'n': ops = strtoul(optarg, NULL, 0); break;
		case 'm': w.mark_cmd = optarg; break;
		case 'v': w.verbose = true; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind != argc - 1)
		usage(2);
	w.dir = argv[optind];
	w.rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (posix_memalign((void **)&w.buf, 4096, MAX_WRITE + 4096))
		return 1;
	snprintf(path, sizeof(path), "%s/d0", w.dir);
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "fl-workload: cannot create '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	for (unsigned long i = 0; i < ops; i++) {
		enum op op = draw_op(&w);
		int ret = do_op(&w, op);

		printf("%lu %s %s\n", i, op_names[op],
		       ret > 0 ? "skipped" : ret ? strerror(-ret) : "ok");
	}
	free(w.buf);
	return 0;
}
