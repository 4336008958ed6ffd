// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog replay: rebuild the data device as it stood at a crash point.
 *
 * A new image is built in a temporary file beside IMAGE and renamed over
 * it only when the replay succeeded, so a bad log never leaves a half
 * replayed image behind under IMAGE's name.  Where the library cloned data
 * from the log, the image shares those blocks with it: that is said.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli.h"

enum {
	OPT_OUTPUT, OPT_TO, OPT_STATE, OPT_FROM, OPT_BASE, OPT_IN_PLACE,
	OPT_NO_ORDER_CHECK,
};

static const struct cli_option replay_options[] = {
	[OPT_OUTPUT] = { "output", 'o', "[DEV=|all=]IMAGE",
			 "write the state to IMAGE (file or block device); of a log of several devices, device DEV's state (repeat for each), or all of them" },
	[OPT_TO] = { "to", 't', "POINT", "replay up to POINT (default end)" },
	[OPT_STATE] = { "state", 0, "NAME",
			"build crash state NAME, as 'flushlog check' names it" },
	[OPT_FROM] = { "from", 0, "POINT",
		       "with --in-place: IMAGE already holds POINT's state" },
	[OPT_BASE] = { "base", 'b', "BASE",
		       "start from a copy of BASE, not from zeroes" },
	[OPT_IN_PLACE] = { "in-place", 0, NULL,
			   "apply the entries onto IMAGE's current contents" },
	[OPT_NO_ORDER_CHECK] = { "no-order-check", 0, NULL,
				 "use a log not in durability order (states may be wrong)" },
	{ NULL },
};

struct replay_args {
	const char *log_path, *output, *to, *from, *base, *state;
	uint32_t device;	/* output's device, or FL_ALL_DEVICES */
	bool in_place, quiet, check_order;
	/* every --output: [DEV=]IMAGE, device -1 where no DEV= was given,
	 * FL_ALL_DEVICES for all= */
	struct {
		const char *path;
		long device;
	} outputs[FLUSHLOG_MAX_DEVICES];
	unsigned int nr_outputs;
};

/*
 * "DEV=IMAGE", DEV a device number, or "all=IMAGE" (every device, one
 * after another); otherwise all of it is the path.
 */
static void
parse_output(const struct cli_command *cmd, struct replay_args *a,
	     const char *arg)
{
	const char *eq = strchr(arg, '='), *path = arg;
	long dev = -1;

	if (a->nr_outputs == FLUSHLOG_MAX_DEVICES)
		cli_usage_error(cmd, "more than %d --output images",
				FLUSHLOG_MAX_DEVICES);
	if (eq && eq - arg == 3 && !strncmp(arg, "all", 3)) {
		dev = FL_ALL_DEVICES;
		path = eq + 1;
	} else if (eq && eq > arg &&
		   strspn(arg, "0123456789") == (size_t)(eq - arg)) {
		errno = 0;
		dev = strtol(arg, NULL, 10);
		if (errno || dev >= FLUSHLOG_MAX_DEVICES)
			cli_usage_error(cmd, "--output %s: no device %.*s (at most %d devices)",
					arg, (int)(eq - arg), arg,
					FLUSHLOG_MAX_DEVICES);
		path = eq + 1;
	}
	if (!*path)
		cli_usage_error(cmd, "--output %s: no image named", arg);
	for (unsigned int i = 0; i < a->nr_outputs; i++)
		if (a->outputs[i].device == dev)
			cli_usage_error(cmd, "--output %s names its device twice",
					arg);
	a->outputs[a->nr_outputs].path = path;
	a->outputs[a->nr_outputs++].device = dev;
}

static void
show_progress(void *arg, uint64_t done, uint64_t total)
{
	progress_show(arg, false, "%3u%% of %" PRIu64 " MiB",
		      total ? (unsigned int)(done * 100 / total) : 100,
		      total >> 20);
}

