// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog check's results: the folder and reproducer saved per failure,
 * the --json and --junit reports, --resume reading a report back, and the
 * summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
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

/* c: self, then the words up to a NULL */
static void
set_cmd(struct self_cmd *c, const char *self, ...)
{
	const char *arg;
	va_list ap;

	c->argc = 0;
	add_arg(c, self);
	va_start(ap, self);
	while ((arg = va_arg(ap, const char *)))
		add_arg(c, arg);
	va_end(ap);
}

static void
replay_cmd(struct self_cmd *c, const struct check_args *a, const char *self,
	   const char *image, const char *state)
{
	set_cmd(c, self, "replay", "-q", "-o", image, "--state", state, NULL);
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
	set_cmd(c, self, "dump", "--from", from, "--to", to, a->log_path, NULL);
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

/* A state with a result, as its report line says it. */
static void
report_state_of(const struct state_result *s, struct report_state *r)
{
	*r = (struct report_state) {
		.point = s->point->number,
		.index = s->index,
		.entry = (int64_t)s->point->nr_applied - 1,
		.kind = fl_point_kind_name(s->point->kind),
		.spec = s->spec,
		.name = s->name,
		.result = result_name(s),
		.exit_code = s->exit_code,
		.seconds = s->seconds,
	};
}

/*
 * The base as shards compare it: its file name and size.  Hashing an
 * image of gigabytes in every shard would cost more than many states, and
 * its folder may differ from machine to machine (a copy in each home).
 */
static void
base_json(FILE *out, const char *base)
{
	const char *name;
	uint64_t bytes = 0;
	int fd;

	if (!base) {
		fprintf(out, "null");
		return;
	}
	fd = open(base, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		bytes = cli_file_size(fd);	/* a block device's too */
		close(fd);
	}
	name = strrchr(base, '/');
	fprintf(out, "{\"name\":");
	json_string(out, name ? name + 1 : base);
	fprintf(out, ",\"bytes\":%" PRIu64 "}", bytes);
}

/*
 * What shapes the states and their verdicts besides the log (known by its
 * digest), as a JSON object: shards run with other options must not be
 * merged.
 */
static void
options_json(FILE *out, const struct check_args *a)
{
	static const struct { unsigned int bit; const char *name; } models[] = {
		{ FL_STATES_PREFIX, "prefix" }, { FL_STATES_EPOCH, "epoch" },
		{ FL_STATES_TORN, "torn" }, { FL_STATES_DISCARD, "discard" },
	};
	const char *sep = "";

	fprintf(out, "{\"base\":");
	base_json(out, a->base);
	fprintf(out, ",\"points\":\"");
	for (int k = FL_POINT_START; k <= FL_POINT_END; k++) {
		if (a->kinds & KIND_BIT(k)) {
			fprintf(out, "%s%s", sep, fl_point_kind_name(k));
			sep = ",";
		}
	}
	fprintf(out, "\",\"from\":");
	if (a->from)
		json_string(out, a->from);
	else
		fprintf(out, "null");
	fprintf(out, ",\"models\":\"");
	sep = "";
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		if (a->states.models & models[i].bit) {
			fprintf(out, "%s%s", sep, models[i].name);
			sep = ",";
		}
	}
	fprintf(out, "\",\"max_reorder\":%u,\"max_torn\":%u,\"max_states\":%" PRIu64 ",\"timeout\":%u,\"order_check\":%s}",
		a->states.max_reorder, a->states.max_torn,
		a->states.max_states, a->timeout,
		a->check_order ? "true" : "false");
}

/* The checker's argv as a JSON array, {} as given. */
static void
checker_json(FILE *out, const struct check_args *a)
{
	fputc('[', out);
	for (int i = 0; i < a->cmd_argc; i++) {
		if (i)
			fputc(',', out);
		json_string(out, a->cmd[i]);
	}
	fputc(']', out);
}

/*
 * The first line: the fields before "shard" are those of reports before
 * sharding could be merged, and keep their order.
 */
