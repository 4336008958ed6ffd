// SPDX-License-Identifier: GPL-2.0
/*
 * Every file a command writes under a name the user gave goes through
 * here, by one rule, so that no output replaces what it does not own:
 *
 *  - "-" is stdout, where the output is a stream (a report, a picture);
 *  - a regular file, or a name nothing has yet, gets a temporary file
 *    beside it, renamed over it once whole: a command that fails leaves
 *    the old file as it was;
 *  - a symlink is written through: what it points to is written by this
 *    same rule, and the link stays (one that points nowhere is refused);
 *  - a block device is written in place, opened O_EXCL (so never while
 *    mounted), and only with an image;
 *  - a character device or a FIFO is written as it is, when the output
 *    is a stream; an image needs seeking, and is refused there;
 *  - a socket or a folder is refused;
 *  - an output that is one of the command's inputs is refused: the same
 *    file, or a block device the input is on (itself, the filesystem a
 *    log file is in, or a disk or device-mapper device built of it).
 *
 * A refusal is said before anything is created or opened for writing.
 * This file uses nothing but libc: fl-workload links it too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli.h"

/* Devices deeper than this in a stack are not looked through. */
#define STACK_DEPTH_MAX	8

/* What kind of thing st is, for a message. */
static const char *
kind_name(mode_t mode)
{
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a folder";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/* The device number in a sysfs "dev" file ("8:1"); 0 if none. */
static dev_t
sysfs_dev(const char *path)
{
	unsigned int maj, min;
	FILE *f = fopen(path, "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%u:%u", &maj, &min);
	fclose(f);
	return n == 2 ? makedev(maj, min) : 0;
}

/*
 * Is block device inner outer, or built on it: a partition of it, or a
 * device-mapper, md or loop-over-partition device whose parts
 * (/sys/dev/block/M:m/slaves) are, at any depth?
 */
static bool
block_holds(dev_t outer, dev_t inner, int depth)
{
	char dir[64], path[PATH_MAX];
	bool held = false;
	struct dirent *d;
	DIR *slaves;

	if (inner == outer)
		return true;
	if (!major(inner) || depth >= STACK_DEPTH_MAX)
		return false;	/* an anonymous device (tmpfs, btrfs) is on none */
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(inner),
		 minor(inner));
	snprintf(path, sizeof(path), "%s/partition", dir);
	if (!access(path, F_OK)) {
		snprintf(path, sizeof(path), "%s/../dev", dir);
		return block_holds(outer, sysfs_dev(path), depth + 1);
	}
	snprintf(path, sizeof(path), "%s/slaves", dir);
	slaves = opendir(path);
	if (!slaves)
		return false;
	while (!held && (d = readdir(slaves))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/slaves/%s/dev", dir, d->d_name);
		held = block_holds(outer, sysfs_dev(path), depth + 1);
	}
	closedir(slaves);
	return held;
}

/*
 * A loop device's backing file, *st: 0, or -1 if dev is no loop device
 * (or its file is gone).  Its slaves folder is empty: the file is the
 * only way to see what it writes to.
 */
static int
loop_backing(dev_t dev, struct stat *st)
{
	char path[64], file[PATH_MAX];
	FILE *f;
	bool got;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(dev), minor(dev));
	f = fopen(path, "re");
	if (!f)
		return -1;
	got = fgets(file, sizeof(file), f);
	fclose(f);
	if (!got)
		return -1;
	file[strcspn(file, "\n")] = '\0';
	return stat(file, st) ? -1 : 0;
}

/*
 * Does writing block device out reach input in (its stat)?  Either is
 * built on the other (a partition of the log's disk, a device-mapper
 * device over the base), or out is a loop device over in, or over a file
 * in a filesystem on in when in is a block device.
 */
static bool
block_reaches(const struct stat *out, const struct stat *in)
{
	dev_t on = S_ISBLK(in->st_mode) ? in->st_rdev : in->st_dev;
	struct stat file;

	if (block_holds(out->st_rdev, on, 0) || block_holds(on, out->st_rdev, 0))
		return true;
	if (loop_backing(out->st_rdev, &file))
		return false;
	if (file.st_dev == in->st_dev && file.st_ino == in->st_ino)
		return true;
	/* a file beside a file input is another file; on a device input, not */
	return S_ISBLK(in->st_mode) &&
	       (block_holds(on, file.st_dev, 0) || block_holds(file.st_dev, on, 0));
}

