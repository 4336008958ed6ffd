// SPDX-License-Identifier: GPL-2.0
/* Option parsing, usage text and error reporting shared by the commands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli.h"
#include "encode.h"

#define MAX_OPTIONS 32

bool cli_quiet;

/*
 * Options every command has, after its own: parsed and shown in its help
 * by the same table, so that each means one thing everywhere.
 */
enum { COMMON_QUIET, COMMON_VERSION, COMMON_HELP, NR_COMMON };

static const struct cli_option common_options[NR_COMMON] = {
	[COMMON_QUIET] = { "quiet", 'q', NULL,
			   "no progress line or notes on stderr (errors and warnings stay)" },
	[COMMON_VERSION] = { "version", 'V', NULL, "print the version and exit" },
	[COMMON_HELP] = { "help", 'h', NULL, "show this help and exit" },
};

static void
usage_line(FILE *out, const struct cli_option *o)
{
	char left[64];

	if (o->short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name,
			 o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
	fprintf(out, "  %-26s %s\n", left, o->help);
}

void
cli_usage(const struct cli_command *cmd, FILE *out)
{
	fprintf(out, "usage: flushlog %s %s\n\n%s\n", cmd->name, cmd->synopsis,
		cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s\n", cmd->description);
	fprintf(out, "\noptions:\n");
	for (const struct cli_option *o = cmd->options; o->name; o++)
		usage_line(out, o);
	for (int i = 0; i < NR_COMMON; i++)
		usage_line(out, &common_options[i]);
	if (cmd->example)
		fprintf(out, "\nexample:\n%s\n", cmd->example);
	if (cmd->exit_status)
		fprintf(out, "\n%s\n", cmd->exit_status);
	else
		fprintf(out, "\nexit status (flushlog(1) EXIT STATUS): 0 ok, 1 a state failed, 2 usage error\nor output refused, 3 log refused, 4 could not be done, 5 incomplete\n");
}

void
cli_version(FILE *out)
{
	fprintf(out, "flushlog %s (libflushlog %s; reads dm-flushlog logs of format versions %d to %d, dm-log-writes logs of version %d)\n",
		FLUSHLOG_VERSION_STRING, fl_version(),
		FLUSHLOG_VERSION_DURABILITY_ORDER, FLUSHLOG_VERSION,
		FL_LOG_WRITES_VERSION);
}

void
cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "flushlog %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see 'flushlog %s --help')\n", cmd->name);
	exit(cmd->usage_status ? cmd->usage_status : EXIT_USAGE);
}

void
cli_warn(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "flushlog %s: warning: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* getopt's tables: a command's options, then the common ones. */
static void
getopt_tables(const struct cli_command *cmd, struct option *longopts,
	      char *shortopts)
{
	size_t n = 0, s = 0;

	shortopts[s++] = ':';	/* a missing argument is told apart */
	for (const struct cli_option *o = cmd->options; o->name; o++, n++) {
		longopts[n] = (struct option) {
			o->name, o->arg ? required_argument : no_argument,
			NULL, 256 + (int)n,
		};
		if (o->short_name) {
			shortopts[s++] = (char)o->short_name;
			if (o->arg)
				shortopts[s++] = ':';
		}
	}
	for (int i = 0; i < NR_COMMON; i++) {
		longopts[n++] = (struct option) {
			common_options[i].name, no_argument, NULL,
			common_options[i].short_name,
		};
		shortopts[s++] = (char)common_options[i].short_name;
	}
	longopts[n] = (struct option) { 0 };
	shortopts[s] = '\0';
}

int
cli_next_option(const struct cli_command *cmd, int argc, char **argv,
		const char **arg)
{
	struct option longopts[MAX_OPTIONS + NR_COMMON + 1];
	char shortopts[3 * (MAX_OPTIONS + NR_COMMON) + 2];
	int c, index = -1;

	getopt_tables(cmd, longopts, shortopts);
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, shortopts, longopts, &index);
		if (c == 'q')
			cli_quiet = true;
		else
			break;
	}
	if (c == -1)
		return -1;
	if (c == 'h') {
		cli_usage(cmd, stdout);
		exit(EXIT_OK);
	}
	if (c == 'V') {
		cli_version(stdout);
		exit(EXIT_OK);
	}
	if (c == '?' || c == ':') {
		if (optopt && optopt < 256)
			cli_usage_error(cmd, "unknown option or missing argument: '-%c'",
					optopt);
		cli_usage_error(cmd, "unknown option or missing argument: '%s'",
				argv[optind - 1]);
	}
	*arg = optarg;
	if (c >= 256)
		return c - 256;
	for (int n = 0; cmd->options[n].name; n++)
		if (cmd->options[n].short_name == c)
			return n;
	cli_usage_error(cmd, "unexpected option '-%c'", c);
}

