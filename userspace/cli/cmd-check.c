// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog check: run a checker on the state at every chosen crash point.
 *
 * One master image is advanced through the log once (fl_replay_to), and
 * each checker gets its own copy of the master at its point: a reflink
 * where the filesystem shares blocks, a sparse copy elsewhere.  A checker
 * that writes to its image (a mount replaying a journal) therefore never
 * disturbs the next state, and checking N points costs one pass over the
 * log plus the checkers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli.h"

enum {
	OPT_BASE, OPT_POINTS, OPT_STATES, OPT_MAX_REORDER, OPT_MAX_TORN,
	OPT_MAX_STATES, OPT_FROM, OPT_JOBS, OPT_SHARD, OPT_KEEP_GOING,
	OPT_SAVE, OPT_JSON, OPT_JUNIT, OPT_WORKDIR, OPT_QUIET,
	OPT_TIMEOUT, OPT_RESUME, OPT_NO_ORDER_CHECK,
};

static const struct cli_option check_options[] = {
	[OPT_BASE] = { "base", 'b', "IMAGE",
		       "the data device before the log began (default zeroes)" },
	[OPT_POINTS] = { "points", 'p', "KINDS",
			 "which points: start,flush,fua,mark,end or all (default all)" },
	[OPT_STATES] = { "states", 0, "MODELS",
			 "crash states at each point: prefix, epoch, torn, discard, a comma list (default prefix)" },
	[OPT_MAX_REORDER] = { "max-reorder", 'K', "K",
			      "epoch: at most K possibly-durable writes a state (default 1)" },
	[OPT_MAX_TORN] = { "max-torn", 0, "N",
			   "torn: cut each write at N places at most (default 4)" },
	[OPT_MAX_STATES] = { "max-states", 0, "N",
			     "check N states (at most 1000000), a deterministic sample, if there are more" },
	[OPT_FROM] = { "from", 0, "POINT",
		       "skip the points before POINT (e.g. a mark after mkfs)" },
	[OPT_JOBS] = { "jobs", 'j', "N", "run N checkers at once (default 1)" },
	[OPT_SHARD] = { "shard", 0, "K/N",
			"check only the chosen states i with i % N == K" },
	[OPT_KEEP_GOING] = { "keep-going", 'k', NULL,
			     "go on after a failing state" },
	[OPT_SAVE] = { "save-failures", 's', "DIR",
		       "keep images, output and a reproducer per failure" },
	[OPT_JSON] = { "json", 0, "FILE", "write a JSON report to FILE" },
	[OPT_JUNIT] = { "junit", 0, "FILE",
			"write JUnit XML, one test case per state" },
	[OPT_WORKDIR] = { "workdir", 'w', "DIR",
			  "where state images go (default $TMPDIR or /tmp)" },
	[OPT_QUIET] = { "quiet", 'q', NULL, "no progress line on stderr" },
	[OPT_TIMEOUT] = { "timeout", 0, "SECONDS",
			  "kill a checker's process group after SECONDS: result timeout" },
	[OPT_RESUME] = { "resume", 0, "REPORT",
			 "skip the states REPORT (an earlier --json) has results for" },
	[OPT_NO_ORDER_CHECK] = { "no-order-check", 0, NULL,
				 "use a log not in durability order (states may be wrong)" },
	{ NULL },
};

#define KIND_BIT(k)	(1U << (k))

struct check_args {
	const char *log_path, *base, *save_dir, *json, *junit, *workdir, *from;
	unsigned int kinds, jobs, shard_k, shard_n;
	struct fl_state_opts states;
	bool keep_going, quiet;
	char **cmd;		/* the checker's argv, with {} */
	int cmd_argc;
	char abs_log[PATH_MAX], abs_base[PATH_MAX], abs_cmd[PATH_MAX];
	const char *resume;	/* --resume REPORT */
	unsigned int timeout;	/* seconds a checker may run, 0: no limit */
	bool check_order;	/* refuse a log not in durability order */
};

struct state_result {
	const struct fl_point *point;	/* the earliest it is legal at */
	struct fl_state st;
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
};

struct check_run {
	const struct check_args *args;
	struct fl_log *log;
	struct state_result *states;
	size_t nr_states, next, done, failed, running;
	bool stop;		/* a failure without --keep-going */
	bool progress;
	size_t timeouts, carried;
	bool cannot_run;	/* a checker could not be started: exit 2 */
	bool finished;		/* every planned state had its turn */
	bool reports_dirty, report_error;
	double reports_saved;	/* when the reports were last written */
	int work_fd;		/* the private work folder, or -1 */
	char work_dir[PATH_MAX];
};

static unsigned int
parse_kinds(const struct cli_command *cmd, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *word;
	unsigned int kinds = 0;

	if (!copy)
		cli_usage_error(cmd, "out of memory");
	for (word = strtok_r(copy, ",", &save); word;
	     word = strtok_r(NULL, ",", &save)) {
		if (!strcmp(word, "all"))
			kinds |= KIND_BIT(FL_POINT_START) | KIND_BIT(FL_POINT_FLUSH) |
				 KIND_BIT(FL_POINT_FUA) | KIND_BIT(FL_POINT_MARK) |
				 KIND_BIT(FL_POINT_END);
		else if (!strcmp(word, "start"))
			kinds |= KIND_BIT(FL_POINT_START);
		else if (!strcmp(word, "flush"))
			kinds |= KIND_BIT(FL_POINT_FLUSH);
		else if (!strcmp(word, "fua"))
			kinds |= KIND_BIT(FL_POINT_FUA);
		else if (!strcmp(word, "mark") || !strcmp(word, "marks"))
			kinds |= KIND_BIT(FL_POINT_MARK);
		else if (!strcmp(word, "end"))
			kinds |= KIND_BIT(FL_POINT_END);
		else
			cli_usage_error(cmd, "--points: unknown kind '%s' (start, flush, fua, mark, end, all)",
					word);
	}
	free(copy);
	if (!kinds)
		cli_usage_error(cmd, "--points needs at least one kind");
	return kinds;
}

/* The reproducer runs from its own folder: name files absolutely. */
static const char *
absolute(const char *path, char buf[PATH_MAX])
{
	return realpath(path, buf) ? buf : path;
}

static unsigned int
parse_models(const struct cli_command *cmd, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *word;
	unsigned int models = FL_STATES_PREFIX;

	if (!copy)
		cli_usage_error(cmd, "out of memory");
	for (word = strtok_r(copy, ",", &save); word;
	     word = strtok_r(NULL, ",", &save)) {
		if (!strcmp(word, "prefix"))
			models |= FL_STATES_PREFIX;
		else if (!strcmp(word, "epoch"))
			models |= FL_STATES_EPOCH;
		else if (!strcmp(word, "torn"))
			models |= FL_STATES_TORN;
		else if (!strcmp(word, "discard"))
			models |= FL_STATES_DISCARD;
		else
			cli_usage_error(cmd, "--states: unknown model '%s' (prefix, epoch, torn, discard)",
					word);
	}
	free(copy);
	return models;
}