void
report_json_head(FILE *out, const struct report_head *h)
{
	fprintf(out, "{\"log\":");
	json_string(out, h->log_path);
	fprintf(out, ",\"entries\":%" PRIu64 ",\"plan\":\"%016" PRIx64 "\",\"finished\":%s,\"checked\":%zu,\"passed\":%zu,\"failed\":%zu,\"timeouts\":%zu",
		h->entries, h->plan, h->finished ? "true" : "false",
		h->checked, h->checked - h->failed, h->failed, h->timeouts);
	fprintf(out, ",\"shard\":\"%u/%u\",\"planned\":%zu,\"plan_all\":\"%016" PRIx64 "\",\"log_digest\":\"%016" PRIx64 "\",\"options\":%s,\"checker\":%s,\"states\":[",
		h->shard_k, h->shard_n, h->planned, h->plan_all,
		h->log_digest, h->options, h->checker);
}

/* One state object a line: --resume and merge read them back. */
void
report_json_state(FILE *out, const struct report_state *r, bool first)
{
	fprintf(out, "%s\n{\"point\":%" PRIu64 ",\"kind\":", first ? "" : ",",
		r->point);
	json_string(out, r->kind);
	fprintf(out, ",\"entry\":%" PRId64 ",\"spec\":", r->entry);
	json_string(out, r->spec);
	fprintf(out, ",\"state\":");
	json_string(out, r->name);
	fprintf(out, ",\"result\":");
	json_string(out, r->result);
	fprintf(out, ",\"exit\":%d,\"seconds\":%.3f,\"index\":%" PRIu64 "}",
		r->exit_code, r->seconds, r->index);
}

void
report_json_end(FILE *out)
{
	fprintf(out, "\n]}\n");
}

/* One line with the counts and what the run was, one line a state. */
static int
write_json(FILE *out, const void *ctx)
{
	const struct check_run *run = ctx;
	const struct check_args *a = run->args;
	struct report_head h = {
		.log_path = a->log_path,
		.entries = fl_log_info(run->log)->nr_entries,
		.plan = run->plan,
		.finished = run->finished,
		.checked = run->done,
		.failed = run->failed,
		.timeouts = run->timeouts,
		.shard_k = a->shard_k,
		.shard_n = a->shard_n,
		.planned = run->planned,
		.plan_all = run->plan_all,
		.log_digest = run->log_digest,
	};
	char *options = NULL, *checker = NULL;
	size_t len;
	FILE *f;
	int ret = -1;

	f = open_memstream(&options, &len);
	if (f) {
		options_json(f, a);
		fclose(f);
	}
	f = open_memstream(&checker, &len);
	if (f) {
		checker_json(f, a);
		fclose(f);
	}
	if (options && checker) {
		h.options = options;
		h.checker = checker;
		report_json_head(out, &h);
		for (size_t i = 0, n = 0; i < run->nr_states; i++) {
			struct report_state r;

			if (run->states[i].exit_code < 0)
				continue;
			report_state_of(&run->states[i], &r);
			report_json_state(out, &r, !n++);
		}
		report_json_end(out);
		ret = 0;
	}
	free(options);
	free(checker);
	return ret;
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

void
report_junit_head(FILE *out, size_t tests, size_t failures)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(out, "<testsuite name=\"flushlog check\" tests=\"%zu\" failures=\"%zu\">\n",
		tests, failures);
}

void
report_junit_state(FILE *out, const char *log_path,
		   const struct report_state *r, const char *output)
{
	fprintf(out, "  <testcase classname=\"");
	cli_xml_text(out, log_path);
	fprintf(out, "\" name=\"point:%" PRIu64 " ", r->point);
	cli_xml_text(out, r->spec);
	fprintf(out, " state:");
	cli_xml_text(out, r->name);
	fprintf(out, "\" time=\"%.3f\"", r->seconds);
	if (!report_state_failed(r)) {
		fprintf(out, "/>\n");
		return;
	}
	if (!strcmp(r->result, "timeout"))
		fprintf(out, ">\n    <failure type=\"timeout\" message=\"timed out: killed after %.0f s\">",
			r->seconds);
	else
		fprintf(out, ">\n    <failure message=\"checker exited %d\">",
			r->exit_code);
	xml_file_head(out, output);
	fprintf(out, "</failure>\n  </testcase>\n");
}

void
report_junit_end(FILE *out)
{
	fprintf(out, "</testsuite>\n");
}

