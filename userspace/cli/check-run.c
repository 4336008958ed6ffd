// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog check's engine: the private work folder and the signals that
 * clean it up, the choice of states, and the checkers: spawned, reaped
 * and killed at --timeout.
 *
 * Each job has one state image (libflushlog's fl_state_image) that only
 * moves forward through the log: a state costs the entries since the last
 * one and its own extras, saved and undone around its checker, whatever
 * the size of the image.  That is for checkers that only read (--images
 * in-place).  A checker that writes anyway is caught by the image's seal
 * and its image rebuilt from the base; by default (--images auto) the run
 * then gives each later state a copy of its own (a reflink where the
 * filesystem shares blocks, a sparse copy elsewhere), as --images copy
 * does from the start.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>

#include "check.h"

char *
replace_braces(const char *arg, const char *image)
{
	size_t n = 0, len = strlen(image);
	const char *at;
	char *out, *o;

	for (at = strstr(arg, "{}"); at; at = strstr(at + 2, "{}"))
		n++;
	out = malloc(strlen(arg) + n * len + 1);
	if (!out)
		return NULL;
	for (o = out; *arg;) {
		if (arg[0] == '{' && arg[1] == '}') {
			o = mempcpy(o, image, len);
			arg += 2;
		} else {
			*o++ = *arg++;
		}
	}
	*o = '\0';
	return out;
}

/* Grace between a timed-out checker's SIGTERM and its SIGKILL, seconds. */
#define KILL_GRACE	5.0
/* While states finish, the reports are rewritten at most this often. */
#define REPORT_INTERVAL	1.0
/* --state: a running checker's new output is shown this often, seconds. */
#define FOLLOW_INTERVAL	0.1

/* Where the promises of a state go: set() and the list of keys due. */
struct promise_env {
	env_fn set;
	void *ctx;
	char *due;		/* "KEY KEY ...", or NULL */
	size_t len;
	bool failed;		/* out of memory */
};

/* FLUSHLOG_PROMISE_KEY: the value due, or unset; a key due joins the list. */
static int
promise_to_env(void *ctx, const char *key, size_t key_len, const char *value)
{
	struct promise_env *pe = ctx;
	char *name, *due;

	if (asprintf(&name, "FLUSHLOG_PROMISE_%.*s", (int)key_len, key) < 0)
		return pe->failed = true, -ENOMEM;
	pe->set(pe->ctx, name, value);
	free(name);
	if (!value)
		return 0;
	due = realloc(pe->due, pe->len + key_len + 2);
	if (!due)
		return pe->failed = true, -ENOMEM;
	pe->due = due;
	if (pe->len)
		due[pe->len++] = ' ';
	memcpy(due + pe->len, key, key_len);
	pe->len += key_len;
	due[pe->len] = '\0';
	return 0;
}

/*
 * The promises a crash at p owes (fl_log_promises): each key's value in
 * FLUSHLOG_PROMISE_KEY, the keys due in FLUSHLOG_PROMISES.  The log's
 * promises were checked when it was opened (check_promises), so only
 * memory can fail here.
 */
static int
promises_env(const struct check_run *run, const struct fl_point *p,
	     env_fn set, void *ctx)
{
	struct promise_env pe = { set, ctx, NULL, 0, false };
	struct fl_error err = { 0 };
	int ret;

	/* a walk of every mark, for each state: not for a log with no promise */
	if (!run->has_promises) {
		set(ctx, "FLUSHLOG_PROMISES", NULL);
		return 0;
	}
	ret = fl_log_promises(run->log, p->nr_applied, promise_to_env, &pe, &err);
	set(ctx, "FLUSHLOG_PROMISES", ret ? NULL : pe.due);
	free(pe.due);
	return ret || pe.failed ? -ENOMEM : 0;
}

static int
any_key(void *ctx, const char *key, size_t key_len, const char *value)
{
	(void)key;
	(void)key_len;
	(void)value;
	*(bool *)ctx = true;
	return 0;
}

int
check_promises(struct check_run *run, const char *log_path)
{
	struct fl_error err = { 0 };
	int ret = fl_log_promises(run->log, UINT64_MAX, any_key,
				  &run->has_promises, &err);

	if (ret)
		fprintf(stderr, "flushlog check: %s: %s\n", log_path, err.msg);
	return ret;
}

/*
 * The environment that names a state to its checker (value NULL: unset),
 * given to set(): the checker's own, or the lines of a reproducer.  0, or
 * -ENOMEM.
 */
static int
state_vars(const struct check_run *run, const struct state_result *s,
	   const char *image, env_fn set, void *ctx, bool promises)
{
	const struct fl_point *p = s->point;
	uint32_t nr_devices = fl_log_info(run->log)->nr_devices;
	char point[24], entry[24], devices[FLUSHLOG_MAX_DEVICES * 42] = "";
	size_t used = 0;

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
	set(ctx, "FLUSHLOG_LAST_MARK", fl_log_last_mark(run->log, p->nr_applied));
	set(ctx, "FLUSHLOG_AFTER_MARK", fl_state_after_mark(run->log, s->st, p->nr_applied));
	/* a log of several devices: where each is in the image */
	for (uint32_t d = 0; d < nr_devices && nr_devices > 1; d++) {
		const struct fl_device *dev = fl_log_device(run->log, d);

		used += snprintf(devices + used, sizeof(devices) - used,
				 "%s%" PRIu64 "+%" PRIu64, d ? " " : "",
				 dev->image_sector, dev->sectors);
	}
	set(ctx, "FLUSHLOG_DEVICES", nr_devices > 1 ? devices : NULL);
	return promises ? promises_env(run, p, set, ctx) : 0;
}

int
state_env(const struct check_run *run, const struct state_result *s,
	  const char *image, env_fn set, void *ctx)
{
	return state_vars(run, s, image, set, ctx, true);
}

/*
 * A checker's environment, built in the parent: the run's own, each
 * FLUSHLOG_* variable state_env() names set or removed.
 */
struct checker_env {
	char **v;		/* NULL-terminated */
	size_t n, cap;
	char **made;		/* the NAME=VALUE strings made here */
	size_t nr_made, cap_made;
	bool failed;		/* out of memory */
};

static bool
env_room(char ***v, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 64;
	char **p;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	p = realloc(*v, c * sizeof(*p));
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

static void
env_set(void *ctx, const char *name, const char *value)
{
	struct checker_env *e = ctx;
	size_t len = strlen(name), kept = 0;
	char *var;

	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, len) || e->v[i][len] != '=')
			e->v[kept++] = e->v[i];
	e->n = kept;
	e->v[e->n] = NULL;
	if (!value || e->failed)
		return;
	if (!env_room(&e->made, &e->cap_made, e->nr_made + 1) ||
	    !env_room(&e->v, &e->cap, e->n + 2) ||
	    asprintf(&var, "%s=%s", name, value) < 0) {
		e->failed = true;
		return;
	}
	e->made[e->nr_made++] = var;
	e->v[e->n++] = var;
	e->v[e->n] = NULL;
}