int
cli_operand_index(void)
{
	return optind;
}

int
cli_parse_u64(const struct cli_command *cmd, const char *opt, const char *s,
	      uint64_t *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		cli_usage_error(cmd, "--%s takes a number, not '%s'", opt, s);
	*out = strtoull(s, &end, 10);
	if (errno || *end)
		cli_usage_error(cmd, "--%s takes a number, not '%s'", opt, s);
	return 0;
}

int
cli_report(const struct cli_command *cmd, const struct fl_error *err)
{
	/* a message may quote a label: escaped, as everything else shows it */
	fprintf(stderr, "flushlog %s: ", cmd->name);
	cli_print_escaped(stderr, err->msg);
	fputc('\n', stderr);
	switch (err->source) {
	case FL_ERR_LOG:
	case FL_ERR_IO:		/* unreadable: as corrupt, exit 3 */
		return EXIT_BAD_LOG;
	case FL_ERR_ARG:
		return EXIT_USAGE;
	default:		/* the image, memory: the work could not be done */
		return EXIT_BROKEN_RUN;
	}
}

static void
warn_torn(const struct cli_command *cmd, const char *path,
	  const struct fl_log *log)
{
	const struct fl_log_info *info = fl_log_info(log);

	if (info->torn)
		cli_warn(cmd, "'%s' was not closed and is torn at entry %" PRIu64 " (offset %" PRIu64 "): %s; using the %" PRIu64 " entries before it",
			 path, info->torn_entry, info->torn_offset,
			 info->torn_reason, info->nr_entries);
}

struct open_call {
	const char *path;
	unsigned int flags;
	struct fl_log **log;
	struct fl_error *err;
};

static int
call_open(void *arg)
{
	struct open_call *c = arg;

	return fl_log_open(c->path, c->flags, c->log, c->err);
}

/*
 * fl_log_open() reads every entry header of the log, and with
 * FL_OPEN_VERIFY_DATA every byte: minutes for a log of many gigabytes,
 * which the progress line shows.
 */
static int
open_with_progress(const struct cli_command *cmd, const char *path,
		   unsigned int flags, struct fl_log **log, struct fl_error *err)
{
	struct open_call call = { path, flags, log, err };
	char who[64], what[PATH_MAX + 32], *shown;
	struct progress p;
	uint64_t size = 0;
	int fd;

	snprintf(who, sizeof(who), "flushlog %s", cmd->name);
	progress_init(&p, who);
	if (!p.on)
		return call_open(&call);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		size = cli_file_size(fd);
		close(fd);
	}
	shown = cli_escape(path, strlen(path), ESC_CONTROL);
	snprintf(what, sizeof(what), "%s '%s'",
		 flags & FL_OPEN_VERIFY_DATA ? "verifying" : "reading",
		 shown ? shown : path);
	free(shown);
	return progress_while(&p, what, size, call_open, &call);
}