static unsigned int
parse_bounded(const struct cli_command *cmd, const char *name,
	      const char *arg, uint64_t max)
{
	uint64_t n;

	cli_parse_u64(cmd, name, arg, &n);
	if (!n || n > max)
		cli_usage_error(cmd, "--%s takes 1 to %" PRIu64 ", not %s", name,
				max, arg);
	return (unsigned int)n;
}

static void
parse_args(const struct cli_command *cmd, int argc, char **argv,
	   struct check_args *a)
{
	const char *arg;
	char *slash;
	int opt;

	*a = (struct check_args) {
		.kinds = parse_kinds(cmd, "all"), .jobs = 1, .shard_n = 1,
		.states = { .models = FL_STATES_PREFIX, .max_reorder = 1,
			    .max_torn = 4 },
		.check_order = true,
	};
	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		switch (opt) {
		case OPT_BASE: a->base = arg; break;
		case OPT_POINTS: a->kinds = parse_kinds(cmd, arg); break;
		case OPT_STATES: a->states.models = parse_models(cmd, arg); break;
		case OPT_MAX_REORDER:
			a->states.max_reorder = parse_bounded(cmd, "max-reorder", arg,
							      FL_STATE_MAX_REORDER);
			break;
		case OPT_MAX_TORN:
			a->states.max_torn = parse_bounded(cmd, "max-torn", arg, 1024);
			break;
		case OPT_MAX_STATES:
			cli_parse_u64(cmd, "max-states", arg, &a->states.max_states);
			if (!a->states.max_states)
				cli_usage_error(cmd, "--max-states takes 1 or more, not %s", arg);
			break;
		case OPT_FROM: a->from = arg; break;
		case OPT_JOBS: a->jobs = parse_bounded(cmd, "jobs", arg, 256); break;
		case OPT_SHARD:
			slash = strchr(arg, '/');
			if (!slash || sscanf(arg, "%u/%u", &a->shard_k, &a->shard_n) != 2 ||
			    !a->shard_n || a->shard_k >= a->shard_n)
				cli_usage_error(cmd, "--shard takes K/N with 0 <= K < N, not '%s'", arg);
			break;
		case OPT_KEEP_GOING: a->keep_going = true; break;
		case OPT_SAVE: a->save_dir = arg; break;
		case OPT_JSON: a->json = arg; break;
		case OPT_JUNIT: a->junit = arg; break;
		case OPT_WORKDIR: a->workdir = arg; break;
		case OPT_QUIET: a->quiet = true; break;
		case OPT_TIMEOUT:
			a->timeout = parse_bounded(cmd, "timeout", arg, 1U << 30);
			break;
		case OPT_RESUME: a->resume = arg; break;
		case OPT_NO_ORDER_CHECK: a->check_order = false; break;
		}
	}
	if (argc - cli_operand_index() < 1)
		cli_usage_error(cmd, "expected LOG -- CMD [ARGS...]");
	a->log_path = argv[cli_operand_index()];
	a->cmd = argv + cli_operand_index() + 1;
	a->cmd_argc = argc - cli_operand_index() - 1;
	if (!a->cmd_argc)
		cli_usage_error(cmd, "no checker: expected LOG -- CMD [ARGS...] with {} for the image");
	if (!a->workdir)
		a->workdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	a->log_path = absolute(a->log_path, a->abs_log);
	if (a->base)
		a->base = absolute(a->base, a->abs_base);
	if (strchr(a->cmd[0], '/'))
		a->cmd[0] = (char *)absolute(a->cmd[0], a->abs_cmd);
}

/*
 * A private copy of src, shared blocks where possible, holes kept: its
 * open descriptor, or a negative errno.
 */
static int
clone_image(int src, const char *path, uint64_t size)
{
	int dst = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int ret = 0;

	if (dst < 0)
		return -errno;
	if (ioctl(dst, FICLONE, src)) {
		ret = ftruncate(dst, (off_t)size) ? -errno : 0;
		if (!ret)
			ret = cli_copy_sparse(src, dst);
	}
	if (ret) {
		close(dst);
		return ret;
	}
	return dst;
}

static char *
replace_braces(const char *arg, const char *image)
{
	const char *at = strstr(arg, "{}");
	char *out;

	if (!at)
		return strdup(arg);
	if (asprintf(&out, "%.*s%s%s", (int)(at - arg), arg, image, at + 2) < 0)
		return NULL;
	return out;
}

/* Grace between a timed-out checker's SIGTERM and its SIGKILL, seconds. */
#define KILL_GRACE	5.0
/* While states finish, the reports are rewritten at most this often. */
#define REPORT_INTERVAL	1.0

static void save_reports(struct check_run *run);

static double
now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* s in single quotes, for sh: nothing in it is expanded. */
static void
shell_quote(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	fputc('\'', out);
}