static void
env_free(struct checker_env *e)
{
	for (size_t i = 0; i < e->nr_made; i++)
		free(e->made[i]);
	free(e->made);
	free(e->v);
}

/* The run's environment with state s's variables: 0, or -ENOMEM. */
static int
env_of_state(const struct check_run *run, const struct state_result *s,
	     struct checker_env *e)
{
	size_t n = 0;

	*e = (struct checker_env) { 0 };
	while (environ[n])
		n++;
	if (!env_room(&e->v, &e->cap, n + 1))
		return -ENOMEM;
	/* a promise is the log's alone: none comes from the caller's */
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "FLUSHLOG_PROMISE_", 17) &&
		    strncmp(environ[i], "FLUSHLOG_PROMISES=", 18))
			e->v[e->n++] = environ[i];
	e->v[e->n] = NULL;
	if (state_env(run, s, s->image, env_set, e))
		e->failed = true;
	return e->failed ? -ENOMEM : 0;
}

static uint64_t
fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

/*
 * Distinct states.  Two states with the same contents (an image of the
 * same bytes: fl_state_contents_name) and the same context (every
 * variable state_env() gives a checker but those that only name the
 * state) get the same verdict from a checker that decides by what it is
 * given, so the run checks the first and gives the later ones its result
 * ("same as").  On a real log many crash points are alike: only marks or
 * empty flushes lie between them.  --every-state checks each anyway, for
 * a checker that decides by a state's name, number or kind.
 */