int
cli_open_log(const struct cli_command *cmd, const char *path,
	     unsigned int flags, struct fl_log **log)
{
	struct fl_error err = { 0 };

	if (open_with_progress(cmd, path, flags, log, &err))
		return cli_report(cmd, &err);
	warn_torn(cmd, path, *log);
	return EXIT_OK;
}

int
cli_open_ordered_log(const struct cli_command *cmd, const char *path,
		     bool check_order, struct fl_log **log)
{
	struct fl_error err = { 0 }, plain = { 0 };

	if (!check_order)
		return cli_open_log(cmd, path, 0, log);
	if (!open_with_progress(cmd, path, FL_OPEN_CHECK_ORDER, log, &err)) {
		warn_torn(cmd, path, *log);
		return EXIT_OK;
	}
	/* one that opens without the check is well formed but misordered */
	if (err.source == FL_ERR_LOG && !fl_log_open(path, 0, log, &plain)) {
		fl_log_close(*log);
		*log = NULL;
		fprintf(stderr, "flushlog %s: '%s' is not in durability order: %s\n"
			"(its crash states would be wrong; --no-order-check uses it anyway)\n",
			cmd->name, path, err.msg);
		return EXIT_BAD_LOG;
	}
	return cli_report(cmd, &err);
}

void
cli_set_error(struct fl_error *err, enum fl_error_source source,
	      const char *fmt, ...)
{
	va_list ap;

	err->source = source;
	err->entry = FL_NO_ENTRY;
	err->offset = FL_NO_ENTRY;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/*
 * fl_log_resolve_point(), and where a "mark:" spec names no mark as
 * given, the spec with \xNN made bytes: the label as the CLI shows a byte
 * that is not UTF-8 (or, in text, a control character).  A label that
 * holds those four characters themselves is found first.
 */
int
cli_resolve_point(const struct fl_log *log, const char *spec,
		  uint64_t *nr_applied, struct fl_error *err)
{
	struct fl_error again = { 0 };
	char *bytes;
	int ret;

	ret = fl_log_resolve_point(log, spec, nr_applied, err);
	if (!ret || strncmp(spec, "mark:", 5) || !strstr(spec, "\\x"))
		return ret;
	bytes = cli_unescape(spec);
	if (bytes && strcmp(bytes, spec) &&
	    !fl_log_resolve_point(log, bytes, nr_applied, &again))
		ret = 0;
	free(bytes);
	return ret;
}

int
cli_parse_point(const struct cli_command *cmd, const struct fl_log *log,
		const char *opt, const char *spec, uint64_t *position)
{
	struct fl_error err = { 0 };

	if (!cli_resolve_point(log, spec, position, &err))
		return 0;
	fprintf(stderr, "flushlog %s: --%s: ", cmd->name, opt);
	cli_print_escaped(stderr, err.msg);
	fputc('\n', stderr);
	return err.source == FL_ERR_NOMEM ? EXIT_FAILED : EXIT_USAGE;
}

int
cli_check_range(const struct cli_command *cmd, const char *from,
		const char *to, uint64_t first, uint64_t last)
{
	if (last >= first)
		return 0;
	fprintf(stderr, "flushlog %s: --to ", cmd->name);
	cli_print_escaped(stderr, to ? to : "end");
	fprintf(stderr, " comes before --from ");
	cli_print_escaped(stderr, from ? from : "start");
	fputc('\n', stderr);
	return EXIT_USAGE;
}

int
cli_parse_point_range(const struct cli_command *cmd, const struct fl_log *log,
		      const char *from, const char *to, uint64_t *first,
		      uint64_t *last)
{
	int ret = 0;

	*first = 0;
	*last = fl_log_info(log)->nr_entries;
	if (from)
		ret = cli_parse_point(cmd, log, "from", from, first);
	if (!ret && to)
		ret = cli_parse_point(cmd, log, "to", to, last);
	return ret ? ret : cli_check_range(cmd, from, to, *first, *last);
}

/* Does "mark:LABEL" name this point, or an earlier mark of that label? */
static bool
first_mark_with_label(const struct fl_log *log, const struct fl_point *p)
{
	char spec[4096 + 8];	/* a dm-log-writes label may fill a sector */
	struct fl_error err;
	uint64_t first;

	snprintf(spec, sizeof(spec), "mark:%s",
		 fl_log_label(log, p->nr_applied - 1));
	return !fl_log_resolve_point(log, spec, &first, &err) &&
	       first == p->nr_applied;
}

void
cli_point_spec(const struct fl_log *log, const struct fl_point *p, char *buf,
	       size_t len)
{
	if (p->kind == FL_POINT_END)
		snprintf(buf, len, "end");
	else if (p->kind == FL_POINT_START)	/* or --from entry:N's */
		cli_position_spec(p->nr_applied, buf, len);
	else if (p->kind == FL_POINT_MARK && first_mark_with_label(log, p))
		snprintf(buf, len, "mark:%s",
			 fl_log_label(log, p->nr_applied - 1));
	else if (p->kind == FL_POINT_MARK)	/* mark:LABEL names the first */
		snprintf(buf, len, "point:%" PRIu64, p->number);
	else
		snprintf(buf, len, "flush:%" PRIu64, p->flush_number);
}

void
cli_position_spec(uint64_t position, char *buf, size_t len)
{
	if (position)
		snprintf(buf, len, "entry:%" PRIu64, position - 1);
	else
		snprintf(buf, len, "start");
}

int
cli_flush_stdout(const struct cli_command *cmd)
{
	if (!fflush(stdout) && !ferror(stdout))
		return EXIT_OK;
	fprintf(stderr, "flushlog %s: cannot write to stdout: %s\n", cmd->name,
		strerror(errno));
	return EXIT_BROKEN_RUN;
}

uint64_t
cli_file_size(int fd)
{
	struct stat st;
	uint64_t size = 0;

	if (fstat(fd, &st) < 0)
		return 0;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, &size) < 0 ? 0 : size;
	return st.st_size;
}

