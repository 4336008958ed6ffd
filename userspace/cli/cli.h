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

#ifndef FLUSHLOG_VERSION_STRING
#define FLUSHLOG_VERSION_STRING "0.1"
#endif

/*
 * The exit status of flushlog, of fl-workload and of scripts/crashtest:
 * one table, documented in flushlog(1) EXIT STATUS (and crashtest's
 * --help).  Where two apply, the first of 2, 3, 4, 1, 5 wins: a run that
 * went wrong says so before any verdict it reached.
 */
enum cli_exit {
	EXIT_OK = 0,		/* done; every state checked passed */
	EXIT_FAILED = 1,	/* a verdict: a state failed its check or timed out */
	EXIT_USAGE = 2,		/* the command line is wrong, or an output refused */
	EXIT_BAD_LOG = 3,	/* the log is refused: corrupt, unreadable, misordered */
	EXIT_BROKEN_RUN = 4,	/* the work could not be done: I/O, no space, no checker */
	EXIT_INCOMPLETE = 5,	/* some states have no result (merge, crashtest --timeout) */
	EXIT_NOT_HERE = 77,	/* crashtest: the filesystem cannot be tested here (a skip) */
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
	/*
	 * A drop-in for another tool keeps that tool's exit status:
	 * usage_status for a bad command line (0: EXIT_USAGE), and the
	 * exit status line of --help (NULL: flushlog's table).
	 */
	int usage_status;
	const char *exit_status;
};

extern const struct cli_command cmd_info, cmd_dump, cmd_points, cmd_replay,
	cmd_check, cmd_merge, cmd_plot, cmd_replay_log;

/*
 * -q, --quiet: every command's, set while its options are parsed.  Quiet,
 * or with stderr not a terminal, a command shows no progress; quiet, it
 * prints no notes either.  Warnings and errors are printed always.
 */
extern bool cli_quiet;

/*
 * Next option of argv: its index in cmd->options, or -1 at the end of the
 * options (then cli_operand_index() is the first operand).  The options
 * every command has are handled here: --quiet sets cli_quiet, --help
 * prints the usage and --version the version, each exiting 0; an unknown
 * option prints the error and exits 2.
 */
int cli_next_option(const struct cli_command *cmd, int argc, char **argv,
		    const char **arg);
int cli_operand_index(void);
void cli_usage(const struct cli_command *cmd, FILE *out);
void cli_version(FILE *out);
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

/* fl_log_resolve_point(), taking a label as the CLI shows it too. */
int cli_resolve_point(const struct fl_log *log, const char *spec,
		      uint64_t *nr_applied, struct fl_error *err);
/*
 * POINT, the one grammar of every command's --from and --to (flushlog(1),
 * POINT SPECIFICATIONS): start, end, entry:N, flush:K, point:K or
 * mark:LABEL, resolved to its position, the number of entries its state
 * applies.  A point the log does not have is an error naming the ones it
 * has, never clipped: printed as "flushlog CMD: --OPT: why", and
 * EXIT_USAGE returned (EXIT_FAILED out of memory); 0 otherwise.
 */
int cli_parse_point(const struct cli_command *cmd, const struct fl_log *log,
		    const char *opt, const char *spec, uint64_t *position);
/*
 * --from FROM and --to TO (NULL where not given: the start, the end) as
 * positions first and last, through cli_parse_point(); a --to before the
 * --from is an error too (cli_check_range()).
 */
int cli_parse_point_range(const struct cli_command *cmd,
			  const struct fl_log *log, const char *from,
			  const char *to, uint64_t *first, uint64_t *last);
/* EXIT_USAGE, said, if last comes before first; else 0. */
int cli_check_range(const struct cli_command *cmd, const char *from,
		    const char *to, uint64_t first, uint64_t last);
/*
 * The spec that names a point for --to: flush:K, mark:LABEL, point:N, end;
 * the label's bytes as they are, to be escaped where it is shown.
 */
void cli_point_spec(const struct fl_log *log, const struct fl_point *p,
		    char *buf, size_t len);
/* The POINT of a position: start, or entry:N for the state after entry N. */
void cli_position_spec(uint64_t position, char *buf, size_t len);
/* stdout flushed: EXIT_OK, or EXIT_BROKEN_RUN with the error said. */
int cli_flush_stdout(const struct cli_command *cmd);
/* The size of a regular file or a block device; 0 if unknown. */
uint64_t cli_file_size(int fd);
__attribute__((format(printf, 3, 4))) void
cli_set_error(struct fl_error *err, enum fl_error_source source,
	      const char *fmt, ...);