/* Is the output out (its stat, through links) one of the inputs? */
static int
refuse_inputs(const char *who, const char *path, const struct stat *out,
	      const struct cli_input *inputs, size_t nr_inputs)
{
	for (size_t i = 0; i < nr_inputs; i++) {
		const struct cli_input *in = &inputs[i];
		struct stat st;

		if (!in->path || stat(in->path, &st))
			continue;
		if (st.st_dev == out->st_dev && st.st_ino == out->st_ino) {
			fprintf(stderr, "%s: refusing to write '%s': it is %s '%s'\n",
				who, path, in->what, in->path);
			return EXIT_USAGE;
		}
		if (!S_ISBLK(out->st_mode))
			continue;
		if (block_reaches(out, &st)) {
			fprintf(stderr, "%s: refusing to write '%s': %s '%s' is on that device\n",
				who, path, in->what, in->path);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/*
 * What path is, through symlinks: *st, and whether it exists.  A
 * dangling symlink is refused (EXIT_USAGE).
 */
static int
classify(const char *who, const char *path, struct stat *st, bool *exists)
{
	char target[PATH_MAX];
	ssize_t n;

	*exists = false;
	if (lstat(path, st)) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "%s: cannot write '%s': %s\n", who, path,
			strerror(errno));
		return EXIT_BROKEN_RUN;
	}
	if (S_ISLNK(st->st_mode) && stat(path, st)) {
		if (errno != ENOENT) {
			fprintf(stderr, "%s: cannot write '%s': %s\n", who, path,
				strerror(errno));
			return EXIT_BROKEN_RUN;
		}
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "%s: refusing to write '%s': it is a symlink to '%s', which does not exist\n",
			who, path, target);
		return EXIT_USAGE;
	}
	*exists = true;
	return 0;
}

/* May an output of this use be what st is?  0, or the refusal's code. */
static int
refuse_kind(const char *who, const char *path, const struct stat *st,
	    enum cli_output_use use)
{
	bool image = use != OUTPUT_STREAM;

	if (S_ISREG(st->st_mode))
		return 0;
	if (S_ISBLK(st->st_mode) && !image) {
		fprintf(stderr, "%s: refusing to write '%s': it is a block device, which takes only an image\n",
			who, path);
		return EXIT_USAGE;
	}
	if (S_ISBLK(st->st_mode) ||
	    (!image && (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode))))
		return 0;
	if (image && (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode)))
		fprintf(stderr, "%s: cannot write an image to '%s': it is %s, and an image needs seeking (name a file or a block device)\n",
			who, path, kind_name(st->st_mode));
	else
		fprintf(stderr, "%s: refusing to write '%s': it is %s\n", who,
			path, kind_name(st->st_mode));
	return EXIT_USAGE;
}

int
cli_output_check(const char *who, const char *path, enum cli_output_use use,
		 unsigned int flags, const struct cli_input *inputs,
		 size_t nr_inputs)
{
	struct stat st;
	bool exists;
	int ret;

	if (!strcmp(path, "-")) {
		if (use != OUTPUT_STREAM) {
			fprintf(stderr, "%s: cannot write an image to stdout ('-'): an image needs seeking (name a file or a block device)\n",
				who);
			return EXIT_USAGE;
		}
		if (flags & OUTPUT_NOT_STDOUT) {
			fprintf(stderr, "%s: cannot write '-': stdout holds this command's own output\n",
				who);
			return EXIT_USAGE;
		}
		return 0;
	}
	ret = classify(who, path, &st, &exists);
	if (ret)
		return ret;
	if (!exists) {
		if (use != OUTPUT_IMAGE_IN_PLACE)
			return 0;
		fprintf(stderr, "%s: cannot open '%s': %s\n", who, path,
			strerror(ENOENT));
		return EXIT_BROKEN_RUN;
	}
	ret = refuse_kind(who, path, &st, use);
	return ret ? ret : refuse_inputs(who, path, &st, inputs, nr_inputs);
}

bool
cli_output_is_stream(const char *path)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return true;
	return !stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
}

