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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli.h"

enum {
	OPT_BASE, OPT_POINTS, OPT_STATES, OPT_MAX_REORDER, OPT_MAX_TORN,
	OPT_MAX_STATES, OPT_FROM, OPT_JOBS, OPT_SHARD, OPT_KEEP_GOING,
	OPT_SAVE, OPT_JSON, OPT_JUNIT, OPT_WORKDIR, OPT_QUIET,
};

static const struct cli_option check_options[] = {
	[OPT_BASE] = { "base", 'b', "IMAGE",
		       "the data device before the log began (default zeroes)" },
	[OPT_POINTS] = { "points", 'p', "KINDS",
			 "which points: flush,fua,mark,end or all (default all)" },
	[OPT_STATES] = { "states", 0, "MODELS",
			 "crash states at each point: prefix, epoch, torn, a comma list (default prefix)" },
	[OPT_MAX_REORDER] = { "max-reorder", 'K', "K",
			      "epoch: at most K possibly-durable writes a state (default 1)" },
	[OPT_MAX_TORN] = { "max-torn", 0, "N",
			   "torn: cut each write at N places at most (default 4)" },
	[OPT_MAX_STATES] = { "max-states", 0, "N",
			     "check N states, a deterministic sample, if there are more" },
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
	char image[4096];
	char output[4096];
};