/* s on a comment line: a newline in a label must not end the comment. */
static void
comment_text(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/*
 * Is this the state its point guarantees?  A reordered state can fold
 * into a plain name (its extras right after the point) without being one.
 */
static bool
is_prefix(const struct state_result *s)
{
	return !s->st.nr_extra && s->st.torn == FL_NO_ENTRY &&
	       !s->st.keep_discards && s->st.base == s->point->nr_applied;
}

/*
 * FLUSHLOG_LAST_MARK: the label of the last mark among the point's entries,
 * for a checker that knows what each mark promised (an fsync oracle).
 */
static const char *
last_mark(const struct fl_log *log, uint64_t nr_applied)
{
	const struct fl_entry *e = fl_log_entries(log);

	for (uint64_t i = nr_applied; i-- > 0;)
		if (e[i].op == FLUSHLOG_OP_MARK)
			return fl_log_label(log, i);
	return NULL;
}

/*
 * FLUSHLOG_AFTER_MARK: the first mark logged at or after the crash: nothing
 * issued after it can be in the state.  A prefix state is the crash at its
 * point; another may be a crash as late as the end of the point's epoch
 * (the next flush or FUA completion).  Unset when the log has no such mark.
 */
static const char *
after_mark(const struct fl_log *log, uint64_t nr_applied, bool prefix)
{
	const struct fl_entry *e = fl_log_entries(log);
	uint64_t n = fl_log_info(log)->nr_entries, i = nr_applied;

	if (prefix) {
		i = nr_applied ? nr_applied - 1 : 0;
	} else {
		while (i < n && (!(e[i].flags & FL_ENTRY_CRASH_POINT) ||
				 e[i].op == FLUSHLOG_OP_MARK))
			i++;
		i++;
	}
	for (; i < n; i++)
		if (e[i].op == FLUSHLOG_OP_MARK)
			return fl_log_label(log, i);
	return NULL;
}

typedef void (*env_fn)(void *ctx, const char *name, const char *value);

/*
 * The environment that names a state to its checker (value NULL: unset),
 * given to set(): the checker's own, or the lines of a reproducer.
 */
static void
state_env(const struct check_run *run, const struct state_result *s,
	  const char *image, env_fn set, void *ctx)
{
	const struct fl_point *p = s->point;
	char point[24], entry[24];

	snprintf(point, sizeof(point), "%" PRIu64, p->number);
	snprintf(entry, sizeof(entry), "%" PRId64, (int64_t)p->nr_applied - 1);
	set(ctx, "FLUSHLOG_POINT", point);
	set(ctx, "FLUSHLOG_ENTRY", entry);
	set(ctx, "FLUSHLOG_SPEC", s->spec);
	set(ctx, "FLUSHLOG_STATE_NAME", s->name);
	set(ctx, "FLUSHLOG_STATE", image);
	set(ctx, "FLUSHLOG_KIND", fl_point_kind_name(p->kind));
	set(ctx, "FLUSHLOG_MARK", p->kind == FL_POINT_MARK ?
	    fl_log_label(run->log, p->nr_applied - 1) : NULL);
	set(ctx, "FLUSHLOG_LAST_MARK", last_mark(run->log, p->nr_applied));
	set(ctx, "FLUSHLOG_AFTER_MARK",
	    after_mark(run->log, p->nr_applied, is_prefix(s)));
}

static void
set_env(void *ctx, const char *name, const char *value)
{
	(void)ctx;
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static void
write_env(void *ctx, const char *name, const char *value)
{
	FILE *f = ctx;

	if (!value) {
		fprintf(f, "unset %s\n", name);
		return;
	}
	fprintf(f, "export %s=", name);
	shell_quote(f, value);
	fputc('\n', f);
}

/*
 * Fatal signals: the handler kills the running checkers' process groups,
 * removes the private work folder and dies of the signal again.
 */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NR_FATAL	(sizeof(fatal_signals) / sizeof(fatal_signals[0]))
static struct sigaction saved_actions[NR_FATAL];
static sigset_t saved_mask;
static struct check_run *signal_run;

/* What getdents64 returns; glibc's struct dirent is not the kernel's. */
struct raw_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static bool
is_dot(const char *name)
{
	return name[0] == '.' &&
	       (!name[1] || (name[1] == '.' && !name[2]));
}

/*
 * Remove the private work folder and the files in it.  Async-signal-safe
 * (raw getdents64, unlinkat, rmdir): the fatal signal handler calls it.
 * Passes repeat while they remove something, as unlinking moves entries.
 */
static void
remove_work_dir(struct check_run *run)
{
	char buf[2048] __attribute__((aligned(8)));
	bool again = true;
	long n;

	if (run->work_fd < 0)
		return;
	while (again) {
		again = false;
		lseek(run->work_fd, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, run->work_fd, buf,
				    sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct raw_dirent64 *d = (void *)(buf + off);

				off += d->d_reclen;
				if (!is_dot(d->d_name) &&
				    !unlinkat(run->work_fd, d->d_name, 0))
					again = true;
			}
		}
	}
	rmdir(run->work_dir);
	close(run->work_fd);
	run->work_fd = -1;
}

static void
on_fatal_signal(int sig)
{
	struct check_run *run = signal_run;

	if (run) {
		for (size_t i = 0; i < run->nr_states; i++)
			if (run->states[i].pid > 0)
				kill(-run->states[i].pid, SIGKILL);
		remove_work_dir(run);
	}
	signal(sig, SIG_DFL);
	raise(sig);	/* blocked in the handler: delivered on return */
}

static void
fatal_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < NR_FATAL; i++)
		sigaddset(set, fatal_signals[i]);
}

/*
 * From here until release_signals(), a fatal signal cleans up, and
 * SIGCHLD is blocked so that sigtimedwait() can wait for it.
 */
static void
catch_signals(struct check_run *run)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	sigset_t chld;

	signal_run = run;
	fatal_set(&sa.sa_mask);
	for (size_t i = 0; i < NR_FATAL; i++) {
		sigaction(fatal_signals[i], &sa, &saved_actions[i]);
		/* ignored by whoever started us (nohup): stays ignored */
		if (saved_actions[i].sa_handler == SIG_IGN)
			sigaction(fatal_signals[i], &saved_actions[i], NULL);
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &saved_mask);
}

/* The caller's actions and mask again (also in a child before exec). */
static void
restore_signals(void)
{
	for (size_t i = 0; i < NR_FATAL; i++)
		sigaction(fatal_signals[i], &saved_actions[i], NULL);
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

/* Remove the work folder, then give the signals back. */
static void
release_signals(struct check_run *run)
{
	sigset_t fatal;

	fatal_set(&fatal);
	sigprocmask(SIG_BLOCK, &fatal, NULL);
	remove_work_dir(run);
	signal_run = NULL;
	restore_signals();
}

/* The private folder in --workdir that every file of this run goes in. */
static int
make_work_dir(struct check_run *run, struct check_args *a)
{
	int n = snprintf(run->work_dir, sizeof(run->work_dir),
			 "%s/flushlog-check.XXXXXX", a->workdir);

	if (n < 0 || (size_t)n >= sizeof(run->work_dir) - 32) {
		fprintf(stderr, "flushlog check: --workdir '%s' is too long\n",
			a->workdir);
		return -1;
	}
	if (!mkdtemp(run->work_dir)) {
		fprintf(stderr, "flushlog check: cannot make a folder in '%s': %s\n",
			a->workdir, strerror(errno));
		return -1;
	}
	run->work_fd = open(run->work_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (run->work_fd < 0) {
		fprintf(stderr, "flushlog check: cannot open '%s': %s\n",
			run->work_dir, strerror(errno));
		rmdir(run->work_dir);
		return -1;
	}
	a->workdir = run->work_dir;
	return 0;
}

/* What a child that could not exec the checker sends up its pipe. */
struct exec_failure {
	int stage;	/* 0: the output file, 1: the checker itself */
	int err;	/* errno */
};

static void __attribute__((noreturn))
child_fails(int pipe_fd, int stage)
{
	struct exec_failure f = { stage, errno };
	ssize_t n = write(pipe_fd, &f, sizeof(f));

	(void)n;	/* nothing more to say if the parent cannot hear */
	_exit(127);
}

/*
 * In the child: the checker, in a process group of its own (so that a
 * timeout kills all it started), with {} and FLUSHLOG_* filled in.  The
 * pipe closes on exec; a failure before that goes up it instead.
 */
static void __attribute__((noreturn))
exec_checker(const struct check_run *run, const struct state_result *s,
	     pid_t parent, int pipe_fd)
{
	const struct check_args *a = run->args;
	char **argv = calloc(a->cmd_argc + 1, sizeof(*argv));
	int fd;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);	/* not outlive a killed run */
	if (getppid() != parent)
		_exit(127);
	restore_signals();
	fd = open(s->output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0)
		child_fails(pipe_fd, 0);
	errno = ENOMEM;
	if (!argv)
		child_fails(pipe_fd, 1);
	for (int i = 0; i < a->cmd_argc; i++) {
		argv[i] = replace_braces(a->cmd[i], s->image);
		if (!argv[i])
			child_fails(pipe_fd, 1);
	}
	state_env(run, s, s->image, set_env, NULL);
	execvp(argv[0], argv);
	child_fails(pipe_fd, 1);
}

static double
elapsed(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) +
	       (double)(now.tv_nsec - since->tv_nsec) / 1e9;
}

static void
show_progress(const struct check_run *run)
{
	if (run->progress)
		fprintf(stderr, "\rflushlog check: %zu/%zu states, %zu failed ",
			run->done, run->nr_states, run->failed);
}