/* Copy BASE into fd, sharing blocks where the filesystem can. */
static int
copy_base(int base_fd, uint64_t size, int fd, bool to_blockdev)
{
	int ret;

	if (!to_blockdev && !ioctl(fd, FICLONE, base_fd))
		return 0;
	if (to_blockdev) {
		ret = fl_zero_range(fd, 0, size, true);
		if (ret)
			return ret;
	}
	return fl_copy_sparse(base_fd, fd);
}

/* How replay's messages begin; an output keeps it until it is closed. */
#define REPLAY_WHO	"flushlog replay"

/* The files replay reads: none of them may be an output. */
static size_t
replay_inputs(const struct replay_args *a, struct cli_input inputs[2])
{
	inputs[0] = (struct cli_input) { "the log", a->log_path };
	inputs[1] = (struct cli_input) { "the base", a->base };
	return 2;
}

static enum cli_output_use
image_use(const struct replay_args *a)
{
	return a->in_place ? OUTPUT_IMAGE_IN_PLACE : OUTPUT_IMAGE;
}

/*
 * Open the image to write (o->tmp set when it is built in a temporary),
 * starting as the base, as zeroes, or, --in-place, as it is.
 */
static int
prepare_image(const struct cli_command *cmd, const struct replay_args *a,
	      uint64_t need, struct cli_output *o)
{
	struct cli_input inputs[2];
	int base_fd = -1, ret;
	uint64_t base_size = 0;

	if (a->base) {
		base_fd = open(a->base, O_RDONLY | O_CLOEXEC);
		if (base_fd < 0) {
			fprintf(stderr, "flushlog %s: cannot open base '%s': %s\n",
				cmd->name, a->base, strerror(errno));
			return EXIT_USAGE;
		}
		base_size = cli_file_size(base_fd);
		if (base_size < need) {
			fprintf(stderr, "flushlog %s: base '%s' has %" PRIu64 " bytes, the log's device %" PRIu64 "\n",
				cmd->name, a->base, base_size, need);
			close(base_fd);
			return EXIT_USAGE;
		}
	}
	ret = cli_output_open(o, REPLAY_WHO, a->output, image_use(a), 0, inputs,
			      replay_inputs(a, inputs));
	if (ret) {
		if (base_fd >= 0)
			close(base_fd);
		return ret;
	}
	if (a->in_place)
		ret = 0;
	else if (base_fd >= 0)
		ret = copy_base(base_fd, base_size, o->fd, !o->tmp);
	else if (o->tmp)
		ret = ftruncate(o->fd, (off_t)need) ? -errno : 0;
	else
		ret = fl_zero_range(o->fd, 0, cli_file_size(o->fd), true);
	if (!ret && o->tmp && base_fd >= 0)
		ret = ftruncate(o->fd, (off_t)base_size) ? -errno : 0;
	if (base_fd >= 0)
		close(base_fd);
	if (ret) {
		fprintf(stderr, "flushlog %s: cannot prepare '%s': %s\n",
			cmd->name, a->output, strerror(-ret));
		cli_output_abort(o);
		return EXIT_BROKEN_RUN;
	}
	return 0;
}

static void
parse_args(const struct cli_command *cmd, int argc, char **argv,
	   struct replay_args *a)
{
	const char *arg;
	int opt;

