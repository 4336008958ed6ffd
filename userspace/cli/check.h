/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flushlog check, shared between its files: cmd-check.c parses the options
 * and drives a run, check-run.c is the engine (work folder, signals,
 * checkers, state choice), check-report.c saves failures and writes and
 * reads the reports.
 */
#ifndef FLUSHLOG_CHECK_H
#define FLUSHLOG_CHECK_H

#include <limits.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "cli.h"
#include "encode.h"

/* A kind of crash point as a bit of check_args.kinds. */
#define KIND_BIT(k)	FL_POINT_BIT(k)

/* --images: where a checker's state is. */
enum image_mode {
	IMAGES_AUTO,		/* in place until a checker writes to one */
	IMAGES_IN_PLACE,	/* the job's image; rebuilt after a write */
	IMAGES_COPY,		/* a copy of the job's image for each state */
};

/* What the command line asks for. */
struct check_args {
	const char *log_path, *base, *save_dir, *report, *junit, *workdir, *from;
	const char *to;
	unsigned int kinds, jobs, shard_k, shard_n;
	struct fl_state_opts states;
	bool keep_going;
	bool json;		/* the report on stdout, not the summary */
	char **cmd;		/* the checker's argv, with {} */
	int cmd_argc;
	char abs_log[PATH_MAX], abs_base[PATH_MAX], abs_cmd[PATH_MAX];
	const char *resume;	/* --resume REPORT */
	unsigned int timeout;	/* seconds a checker may run, 0: no limit */
	bool check_order;	/* refuse a log not in durability order */
	enum image_mode images;
	const char *state;	/* --state NAME: that state alone, its output shown */
	bool every_state;	/* run the checker on states the same as another */
	unsigned int context;	/* CONTEXT_*: what the verdict depends on */
};

/* --context: what besides its image a checker's verdict depends on. */
#define CONTEXT_MARK		(1U << 0)	/* FLUSHLOG_MARK */
#define CONTEXT_LAST_MARK	(1U << 1)	/* FLUSHLOG_LAST_MARK */
#define CONTEXT_AFTER_MARK	(1U << 2)	/* FLUSHLOG_AFTER_MARK */
#define CONTEXT_PROMISES	(1U << 3)	/* FLUSHLOG_PROMISE_*, FLUSHLOG_PROMISES */
#define CONTEXT_ALL		((1U << 4) - 1)

/* Each part of --context by its name. */
struct context_name {
	const char *name;
	unsigned int bit;
};
extern const struct context_name context_names[];
extern const size_t nr_context_names;

/* One planned state and, once checked or carried over, its result. */
struct state_result {
	const struct fl_point *point;	/* the latest it is legal at */
	const struct fl_state *st;	/* of check_run.plan */
	char name[FL_STATE_NAME_MAX];
	char spec[96];
	pid_t pid;		/* running checker, or 0 */
	int exit_code;		/* 0 pass; -1 not run */
	double seconds;
	struct timespec start;
	size_t index;		/* its number among all planned states */
	char *image, *output;	/* its files, named when it starts */
	double deadline;	/* when to SIGTERM, then SIGKILL it; 0: none */
	bool timed_out;		/* killed at --timeout */
	bool carried;		/* its result comes from --resume */
	struct job_slot *slot;	/* whose image it was made on, while running */
	bool in_place;		/* image is the slot's own, not a copy */
	/* the earlier state with the same image and context, whose result it has */
	struct state_result *same_as;
	/* states the same as this one, waiting for its result: a list */
	struct state_result *waiting, *next_waiting;
	bool visited;		/* start_one() has had it */
	bool check_alone;	/* its first's result was not to share: checked */
};

/* A job: its state image, and the state whose checker runs on it. */
struct job_slot {
	struct fl_state_image *image;
	struct state_result *state;
};

/*
 * The verdict.  A checker killed at --timeout failed whatever it exited
 * with: one that catches SIGTERM and exits 0 has checked nothing.
 */