/* The first line of a file, for a one-line message; "" if none. */
static void
first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/*
 * The checker cannot be started: the run stops with one message naming
 * it, not a failure per state.
 */
static void
checker_cannot_run(struct check_run *run, const char *why, const char *output)
{
	char detail[256] = "";

	if (output)
		first_line(output, detail, sizeof(detail));
	if (!run->cannot_run) {
		if (run->progress)
			fprintf(stderr, "\r\033[K");
		fprintf(stderr, "flushlog check: cannot run the checker '%s': %s%s%s\n",
			run->args->cmd[0], why, *detail ? ": " : "", detail);
	}
	run->cannot_run = true;
	run->stop = true;
}

/* Record a checker's end: its result, or none if it could not run. */
static void
finish_state(struct check_run *run, struct state_result *s, int status)
{
	pid_t pid = s->pid;

	s->pid = 0;
	s->seconds = elapsed(&s->start);
	s->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) :
		       128 + WTERMSIG(status);
	if (s->timed_out)	/* what it started may outlive it */
		kill(-pid, SIGKILL);
	unlink(s->image);
	run->running--;
	if (!run->cannot_run && !s->timed_out && WIFEXITED(status) &&
	    (s->exit_code == 126 || s->exit_code == 127))
		checker_cannot_run(run, s->exit_code == 126 ?
				   "it exited 126 (not executable)" :
				   "it exited 127 (not found)", s->output);
	if (run->cannot_run) {	/* no result: the run is void */
		s->exit_code = -1;
		s->timed_out = false;
		unlink(s->output);
		return;
	}
	run->done++;
	if (s->exit_code) {
		run->failed++;
		run->timeouts += s->timed_out;
		if (!run->args->keep_going)
			run->stop = true;
	} else {
		unlink(s->output);
	}
	run->reports_dirty = true;
	if (now_seconds() - run->reports_saved >= REPORT_INTERVAL)
		save_reports(run);
	show_progress(run);
}

/*
 * --timeout: SIGTERM to a late checker's process group, SIGKILL to it
 * KILL_GRACE seconds later.  Returns the next deadline, 0 for none.
 */
static double
enforce_timeouts(struct check_run *run, double now)
{
	double next = 0;

	for (size_t i = 0; i < run->nr_states; i++) {
		struct state_result *s = &run->states[i];

		if (!s->pid || !s->deadline)
			continue;
		if (now >= s->deadline && !s->timed_out) {
			s->timed_out = true;
			kill(-s->pid, SIGTERM);
			s->deadline = now + KILL_GRACE;
		} else if (now >= s->deadline) {
			kill(-s->pid, SIGKILL);
			s->deadline = 0;
			continue;
		}
		if (!next || s->deadline < next)
			next = s->deadline;
	}
	return next;
}

/* Sleep until a child exits, a deadline passes or the reports are due. */
static void
wait_for_event(struct check_run *run)
{
	double now = now_seconds(), next = enforce_timeouts(run, now);
	struct timespec ts;
	sigset_t chld;

	if (run->reports_dirty) {
		double due = run->reports_saved + REPORT_INTERVAL;

		if (due <= now)
			save_reports(run);
		else if (!next || due < next)
			next = due;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (!next) {
		sigwaitinfo(&chld, NULL);
		return;
	}
	next = next > now ? next - now : 0;
	ts.tv_sec = (time_t)next;
	ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
	sigtimedwait(&chld, NULL, &ts);
}

/* Wait for one checker to end and record it. */
static void
reap_one(struct check_run *run)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid < 0 && errno != EINTR)
			return;
		if (pid > 0) {
			for (size_t i = 0; i < run->nr_states; i++)
				if (run->states[i].pid == pid) {
					finish_state(run, &run->states[i], status);
					return;
				}
		}
		if (!pid)
			wait_for_event(run);
	}
}

/* Fork the checker; its exec's success or errno comes up a CLOEXEC pipe. */
static int
spawn_checker(struct check_run *run, struct state_result *s,
	      struct fl_error *err)
{
	struct exec_failure fail;
	pid_t parent = getpid();
	sigset_t fatal, old;
	int fds[2], ret;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		cli_set_error(err, FL_ERR_OUTPUT, "cannot make a pipe: %s",
			      strerror(errno));
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &s->start);
	fflush(NULL);
	/* the handler must see the pid of every child it has to kill */
	fatal_set(&fatal);
	sigprocmask(SIG_BLOCK, &fatal, &old);
	s->pid = fork();
	if (!s->pid) {
		close(fds[0]);
		exec_checker(run, s, parent, fds[1]);
	}
	ret = s->pid < 0 ? -errno : 0;
	if (s->pid > 0) {
		setpgid(s->pid, s->pid);
		run->running++;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (ret) {
		s->pid = 0;
		close(fds[0]);
		cli_set_error(err, FL_ERR_OUTPUT, "cannot fork: %s",
			      strerror(-ret));
		return ret;
	}
	do
		n = read(fds[0], &fail, sizeof(fail));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n != sizeof(fail)) {	/* it is running the checker */
		s->deadline = run->args->timeout ?
			      now_seconds() + run->args->timeout : 0;
		return 0;
	}
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
	s->pid = 0;
	run->running--;
	unlink(s->image);
	unlink(s->output);
	if (fail.stage == 0) {
		cli_set_error(err, FL_ERR_OUTPUT, "cannot create '%s': %s",
			      s->output, strerror(fail.err));
		return -fail.err;
	}
	checker_cannot_run(run, strerror(fail.err), NULL);
	return 0;
}

/* The state's extras; one that keeps discards may need the base back. */
static int
apply_state(const struct check_run *run, int image, const struct fl_state *st,
	    struct fl_error *err)
{
	const char *base = run->args->base;
	int base_fd = -1, ret;

	if (st->keep_discards && base) {
		base_fd = open(base, O_RDONLY | O_CLOEXEC);
		if (base_fd < 0) {
			ret = -errno;
			cli_set_error(err, FL_ERR_ARG, "cannot open base '%s': %s",
				      base, strerror(errno));
			return ret;
		}
	}
	ret = fl_state_apply_base(run->log, image, base_fd, st, err);
	if (base_fd >= 0)
		close(base_fd);
	return ret;
}

/*
 * A state's image and checker output, named only when it starts: a run may
 * plan a million states, and most never need a file name.
 */