static int
write_junit(FILE *out, const void *ctx)
{
	const struct check_run *run = ctx;

	report_junit_head(out, run->done, run->failed);
	for (size_t i = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];
		struct report_state r;

		if (s->exit_code < 0)
			continue;
		report_state_of(s, &r);
		report_junit_state(out, run->args->log_path, &r,
				   s->carried ? NULL : s->output);
	}
	report_junit_end(out);
	return 0;
}

int
write_report(const char *who, const char *path,
	     int (*fn)(FILE *out, const void *ctx), const void *ctx)
{
	mode_t mask = umask(0);
	char *tmp;
	FILE *f;
	int fd, ret;

	umask(mask);
	if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
		return -1;
	fd = mkostemp(tmp, O_CLOEXEC);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "flushlog %s: cannot write '%s': %s\n", who, path,
			strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return -1;
	}
	fchmod(fd, 0666 & ~mask);
	ret = fn(f, ctx);
	if (fclose(f))
		ret = -1;
	if (ret || rename(tmp, path)) {
		fprintf(stderr, "flushlog %s: cannot write '%s': %s\n", who, path,
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
	    ((a->json && write_report("check", a->json, write_json, run)) ||
	     (a->junit && write_report("check", a->junit, write_junit, run))))
		run->report_error = true;
	run->reports_dirty = false;
	run->reports_saved = now_seconds();
}

/*
 * Reading a report back.  Its lines are JSON objects (the first one cut
 * short after "states":[) with no white space between tokens, as the
 * writers above put them; a line is parsed in place, its values ended
 * with NULs where the commas were.
 */

/* Past the string at at, its opening quote; NULL if it does not end. */
static char *
json_skip_string(char *at)
{
	for (at++; *at != '"'; at++) {
		if (!*at || *at == '\n')
			return NULL;
		if (*at == '\\' && (!at[1] || at[1] == '\n'))
			return NULL;
		if (*at == '\\')
			at++;
	}
	return at + 1;
}

/*
 * Past the value at at: a string, an object or array with whatever they
 * hold, or anything else up to the next , } or ]; NULL if it does not end
 * on the line.
 */
static char *
json_skip(char *at)
{
	int depth = 0;

	do {
		if (*at == '"') {
			at = json_skip_string(at);
			if (!at)
				return NULL;
		} else if (*at == '{' || *at == '[') {
			depth++;
			at++;
		} else if (*at == '}' || *at == ']') {
			if (!depth--)
				return NULL;
			at++;
		} else if (!*at || *at == '\n') {
			return NULL;
		} else if (depth) {
			at++;
		} else {
			at += strcspn(at, ",}]\n");
		}
	} while (depth);
	return at;
}

struct json_member {
	const char *key;
	char *value;		/* its JSON text */
};

#define MAX_MEMBERS	32

/*
 * The members of the object the line starts with, up to the first value
 * that does not end on the line; keys are written with no escape.
 */
static size_t
json_members(char *line, struct json_member *m)
{
	char *at = line, *end;
	size_t n = 0;

	if (*at++ != '{')
		return 0;
	while (n < MAX_MEMBERS && *at == '"') {
		end = json_skip_string(at);
		if (!end || *end != ':')
			break;
		end[-1] = '\0';
		m[n].key = at + 1;
		at = end + 1;
		end = json_skip(at);
		if (!end)
			break;
		m[n++].value = at;
		if (*end != ',') {
			*end = '\0';
			break;
		}
		*end = '\0';
		at = end + 1;
	}
	return n;
}

static char *
json_get(const struct json_member *m, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].key, key))
			return m[i].value;
	return NULL;
}

static int
hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * A string value, decoded in place: json_string() escapes a quote and a
 * backslash, and writes any other byte outside printable ASCII as \u00XX.
 */
static bool
get_string(const struct json_member *m, size_t n, const char *key,
	   const char **out)
{
	char *at = json_get(m, n, key), *to;

	if (!at || *at != '"')
		return false;
	*out = to = at;
	for (at++; *at != '"'; at++) {
		if (*at == '\\' && at[1] == 'u' && at[2] == '0' && at[3] == '0' &&
		    hex_digit(at[4]) >= 0 && hex_digit(at[5]) >= 0 &&
		    (at[4] != '0' || at[5] != '0')) {
			*to++ = (char)(hex_digit(at[4]) << 4 | hex_digit(at[5]));
			at += 5;
			continue;
		}
		if (*at == '\\' && at[1] != '"' && at[1] != '\\' && at[1] != '/')
			return false;
		if (*at == '\\')
			at++;
		*to++ = *at;
	}
	*to = '\0';
	return true;
}

