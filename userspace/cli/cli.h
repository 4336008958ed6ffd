/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flushlog command line: each subcommand is a struct cli_command whose
 * option table drives both parsing and the --help text, so the two cannot
 * drift apart.
 */
#ifndef FLUSHLOG_CLI_H
#define FLUSHLOG_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "flushlog.h"

enum cli_exit {
	EXIT_OK = 0,
	EXIT_FAILED = 1,	/* a check failed, or the work could not be done */
	EXIT_USAGE = 2,		/* the command line is wrong */
	EXIT_BAD_LOG = 3,	/* the log is corrupt or unreadable */
};

struct cli_option {
	const char *name;	/* long name, without "--" */
	int short_name;		/* 0 if none */
	const char *arg;	/* the argument's name, NULL for a switch */
	const char *help;
};

struct cli_command {
	const char *name;
	const char *synopsis;	/* arguments after the command's name */
	const char *summary;	/* one line */
	const char *description; /* paragraphs for --help */
	const char *example;
	const struct cli_option *options;	/* ends with a NULL name */
	int (*run)(const struct cli_command *cmd, int argc, char **argv);
};

extern const struct cli_command cmd_info, cmd_dump, cmd_points, cmd_replay,
	cmd_check, cmd_merge, cmd_plot;

/*
 * Next option of argv: its index in cmd->options, or -1 at the end of the
 * options (then *optind_out is the first operand).  --help prints the
 * usage and exits 0; an unknown option prints the error and exits 2.
 */
int cli_next_option(const struct cli_command *cmd, int argc, char **argv,
		    const char **arg);
int cli_operand_index(void);
void cli_usage(const struct cli_command *cmd, FILE *out);
__attribute__((format(printf, 2, 3), noreturn)) void
cli_usage_error(const struct cli_command *cmd, const char *fmt, ...);
int cli_parse_u64(const struct cli_command *cmd, const char *opt,
		  const char *s, uint64_t *out);

/* Print a library error and return the exit code that fits it. */
int cli_report(const struct cli_command *cmd, const struct fl_error *err);
/* Open a log, reporting a torn tail on stderr. */
int cli_open_log(const struct cli_command *cmd, const char *path,
		 unsigned int flags, struct fl_log **log);
/*
 * Open a log to build crash states from: with check_order, one not in
 * durability order is refused, the entry named, with EXIT_BAD_LOG.
 */
int cli_open_ordered_log(const struct cli_command *cmd, const char *path,
			 bool check_order, struct fl_log **log);
void cli_warn(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The spec that names a point for --to: flush:K, mark:LABEL, point:N, end. */
void cli_point_spec(const struct fl_log *log, const struct fl_point *p,
		    char *buf, size_t len);
/* Copy src's data into dst at the same offsets, skipping src's holes. */
uint64_t cli_file_size(int fd);
__attribute__((format(printf, 3, 4))) void
cli_set_error(struct fl_error *err, enum fl_error_source source,
	      const char *fmt, ...);

void json_string(FILE *out, const char *s);
void cli_xml_text(FILE *out, const char *s);
void rwbs(const struct fl_entry *e, char buf[8]);

#endif /* FLUSHLOG_CLI_H */
