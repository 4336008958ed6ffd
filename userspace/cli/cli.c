// SPDX-License-Identifier: GPL-2.0
/* Option parsing, usage text and error reporting shared by the commands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli.h"

#define MAX_OPTIONS 32

void
cli_usage(const struct cli_command *cmd, FILE *out)
{
	const struct cli_option *o;

	fprintf(out, "usage: flushlog %s %s\n\n%s\n", cmd->name, cmd->synopsis,
		cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s\n", cmd->description);
	fprintf(out, "\noptions:\n");
	for (o = cmd->options; o->name; o++) {
		char left[64];

		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s",
				 o->short_name, o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-26s %s\n", left, o->help);
	}
	fprintf(out, "  %-26s %s\n", "-h, --help", "show this help and exit");
	if (cmd->example)
		fprintf(out, "\nexample:\n%s\n", cmd->example);
	fprintf(out, "\nexit status: 0 ok, 1 failed, 2 usage error, 3 corrupt or unreadable log\n");
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
	exit(EXIT_USAGE);
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

int
cli_next_option(const struct cli_command *cmd, int argc, char **argv,
		const char **arg)
{
	struct option longopts[MAX_OPTIONS + 2];
	char shortopts[3 * MAX_OPTIONS + 4] = ":h";
	size_t n = 0, s = 2;
	int c, index = -1;

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
	longopts[n++] = (struct option) { "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option) { 0 };
	shortopts[s] = '\0';

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, &index);
	if (c == -1)
		return -1;
	if (c == 'h') {
		cli_usage(cmd, stdout);
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
	for (n = 0; cmd->options[n].name; n++)
		if (cmd->options[n].short_name == c)
			return (int)n;
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
	fprintf(stderr, "flushlog %s: %s\n", cmd->name, err->msg);
	switch (err->source) {
	case FL_ERR_LOG:
	case FL_ERR_IO:		/* unreadable: as corrupt, exit 3 */
		return EXIT_BAD_LOG;
	case FL_ERR_ARG:
		return EXIT_USAGE;
	default:
		return EXIT_FAILED;
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

int
cli_open_log(const struct cli_command *cmd, const char *path,
	     unsigned int flags, struct fl_log **log)
{
	struct fl_error err = { 0 };

	if (fl_log_open(path, flags, log, &err))
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
	if (!fl_log_open(path, FL_OPEN_CHECK_ORDER, log, &err)) {
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

/* Does "mark:LABEL" name this point, or an earlier mark of that label? */
static bool
first_mark_with_label(const struct fl_log *log, const struct fl_point *p)
{
	char spec[FLUSHLOG_LABEL_MAX + 8];
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
	else if (p->kind == FL_POINT_START && p->nr_applied)	/* --from entry:N */
		snprintf(buf, len, "entry:%" PRIu64, p->nr_applied - 1);
	else if (p->kind == FL_POINT_START)
		snprintf(buf, len, "start");
	else if (p->kind == FL_POINT_MARK && first_mark_with_label(log, p))
		snprintf(buf, len, "mark:%s",
			 fl_log_label(log, p->nr_applied - 1));
	else if (p->kind == FL_POINT_MARK)	/* mark:LABEL names the first */
		snprintf(buf, len, "point:%" PRIu64, p->number);
	else
		snprintf(buf, len, "flush:%" PRIu64, p->flush_number);
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

/* s as XML text or attribute value; other control characters become '?'. */
void
cli_xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			fputc('?', out);
		else
			fputc(c, out);
	}
}

void
json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/*
 * blkparse's RWBS letters: F first for a preflush, then the operation (W
 * write, D discard, Z write-zeroes, E secure erase, N none), F for FUA,
 * S sync, M meta.  A mark is "K".
 */
void
rwbs(const struct fl_entry *e, char buf[8])
{
	static const char op_letter[] = {
		[FLUSHLOG_OP_WRITE] = 'W',
		[FLUSHLOG_OP_DISCARD] = 'D',
		[FLUSHLOG_OP_WRITE_ZEROES] = 'Z',
		[FLUSHLOG_OP_SECURE_ERASE] = 'E',
		[FLUSHLOG_OP_FLUSH] = 'N',
		[FLUSHLOG_OP_MARK] = 'K',
	};
	int n = 0;

	if (e->flags & FLUSHLOG_F_PREFLUSH || e->op == FLUSHLOG_OP_FLUSH)
		buf[n++] = 'F';
	buf[n++] = e->op < sizeof(op_letter) && op_letter[e->op] ?
		   op_letter[e->op] : '?';
	if (e->flags & FLUSHLOG_F_FUA)
		buf[n++] = 'F';
	if (e->flags & FLUSHLOG_F_SYNC)
		buf[n++] = 'S';
	if (e->flags & FLUSHLOG_F_META)
		buf[n++] = 'M';
	buf[n] = '\0';
}