static const char *const naming_vars[] = {
	"FLUSHLOG_POINT", "FLUSHLOG_ENTRY", "FLUSHLOG_SPEC", "FLUSHLOG_KIND",
	"FLUSHLOG_STATE_NAME", "FLUSHLOG_STATE",
};

/* --context: the variables of each part of a state's context */
static const struct {
	const char *name;
	unsigned int context;
	bool prefix;		/* name is a prefix */
} context_vars[] = {
	{ "FLUSHLOG_MARK", CONTEXT_MARK, false },
	{ "FLUSHLOG_LAST_MARK", CONTEXT_LAST_MARK, false },
	{ "FLUSHLOG_AFTER_MARK", CONTEXT_AFTER_MARK, false },
	{ "FLUSHLOG_PROMISES", CONTEXT_PROMISES, false },
	{ "FLUSHLOG_PROMISE_", CONTEXT_PROMISES, true },
};

struct identity_ctx {
	FILE *f;
	unsigned int context;
};

static void
identity_add(void *ctx, const char *name, const char *value)
{
	struct identity_ctx *id = ctx;

	if (!value)
		return;
	for (size_t i = 0; i < sizeof(naming_vars) / sizeof(naming_vars[0]); i++)
		if (!strcmp(name, naming_vars[i]))
			return;
	for (size_t i = 0; i < sizeof(context_vars) / sizeof(context_vars[0]); i++)
		if ((context_vars[i].prefix ?
		     !strncmp(name, context_vars[i].name, strlen(context_vars[i].name)) :
		     !strcmp(name, context_vars[i].name)) &&
		    !(id->context & context_vars[i].context))
			return;
	/* a value may hold any byte but NUL: NUL ends each */
	fprintf(id->f, "%s=%s", name, value);
	fputc('\0', id->f);
}