static int
name_files(const struct check_run *run, struct state_result *s,
	   struct fl_error *err)
{
	if (asprintf(&s->image, "%s/state-%zu.img", run->work_dir, s->index) < 0 ||
	    asprintf(&s->output, "%s/state-%zu.out", run->work_dir, s->index) < 0) {
		cli_set_error(err, FL_ERR_OUTPUT, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int
start_one(struct check_run *run, struct fl_replay *replay, int master,
	  uint64_t size, struct fl_error *err)
{
	struct state_result *s = &run->states[run->next++];
	int ret, image;

	if (s->exit_code >= 0)	/* a result from --resume */
		return 0;
	ret = name_files(run, s, err);
	if (ret)
		return ret;
	ret = fl_replay_to(replay, s->st.base, err);
	if (ret)
		return ret;
	ret = clone_image(master, s->image, size);
	if (ret < 0) {
		cli_set_error(err, FL_ERR_OUTPUT, "cannot copy the state to '%s': %s",
				 s->image, strerror(-ret));
		return ret;
	}
	image = ret;
	ret = apply_state(run, image, &s->st, err);
	if (close(image) && !ret) {
		cli_set_error(err, FL_ERR_OUTPUT, "cannot write '%s': %s",
			      s->image, strerror(errno));
		ret = -EIO;
	}
	if (ret)
		return ret;
	return spawn_checker(run, s, err);
}

/*
 * The points of the wanted kinds, from --from on.  The starting position
 * is a crash point too (kind start): the point there, or where --from
 * names no point (entry:N), point 0 at that position.  chosen has room
 * for nr + 1 points.
 */
static int
choose_points(struct check_run *run, const struct fl_point *all, size_t nr,
	      struct fl_point *chosen, size_t *nr_chosen)
{
	const struct check_args *a = run->args;
	struct fl_error err = { 0 };
	bool want_start = a->kinds & KIND_BIT(FL_POINT_START);
	uint64_t first = 0;

	if (a->from && fl_log_resolve_point(run->log, a->from, &first, &err)) {
		fprintf(stderr, "flushlog check: --from: %s\n", err.msg);
		return -EINVAL;
	}
	*nr_chosen = 0;
	for (size_t i = 0; i < nr; i++) {
		bool at_start = all[i].nr_applied == first;

		if (want_start && !at_start && all[i].nr_applied > first) {
			/* --from entry:N: no point there, so one of its own */
			chosen[(*nr_chosen)++] = (struct fl_point) {
				.number = 0, .kind = FL_POINT_START,
				.nr_applied = first,
			};
			want_start = false;
		}
		if ((want_start && at_start) ||
		    ((a->kinds & KIND_BIT(all[i].kind)) && all[i].nr_applied >= first))
			chosen[(*nr_chosen)++] = all[i];
		if (at_start)
			want_start = false;
	}
	return 0;
}

/* The chosen point numbered number: they are in ascending order. */
static const struct fl_point *
point_numbered(const struct fl_point *points, size_t nr, uint64_t number)
{
	size_t lo = 0, hi = nr;

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (points[mid].number <= number)
			lo = mid;
		else
			hi = mid;
	}
	return &points[lo];
}

/*
 * The states to check: those of the chosen points under the chosen
 * models, counted and announced before any is run, then this shard's
 * share of them.
 */
static int
choose_states(struct check_run *run, struct fl_point **points)
{
	const struct check_args *a = run->args;
	struct fl_point *chosen = NULL;
	struct fl_state *states = NULL;
	struct fl_error err = { 0 };
	size_t nr, nr_chosen, nr_states, k = 0;
	uint64_t candidates;
	int ret;

	if (fl_log_points(run->log, points, &nr, &err))
		return -ENOMEM;
	chosen = calloc(nr + 1, sizeof(*chosen));
	if (!chosen)
		return -ENOMEM;
	ret = choose_points(run, *points, nr, chosen, &nr_chosen);
	if (!ret && (ret = fl_log_states(run->log, chosen, nr_chosen, &a->states,
					 &states, &nr_states, &candidates, &err))) {
		if (ret == -E2BIG)
			fprintf(stderr, "flushlog check: %s: check a deterministic sample with --max-states N (N at most %d)\n",
				err.msg, FL_STATES_LIMIT);
		else
			fprintf(stderr, "flushlog check: %s\n", err.msg);
		ret = -EINVAL;
	}
	/* the states name their points among the chosen ones */
	free(*points);
	*points = chosen;
	if (ret)
		return ret;
	run->states = calloc(nr_states ? nr_states : 1, sizeof(*run->states));
	if (!run->states) {
		free(states);
		return -ENOMEM;
	}
	printf("%zu states at %zu crash points (%" PRIu64 " candidates%s)\n",
	       nr_states, nr_chosen, candidates,
	       a->states.max_states && candidates > a->states.max_states ?
	       ", sampled" : "");
	fflush(stdout);
	for (size_t i = 0; i < nr_states; i++) {
		struct state_result *s;

		if (k++ % a->shard_n != a->shard_k)
			continue;
		s = &run->states[run->nr_states++];
		s->st = states[i];
		s->point = point_numbered(*points, nr_chosen, states[i].point);
		s->exit_code = -1;
		fl_state_name(&s->st, s->name, sizeof(s->name));
		cli_point_spec(run->log, s->point, s->spec, sizeof(s->spec));
		s->index = i;
	}
	free(states);
	return 0;
}

/* The master image, at the base state, in the private work folder. */
static int
open_master(const struct check_run *run, char *path, size_t len,
	    uint64_t *size, struct fl_error *err)
{
	const struct fl_log_info *info = fl_log_info(run->log);
	const char *base = run->args->base;
	int fd, base_fd;

	*size = info->data_sectors << FLUSHLOG_SECTOR_SHIFT;
	snprintf(path, len, "%s/master.img", run->work_dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return cli_set_error(err, FL_ERR_OUTPUT, "cannot create '%s': %s",
				     path, strerror(errno)), -1;
	if (base) {
		base_fd = open(base, O_RDONLY | O_CLOEXEC);
		if (base_fd < 0 || cli_file_size(base_fd) < *size) {
			cli_set_error(err, FL_ERR_ARG, "base '%s': %s", base,
				      base_fd < 0 ? strerror(errno) :
				      "smaller than the logged device");
			if (base_fd >= 0)
				close(base_fd);
			goto fail;
		}
		*size = cli_file_size(base_fd);
		if (ioctl(fd, FICLONE, base_fd) &&
		    (ftruncate(fd, (off_t)*size) || cli_copy_sparse(base_fd, fd))) {
			cli_set_error(err, FL_ERR_OUTPUT, "cannot copy base '%s'", base);
			close(base_fd);
			goto fail;
		}
		close(base_fd);
	} else if (ftruncate(fd, (off_t)*size)) {
		cli_set_error(err, FL_ERR_OUTPUT, "cannot size '%s': %s", path,
			      strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	unlink(path);
	return -1;
}

static void
kill_running(struct check_run *run)
{
	for (size_t i = 0; i < run->nr_states; i++)
		if (run->states[i].pid > 0)
			kill(-run->states[i].pid, SIGKILL);
}

static int
run_states(struct check_run *run, struct fl_error *err)
{
	struct fl_replay *replay = NULL;
	char master_path[PATH_MAX + 16];
	uint64_t size;
	int master, ret = 0;

	master = open_master(run, master_path, sizeof(master_path), &size, err);
	if (master < 0)
		return -1;
	ret = fl_replay_open(run->log, master, &replay, err);
	while (!ret && run->next < run->nr_states && !run->stop) {
		if (run->running == run->args->jobs)
			reap_one(run);
		else
			ret = start_one(run, replay, master, size, err);
	}
	if (ret || run->cannot_run)
		kill_running(run);
	while (run->running)
		reap_one(run);
	if (replay)
		fl_replay_close(replay);
	close(master);
	unlink(master_path);
	if (run->progress)
		fprintf(stderr, "\r\033[K");
	return ret;
}

/* The last entry a state applies, whole or in part; -1 for none. */
static int64_t
last_entry(const struct fl_state *st)
{
	int64_t last = (int64_t)st->base - 1;

	if (st->nr_extra && (int64_t)st->extra[st->nr_extra - 1] > last)
		last = (int64_t)st->extra[st->nr_extra - 1];
	if (st->torn != FL_NO_ENTRY && (int64_t)st->torn > last)
		last = (int64_t)st->torn;
	return last;
}

/*
 * The argv of this flushlog building a state's image, the same words
 * save_failure() runs and the reproducer holds.
 */
struct self_cmd {
	char *argv[16];
	int argc;
};

static void
add_arg(struct self_cmd *c, const char *arg)
{
	if (c->argc < (int)(sizeof(c->argv) / sizeof(c->argv[0])) - 1)
		c->argv[c->argc++] = (char *)arg;
	c->argv[c->argc] = NULL;
}

static void
replay_cmd(struct self_cmd *c, const struct check_args *a, const char *self,
	   const char *image, const char *state)
{
	c->argc = 0;
	add_arg(c, self);
	add_arg(c, "replay");
	add_arg(c, "-q");
	add_arg(c, "-o");
	add_arg(c, image);
	add_arg(c, "--state");
	add_arg(c, state);
	if (a->base) {
		add_arg(c, "--base");
		add_arg(c, a->base);
	}
	if (!a->check_order)
		add_arg(c, "--no-order-check");
	add_arg(c, a->log_path);
}

static void
dump_cmd(struct self_cmd *c, const struct check_args *a, const char *self,
	 const char *from, const char *to)
{
	c->argc = 0;
	add_arg(c, self);
	add_arg(c, "dump");
	add_arg(c, "--from");
	add_arg(c, from);
	add_arg(c, "--to");
	add_arg(c, to);
	add_arg(c, a->log_path);
}

/* The command as a line of the reproducer, every word quoted. */
static void
write_cmd(FILE *f, const struct self_cmd *c, const char *redirect)
{
	for (int i = 0; i < c->argc; i++) {
		if (i)
			fputc(' ', f);
		shell_quote(f, c->argv[i]);
	}
	fprintf(f, "%s\n", redirect ? redirect : "");
}

/*
 * Run the command with no shell, stdout to out_path if given, in folder
 * dir; 0 if it exited 0.
 */
static int
run_cmd(const struct self_cmd *c, const char *dir, const char *out_path)
{
	pid_t pid;
	int status, fd;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		restore_signals();
		if (chdir(dir))
			_exit(127);
		if (out_path) {
			fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
				_exit(127);
		}
		execv(c->argv[0], c->argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* rename(), or a copy where from and to are on different filesystems. */
static int
move_file(const char *from, const char *to)
{
	int in, out, ret;

	if (!rename(from, to))
		return 0;
	if (errno != EXDEV)
		return -1;
	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ret = in < 0 || out < 0 ? -1 : cli_copy_sparse(in, out);
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ret = -1;
	if (!ret)
		unlink(from);
	return ret;
}

/*
 * DIR/point-N for a prefix state, DIR/state-NAME for another: the first
 * bad and the last good images, the checker's output, the entries between
 * them, and a reproducer.  The images are built here by running this
 * flushlog directly, never through a shell: the folder, the log and the
 * checker's words may hold any character.  In the reproducer every word
 * is quoted.
 */
static void
save_failure(const struct check_run *run, const struct state_result *s,
	     const char *self)
{
	const struct check_args *a = run->args;
	const struct state_result *good = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 32], from[24], to[24];
	struct self_cmd c;
	bool built;
	FILE *f;

	if (is_prefix(s))
		snprintf(dir, sizeof(dir), "%s/point-%" PRIu64, a->save_dir,
			 s->point->number);
	else
		snprintf(dir, sizeof(dir), "%s/state-%s", a->save_dir, s->name);
	if ((mkdir(a->save_dir, 0755) && errno != EEXIST) ||
	    (mkdir(dir, 0755) && errno != EEXIST)) {
		fprintf(stderr, "flushlog check: cannot make '%s': %s\n", dir,
			strerror(errno));
		return;
	}
	/* the last passing prefix state checked before this one */
	for (const struct state_result *t = run->states; t < s; t++)
		if (t->exit_code == 0 && t->st.base <= s->st.base &&
		    is_prefix(t))
			good = t;
	snprintf(from, sizeof(from), "%" PRIu64, good ? good->st.base : 0);
	snprintf(to, sizeof(to), "%" PRId64, last_entry(&s->st));
	snprintf(path, sizeof(path), "%s/reproduce.sh", dir);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "flushlog check: cannot write '%s': %s\n", path,
			strerror(errno));
		return;
	}
	fprintf(f, "#!/bin/sh\n# state %s at point:%" PRIu64 " (", s->name,
		s->point->number);
	comment_text(f, s->spec);
	if (s->timed_out)
		fprintf(f, ", after entry %" PRId64 ") timed out after %.0f s\n",
			(int64_t)s->point->nr_applied - 1, s->seconds);
	else
		fprintf(f, ", after entry %" PRId64 ") failed with exit %d\n",
			(int64_t)s->point->nr_applied - 1, s->exit_code);
	fprintf(f, "set -e\ncd \"$(dirname \"$0\")\"\n");
	replay_cmd(&c, a, self, "last-good.img", good ? good->name : "0");
	write_cmd(f, &c, NULL);
	replay_cmd(&c, a, self, "first-bad.img", s->name);
	write_cmd(f, &c, NULL);
	dump_cmd(&c, a, self, from, to);
	write_cmd(f, &c, " >entries.txt");
	state_env(run, s, "first-bad.img", write_env, f);
	fprintf(f, "exec");
	for (int i = 0; i < a->cmd_argc; i++) {
		char *arg = replace_braces(a->cmd[i], "first-bad.img");

		fputc(' ', f);
		shell_quote(f, arg ? arg : a->cmd[i]);
		free(arg);
	}
	fprintf(f, "\n");
	if (fclose(f))
		fprintf(stderr, "flushlog check: cannot write '%s'\n", path);
	chmod(path, 0755);
	snprintf(path, sizeof(path), "%s/checker.out", dir);
	move_file(s->output, path);
	/* the reproducer's first three commands, run here */
	replay_cmd(&c, a, self, "last-good.img", good ? good->name : "0");
	built = !run_cmd(&c, dir, NULL);
	replay_cmd(&c, a, self, "first-bad.img", s->name);
	built = !run_cmd(&c, dir, NULL) && built;
	dump_cmd(&c, a, self, from, to);
	built = !run_cmd(&c, dir, "entries.txt") && built;
	if (!built)
		fprintf(stderr, "flushlog check: could not rebuild the images in '%s'\n",
			dir);
	if (good)
		printf("  saved in %s (last good: point:%" PRIu64 ")\n", dir,
		       good->point->number);
	else
		printf("  saved in %s (last good: the base)\n", dir);
}

static const char *
result_name(const struct state_result *s)
{
	return s->timed_out ? "timeout" : s->exit_code ? "fail" : "pass";
}

/*
 * One state object a line, between a first line with the counts and a
 * last line "]}": --resume reads the state lines back.
 */
static void
write_json(const struct check_run *run, FILE *out)
{
	fprintf(out, "{\"log\":");
	json_string(out, run->args->log_path);
	fprintf(out, ",\"entries\":%" PRIu64 ",\"finished\":%s,\"checked\":%zu,\"passed\":%zu,\"failed\":%zu,\"timeouts\":%zu,\"states\":[",
		fl_log_info(run->log)->nr_entries,
		run->finished ? "true" : "false", run->done,
		run->done - run->failed, run->failed, run->timeouts);
	for (size_t i = 0, n = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];

		if (s->exit_code < 0)
			continue;
		fprintf(out, "%s\n{\"point\":%" PRIu64 ",\"kind\":\"%s\",\"entry\":%" PRId64 ",\"spec\":",
			n++ ? "," : "", s->point->number,
			fl_point_kind_name(s->point->kind),
			(int64_t)s->point->nr_applied - 1);
		json_string(out, s->spec);
		fprintf(out, ",\"state\":");
		json_string(out, s->name);
		fprintf(out, ",\"result\":\"%s\",\"exit\":%d,\"seconds\":%.3f}",
			result_name(s), s->exit_code, s->seconds);
	}
	fprintf(out, "\n]}\n");
}

/* The start of a checker's output, for a report. */
static void
xml_file_head(FILE *out, const char *path)
{
	char buf[4096];
	FILE *f = path ? fopen(path, "r") : NULL;
	size_t n;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	cli_xml_text(out, buf);
}

static void
write_junit(const struct check_run *run, FILE *out)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(out, "<testsuite name=\"flushlog check\" tests=\"%zu\" failures=\"%zu\">\n",
		run->done, run->failed);
	for (size_t i = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];

		if (s->exit_code < 0)
			continue;
		fprintf(out, "  <testcase classname=\"");
		cli_xml_text(out, run->args->log_path);
		fprintf(out, "\" name=\"point:%" PRIu64 " ", s->point->number);
		cli_xml_text(out, s->spec);
		fprintf(out, " state:%s", s->name);
		fprintf(out, "\" time=\"%.3f\"", s->seconds);
		if (!s->exit_code) {
			fprintf(out, "/>\n");
			continue;
		}
		if (s->timed_out)
			fprintf(out, ">\n    <failure type=\"timeout\" message=\"timed out: killed after %.0f s\">",
				s->seconds);
		else
			fprintf(out, ">\n    <failure message=\"checker exited %d\">",
				s->exit_code);
		if (!s->carried)
			xml_file_head(out, s->output);
		fprintf(out, "</failure>\n  </testcase>\n");
	}
	fprintf(out, "</testsuite>\n");
}

/*
 * Write a report under a temporary name beside path, then rename it: a
 * run killed at any moment leaves the last whole report.
 */
static int
write_report(const char *path, void (*fn)(const struct check_run *, FILE *),
	     const struct check_run *run)
{
	mode_t mask = umask(0);
	char *tmp;
	FILE *f;
	int fd;

	umask(mask);
	if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
		return -1;
	fd = mkostemp(tmp, O_CLOEXEC);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "flushlog check: cannot write '%s': %s\n", path,
			strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return -1;
	}
	fchmod(fd, 0666 & ~mask);
	fn(run, f);
	if (fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "flushlog check: cannot write '%s': %s\n", path,
			strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

/* The --json and --junit reports as they stand; after an error, no more. */
static void
save_reports(struct check_run *run)
{
	const struct check_args *a = run->args;

	if (!run->report_error &&
	    ((a->json && write_report(a->json, write_json, run)) ||
	     (a->junit && write_report(a->junit, write_junit, run))))
		run->report_error = true;
	run->reports_dirty = false;
	run->reports_saved = now_seconds();
}

static int
by_name(const void *x, const void *y)
{
	const struct state_result *const *a = x, *const *b = y;

	return strcmp((*a)->name, (*b)->name);
}

/* In a report's state line, the text after "key": up to its end. */
static bool
json_field(const char *line, const char *key, char *buf, size_t len)
{
	char pattern[32];
	const char *at;
	size_t n;

	snprintf(pattern, sizeof(pattern), ",\"%s\":", key);
	at = strstr(line, pattern);
	if (!at)
		return false;
	at += strlen(pattern);
	if (*at == '"')
		at++;
	n = strcspn(at, "\",}");
	if (n >= len)
		return false;
	memcpy(buf, at, n);
	buf[n] = '\0';
	return true;
}

/* A state line of a report into the state it names; -EINVAL if bad. */
static int
carry_result(struct check_run *run, struct state_result **index,
	     const char *line)
{
	char name[FL_STATE_NAME_MAX], result[16], code[16], secs[32], *end;
	struct state_result key, *k = &key, **found, *s;
	long exit_code;

	if (!json_field(line, "state", name, sizeof(name)) ||
	    !json_field(line, "result", result, sizeof(result)) ||
	    !json_field(line, "exit", code, sizeof(code)) ||
	    !json_field(line, "seconds", secs, sizeof(secs)))
		return -EINVAL;
	exit_code = strtol(code, &end, 10);
	if (*end || exit_code < 0 || exit_code > 255 ||
	    (!strcmp(result, "pass") != !exit_code) ||
	    (strcmp(result, "pass") && strcmp(result, "fail") &&
	     strcmp(result, "timeout")))
		return -EINVAL;
	snprintf(key.name, sizeof(key.name), "%s", name);
	found = bsearch(&k, index, run->nr_states, sizeof(*index), by_name);
	if (!found) {
		fprintf(stderr, "flushlog check: --resume: the report has state %s, which this check does not plan (another log, or other options?)\n",
			name);
		return -ENOENT;
	}
	s = *found;
	if (s->exit_code >= 0)
		return 0;
	s->exit_code = (int)exit_code;
	s->seconds = strtod(secs, NULL);
	s->timed_out = !strcmp(result, "timeout");
	s->carried = true;
	run->done++;
	run->carried++;
	if (s->exit_code) {
		run->failed++;
		run->timeouts += s->timed_out;
	}
	return 0;
}

/*
 * --resume REPORT: the states with a result in REPORT (one state object
 * a line, as write_json() puts them) are done; their results are carried
 * into this run's report and summary.
 */
static int
load_resume(struct check_run *run)
{
	const char *path = run->args->resume;
	struct state_result **index;
	size_t cap = 0, lineno = 0;
	char *line = NULL;
	int ret = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "flushlog check: --resume: cannot open '%s': %s\n",
			path, strerror(errno));
		return -EINVAL;
	}
	index = calloc(run->nr_states ? run->nr_states : 1, sizeof(*index));
	if (!index) {
		fclose(f);
		return -ENOMEM;
	}
	for (size_t i = 0; i < run->nr_states; i++)
		index[i] = &run->states[i];
	qsort(index, run->nr_states, sizeof(*index), by_name);
	while (!ret && getline(&line, &cap, f) > 0) {
		lineno++;
		if (lineno == 1 && strncmp(line, "{\"log\":", 7))
			ret = -EINVAL;
		else if (!strncmp(line, "{\"point\":", 9))
			ret = carry_result(run, index, line);
	}
	if (ret == -EINVAL)
		fprintf(stderr, "flushlog check: --resume: '%s' line %zu is not from a 'flushlog check --json' report\n",
			path, lineno);
	free(line);
	free(index);
	fclose(f);
	if (ret)
		return -EINVAL;
	printf("%zu states already checked in '%s'\n", run->carried, path);
	if (run->failed && !run->args->keep_going)
		run->stop = true;
	return 0;
}