/*
 * Outputs: every file written under a name the user gave, by one rule
 * (output.c says it): a regular file is replaced whole through a
 * temporary, a block device written in place, a symlink written through,
 * "-" is stdout, and an output that is one of the inputs is refused.
 */
enum cli_output_use {
	OUTPUT_STREAM,		/* text written once, front to back: a report */
	OUTPUT_IMAGE,		/* a new disk image: it needs seeking */
	OUTPUT_IMAGE_IN_PLACE,	/* an image that exists, updated where it is */
};

#define OUTPUT_APPEND		(1U << 0)	/* O_APPEND: writers share it */
#define OUTPUT_NOT_STDOUT	(1U << 1)	/* stdout has other output */

/* A file the command reads, which no output may be. */
struct cli_input {
	const char *what;	/* "the log", "the base" */
	const char *path;	/* NULL: none */
};

struct cli_output {
	const char *who;	/* "flushlog replay": its messages begin so */
	const char *path;	/* as the user named it */
	char *dest;		/* what is written: path, or its symlink's file */
	char *tmp;		/* renamed over dest when closed; or NULL */
	int fd;
	FILE *file;		/* cli_output_stdio()'s */
	bool is_stdout;
	enum {
		OUTPUT_TO_FILE,		/* a regular file, through tmp if set */
		OUTPUT_TO_BLOCK,	/* a block device, in place, O_EXCL */
		OUTPUT_TO_STREAM,	/* stdout, a character device, a FIFO */
	} kind;
};

/*
 * Would path be written, for use?  Nothing is created or opened for
 * writing: 0, or the exit code (EXIT_USAGE for an output refused,
 * EXIT_BROKEN_RUN for one that cannot be looked at), the message printed.
 */
int cli_output_check(const char *who, const char *path,
		     enum cli_output_use use, unsigned int flags,
		     const struct cli_input *inputs, size_t nr_inputs);
/* Checked, then opened for writing: 0, or the exit code, said. */
int cli_output_open(struct cli_output *o, const char *who, const char *path,
		    enum cli_output_use use, unsigned int flags,
		    const struct cli_input *inputs, size_t nr_inputs);
/* The output as a FILE (stdout for "-"), closed by cli_output_close(). */
FILE *cli_output_stdio(struct cli_output *o);
/*
 * Done: flushed (a block device synced) and closed, the temporary
 * renamed over the file.  0, or EXIT_BROKEN_RUN, said, and then aborted.
 */
int cli_output_close(struct cli_output *o);
/* Given up: closed, the temporary removed, the file as it was. */
void cli_output_abort(struct cli_output *o);
/* Is path one that is written as a stream ("-", a character device, a FIFO)? */
bool cli_output_is_stream(const char *path);

/* The RWBS letters of blktrace for an entry (at most 5, and a NUL). */
void rwbs(const struct fl_entry *e, char buf[8]);

/*
 * A progress line on stderr, for work that can take long: shown only on a
 * terminal and without --quiet, at most a few times a second, and erased
 * before anything else is printed (progress_clear()) and at the end.
 */
struct progress {
	const char *who;	/* "flushlog check" */
	bool on;
	bool shown;		/* a line is on the terminal */
	double start, drawn;	/* when it began, when last drawn */
	double delay;		/* progress_while(): no line before this */
};

void progress_init(struct progress *p, const char *who);
__attribute__((format(printf, 3, 4))) void
progress_show(struct progress *p, bool now, const char *fmt, ...);
void progress_clear(struct progress *p);
/* " ETA 1m05s" from how long done of total took; "" until it can tell. */
void progress_eta(const struct progress *p, uint64_t done, uint64_t total,
		  char *buf, size_t len);
/* CLOCK_MONOTONIC, in seconds. */
double progress_now(void);

/*
 * While fn(arg) runs (reading a log, planning states), a progress line
 * says what: with bytes (the log's size), how much the process read so
 * far; without, how long it has taken.  Returns fn's value.
 */
int progress_while(struct progress *p, const char *what, uint64_t bytes,
		   int (*fn)(void *arg), void *arg);

#endif /* FLUSHLOG_CLI_H */