	*a = (struct replay_args) { .check_order = true };
	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		switch (opt) {
		case OPT_OUTPUT:
			parse_output(cmd, a, arg);
			break;
		case OPT_TO:
			a->to = arg;
			break;
		case OPT_STATE:
			a->state = arg;
			break;
		case OPT_FROM:
			a->from = arg;
			break;
		case OPT_BASE:
			a->base = arg;
			break;
		case OPT_IN_PLACE:
			a->in_place = true;
			break;
		case OPT_NO_ORDER_CHECK:
			a->check_order = false;
			break;
		}
	}
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	a->quiet = cli_quiet;
	a->log_path = argv[cli_operand_index()];
	if (!a->nr_outputs)
		cli_usage_error(cmd, "missing --output IMAGE");
	if (a->nr_outputs > 1 && a->base)
		cli_usage_error(cmd, "--base is one starting image: give it one --output");
	for (unsigned int i = 0; i < a->nr_outputs; i++)
		for (unsigned int j = 0; j < i; j++)
			if (!strcmp(a->outputs[i].path, a->outputs[j].path))
				cli_usage_error(cmd, "--output %s: two images in one file",
						a->outputs[i].path);
	for (unsigned int i = 0; i < a->nr_outputs; i++)
		if (a->outputs[i].device < 0 && a->nr_outputs > 1)
			cli_usage_error(cmd, "--output %s: with several images, each is DEV=IMAGE",
					a->outputs[i].path);
	if (a->from && !a->in_place)
		cli_usage_error(cmd, "--from needs --in-place (IMAGE must already hold that state)");
	if (a->base && a->in_place)
		cli_usage_error(cmd, "--base and --in-place exclude each other");
	if (a->state && a->to)
		cli_usage_error(cmd, "--state and --to exclude each other");
	if (!a->to)
		a->to = "end";
}

/*
 * A dm-log-writes log does not record the device's size, only the
 * highest sector written: an existing larger IMAGE keeps its size, and
 * the size used is said.
 */
static uint64_t
image_size(const struct cli_command *cmd, const struct replay_args *a,
	   const struct fl_log *log)
{
	const struct fl_log_info *info = fl_log_info(log);
	const struct fl_device *dev = fl_log_device(log, a->device);
	uint64_t size = (dev ? dev->sectors : info->image_sectors) <<
			FLUSHLOG_SECTOR_SHIFT;
	struct stat st;

	if (info->data_size_known || a->in_place || a->base)
		return size;
	if (!stat(a->output, &st) && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size > size) {
		if (!a->quiet)
			fprintf(stderr, "flushlog %s: the log does not record the device's size: '%s' keeps its %" PRIu64 " bytes (the highest sector written ends at %" PRIu64 ")\n",
				cmd->name, a->output, (uint64_t)st.st_size, size);
		return (uint64_t)st.st_size;
	}
	if (!a->quiet)
		fprintf(stderr, "flushlog %s: the log does not record the device's size: '%s' is %" PRIu64 " bytes, up to the highest sector written\n",
			cmd->name, a->output, size);
	return size;
}

/*
 * Where the log and the image share a filesystem that clones ranges, the
 * image now shares blocks with the log: say so, since the space is not
 * the image's alone (writing to either copies the blocks it changes).
 */
static void
say_cloned(const struct cli_command *cmd, const struct replay_args *a,
	   const struct fl_replay *r)
{
	struct fl_replay_stats st;
	uint64_t total;

	if (fl_replay_stats(r, &st, sizeof(st)))
		return;
	total = st.cloned_bytes + st.copied_bytes + st.written_bytes;
	if (st.cloned_bytes)
		fprintf(stderr, "flushlog %s: %" PRIu64 " of %" PRIu64 " bytes of data cloned from the log: '%s' shares their blocks with it\n",
			cmd->name, st.cloned_bytes, total, a->output);
}

/* A state that keeps discards may need the base's old contents back. */
static int
apply_state(const struct replay_args *a, struct fl_log *log, int fd,
	    const struct fl_state *state, struct fl_error *err)
{
	int base_fd = -1, ret;

	if (fl_state_keeps_discards(state) && a->base) {
		base_fd = open(a->base, O_RDONLY | O_CLOEXEC);
		if (base_fd < 0) {
			ret = -errno;
			snprintf(err->msg, sizeof(err->msg), "cannot open base '%s': %s",
				 a->base, strerror(errno));
			err->source = FL_ERR_ARG;
			return ret;
		}
	}
	ret = fl_state_apply_base(log, fd, base_fd, state, err);
	if (base_fd >= 0)
		close(base_fd);
	return ret;
}