static void
summarise(const struct check_run *run, const char *self)
{
	printf("%8s %-6s %10s %-24s %-24s %s\n", "point", "kind", "entry",
	       "spec", "state", "result");
	for (size_t i = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];

		if (!s->exit_code || s->exit_code < 0)
			continue;
		printf("%8" PRIu64 " %-6s %10" PRId64 " %-24s %-24s ",
		       s->point->number, fl_point_kind_name(s->point->kind),
		       (int64_t)s->point->nr_applied - 1, s->spec, s->name);
		if (s->timed_out)
			printf("TIMEOUT (killed after %.0f s)", s->seconds);
		else
			printf("FAIL (exit %d)", s->exit_code);
		printf("%s\n", s->carried ? " (from --resume)" : "");
		if (s->carried)
			continue;
		if (run->args->save_dir)
			save_failure(run, s, self);
		else if (s->output)
			unlink(s->output);
	}
	printf("%zu states checked: %zu passed, %zu failed", run->done,
	       run->done - run->failed, run->failed);
	if (run->timeouts)
		printf(" (%zu timed out)", run->timeouts);
	if (run->carried)
		printf(", %zu of them from '%s'", run->carried, run->args->resume);
	printf("%s\n", run->done < run->nr_states ?
	       " (stopped at the first failure)" : "");
}