static bool
get_u64(const struct json_member *m, size_t n, const char *key, uint64_t *out)
{
	const char *at = json_get(m, n, key);
	char *end;

	if (!at || *at < '0' || *at > '9')
		return false;
	errno = 0;
	*out = strtoull(at, &end, 10);
	return !errno && !*end;
}

static bool
get_size(const struct json_member *m, size_t n, const char *key, size_t *out)
{
	uint64_t v;

	if (!get_u64(m, n, key, &v) || v > SIZE_MAX)
		return false;
	*out = (size_t)v;
	return true;
}

/* A digest: 16 hex digits in quotes. */
static bool
get_digest(const struct json_member *m, size_t n, const char *key,
	   uint64_t *out)
{
	const char *at = json_get(m, n, key);
	char *end;

	if (!at || strlen(at) != 18 || at[0] != '"' || at[17] != '"' ||
	    strspn(at + 1, "0123456789abcdef") != 16)
		return false;
	*out = strtoull(at + 1, &end, 16);
	return true;
}

static bool
get_bool(const struct json_member *m, size_t n, const char *key, bool *out)
{
	const char *at = json_get(m, n, key);

	if (!at || (strcmp(at, "true") && strcmp(at, "false")))
		return false;
	*out = !strcmp(at, "true");
	return true;
}

/* The JSON text of an object or array value. */
static bool
get_json(const struct json_member *m, size_t n, const char *key, char open,
	 const char **out)
{
	*out = json_get(m, n, key);
	return *out && **out == open;
}

/* The fields that reports have had since shards could be merged. */
static int
parse_shard_fields(const struct json_member *m, size_t n,
		   struct report_head *h)
{
	const char *shard;
	int len = 0;

	if (!get_string(m, n, "shard", &shard) ||
	    sscanf(shard, "%u/%u%n", &h->shard_k, &h->shard_n, &len) != 2 ||
	    shard[len] || !h->shard_n || h->shard_k >= h->shard_n ||
	    !get_size(m, n, "planned", &h->planned) ||
	    !get_digest(m, n, "plan_all", &h->plan_all) ||
	    !get_digest(m, n, "log_digest", &h->log_digest) ||
	    !get_json(m, n, "options", '{', &h->options) ||
	    !get_json(m, n, "checker", '[', &h->checker))
		return -EINVAL;
	return 0;
}

/* -EINVAL if the line is not a report's first line. */
int
report_parse_head(char *line, struct report_head *h)
{
	struct json_member m[MAX_MEMBERS];
	size_t n = json_members(line, m), passed;

	*h = (struct report_head) { 0 };
	if (!n || strcmp(m[0].key, "log") ||
	    !get_string(m, n, "log", &h->log_path) ||
	    !get_u64(m, n, "entries", &h->entries) ||
	    !get_digest(m, n, "plan", &h->plan) ||
	    !get_bool(m, n, "finished", &h->finished) ||
	    !get_size(m, n, "checked", &h->checked) ||
	    !get_size(m, n, "passed", &passed) ||
	    !get_size(m, n, "failed", &h->failed) ||
	    !get_size(m, n, "timeouts", &h->timeouts) ||
	    passed + h->failed != h->checked || h->timeouts > h->failed)
		return -EINVAL;
	if (!json_get(m, n, "shard"))
		return 0;	/* an older report */
	return parse_shard_fields(m, n, h);
}