static int
replay(const struct cli_command *cmd, const struct replay_args *a,
       struct fl_log *log, uint64_t from, uint64_t to,
       const struct fl_state *state)
{
	struct fl_error err = { 0 };
	struct progress progress;
	struct cli_output o;
	struct fl_replay *r;
	int ret;

	ret = prepare_image(cmd, a, image_size(cmd, a, log), &o);
	if (ret)
		return ret;
	progress_init(&progress, "flushlog replay");
	ret = fl_replay_open_device(log, a->device, o.fd, &r, &err);
	if (!ret) {
		if (progress.on)
			fl_replay_set_progress(r, show_progress, &progress);
		ret = fl_replay_seek(r, from, &err);
		if (!ret)
			ret = fl_replay_to(r, to, &err);
		if (!ret && state)
			ret = apply_state(a, log, o.fd, state, &err);
		progress_clear(&progress);
		if (!ret && !a->quiet)
			say_cloned(cmd, a, r);
		if (ret && !o.tmp &&
		    (err.source == FL_ERR_LOG || err.source == FL_ERR_IO))
			fprintf(stderr, "flushlog %s: '%s' holds the state after the first %" PRIu64 " entries\n",
				cmd->name, a->output, fl_replay_position(r));
		else if (ret && !o.tmp)
			fprintf(stderr, "flushlog %s: the contents of '%s' are now undefined\n",
				cmd->name, a->output);
		fl_replay_close(r);
	}
	if (ret) {
		cli_output_abort(&o);
		return cli_report(cmd, &err);
	}
	return cli_output_close(&o);
}

/*
 * Each image names a device of the log, and in a log of several, which
 * (or all=); a crash state is always one image of every device, so a
 * bare IMAGE with --state is all of them (check's reproducers say so).
 */