struct check_run {
	const struct check_args *args;
	struct fl_log *log;
	struct state_result *states;
	size_t nr_states, next, done, failed, running;
	bool stop;		/* a failure without --keep-going */
	bool progress;
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
			kinds |= KIND_BIT(FL_POINT_FLUSH) | KIND_BIT(FL_POINT_FUA) |
				 KIND_BIT(FL_POINT_MARK) | KIND_BIT(FL_POINT_END);
		else if (!strcmp(word, "flush"))
			kinds |= KIND_BIT(FL_POINT_FLUSH);
		else if (!strcmp(word, "fua"))
			kinds |= KIND_BIT(FL_POINT_FUA);
		else if (!strcmp(word, "mark") || !strcmp(word, "marks"))
			kinds |= KIND_BIT(FL_POINT_MARK);
		else if (!strcmp(word, "end"))
			kinds |= KIND_BIT(FL_POINT_END);
		else
			cli_usage_error(cmd, "--points: unknown kind '%s' (flush, fua, mark, end, all)",
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
		else
			cli_usage_error(cmd, "--states: unknown model '%s' (prefix, epoch, torn)",
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
	int dst = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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

static void
set_env_u64(const char *name, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	setenv(name, buf, 1);
}

/*
 * Is this the state its point guarantees?  A reordered state can fold
 * into a plain name (its extras right after the point) without being one.
 */
static bool
is_prefix(const struct state_result *s)
{
	return !s->st.nr_extra && s->st.torn == FL_NO_ENTRY &&
	       s->st.base == s->point->nr_applied;
}

/*
 * FLUSHLOG_LAST_MARK: the label of the last mark among the point's entries,
 * for a checker that knows what each mark promised (an fsync oracle).
 */
static void
last_mark(const struct fl_log *log, uint64_t nr_applied)
{
	const struct fl_entry *e = fl_log_entries(log);

	for (uint64_t i = nr_applied; i-- > 0;)
		if (e[i].op == FLUSHLOG_OP_MARK) {
			setenv("FLUSHLOG_LAST_MARK", fl_log_label(log, i), 1);
			return;
		}
	unsetenv("FLUSHLOG_LAST_MARK");
}

/*
 * FLUSHLOG_AFTER_MARK: the first mark logged at or after the crash: nothing
 * issued after it can be in the state.  A prefix state is the crash at its
 * point; another may be a crash as late as the end of the point's epoch
 * (the next flush or FUA completion).  Unset when the log has no such mark.
 */
static void
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
		if (e[i].op == FLUSHLOG_OP_MARK) {
			setenv("FLUSHLOG_AFTER_MARK", fl_log_label(log, i), 1);
			return;
		}
	unsetenv("FLUSHLOG_AFTER_MARK");
}

/* In the child: the checker, with {} and FLUSHLOG_* filled in. */
static void __attribute__((noreturn))
exec_checker(const struct check_run *run, const struct state_result *s)
{
	const struct check_args *a = run->args;
	char **argv = calloc(a->cmd_argc + 1, sizeof(*argv));
	int fd;

	fd = open(s->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!argv || fd < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	for (int i = 0; i < a->cmd_argc; i++) {
		argv[i] = replace_braces(a->cmd[i], s->image);
		if (!argv[i])
			_exit(127);
	}
	set_env_u64("FLUSHLOG_POINT", s->point->number);
	set_env_u64("FLUSHLOG_ENTRY", s->point->nr_applied ?
		    s->point->nr_applied - 1 : 0);
	setenv("FLUSHLOG_SPEC", s->spec, 1);
	setenv("FLUSHLOG_STATE_NAME", s->name, 1);
	setenv("FLUSHLOG_STATE", s->image, 1);
	setenv("FLUSHLOG_KIND", fl_point_kind_name(s->point->kind), 1);
	if (s->point->kind == FL_POINT_MARK)
		setenv("FLUSHLOG_MARK", fl_log_label(run->log,
						     s->point->nr_applied - 1), 1);
	else
		unsetenv("FLUSHLOG_MARK");
	last_mark(run->log, s->point->nr_applied);
	after_mark(run->log, s->point->nr_applied, is_prefix(s));
	execvp(argv[0], argv);
	fprintf(stderr, "flushlog check: cannot run '%s': %s\n", argv[0],
		strerror(errno));
	_exit(127);
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

/* Wait for one checker; record its result and drop its image. */
static void
reap_one(struct check_run *run)
{
	int status;
	pid_t pid = wait(&status);

	if (pid <= 0)
		return;
	for (size_t i = 0; i < run->nr_states; i++) {
		struct state_result *s = &run->states[i];

		if (s->pid != pid)
			continue;
		s->pid = 0;
		s->seconds = elapsed(&s->start);
		s->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) :
			       128 + WTERMSIG(status);
		unlink(s->image);
		run->running--;
		run->done++;
		if (s->exit_code) {
			run->failed++;
			if (!run->args->keep_going)
				run->stop = true;
		}
		show_progress(run);
		return;
	}
}

static int
start_one(struct check_run *run, struct fl_replay *replay, int master,
	  uint64_t size, struct fl_error *err)
{
	struct state_result *s = &run->states[run->next++];
	int ret, image;

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
	ret = fl_state_apply(run->log, image, &s->st, err);
	if (close(image) && !ret) {
		cli_set_error(err, FL_ERR_OUTPUT, "cannot write '%s': %s",
			      s->image, strerror(errno));
		ret = -EIO;
	}
	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &s->start);
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0) {
		cli_set_error(err, FL_ERR_OUTPUT, "cannot fork: %s",
				 strerror(errno));
		s->pid = 0;
		return -errno;
	}
	if (!s->pid)
		exec_checker(run, s);
	run->running++;
	return 0;
}

/* The points of the wanted kinds, from --from on. */
static int
choose_points(struct check_run *run, const struct fl_point *all, size_t nr,
	      struct fl_point *chosen, size_t *nr_chosen)
{
	const struct check_args *a = run->args;
	struct fl_error err = { 0 };
	uint64_t first = 0;

	if (a->from && fl_log_resolve_point(run->log, a->from, &first, &err)) {
		fprintf(stderr, "flushlog check: --from: %s\n", err.msg);
		return -EINVAL;
	}
	*nr_chosen = 0;
	for (size_t i = 0; i < nr; i++)
		if ((a->kinds & KIND_BIT(all[i].kind)) && all[i].nr_applied >= first)
			chosen[(*nr_chosen)++] = all[i];
	return 0;
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
	chosen = calloc(nr, sizeof(*chosen));
	if (!chosen)
		return -ENOMEM;
	ret = choose_points(run, *points, nr, chosen, &nr_chosen);
	if (!ret && fl_log_states(run->log, chosen, nr_chosen, &a->states,
				  &states, &nr_states, &candidates, &err)) {
		fprintf(stderr, "flushlog check: %s\n", err.msg);
		ret = -EINVAL;
	}
	free(chosen);
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
		s->point = &(*points)[states[i].point - 1];
		s->exit_code = -1;
		fl_state_name(&s->st, s->name, sizeof(s->name));
		cli_point_spec(run->log, s->point, s->spec, sizeof(s->spec));
		snprintf(s->image, sizeof(s->image), "%s/state-%zu.img",
			 a->workdir, i);
		snprintf(s->output, sizeof(s->output), "%s/state-%zu.out",
			 a->workdir, i);
	}
	free(states);
	return 0;
}