static inline bool
state_failed(const struct state_result *s)
{
	return s->exit_code > 0 || (s->exit_code == 0 && s->timed_out);
}

/* Does stdout hold a report (--json, --junit -), and the notes go to stderr? */
static inline bool
stdout_holds_report(const struct check_args *a)
{
	return a->json || (a->junit && !strcmp(a->junit, "-"));
}

/* Is this the state its point guarantees (no reordering, tearing, discards)? */
static inline bool
is_prefix(const struct state_result *s)
{
	return fl_state_is_prefix(s->st, s->point->nr_applied);
}

static inline bool
state_passed(const struct state_result *s)
{
	return s->exit_code == 0 && !s->timed_out;
}

/* One run: the planned states, how far it got, its work folder. */
struct check_run {
	const struct check_args *args;
	struct fl_log *log;
	struct fl_points *points;	/* the chosen crash points */
	struct fl_states *plan_states;	/* every shard's, in plan order */
	struct state_result *states;	/* this shard's */
	size_t nr_states, next, done, failed, running;
	bool stop;		/* a failure without --keep-going */
	struct progress progress;
	size_t timeouts, carried;
	bool cannot_run;	/* a checker could not be started: exit 2 */
	bool finished;		/* every planned state had its turn */
	bool reports_dirty, report_error;
	double reports_saved;	/* when the reports were last written */
	uint64_t plan;		/* digest of the log and the planned states */
	uint64_t plan_all;	/* the same of every shard's states together */
	uint64_t log_digest;	/* of the log alone: where a plan starts */
	size_t planned;		/* the states of every shard */
	int work_fd;		/* the private work folder, or -1 */
	struct job_slot *slots;	/* args->jobs of them */
	int base_fd;		/* --base, or -1 */
	bool copying;		/* each state gets a copy of its own */
	size_t rewrites;	/* checkers seen writing to an image in place */
	int image_ret;		/* an image could not be given back */
	int follow_fd;		/* --state: its checker's output, read as it grows */
	struct fl_error image_err;
	/* the distinct states so far: identity hash, index in states + 1 */
	uint64_t *identity_hash;
	size_t *identity_state;
	size_t identity_slots, nr_identities;
	size_t same;		/* states given an earlier one's result */
	bool has_promises;	/* the log has a promise mark */
	char work_dir[PATH_MAX];
};

/* Takes one variable of a state's environment; value NULL: unset. */
typedef void (*env_fn)(void *ctx, const char *name, const char *value);


/* check-run.c */

/* Make the private work folder in a->workdir, and point a->workdir at it. */
int make_work_dir(struct check_run *run, struct check_args *a);
/* Until release_signals(), a fatal signal cleans up; SIGCHLD is blocked. */
void catch_signals(struct check_run *run);
/* The caller's signal actions and mask again (also in a child before exec). */
void restore_signals(void);
/* Remove the work folder, then give the signals back. */
void release_signals(struct check_run *run);
/*
 * Are the log's promise marks well formed?  0 (run->has_promises set if
 * there is one), or < 0 with a message.
 */
int check_promises(struct check_run *run, const char *log_path);
/* Plan the states to check into run->states (with their points). */
int choose_states(struct check_run *run);
/* Run the checker on every planned state that has no result yet. */
int run_states(struct check_run *run, struct fl_error *err);
/* A plan (or a log digest) with one more planned state, by its name. */
uint64_t plan_add_state(uint64_t plan, const char *name);
/* arg with its first {} replaced by image, allocated; NULL if out of memory. */
char *replace_braces(const char *arg, const char *image);
/*
 * Give set() the FLUSHLOG_* variables that name state s, its image image:
 * 0, or -ENOMEM.
 */
int state_env(const struct check_run *run, const struct state_result *s,
	       const char *image, env_fn set, void *ctx);

/* check-report.c: the reports of check, which merge reads and writes too */