static int
check_outputs(const struct cli_command *cmd, const struct replay_args *a,
	      const struct fl_log *log)
{
	uint32_t nr = fl_log_info(log)->nr_devices;

	for (unsigned int i = 0; i < a->nr_outputs; i++) {
		long dev = a->outputs[i].device;

		if (dev < 0 && nr > 1 && !a->state) {
			fprintf(stderr, "flushlog %s: the log holds %u devices: name the image of each as DEV=IMAGE (0 to %u), or all=IMAGE for one image of them all\n",
				cmd->name, nr, nr - 1);
			return EXIT_USAGE;
		}
		if (dev >= 0 && dev != FL_ALL_DEVICES && a->state && nr > 1) {
			fprintf(stderr, "flushlog %s: --state builds one image of every device: name it all=IMAGE\n",
				cmd->name);
			return EXIT_USAGE;
		}
		if (dev >= (long)nr && dev != FL_ALL_DEVICES) {
			fprintf(stderr, "flushlog %s: --output %ld=%s: the log holds %u device%s\n",
				cmd->name, dev, a->outputs[i].path, nr,
				nr == 1 ? "" : "s");
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* Refused before any image is written: a refusal changes nothing. */
static int
check_image(const struct replay_args *a, const char *path)
{
	struct cli_input inputs[2];

	return cli_output_check(REPLAY_WHO, path, image_use(a), 0, inputs,
				replay_inputs(a, inputs));
}

static int
run_replay(const struct cli_command *cmd, int argc, char **argv)
{
	struct fl_error err = { 0 };
	uint64_t from = 0, to;
	struct fl_state *state = NULL;
	struct replay_args a;
	struct fl_log *log;
	int ret;

	parse_args(cmd, argc, argv, &a);
	ret = cli_open_ordered_log(cmd, a.log_path, a.check_order, &log);
	if (ret)
		return ret;
	if (a.state && fl_state_parse(log, a.state, &state, &err)) {
		fl_log_close(log);
		return cli_report(cmd, &err);
	}
	ret = a.state ? 0 : cli_parse_point(cmd, log, "to", a.to, &to);
	if (!ret && a.from)
		ret = cli_parse_point(cmd, log, "from", a.from, &from);
	if (ret) {
		fl_state_free(state);
		fl_log_close(log);
		return ret;
	}
	if (a.state)
		to = fl_state_base(state);
	if (a.state && fl_state_keeps_discards(state) && a.in_place) {
		fl_state_free(state);
		fl_log_close(log);
		cli_usage_error(cmd, "--state %s keeps what the discards overwrote, which --in-place no longer has: build it into a new image",
				a.state);
	}
	if (to < from) {
		fl_state_free(state);
		fl_log_close(log);
		cli_usage_error(cmd, "--%s %s comes before --from %s",
				a.state ? "state" : "to", a.state ? a.state : a.to,
				a.from);
	}
	ret = check_outputs(cmd, &a, log);
	for (unsigned int i = 0; i < a.nr_outputs && !ret; i++)
		ret = check_image(&a, a.outputs[i].path);
	for (unsigned int i = 0; i < a.nr_outputs && !ret; i++) {
		a.output = a.outputs[i].path;
		a.device = a.outputs[i].device < 0 ? FL_ALL_DEVICES
						    : (uint32_t)a.outputs[i].device;
		ret = replay(cmd, &a, log, from, to, state);
	}
	fl_state_free(state);
	fl_log_close(log);
	return ret;
}

const struct cli_command cmd_replay = {
	.name = "replay",
	.synopsis = "-o [DEV=|all=]IMAGE... [--to POINT | --state NAME] [--base BASE | --in-place [--from POINT]] [--no-order-check] LOG",
	.summary = "Rebuild the data device's contents at a crash point.",
	.description =
		"POINT is one of: start, end, entry:N (after entry N), flush:K (the\n"
		"K-th flush or FUA point), point:K (the K-th crash point of 'flushlog\n"
		"points', point:0 the start), mark:LABEL (the first mark with that\n"
		"label; \\xNN in LABEL is the byte NN, as points and dump show a byte\n"
		"that is not UTF-8, where no label is LABEL as written).  Discards,\n"
		"write-zeroes and secure erases leave zeroes.  Every data checksum is\n"
		"checked before its data is used.  Where the log and IMAGE share a file\n"
		"system that clones ranges (XFS, btrfs), data block aligned in the log is\n"
		"cloned, not copied: a note says so.  IMAGE follows the output rule of\n"
		"flushlog(1) OUTPUTS: a regular file (or the one a symlink names) is\n"
		"replaced only when the whole replay succeeded; a block device is written\n"
		"in place, opened exclusively (not while mounted); '-', a character device\n"
		"and a FIFO are refused, as an image needs seeking, and so are the log\n"
		"and the base themselves, or a device they are on.  Without --base it starts as zeroes\n"
		"(a sparse file) of the logged device's size.  --in-place applies\n"
		"the entries to IMAGE as it is: with --from, only those after POINT.\n"
		"--state NAME builds one of the crash states of 'flushlog check --states':\n"
		"N (the first N entries), N+E,F (and entries E and F, which a volatile\n"
		"write cache may have kept while losing those between), N~T:A+L (and\n"
		"sectors A to A+L-1 of entry T, a torn write), and a final % (every\n"
		"discard among them kept its old data: not with --in-place).\n"
		"The log must be in durability order (checked from its ticks, as 'flushlog\n"
		"info' does): a misordered one is refused with the entry named, exit 3;\n"
		"--no-order-check is for logs known to be misordered, whose states may be\n"
		"wrong.  A dm-log-writes log does not record the device's size: the image\n"
		"ends at the highest sector written, or keeps the size of a larger IMAGE\n"
		"that exists; the size used is said on stderr.  On a terminal, a\n"
		"progress line on stderr shows how much has been replayed.",
	.example =
		"  flushlog replay -o state.img --to flush:12 log.img\n"
		"  flushlog replay -o dev.img --base before.img --to mark:after-fsync log.img\n"
		"  flushlog replay --in-place --from flush:12 --to flush:13 -o state.img log.img\n"
		"  flushlog replay -o state.img --state 1234+1240,1242 log.img\n"
		"  flushlog replay -o 0=data.img -o 1=journal.img --to flush:7 log.img",
	.options = replay_options,
	.run = run_replay,
};