static void
free_states(struct check_run *run)
{
	for (size_t i = 0; i < run->nr_states; i++) {
		free(run->states[i].image);
		free(run->states[i].output);
	}
	free(run->states);
}

static int
run_check(const struct cli_command *cmd, int argc, char **argv)
{
	struct check_run run = { .work_fd = -1 };
	struct fl_error err = { 0 };
	struct fl_point *points = NULL;
	struct check_args a;
	char self[PATH_MAX];
	ssize_t n;
	int ret;

	parse_args(cmd, argc, argv, &a);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(self, sizeof(self), "flushlog");
	ret = cli_open_ordered_log(cmd, a.log_path, a.check_order, &run.log);
	if (ret)
		return ret;
	run.args = &a;
	run.progress = !a.quiet && isatty(STDERR_FILENO);
	if (make_work_dir(&run, &a)) {
		fl_log_close(run.log);
		return EXIT_FAILED;
	}
	catch_signals(&run);
	ret = choose_states(&run, &points);
	if (!ret && a.resume)
		ret = load_resume(&run);
	if (ret) {
		release_signals(&run);
		free_states(&run);
		free(points);
		fl_log_close(run.log);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	}
	if (!run.nr_states)
		cli_warn(cmd, "no state to check: no crash point of the chosen kinds%s",
			 a.from ? " from --from on" : "");
	ret = run_states(&run, &err);
	run.finished = !ret && !run.cannot_run;
	if (a.json || a.junit) {
		run.report_error = false;
		save_reports(&run);
	}
	if (run.cannot_run) {
		ret = EXIT_USAGE;
	} else if (ret) {
		ret = cli_report(cmd, &err);
	} else {
		ret = run.failed || run.report_error ? EXIT_FAILED : EXIT_OK;
		summarise(&run, self);
	}
	release_signals(&run);
	free_states(&run);
	free(points);
	fl_log_close(run.log);
	return ret;
}