/* The master image, at the base state, in the work folder. */
static int
open_master(const struct check_run *run, char *path, size_t len,
	    uint64_t *size, struct fl_error *err)
{
	const struct fl_log_info *info = fl_log_info(run->log);
	const char *base = run->args->base;
	int fd, base_fd;

	*size = info->data_sectors << FLUSHLOG_SECTOR_SHIFT;
	snprintf(path, len, "%s/master.img", run->args->workdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return cli_set_error(err, FL_ERR_OUTPUT, "cannot create '%s': %s",
				     path, strerror(errno)), -1;
	if (base) {
		base_fd = open(base, O_RDONLY | O_CLOEXEC);
		if (base_fd < 0 || cli_file_size(base_fd) < *size) {
			cli_set_error(err, FL_ERR_ARG, "base '%s': %s", base,
				      base_fd < 0 ? strerror(errno) :
				      "smaller than the logged device");
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

static int
run_states(struct check_run *run, struct fl_error *err)
{
	struct fl_replay *replay;
	char master_path[4096];
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

static void
write_replay(FILE *f, const struct check_args *a, const char *self,
	     const char *image, const char *state)
{
	fprintf(f, "%s replay -q -o %s --state %s", self, image, state);
	if (a->base) {
		fputs(" --base ", f);
		shell_quote(f, a->base);
	}
	fputc(' ', f);
	shell_quote(f, a->log_path);
	fputc('\n', f);
}

/*
 * DIR/point-N for a prefix state, DIR/state-NAME for another: the first
 * bad and the last good images, the checker's output, the entries between
 * them, and a reproducer.
 */
static void
save_failure(const struct check_run *run, const struct state_result *s,
	     const char *self)
{
	const struct check_args *a = run->args;
	const struct state_result *good = NULL;
	char dir[4096], path[4200];
	FILE *f;

	if (is_prefix(s))
		snprintf(dir, sizeof(dir), "%s/point-%" PRIu64, a->save_dir,
			 s->point->number);
	else
		snprintf(dir, sizeof(dir), "%s/state-%s", a->save_dir, s->name);
	if (mkdir(a->save_dir, 0755) && errno != EEXIST)
		return;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return;
	/* the last passing prefix state checked before this one */
	for (const struct state_result *t = run->states; t < s; t++)
		if (t->exit_code == 0 && t->st.base <= s->st.base &&
		    is_prefix(t))
			good = t;
	snprintf(path, sizeof(path), "%s/reproduce.sh", dir);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\n# state %s at point:%" PRIu64 " (%s, after entry %" PRId64 ") failed with exit %d\n",
		s->name, s->point->number, s->spec,
		(int64_t)s->point->nr_applied - 1, s->exit_code);
	fprintf(f, "set -e\ncd \"$(dirname \"$0\")\"\n");
	write_replay(f, a, self, "last-good.img", good ? good->name : "0");
	write_replay(f, a, self, "first-bad.img", s->name);
	fprintf(f, "%s dump --from %" PRIu64 " --to %" PRId64 " ", self,
		good ? good->st.base : 0, last_entry(&s->st));
	shell_quote(f, a->log_path);
	fprintf(f, " >entries.txt\nexec");
	for (int i = 0; i < a->cmd_argc; i++) {
		char *arg = replace_braces(a->cmd[i], "first-bad.img");

		fputc(' ', f);
		shell_quote(f, arg ? arg : a->cmd[i]);
		free(arg);
	}
	fprintf(f, "\n");
	fclose(f);
	chmod(path, 0755);
	snprintf(path, sizeof(path), "%s/checker.out", dir);
	rename(s->output, path);
	/* build the images and the entry list now, by the reproducer itself */
	snprintf(path, sizeof(path), "cd %s && sed '$d' reproduce.sh | sh",
		 dir);
	if (system(path))
		fprintf(stderr, "flushlog check: could not rebuild the images in '%s'\n",
			dir);
	if (good)
		printf("  saved in %s (last good: point:%" PRIu64 ")\n", dir,
		       good->point->number);
	else
		printf("  saved in %s (last good: the base)\n", dir);
}

static void
write_json(const struct check_run *run, FILE *out)
{
	fprintf(out, "{\"log\":");
	json_string(out, run->args->log_path);
	fprintf(out, ",\"checked\":%zu,\"passed\":%zu,\"failed\":%zu,\"states\":[",
		run->done, run->done - run->failed, run->failed);
	for (size_t i = 0, n = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];

		if (s->exit_code < 0)
			continue;
		fprintf(out, "%s{\"point\":%" PRIu64 ",\"kind\":\"%s\",\"entry\":%" PRId64 ",\"spec\":",
			n++ ? "," : "", s->point->number,
			fl_point_kind_name(s->point->kind),
			(int64_t)s->point->nr_applied - 1);
		json_string(out, s->spec);
		fprintf(out, ",\"state\":");
		json_string(out, s->name);
		fprintf(out, ",\"result\":\"%s\",\"exit\":%d,\"seconds\":%.3f}",
			s->exit_code ? "fail" : "pass", s->exit_code, s->seconds);
	}
	fprintf(out, "]}\n");
}

/* The start of a checker's output, for a report. */
static void
xml_file_head(FILE *out, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
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
		fprintf(out, ">\n    <failure message=\"checker exited %d\">",
			s->exit_code);
		xml_file_head(out, s->output);
		fprintf(out, "</failure>\n  </testcase>\n");
	}
	fprintf(out, "</testsuite>\n");
}

static int
write_report(const char *path, void (*fn)(const struct check_run *, FILE *),
	     const struct check_run *run)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "flushlog check: cannot write '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	fn(run, f);
	return fclose(f) ? -1 : 0;
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
		printf("%8" PRIu64 " %-6s %10" PRId64 " %-24s %-24s FAIL (exit %d)\n",
		       s->point->number, fl_point_kind_name(s->point->kind),
		       (int64_t)s->point->nr_applied - 1, s->spec, s->name,
		       s->exit_code);
		if (run->args->save_dir)
			save_failure(run, s, self);
		else
			unlink(s->output);
	}
	printf("%zu states checked: %zu passed, %zu failed%s\n", run->done,
	       run->done - run->failed, run->failed,
	       run->done < run->nr_states ? " (stopped at the first failure)" : "");
}