/* State s's identity, allocated, *len its length: 0, or -ENOMEM. */
static int
state_identity(const struct check_run *run, const struct state_result *s,
	       char **identity, size_t *len)
{
	char contents[FL_STATE_NAME_MAX];
	struct identity_ctx id = { NULL, run->args->context };
	FILE *f;
	int ret;

	*identity = NULL;
	f = id.f = open_memstream(identity, len);
	if (!f)
		return -ENOMEM;
	ret = fl_state_contents_name(run->log, s->st, contents, sizeof(contents));
	if (!ret) {
		fputs(contents, f);
		fputc('\0', f);
		/* the promises cost a walk of them: not when left out */
		ret = state_vars(run, s, "", identity_add, &id,
				 id.context & CONTEXT_PROMISES);
	}
	if (fclose(f) || ret) {
		free(*identity);
		*identity = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int
grow_identities(struct check_run *run)
{
	size_t slots = run->identity_slots ? 2 * run->identity_slots : 1024;
	uint64_t *hash = calloc(slots, sizeof(*hash));
	size_t *state = calloc(slots, sizeof(*state));

	if (!hash || !state) {
		free(hash);
		free(state);
		return -ENOMEM;
	}
	for (size_t j = 0; j < run->identity_slots; j++) {
		size_t i;

		if (!run->identity_state[j])
			continue;
		for (i = run->identity_hash[j] & (slots - 1); state[i];
		     i = (i + 1) & (slots - 1))
			;
		hash[i] = run->identity_hash[j];
		state[i] = run->identity_state[j];
	}
	free(run->identity_hash);
	free(run->identity_state);
	run->identity_hash = hash;
	run->identity_state = state;
	run->identity_slots = slots;
	return 0;
}

/*
 * The earlier state the same as s, into *same (NULL if none, and s is
 * remembered as the first of its kind): 0, or -ENOMEM.  A hash match is
 * compared in full, the other state's identity built again: matches are
 * what saves a checker, and a table of hashes stays small however many
 * states there are.
 */
static int
find_same(struct check_run *run, struct state_result *s,
	  struct state_result **same)
{
	char *identity, *other;
	size_t len, other_len, i;
	uint64_t h;
	int ret;

	*same = NULL;
	if ((2 * (run->nr_identities + 1) > run->identity_slots &&
	     grow_identities(run)) || state_identity(run, s, &identity, &len))
		return -ENOMEM;
	h = fnv1a(1469598103934665603ULL, identity, len);
	for (i = h & (run->identity_slots - 1); run->identity_state[i];
	     i = (i + 1) & (run->identity_slots - 1)) {
		struct state_result *t = &run->states[run->identity_state[i] - 1];

		if (run->identity_hash[i] != h)
			continue;
		ret = state_identity(run, t, &other, &other_len);
		if (ret) {
			free(identity);
			return ret;
		}
		if (len == other_len && !memcmp(identity, other, len))
			*same = t;
		free(other);
		if (*same)
			break;
	}
	free(identity);
	if (!*same) {
		run->identity_hash[i] = h;
		run->identity_state[i] = (size_t)(s - run->states) + 1;
		run->nr_identities++;
	}
	return 0;
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
void
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
void
restore_signals(void)
{
	for (size_t i = 0; i < NR_FATAL; i++)
		sigaction(fatal_signals[i], &saved_actions[i], NULL);
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

/* Remove the work folder, then give the signals back. */
void
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
int
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

/* The checker's argv, {} filled in: NULL-terminated, or NULL. */
static char **
checker_argv(const struct check_run *run, const struct state_result *s)
{
	const struct check_args *a = run->args;
	char **argv = calloc(a->cmd_argc + 1, sizeof(*argv));

	for (int i = 0; argv && i < a->cmd_argc; i++) {
		argv[i] = replace_braces(a->cmd[i], s->image);
		if (!argv[i]) {
			while (i--)
				free(argv[i]);
			free(argv);
			argv = NULL;
		}
	}
	return argv;
}

/*
 * In the vfork() child: the checker, in a process group of its own (so
 * that a timeout kills all it started).  It shares the parent's memory
 * until exec, so it only makes system calls: argv and envp were built
 * before.  The pipe closes on exec; a failure before that goes up it.
 */
static void __attribute__((noreturn))
exec_checker(const struct state_result *s, char **argv, char **envp,
	     pid_t parent, int pipe_fd)
{
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
	execvpe(argv[0], argv, envp);
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

/*
 * "12/400 states, 1 failed, ETA 3m05s": the ETA from this run's pace, the
 * states carried over by --resume neither done by it nor left to do.
 */
static void
show_progress(struct check_run *run, bool now)
{
	char eta[32];

	progress_eta(&run->progress, run->done - run->carried,
		     run->nr_states - run->carried, eta, sizeof(eta));
	progress_show(&run->progress, now, "%zu/%zu states, %zu failed%s",
		      run->done, run->nr_states, run->failed, eta);
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
		progress_clear(&run->progress);
		fprintf(stderr, "flushlog check: cannot run the checker '%s': %s%s%s\n",
			run->args->cmd[0], why, *detail ? ": " : "", detail);
	}
	run->cannot_run = true;
	run->stop = true;
}

/* A checker wrote to its image in place: in auto mode, copies from now on. */
static void
note_rewrite(struct check_run *run, const struct state_result *s)
{
	run->rewrites++;
	if (run->args->images != IMAGES_AUTO || run->copying)
		return;
	run->copying = true;
	progress_clear(&run->progress);
	fprintf(stderr, "flushlog check: the checker wrote to the image of state %s; the states after it get copies of their own (--images copy from the start)\n",
		s->name);
}

/*
 * A checker is done with its image: a copy goes, an image in place gets
 * its job's state back (rebuilt from the base if the checker wrote to it).
 */
static void
release_image(struct check_run *run, struct state_result *s)
{
	int ret;

	if (!s->in_place) {
		unlink(s->image);
	} else {
		ret = fl_state_image_leave(s->slot->image, &run->image_err);
		if (ret == 1)
			note_rewrite(run, s);
		if (ret < 0 && !run->image_ret) {
			run->image_ret = ret;
			run->stop = true;
		}
	}
	s->slot->state = NULL;
	s->slot = NULL;
	s->in_place = false;
}

/*
 * --state: what the checker has written to its output since the last
 * look, copied to stderr as it comes; at its end (last), the rest, and
 * the file closed.  The output file stays what the reports and a failure
 * folder take it from.
 */
static void
follow_output(struct check_run *run, bool last)
{
	char buf[4096];
	ssize_t n;

	if (run->follow_fd < 0)
		return;
	progress_clear(&run->progress);
	while ((n = read(run->follow_fd, buf, sizeof(buf))) > 0 ||
	       (n < 0 && errno == EINTR))
		if (n > 0 && write(STDERR_FILENO, buf, (size_t)n) < 0)
			break;	/* nowhere to show it: the file still has it */
	if (last) {
		close(run->follow_fd);
		run->follow_fd = -1;
	}
}

/* A state's result is in: count it. */
static void
count_result(struct check_run *run, struct state_result *s)
{
	run->done++;
	if (state_failed(s)) {
		run->failed++;
		run->timeouts += s->timed_out;
		if (!run->args->keep_going)
			run->stop = true;
	} else if (s->output) {
		unlink(s->output);
	}
	run->reports_dirty = true;
	if (progress_now() - run->reports_saved >= REPORT_INTERVAL)
		save_reports(run, false);
	show_progress(run, run->done == run->nr_states);
}

/*
 * Is s's result one for the states the same as s?  Not a timeout, nor a
 * kill by a signal: those tell of the machine's load or of the run, not
 * of what the state holds.
 */
static bool
result_shared(const struct state_result *s)
{
	return !s->timed_out && s->exit_code < 128;
}

/* s is the same as an earlier state, which has its result: s has it too. */
static void
take_result(struct check_run *run, struct state_result *s)
{
	s->exit_code = s->same_as->exit_code;
	s->timed_out = s->same_as->timed_out;
	s->seconds = 0;
	run->same++;
	count_result(run, s);
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
	/*
	 * What it started may outlive it; in place, nothing may go on
	 * writing to the image once it has been given back.
	 */
	if (s->timed_out || s->in_place)
		kill(-pid, SIGKILL);
	follow_output(run, true);
	release_image(run, s);
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
	count_result(run, s);
	for (struct state_result *t = s->waiting, *next; t; t = next) {
		size_t i = (size_t)(t - run->states);

		next = t->next_waiting;
		t->next_waiting = NULL;
		if (result_shared(s)) {
			take_result(run, t);
			continue;
		}
		/* checked after all: start_one() comes back for it */
		t->same_as = NULL;
		t->check_alone = true;
		if (i < run->next)
			run->next = i;
	}
	s->waiting = NULL;
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
	double now = progress_now(), next = enforce_timeouts(run, now);
	struct timespec ts;
	sigset_t chld;

	if (run->reports_dirty) {
		double due = run->reports_saved + REPORT_INTERVAL;

		if (due <= now)
			save_reports(run, false);
		else if (!next || due < next)
			next = due;
	}
	/* --state: its checker's output is looked at this often */
	if (run->follow_fd >= 0 && (!next || next > now + FOLLOW_INTERVAL))
		next = now + FOLLOW_INTERVAL;
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
	follow_output(run, false);
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

/* The child's pid, or -errno. */
static pid_t __attribute__((noinline))
vfork_checker(const struct state_result *s, char **argv, char **envp,
	      int pipe_fd)
{
	pid_t parent = getpid(), pid = vfork();

	if (!pid)
		exec_checker(s, argv, envp, parent, pipe_fd);
	return pid < 0 ? -errno : pid;
}

static void
free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/*
 * Start the checker; its exec's success or errno comes up a CLOEXEC pipe.
 * vfork(), not fork(): copying the page tables of a process that holds a
 * long log's index would cost each state in proportion to the log.
 */
static int
spawn_checker(struct check_run *run, struct state_result *s,
	      struct fl_error *err)
{
	char **argv = checker_argv(run, s);
	struct exec_failure fail;
	struct checker_env env;
	sigset_t fatal, old;
	int fds[2], ret;
	ssize_t n;

	ret = env_of_state(run, s, &env);
	if (!argv || ret) {
		cli_set_error(err, FL_ERR_OUTPUT, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		cli_set_error(err, FL_ERR_OUTPUT, "cannot make a pipe: %s",
			      strerror(errno));
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &s->start);
	/*
	 * The handler must see the pid of every child it has to kill, and
	 * must not run in the child, which shares its memory.
	 */
	fatal_set(&fatal);
	sigprocmask(SIG_BLOCK, &fatal, &old);
	s->pid = vfork_checker(s, argv, env.v, fds[1]);
	ret = s->pid < 0 ? s->pid : 0;
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
		goto out;
	}
	do
		n = read(fds[0], &fail, sizeof(fail));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n != sizeof(fail)) {	/* it is running the checker */
		s->deadline = run->args->timeout ?
			      progress_now() + run->args->timeout : 0;
		/* made before exec: --state shows it from its first byte */
		if (run->args->state)
			run->follow_fd = open(s->output, O_RDONLY | O_CLOEXEC);
		goto out;
	}
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
	s->pid = 0;
	run->running--;
	release_image(run, s);
	unlink(s->output);
	if (fail.stage == 0) {
		cli_set_error(err, FL_ERR_OUTPUT, "cannot create '%s': %s",
			      s->output, strerror(fail.err));
		ret = -fail.err;
		goto out;
	}
	checker_cannot_run(run, strerror(fail.err), NULL);
out:
	free_argv(argv);
	env_free(&env);
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

/* A job slot whose image no checker uses: opened on first use. */
static struct job_slot *
free_slot(struct check_run *run, struct fl_error *err)
{
	struct job_slot *slot = NULL;
	char path[PATH_MAX + 32];

	for (unsigned int i = 0; i < run->args->jobs && !slot; i++)
		if (!run->slots[i].state)
			slot = &run->slots[i];
	if (!slot || slot->image)
		return slot;
	snprintf(path, sizeof(path), "%s/job-%zu.img", run->work_dir,
		 (size_t)(slot - run->slots));
	if (fl_state_image_open(run->log, path, run->base_fd, &slot->image, err))
		return NULL;
	return slot;
}

static int
start_one(struct check_run *run, struct fl_error *err)
{
	struct state_result *s = &run->states[run->next], *same = NULL;
	struct job_slot *slot;
	int ret, fd;

	/*
	 * After a rewind to a state that waited for a timed-out one, the
	 * states seen before are passed over: all but one still to check
	 * alone (a second rewind must not check a checked one again).
	 */
	if (s->visited && !(s->check_alone && s->exit_code < 0 && !s->pid)) {
		run->next++;
		return 0;
	}
	s->visited = true;
	if (!run->args->every_state && !s->check_alone &&
	    find_same(run, s, &same)) {
		cli_set_error(err, FL_ERR_OUTPUT, "out of memory");
		return -ENOMEM;
	}
	if (s->exit_code >= 0) {	/* a result from --resume */
		run->next++;
		return 0;
	}
	if (same && same->exit_code >= 0 && !result_shared(same))
		same = NULL;	/* checked on its own */
	if (same) {
		run->next++;
		s->same_as = same;
		if (same->exit_code >= 0) {
			take_result(run, s);
		} else {	/* still running */
			s->next_waiting = same->waiting;
			same->waiting = s;
		}
		return 0;
	}
	slot = free_slot(run, err);
	if (!slot)
		return -1;
	run->next++;
	ret = name_files(run, s, err);
	if (!ret)
		ret = fl_state_image_enter(slot->image, s->st, err);
	if (ret)
		return ret;
	slot->state = s;
	s->slot = slot;
	if (run->copying) {
		fd = fl_state_image_copy(slot->image, s->image, err);
		if (fd < 0)
			return fd;
		close(fd);
	} else {
		free(s->image);
		s->image = strdup(fl_state_image_path(slot->image));
		if (!s->image) {
			cli_set_error(err, FL_ERR_OUTPUT, "out of memory");
			return -ENOMEM;
		}
		s->in_place = true;
	}
	return spawn_checker(run, s, err);
}

/*
 * The points of the wanted kinds, from --from on, up to the position --to
 * names: run->points.
 */
static int
choose_points(struct check_run *run)
{
	const struct check_args *a = run->args;
	struct fl_points *all = NULL;
	struct fl_error err = { 0 };
	uint64_t first, last;
	int ret;

	ret = cli_parse_point_range(&cmd_check, run->log, a->from, a->to,
				    &first, &last);
	if (ret)
		return ret == EXIT_FAILED ? -ENOMEM : -EINVAL;
	ret = fl_log_points(run->log, &all, &err);
	if (!ret)
		ret = fl_points_select(all, a->kinds, first, last, &run->points,
				       &err);
	fl_points_free(all);
	if (ret)
		fprintf(stderr, "flushlog check: %s\n", err.msg);
	return ret == -ENOMEM ? ret : ret ? -EINVAL : 0;
}

/* The chosen point numbered number: they are in ascending order. */
static const struct fl_point *
point_numbered(const struct fl_points *points, uint64_t number)
{
	size_t lo = 0, hi = fl_points_count(points);

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fl_points_get(points, mid)->number <= number)
			lo = mid;
		else
			hi = mid;
	}
	return fl_points_get(points, lo);
}

/*
 * What --resume compares, and flushlog merge: a plan is the digest of the
 * log's entries (the log digest) and then of the names of the states
 * planned, so that a report of another log or other options is refused
 * rather than its results carried over.  A shard's plan has its own
 * states; plan_all has every shard's, the plan of a run with no --shard,
 * which merge can compute from the shards' reports alone.
 */
static uint64_t
log_digest(const struct fl_log *log)
{
	uint64_t h = 1469598103934665603ULL;
	const struct fl_entry *e;

	for (uint64_t i = 0; (e = fl_log_entry(log, i)); i++) {
		uint64_t f[5] = { e->sector, e->nr_sectors, e->op, e->flags,
				  e->data_crc };

		h = fnv1a(h, f, sizeof(f));
		/* one device's digests stay what they were */
		if (fl_log_info(log)->nr_devices > 1)
			h = fnv1a(h, &e->device, sizeof(e->device));
	}
	return h;
}

uint64_t
plan_add_state(uint64_t plan, const char *name)
{
	return fnv1a(plan, name, strlen(name) + 1);
}

struct states_call {
	const struct fl_log *log;
	const struct fl_points *points;
	const struct fl_state_opts *opts;
	struct fl_states **states;
	uint64_t *candidates;
	struct fl_error *err;
};

/* fl_log_states(): counting and listing take a while on a long log */
static int
call_states(void *arg)
{
	struct states_call *c = arg;

	return fl_log_states(c->log, c->points, c->opts, sizeof(*c->opts),
			     c->states, c->candidates, c->err);
}

/*
 * --state NAME: the planned state of that name (the later point's, where
 * the end and the last crash point before it, holding the same entries,
 * both plan it), or a usage error
 * that says why there is none (a name that names no state of this log,
 * or a state these points and models do not hold).
 */
static int
chosen_state(const struct check_run *run)
{
	const char *name = run->args->state;
	struct fl_error err = { 0 };
	struct fl_state *st;
	int ret;

	if (run->nr_states)
		return 0;
	ret = fl_state_parse(run->log, name, &st, &err);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		fprintf(stderr, "flushlog check: --state: %s\n", err.msg);
		return -EINVAL;
	}
	fl_state_free(st);
	fprintf(stderr, "flushlog check: --state: '%s' is none of the %zu states planned (its point before --from or after --to, or a model or sample that leaves it out); 'flushlog replay --state %s' builds it\n",
		name, run->planned, name);
	return -EINVAL;
}

/*
 * The states to check: those of the chosen points under the chosen
 * models, counted and announced before any is run, then this shard's
 * share of them, or with --state the one named.
 */
int
choose_states(struct check_run *run)
{
	const struct check_args *a = run->args;
	struct fl_error err = { 0 };
	size_t nr_states, k = 0;
	uint64_t candidates;
	int ret;

	ret = choose_points(run);
	if (!ret) {
		struct states_call call = {
			run->log, run->points, &a->states, &run->plan_states,
			&candidates, &err,
		};

		ret = progress_while(&run->progress, "planning the states", 0,
				     call_states, &call);
		if (ret == -E2BIG)
			fprintf(stderr, "flushlog check: %s: check a deterministic sample with --max-states N (N at most %d)\n",
				err.msg, FL_STATES_LIMIT);
		else if (ret)
			fprintf(stderr, "flushlog check: %s\n", err.msg);
		if (ret && ret != -ENOMEM)
			ret = -EINVAL;
	}
	if (ret)
		return ret;
	nr_states = fl_states_count(run->plan_states);
	run->states = calloc(nr_states ? nr_states : 1, sizeof(*run->states));
	if (!run->states)
		return -ENOMEM;
	check_note(a, "%zu states at %zu crash points (%" PRIu64 " candidates%s)",
		   nr_states, fl_points_count(run->points), candidates,
		   a->states.max_states && candidates > a->states.max_states ?
		   ", sampled" : "");
	run->log_digest = log_digest(run->log);
	run->plan = run->plan_all = run->log_digest;
	run->planned = nr_states;
	for (size_t i = 0; i < nr_states; i++) {
		const struct fl_state *st = fl_states_get(run->plan_states, i);
		char name[FL_STATE_NAME_MAX];
		struct state_result *s;

		fl_state_name(st, name, sizeof(name));
		run->plan_all = plan_add_state(run->plan_all, name);
		if (a->state && strcmp(name, a->state))
			continue;
		/* a prefix state two points share: the later point's */
		if (a->state) {
			run->nr_states = 0;
			run->plan = run->log_digest;
		}
		if (k++ % a->shard_n != a->shard_k)
			continue;
		s = &run->states[run->nr_states++];
		s->st = st;
		s->point = point_numbered(run->points, fl_state_point(st));
		s->exit_code = -1;
		memcpy(s->name, name, sizeof(name));
		cli_point_spec(run->log, s->point, s->spec, sizeof(s->spec));
		s->index = i;
		run->plan = plan_add_state(run->plan, s->name);
	}
	return a->state ? chosen_state(run) : 0;
}

/* The base, shared by the job slots' images; -1: the log began on zeroes. */
static int
open_base(struct check_run *run, struct fl_error *err)
{
	const char *base = run->args->base;

	run->base_fd = -1;
	if (!base)
		return 0;
	run->base_fd = open(base, O_RDONLY | O_CLOEXEC);
	if (run->base_fd < 0) {
		cli_set_error(err, FL_ERR_ARG, "cannot open base '%s': %s", base,
			      strerror(errno));
		return -1;
	}
	return 0;
}

static void
kill_running(struct check_run *run)
{
	for (size_t i = 0; i < run->nr_states; i++)
		if (run->states[i].pid > 0)
			kill(-run->states[i].pid, SIGKILL);
}

int
run_states(struct check_run *run, struct fl_error *err)
{
	int ret;

	run->copying = run->args->images == IMAGES_COPY;
	run->progress.start = progress_now();
	if (run->nr_states > run->carried)
		show_progress(run, true);
	run->slots = calloc(run->args->jobs, sizeof(*run->slots));
	if (!run->slots) {
		cli_set_error(err, FL_ERR_OUTPUT, "out of memory");
		return -ENOMEM;
	}
	ret = open_base(run, err);
	do {
		while (!ret && run->next < run->nr_states && !run->stop) {
			if (run->running == run->args->jobs)
				reap_one(run);
			else
				ret = start_one(run, err);
		}
		if (ret || run->cannot_run || run->image_ret)
			kill_running(run);
		while (run->running)
			reap_one(run);
		/* the last to end may have sent start_one() back */
	} while (!ret && !run->stop && !run->cannot_run && !run->image_ret &&
		 run->next < run->nr_states);
	if (!ret && run->image_ret) {
		*err = run->image_err;
		ret = run->image_ret;
	}
	for (unsigned int i = 0; i < run->args->jobs; i++)
		fl_state_image_close(run->slots[i].image);
	free(run->slots);
	run->slots = NULL;
	free(run->identity_hash);
	free(run->identity_state);
	run->identity_hash = NULL;
	run->identity_state = NULL;
	if (run->base_fd >= 0)
		close(run->base_fd);
	progress_clear(&run->progress);
	if (run->rewrites)
		fprintf(stderr, "flushlog check: %zu checker%s wrote to %s state image; %s\n",
			run->rewrites, run->rewrites == 1 ? "" : "s",
			run->rewrites == 1 ? "its" : "their",
			run->args->images == IMAGES_IN_PLACE ?
			"each was rebuilt from the base" :
			"the states after the first got copies of their own");
	return ret;
}