/*
 * A report's first line: which run it is of and how far it got.  Reports
 * of older versions have no shard fields: shard_n is 0 when read back.
 */
struct report_head {
	const char *log_path;
	uint64_t entries;
	uint64_t plan;		/* the log and the states this report plans */
	bool finished;		/* each of them has a result */
	size_t checked, failed, timeouts;
	unsigned int shard_k, shard_n;
	size_t planned;		/* the states of every shard */
	uint64_t plan_all;	/* the log and the states of every shard */
	uint64_t log_digest;	/* the log alone: where a plan starts */
	struct json_object *options;	/* what shapes states and verdicts */
	struct json_object *checker;	/* the checker's argv, {} in it */
	struct json_object *parsed;	/* a head read back: owns the above */
};

/* One state's line of a report. */
struct report_state {
	uint64_t point;
	uint64_t index;		/* among every shard's states; or NO_INDEX */
	int64_t entry;		/* the last entry its point applies, -1: none */
	const char *kind, *spec, *name;
	const char *result;	/* pass, fail or timeout */
	int exit_code;
	double seconds;
	const char *same_as;	/* the state whose result it has, or NULL */
	uint64_t same_as_point;	/* that state's point (names are not unique) */
};

/* A state line of an older report, which did not number the states. */
#define NO_INDEX	UINT64_MAX

/* A timeout is a failure too. */
static inline bool
report_state_failed(const struct report_state *r)
{
	return strcmp(r->result, "pass");
}

/*
 * Write a report to path by the output rule (through a temporary file
 * renamed over it, so that a run killed at any moment leaves the last
 * whole report); fn returns non-zero if it could not write everything.
 * who begins the messages.  0, or the exit code, said.
 */
int write_report(const char *who, const char *path,
		 const struct cli_input *inputs, size_t nr_inputs,
		 int (*fn)(FILE *out, const void *ctx), const void *ctx);
/* The files check reads, which no report may be: the log and the base. */
size_t check_inputs(const struct check_args *a, struct cli_input inputs[2]);
/* The JSON report, a head line and a line a state: -1 if out of memory. */
int report_json_head(FILE *out, const struct report_head *h);
int report_json_state(FILE *out, const struct report_state *r, bool first);
void report_json_end(FILE *out);
/* The JUnit report: -1 if the writer failed. */
int report_junit_head(xmlTextWriterPtr w, size_t tests, size_t failures);
/* output: the checker's output, whose start goes in a failure, or NULL */
int report_junit_state(xmlTextWriterPtr w, const char *log_path,
		       const struct report_state *r, const char *output);
int report_junit_end(xmlTextWriterPtr w);
/*
 * Parse a line read from a report: a state line in place, its strings
 * moved into it; a head into h->parsed, which report_head_release() frees.
 */
int report_parse_head(const char *line, struct report_head *h);
void report_head_release(struct report_head *h);
int report_parse_state(char *line, struct report_state *r);
/* The summary's table: its head, and a failed state's row. */
void report_print_head(void);
void report_print_failure(const struct report_state *r, const char *note);
/* "N states checked: N passed, N failed", with no newline. */
void report_print_totals(size_t checked, size_t failed, size_t timeouts);

/*
 * A line for the user beside the results: on stdout, or with --json, whose
 * report stdout is, on stderr unless --quiet.
 */
__attribute__((format(printf, 2, 3))) void
check_note(const struct check_args *a, const char *fmt, ...);

/*
 * Rewrite the --report and --junit reports as they stand; final: the
 * run's last, which also goes to one that is a stream.
 */
void save_reports(struct check_run *run, bool final);
/* --resume: take the states an earlier --report has results for as done. */
int load_resume(struct check_run *run);
/*
 * Print the failed states and the totals, or with --json the report;
 * save each failure with --save-failures.  -ENOMEM if out of memory,
 * -EIO if a failure could not be saved (said).
 */
int summarise(const struct check_run *run, const char *self);

#endif /* FLUSHLOG_CHECK_H */