/*
 * The letters blktrace gives the request dm-flushlog saw, as the kernel's
 * blk_fill_rwbs() (kernel/trace/blktrace.c) writes them: F first for
 * REQ_PREFLUSH, then the operation (W write, D discard, DE secure erase,
 * N any other: write-zeroes), then F for REQ_FUA, S for REQ_SYNC, M for
 * REQ_META.  The target logs a FLUSH entry for an empty REQ_OP_WRITE with
 * REQ_PREFLUSH (a bio-based target never sees REQ_OP_FLUSH), so a flush is
 * FW, and FWS when it was sync.  A mark is no request: blktrace's letters
 * for a message, N (fill_rwbs()).
 */
void
rwbs(const struct fl_entry *e, char buf[8])
{
	bool preflush = e->flags & FLUSHLOG_F_PREFLUSH ||
			e->op == FLUSHLOG_OP_FLUSH;
	int n = 0;

	if (e->op == FLUSHLOG_OP_MARK) {
		strcpy(buf, "N");
		return;
	}
	if (preflush)
		buf[n++] = 'F';
	switch (e->op) {
	case FLUSHLOG_OP_WRITE:
	case FLUSHLOG_OP_FLUSH:
		buf[n++] = 'W';
		break;
	case FLUSHLOG_OP_DISCARD:
		buf[n++] = 'D';
		break;
	case FLUSHLOG_OP_SECURE_ERASE:
		buf[n++] = 'D';
		buf[n++] = 'E';
		break;
	default:		/* write-zeroes, or an op this version does not know */
		buf[n++] = 'N';
	}
	if (e->flags & FLUSHLOG_F_FUA)
		buf[n++] = 'F';
	if (e->flags & FLUSHLOG_F_SYNC)
		buf[n++] = 'S';
	if (e->flags & FLUSHLOG_F_META)
		buf[n++] = 'M';
	buf[n] = '\0';
}
