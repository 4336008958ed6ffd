// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog check's results: the folder and reproducer saved per failure,
 * the --json and --junit reports, --resume reading a report back, and the
 * summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

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
	ret = in < 0 || out < 0 ? -1 : fl_copy_sparse(in, out);
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
		if (state_passed(t) && t->st.base <= s->st.base &&
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
	return s->timed_out ? "timeout" : state_failed(s) ? "fail" : "pass";
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
	fprintf(out, ",\"entries\":%" PRIu64 ",\"plan\":\"%016" PRIx64 "\",\"finished\":%s,\"checked\":%zu,\"passed\":%zu,\"failed\":%zu,\"timeouts\":%zu,\"states\":[",
		fl_log_info(run->log)->nr_entries, run->plan,
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
		if (state_passed(s)) {
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
void
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

/*
 * A state is its name at its point: a prefix state is listed at each
 * point it is, under one name (the end's and the last flush's, say).
 */
static int
by_point_and_name(const void *x, const void *y)
{
	const struct state_result *const *a = x, *const *b = y;

	if ((*a)->point->number != (*b)->point->number)
		return (*a)->point->number < (*b)->point->number ? -1 : 1;
	return strcmp((*a)->name, (*b)->name);
}

/*
 * In a report's line, the value after "key": a string up to its closing
 * quote (a state name holds commas), or a number up to the next , or }.
 */
static bool
json_field(const char *line, const char *key, char *buf, size_t len)
{
	char pattern[32];
	const char *at;
	size_t n = 0;

	snprintf(pattern, sizeof(pattern), "\"%s\":", key);
	at = strstr(line, pattern);
	if (!at)
		return false;
	at += strlen(pattern);
	if (*at != '"') {
		n = strcspn(at, ",}");
		if (n >= len)
			return false;
		memcpy(buf, at, n);
		buf[n] = '\0';
		return true;
	}
	for (at++; *at != '"'; at++) {
		if (*at == '\\' && (at[1] == '"' || at[1] == '\\' || at[1] == '/'))
			at++;
		else if (!*at || *at == '\\')
			return false;	/* write_json() writes no other escape here */
		if (n + 1 >= len)
			return false;
		buf[n++] = *at;
	}
	buf[n] = '\0';
	return true;
}

/* A state line of a report into the state it names; -EINVAL if bad. */
static int
carry_result(struct check_run *run, struct state_result **index,
	     const char *line)
{
	char name[FL_STATE_NAME_MAX], result[16], code[16], secs[32], point[24], *end;
	struct state_result key, *k = &key, **found, *s;
	struct fl_point key_point = { 0 };
	long exit_code;

	if (!json_field(line, "point", point, sizeof(point)) ||
	    !json_field(line, "state", name, sizeof(name)) ||
	    !json_field(line, "result", result, sizeof(result)) ||
	    !json_field(line, "exit", code, sizeof(code)) ||
	    !json_field(line, "seconds", secs, sizeof(secs)))
		return -EINVAL;
	exit_code = strtol(code, &end, 10);
	if (*end || exit_code < 0 || exit_code > 255 ||
	    (!strcmp(result, "pass") && exit_code) ||
	    (!strcmp(result, "fail") && !exit_code) ||
	    (strcmp(result, "pass") && strcmp(result, "fail") &&
	     strcmp(result, "timeout")))
		return -EINVAL;
	key_point.number = strtoull(point, &end, 10);
	if (*end)
		return -EINVAL;
	key.point = &key_point;
	snprintf(key.name, sizeof(key.name), "%s", name);
	found = bsearch(&k, index, run->nr_states, sizeof(*index), by_point_and_name);
	if (!found) {
		fprintf(stderr, "flushlog check: --resume: the report has state %s at point %s, which this check does not plan (another log, or other options?)\n",
			name, point);
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
	if (state_failed(s)) {
		run->failed++;
		run->timeouts += s->timed_out;
	}
	return 0;
}

/* A report's first line must be of this log and this plan of states. */
static int
same_plan(const struct check_run *run, const char *line)
{
	char plan[32], want[32];

	if (strncmp(line, "{\"log\":", 7) ||
	    !json_field(line, "plan", plan, sizeof(plan)))
		return -EINVAL;
	snprintf(want, sizeof(want), "%016" PRIx64, run->plan);
	if (strcmp(plan, want)) {
		fprintf(stderr, "flushlog check: --resume: '%s' is a report of another log or of other options (plan %s, this check %s)\n",
			run->args->resume, plan, want);
		return -ENOENT;
	}
	return 0;
}

/*
 * --resume REPORT: the states with a result in REPORT (one state object
 * a line, as write_json() puts them) are done; their results are carried
 * into this run's report and summary.
 */
int
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
	qsort(index, run->nr_states, sizeof(*index), by_point_and_name);
	while (!ret && getline(&line, &cap, f) > 0) {
		lineno++;
		if (lineno == 1)
			ret = same_plan(run, line);
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

void
summarise(const struct check_run *run, const char *self)
{
	printf("%8s %-6s %10s %-24s %-24s %s\n", "point", "kind", "entry",
	       "spec", "state", "result");
	for (size_t i = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];

		if (!state_failed(s))
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