/* A temporary file beside o->dest, with the mode dest has or would get. */
static int
open_temporary(struct cli_output *o, const struct stat *st, bool exists,
	       unsigned int flags)
{
	mode_t mode;

	if (asprintf(&o->tmp, "%s.flushlog-XXXXXX", o->dest) < 0) {
		o->tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC |
			 (flags & OUTPUT_APPEND ? O_APPEND : 0));
	if (o->fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	if (exists) {
		mode = st->st_mode & 07777;
	} else {	/* as open(O_CREAT, 0666) would have made it */
		mode = umask(0);
		umask(mode);
		mode = 0666 & ~mode;
	}
	fchmod(o->fd, mode);
	return 0;
}

int
cli_output_open(struct cli_output *o, const char *who, const char *path,
		enum cli_output_use use, unsigned int flags,
		const struct cli_input *inputs, size_t nr_inputs)
{
	int mode_flags = O_WRONLY | O_CLOEXEC;
	struct stat st;
	bool exists;
	int ret;

	*o = (struct cli_output) { .who = who, .path = path, .fd = -1 };
	ret = cli_output_check(who, path, use, flags, inputs, nr_inputs);
	if (ret)
		return ret;
	if (!strcmp(path, "-")) {
		o->kind = OUTPUT_TO_STREAM;
		o->fd = STDOUT_FILENO;
		o->is_stdout = true;
		return 0;
	}
	ret = classify(who, path, &st, &exists);
	if (ret)
		return ret;
	/* a symlink's target, for the temporary to be beside it */
	o->dest = exists && S_ISREG(st.st_mode) ? realpath(path, NULL)
						 : strdup(path);
	if (!o->dest) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", who, path,
			strerror(errno));
		return EXIT_BROKEN_RUN;
	}
	if (flags & OUTPUT_APPEND)
		mode_flags |= O_APPEND;
	if (exists && S_ISBLK(st.st_mode)) {
		o->kind = OUTPUT_TO_BLOCK;
		o->fd = open(o->dest, mode_flags | O_EXCL);
	} else if (exists && !S_ISREG(st.st_mode)) {
		o->kind = OUTPUT_TO_STREAM;
		o->fd = open(o->dest, mode_flags);
	} else if (use == OUTPUT_IMAGE_IN_PLACE) {
		o->kind = OUTPUT_TO_FILE;
		o->fd = open(o->dest, mode_flags);
	} else {
		o->kind = OUTPUT_TO_FILE;
		open_temporary(o, &st, exists, flags);
	}
	if (o->fd < 0) {
		fprintf(stderr, "%s: cannot %s '%s': %s\n", who,
			exists ? "open" : "create", path, strerror(errno));
		free(o->dest);
		o->dest = NULL;
		return EXIT_BROKEN_RUN;
	}
	return 0;
}

FILE *
cli_output_stdio(struct cli_output *o)
{
	if (o->is_stdout)
		o->file = stdout;
	else if (!o->file)
		o->file = fdopen(o->fd, "w");
	return o->file;
}

/* The rename itself made durable: best effort, as a folder may refuse. */
static void
sync_folder(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * Close what o has open; 0, or -errno of the first failure.  A block
 * device's write errors come out at fsync, not close; a temporary is
 * synced before it is renamed over the old file, so that a power loss
 * leaves the old file or the whole new one, never an empty one (the
 * rename alone orders nothing on XFS, btrfs or ext4 noauto_da_alloc).
 */
static int
close_output(struct cli_output *o)
{
	bool sync = o->kind == OUTPUT_TO_BLOCK || o->tmp;
	int ret = 0;

	if (o->is_stdout) {
		if (fflush(stdout))
			ret = -errno;
	} else if (o->file) {
		if (fflush(o->file) || (sync && fsync(o->fd)))
			ret = -errno;
		if (fclose(o->file) && !ret)
			ret = -errno;
	} else if (o->fd >= 0) {
		if (sync && fsync(o->fd))
			ret = -errno;
		if (close(o->fd) && !ret)
			ret = -errno;
	}
	o->file = NULL;
	o->fd = -1;
	return ret;
}

int
cli_output_close(struct cli_output *o)
{
	int ret = close_output(o);

	if (!ret && o->tmp && rename(o->tmp, o->dest))
		ret = -errno;
	if (!ret && o->tmp)
		sync_folder(o->dest);
	if (ret) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", o->who,
			o->is_stdout ? "-" : o->path, strerror(-ret));
		cli_output_abort(o);
		return EXIT_BROKEN_RUN;
	}
	free(o->tmp);
	free(o->dest);
	o->tmp = o->dest = NULL;
	return EXIT_OK;
}

void
cli_output_abort(struct cli_output *o)
{
	close_output(o);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->dest);
	o->tmp = o->dest = NULL;
}