static int
run_check(const struct cli_command *cmd, int argc, char **argv)
{
	struct check_run run = { 0 };
	struct fl_error err = { 0 };
	struct fl_point *points = NULL;
	struct check_args a;
	char self[4096];
	ssize_t n;
	int ret;

	parse_args(cmd, argc, argv, &a);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(self, sizeof(self), "flushlog");
	ret = cli_open_log(cmd, a.log_path, 0, &run.log);
	if (ret)
		return ret;
	run.args = &a;
	run.progress = !a.quiet && isatty(STDERR_FILENO);
	ret = choose_states(&run, &points);
	if (ret) {
		free(run.states);
		free(points);
		fl_log_close(run.log);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	}
	for (size_t i = 0; i < run.nr_states; i++)
		unlink(run.states[i].output);
	ret = run_states(&run, &err);
	for (size_t i = 0; i < run.nr_states; i++)
		if (!run.states[i].exit_code)
			unlink(run.states[i].output);
	if (ret) {
		ret = cli_report(cmd, &err);
	} else {
		ret = run.failed ? EXIT_FAILED : EXIT_OK;
		if ((a.json && write_report(a.json, write_json, &run)) ||
		    (a.junit && write_report(a.junit, write_junit, &run)))
			ret = EXIT_FAILED;
		summarise(&run, self);
	}
	free(run.states);
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
		"those with one such write there in part; the count is printed first.\n"
		"Exit status 0 when every state passed, 1 when one failed.",
	.example =
		"  flushlog check --base before.img log.img -- e2fsck -fn {}\n"
		"  flushlog check -j 2 -k --save-failures fails --junit check.xml log.img -- ./fsck-state {}\n"
		"  flushlog check --states epoch,torn -K 1 --max-states 2000 log.img -- ./fsck-state {}\n"
		"  # 8 machines, one shard each (Slurm array, K = $SLURM_ARRAY_TASK_ID):\n"
		"  flushlog check --shard $SLURM_ARRAY_TASK_ID/8 --json shard.json log.img -- ./check {}",
	.options = check_options,
	.run = run_check,
};