/* -EINVAL if the line is not a report's state line. */
int
report_parse_state(char *line, struct report_state *r)
{
	struct json_member m[MAX_MEMBERS];
	size_t n = json_members(line, m);
	const char *entry;
	uint64_t exit_code;
	char *end;

	*r = (struct report_state) { .index = NO_INDEX };
	if (!n || strcmp(m[0].key, "point") ||
	    !get_u64(m, n, "point", &r->point) ||
	    !get_string(m, n, "kind", &r->kind) ||
	    !(entry = json_get(m, n, "entry")) ||
	    !get_string(m, n, "spec", &r->spec) ||
	    !get_string(m, n, "state", &r->name) ||
	    !get_string(m, n, "result", &r->result) ||
	    !get_u64(m, n, "exit", &exit_code) || exit_code > 255 ||
	    !json_get(m, n, "seconds") ||
	    (json_get(m, n, "index") && !get_u64(m, n, "index", &r->index)))
		return -EINVAL;
	errno = 0;
	r->entry = strtoll(entry, &end, 10);
	if (errno || *end || end == entry || r->entry < -1)
		return -EINVAL;
	r->seconds = strtod(json_get(m, n, "seconds"), &end);
	if (*end || r->seconds < 0)
		return -EINVAL;
	r->exit_code = (int)exit_code;
	/* the verdict and the exit status must agree */
	if (!strcmp(r->result, "pass"))
		return exit_code ? -EINVAL : 0;
	if (!strcmp(r->result, "fail"))
		return exit_code ? 0 : -EINVAL;
	return strcmp(r->result, "timeout") ? -EINVAL : 0;
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

/* A state line of a report into the state it names; -EINVAL if bad. */
static int
carry_result(struct check_run *run, struct state_result **index, char *line)
{
	struct state_result key, *k = &key, **found, *s;
	struct fl_point key_point = { 0 };
	struct report_state r;

	if (report_parse_state(line, &r))
		return -EINVAL;
	key_point.number = r.point;
	key.point = &key_point;
	if (snprintf(key.name, sizeof(key.name), "%s", r.name) >= (int)sizeof(key.name))
		return -EINVAL;
	found = bsearch(&k, index, run->nr_states, sizeof(*index), by_point_and_name);
	if (!found) {
		fprintf(stderr, "flushlog check: --resume: the report has state %s at point %" PRIu64 ", which this check does not plan (another log, or other options?)\n",
			r.name, r.point);
		return -ENOENT;
	}
	s = *found;
	if (s->exit_code >= 0)
		return 0;
	s->exit_code = r.exit_code;
	s->seconds = r.seconds;
	s->timed_out = !strcmp(r.result, "timeout");
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
same_plan(const struct check_run *run, char *line)
{
	struct report_head h;

	if (report_parse_head(line, &h))
		return -EINVAL;
	if (h.plan != run->plan) {
		fprintf(stderr, "flushlog check: --resume: '%s' is a report of another log or of other options (plan %016" PRIx64 ", this check %016" PRIx64 ")\n",
			run->args->resume, h.plan, run->plan);
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
report_print_head(void)
{
	printf("%8s %-6s %10s %-24s %-24s %s\n", "point", "kind", "entry",
	       "spec", "state", "result");
}

/* note: what follows the result, such as where it comes from */
void
report_print_failure(const struct report_state *r, const char *note)
{
	printf("%8" PRIu64 " %-6s %10" PRId64 " %-24s %-24s ", r->point,
	       r->kind, r->entry, r->spec, r->name);
	if (!strcmp(r->result, "timeout"))
		printf("TIMEOUT (killed after %.0f s)", r->seconds);
	else
		printf("FAIL (exit %d)", r->exit_code);
	printf("%s\n", note);
}

void
report_print_totals(size_t checked, size_t failed, size_t timeouts)
{
	printf("%zu states checked: %zu passed, %zu failed", checked,
	       checked - failed, failed);
	if (timeouts)
		printf(" (%zu timed out)", timeouts);
}

void
summarise(const struct check_run *run, const char *self)
{
	report_print_head();
	for (size_t i = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];
		struct report_state r;

		if (!state_failed(s))
			continue;
		report_state_of(s, &r);
		report_print_failure(&r, s->carried ? " (from --resume)" : "");
		if (s->carried)
			continue;
		if (run->args->save_dir)
			save_failure(run, s, self);
		else if (s->output)
			unlink(s->output);
	}
	report_print_totals(run->done, run->failed, run->timeouts);
	if (run->carried)
		printf(", %zu of them from '%s'", run->carried, run->args->resume);
	printf("%s\n", run->done < run->nr_states ?
	       " (stopped at the first failure)" : "");
}