const struct cli_command cmd_check = {
	.name = "check",
	.synopsis = "[options] LOG -- CMD [ARGS...]",
	.summary = "Run a checker on the state at every crash point.",
	.description =
		"For each chosen crash point, materialises the data device's state in a\n"
		"file of its own and runs CMD with every {} in ARGS replaced by that\n"
		"file's path; exit 0 means consistent.  The environment names the state:\n"
		"FLUSHLOG_POINT, FLUSHLOG_ENTRY, FLUSHLOG_SPEC, FLUSHLOG_KIND,\n"
		"FLUSHLOG_MARK (for marks), FLUSHLOG_LAST_MARK, FLUSHLOG_AFTER_MARK,\n"
		"FLUSHLOG_STATE_NAME and FLUSHLOG_STATE.  States come from one pass over the log; each is a\n"
		"reflink or sparse copy, so a checker may write to its file (mount it,\n"
		"replay a journal) without touching the next state.  --states epoch adds\n"
		"the states a volatile write cache can leave between flushes (up to K\n"
		"writes in flight or not yet flushed also on the media), --states torn\n"
		"those with one such write there in part, --states discard the one where\n"
		"every discard kept its old data; the start (point 0, or the --from\n"
		"position) is a crash point too.  The count is printed first; more than\n"
		"1000000 states must be sampled with --max-states (exit 2 otherwise).\n"
		"Files go in a private folder, flushlog-check.XXXXXX in --workdir, removed\n"
		"at the end, on an error and on SIGINT, SIGTERM or SIGHUP.  Each checker\n"
		"runs in a process group of its own; with --timeout, one still running\n"
		"after SECONDS gets SIGTERM, its group SIGKILL 5 seconds later, and its\n"
		"result is 'timeout', a failure.  A checker that cannot be started, or\n"
		"exits 126 or 127 (a shell's 'not executable' and 'not found'), stops the\n"
		"run with exit 2: keep those two codes for that.  The log must be in\n"
		"durability order (checked as 'flushlog info' does; exit 3 otherwise);\n"
		"--no-order-check is for logs known to be misordered, whose states may\n"
		"be wrong.  --json and --junit are rewritten as states finish (at most\n"
		"once a second), so a killed run leaves a report of what it checked; the\n"
		"JSON has one state a line, and --resume REPORT takes the states REPORT\n"
		"has a result for as done, carrying their results over.  A log with no\n"
		"entries has two crash points, its start and its end: the base.\n"
		"Exit status 0 when every state passed, 1 when one failed or timed out,\n"
		"2 for a usage error or a checker that cannot run, 3 for a bad log.",
	.example =
		"  flushlog check --base before.img log.img -- e2fsck -fn {}\n"
		"  flushlog check -j 2 -k --save-failures fails --junit check.xml log.img -- ./fsck-state {}\n"
		"  flushlog check --states epoch,torn -K 1 --max-states 2000 log.img -- ./fsck-state {}\n"
		"  # 8 machines, one shard each (Slurm array, K = $SLURM_ARRAY_TASK_ID):\n"
		"  flushlog check --shard $SLURM_ARRAY_TASK_ID/8 --json shard.json log.img -- ./check {}",
	.options = check_options,
	.run = run_check,
};
