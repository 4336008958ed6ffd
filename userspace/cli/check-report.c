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
 * Run the command with no shell, stdout to out_fd if not -1, in folder
 * dir; 0 if it exited 0.
 */
static int
run_cmd(const struct self_cmd *c, const char *dir, int out_fd)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		restore_signals();
		if (chdir(dir))
			_exit(127);
		if (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0)
			_exit(127);
		execv(c->argv[0], c->argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* The command, its stdout written to path by the output rule. */
static int
run_cmd_to(const struct self_cmd *c, const char *dir, const char *path)
{
	struct cli_output o;

	if (cli_output_open(&o, "flushlog check", path, OUTPUT_STREAM, 0, NULL, 0))
		return -1;
	if (run_cmd(c, dir, o.fd)) {
		cli_output_abort(&o);
		return -1;
	}
	return cli_output_close(&o) ? -1 : 0;
}

/*
 * The checker's output moved to path, by the output rule: renamed into
 * place where it can be, else copied (from the work folder on another
 * filesystem).
 */
static int
move_output(const char *from, const char *path)
{
	struct cli_output o;
	int in, ret;

	if (cli_output_open(&o, "flushlog check", path, OUTPUT_STREAM, 0, NULL, 0))
		return -1;
	if (o.tmp && !rename(from, o.tmp))
		return cli_output_close(&o) ? -1 : 0;
	in = open(from, O_RDONLY | O_CLOEXEC);
	ret = in < 0 ? -errno : fl_copy_sparse(in, o.fd);
	if (in >= 0)
		close(in);
	if (ret) {
		fprintf(stderr, "flushlog check: cannot write '%s': %s\n", path,
			strerror(-ret));
		cli_output_abort(&o);
		return -1;
	}
	unlink(from);
	return cli_output_close(&o) ? -1 : 0;
}

/* The reproducer's text: the commands that rebuild and check the state. */
static void
write_reproducer(FILE *f, const struct check_run *run,
		 const struct state_result *s, const struct state_result *good,
		 const char *self, const char *from, const char *to)
{
	const struct check_args *a = run->args;
	struct self_cmd c;

	fprintf(f, "#!/bin/sh\n# state %s at point:%" PRIu64 " (", s->name,
		s->point->number);
	/* escaped: a newline in a label must not end the comment */
	cli_print_escaped(f, s->spec);
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
	if (state_env(run, s, "first-bad.img", write_env, f))
		fprintf(f, "echo 'out of memory when this reproducer was written: its promises are missing' >&2\nexit 2\n");
	fprintf(f, "exec");
	for (int i = 0; i < a->cmd_argc; i++) {
		char *arg = replace_braces(a->cmd[i], "first-bad.img");

		fputc(' ', f);
		shell_quote(f, arg ? arg : a->cmd[i]);
		free(arg);
	}
	fprintf(f, "\n");
}

static int
save_reproducer(const struct check_run *run, const struct state_result *s,
		const struct state_result *good, const char *self,
		const char *from, const char *to, const char *path)
{
	struct cli_output o;
	FILE *f;

	if (cli_output_open(&o, "flushlog check", path, OUTPUT_STREAM, 0, NULL, 0))
		return -1;
	f = cli_output_stdio(&o);
	if (!f) {
		fprintf(stderr, "flushlog check: cannot write '%s': %s\n", path,
			strerror(errno));
		cli_output_abort(&o);
		return -1;
	}
	write_reproducer(f, run, s, good, self, from, to);
	if (o.tmp)
		fchmod(o.fd, 0755);
	return cli_output_close(&o) ? -1 : 0;
}

/*
 * DIR/point-N for a prefix state, DIR/state-NAME for another: the first
 * bad and the last good images, the checker's output, the entries between
 * them, and a reproducer.  The images are built here by running this
 * flushlog directly, never through a shell: the folder, the log and the
 * checker's words may hold any character.  In the reproducer every word
 * is quoted.  0, or -1 if something could not be saved (said).
 */
static int
save_failure(const struct check_run *run, const struct state_result *s,
	     const char *self)
{
	const struct check_args *a = run->args;
	const struct state_result *good = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 32], from[32], to[32];
	struct self_cmd c;
	bool built;
	int ret;

	if (is_prefix(s))
		snprintf(dir, sizeof(dir), "%s/point-%" PRIu64, a->save_dir,
			 s->point->number);
	else
		snprintf(dir, sizeof(dir), "%s/state-%s", a->save_dir, s->name);
	if ((mkdir(a->save_dir, 0755) && errno != EEXIST) ||
	    (mkdir(dir, 0755) && errno != EEXIST)) {
		fprintf(stderr, "flushlog check: cannot make '%s': %s\n", dir,
			strerror(errno));
		return -1;
	}
	/* the last passing prefix state checked before this one */
	for (const struct state_result *t = run->states; t < s; t++)
		if (state_passed(t) && fl_state_base(t->st) <= fl_state_base(s->st) &&
		    is_prefix(t))
			good = t;
	/* the entries between the last good state and this one */
	cli_position_spec(good ? fl_state_base(good->st) : 0, from, sizeof(from));
	cli_position_spec(fl_state_last_entry(s->st) + 1, to, sizeof(to));
	snprintf(path, sizeof(path), "%s/reproduce.sh", dir);
	ret = save_reproducer(run, s, good, self, from, to, path);
	snprintf(path, sizeof(path), "%s/checker.out", dir);
	ret = move_output(s->output, path) || ret;
	/* the reproducer's first three commands, run here */
	replay_cmd(&c, a, self, "last-good.img", good ? good->name : "0");
	built = !run_cmd(&c, dir, -1);
	replay_cmd(&c, a, self, "first-bad.img", s->name);
	built = !run_cmd(&c, dir, -1) && built;
	dump_cmd(&c, a, self, from, to);
	snprintf(path, sizeof(path), "%s/entries.txt", dir);
	built = !run_cmd_to(&c, dir, path) && built;
	if (!built) {
		fprintf(stderr, "flushlog check: could not rebuild the images in '%s'\n",
			dir);
		ret = -1;
	}
	if (good)
		check_note(a, "  saved in %s (last good: point:%" PRIu64 ")", dir,
			   good->point->number);
	else
		check_note(a, "  saved in %s (last good: the base)", dir);
	return ret ? -1 : 0;
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
		.same_as = s->same_as ? s->same_as->name : NULL,
		.same_as_point = s->same_as ? s->same_as->point->number : 0,
	};
}

/*
 * The base as shards compare it: its file name and size.  Hashing an
 * image of gigabytes in every shard would cost more than many states, and
 * its folder may differ from machine to machine (a copy in each home).
 */
static struct json_object *
base_json(const char *base)
{
	struct json_object *o;
	const char *name;
	uint64_t bytes = 0;
	int fd;

	fd = open(base, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		bytes = cli_file_size(fd);	/* a block device's too */
		close(fd);
	}
	name = strrchr(base, '/');
	o = json_object_new_object();
	if (o && (cli_json_add(o, "name", cli_json_string(name ? name + 1 : base)) ||
		  cli_json_add(o, "bytes", json_object_new_uint64(bytes)))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Names of the bits set in mask, a comma list: "flush,fua". */
static struct json_object *
names_json(unsigned int mask, const unsigned int *bits, const char *const *names,
	   size_t n)
{
	char list[128] = "";

	for (size_t i = 0; i < n; i++)
		if (mask & bits[i])
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s", *list ? "," : "", names[i]);
	return json_object_new_string(list);
}

static struct json_object *
kinds_json(unsigned int kinds)
{
	unsigned int bits[FL_POINT_END + 1];
	const char *names[FL_POINT_END + 1];

	for (int k = FL_POINT_START; k <= FL_POINT_END; k++) {
		bits[k] = KIND_BIT(k);
		names[k] = fl_point_kind_name(k);
	}
	return names_json(kinds, bits, names, FL_POINT_END + 1);
}

/*
 * Which states share a result (null with --every-state): the --context a
 * state's identity holds, "" for none.
 */
static struct json_object *
same_states_json(const struct check_args *a)
{
	unsigned int bits[8];
	const char *names[8];

	for (size_t i = 0; i < nr_context_names; i++) {
		bits[i] = context_names[i].bit;
		names[i] = context_names[i].name;
	}
	return names_json(a->context, bits, names, nr_context_names);
}

static struct json_object *
models_json(unsigned int models)
{
	static const unsigned int bits[] = {
		FL_STATES_PREFIX, FL_STATES_EPOCH, FL_STATES_TORN,
		FL_STATES_DISCARD,
	};
	static const char *const names[] = { "prefix", "epoch", "torn", "discard" };

	return names_json(models, bits, names, sizeof(bits) / sizeof(bits[0]));
}

/*
 * What shapes the states and their verdicts besides the log (known by its
 * digest), as a JSON object: shards run with other options must not be
 * merged.  NULL if out of memory.
 */
static struct json_object *
options_json(const struct check_args *a)
{
	struct json_object *o = json_object_new_object();

	if (o && ((a->base ? cli_json_add(o, "base", base_json(a->base)) :
			     cli_json_add_null(o, "base")) ||
		  cli_json_add(o, "points", kinds_json(a->kinds)) ||
		  (a->from ? cli_json_add(o, "from", cli_json_string(a->from)) :
			     cli_json_add_null(o, "from")) ||
		  (a->to ? cli_json_add(o, "to", cli_json_string(a->to)) :
			   cli_json_add_null(o, "to")) ||
		  cli_json_add(o, "models", models_json(a->states.models)) ||
		  cli_json_add(o, "max_reorder", json_object_new_uint64(a->states.max_reorder)) ||
		  cli_json_add(o, "max_torn", json_object_new_uint64(a->states.max_torn)) ||
		  cli_json_add(o, "max_states", json_object_new_uint64(a->states.max_states)) ||
		  cli_json_add(o, "timeout", json_object_new_uint64(a->timeout)) ||
		  cli_json_add(o, "order_check", json_object_new_boolean(a->check_order)) ||
		  (a->every_state ? cli_json_add_null(o, "same_states") :
				    cli_json_add(o, "same_states", same_states_json(a))))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The checker's argv as a JSON array, {} as given; NULL if out of memory. */
static struct json_object *
checker_json(const struct check_args *a)
{
	struct json_object *argv = json_object_new_array();

	for (int i = 0; argv && i < a->cmd_argc; i++) {
		struct json_object *arg = cli_json_string(a->cmd[i]);

		if (!arg || json_object_array_add(argv, arg)) {
			json_object_put(arg);
			json_object_put(argv);
			return NULL;
		}
	}
	return argv;
}

static int
add_digest(struct json_object *o, const char *key, uint64_t digest)
{
	char hex[17];

	snprintf(hex, sizeof(hex), "%016" PRIx64, digest);
	return cli_json_add(o, key, json_object_new_string(hex));
}

static int
add_size(struct json_object *o, const char *key, size_t n)
{
	return cli_json_add(o, key, json_object_new_uint64(n));
}

/*
 * The head's members: those before "shard" are those of reports before
 * sharding could be merged, and keep their order.
 */
static int
head_members(struct json_object *o, const struct report_head *h)
{
	char shard[24];

	snprintf(shard, sizeof(shard), "%u/%u", h->shard_k, h->shard_n);
	return cli_json_add(o, "log", cli_json_string(h->log_path)) ||
	       cli_json_add(o, "entries", json_object_new_uint64(h->entries)) ||
	       add_digest(o, "plan", h->plan) ||
	       cli_json_add(o, "finished", json_object_new_boolean(h->finished)) ||
	       add_size(o, "checked", h->checked) ||
	       add_size(o, "passed", h->checked - h->failed) ||
	       add_size(o, "failed", h->failed) ||
	       add_size(o, "timeouts", h->timeouts) ||
	       cli_json_add(o, "shard", json_object_new_string(shard)) ||
	       add_size(o, "planned", h->planned) ||
	       add_digest(o, "plan_all", h->plan_all) ||
	       add_digest(o, "log_digest", h->log_digest) ||
	       cli_json_add(o, "options", json_object_get(h->options)) ||
	       cli_json_add(o, "checker", json_object_get(h->checker));
}

/*
 * The first line: the head object, open for its states: each state is a
 * line of its own, which --resume and merge read one at a time, so that a
 * report of a million states is never held whole.
 */
int
report_json_head(FILE *out, const struct report_head *h)
{
	struct json_object *o = json_object_new_object();
	const char *text;
	int ret = -1;

	if (o && !head_members(o, h) && (text = cli_json_text(o))) {
		/* "{...}" without its "}", then the states */
		fprintf(out, "%.*s,\"states\":[", (int)strlen(text) - 1, text);
		ret = 0;
	}
	json_object_put(o);
	return ret;
}

int
report_json_state(FILE *out, const struct report_state *r, bool first)
{
	struct json_object *o = json_object_new_object();
	const char *text;
	char seconds[32];
	int ret;

	if (!o)
		return -1;
	snprintf(seconds, sizeof(seconds), "%.3f", r->seconds);
	ret = cli_json_add(o, "point", json_object_new_uint64(r->point)) ||
	      cli_json_add(o, "kind", cli_json_string(r->kind)) ||
	      cli_json_add(o, "entry", json_object_new_int64(r->entry)) ||
	      cli_json_add(o, "spec", cli_json_string(r->spec)) ||
	      cli_json_add(o, "state", cli_json_string(r->name)) ||
	      cli_json_add(o, "result", cli_json_string(r->result)) ||
	      cli_json_add(o, "exit", json_object_new_int(r->exit_code)) ||
	      cli_json_add(o, "seconds", json_object_new_double_s(r->seconds, seconds)) ||
	      cli_json_add(o, "index", json_object_new_uint64(r->index)) ||
	      (r->same_as && (cli_json_add(o, "same_as", cli_json_string(r->same_as)) ||
			      cli_json_add(o, "same_as_point",
					   json_object_new_uint64(r->same_as_point))));
	if (!ret && (text = cli_json_text(o)))
		fprintf(out, "%s\n%s", first ? "" : ",", text);
	else
		ret = -1;
	json_object_put(o);
	return ret ? -1 : 0;
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
		.options = options_json(a),
		.checker = checker_json(a),
	};
	int ret = -1;

	if (h.options && h.checker && !report_json_head(out, &h)) {
		ret = 0;
		for (size_t i = 0, n = 0; !ret && i < run->nr_states; i++) {
			struct report_state r;

			if (run->states[i].exit_code < 0)
				continue;
			report_state_of(&run->states[i], &r);
			ret = report_json_state(out, &r, !n++);
		}
		report_json_end(out);
	}
	json_object_put(h.options);
	json_object_put(h.checker);
	return ret;
}

/* How much of a checker's output goes in its failure: the start. */
#define JUNIT_OUTPUT_MAX	(64 * 1024)

/*
 * The start of a checker's output, cut between characters, its bytes
 * that are no UTF-8 and its control characters (but newlines and tabs)
 * escaped, as XML can hold no other.
 */
static int
junit_output(xmlTextWriterPtr w, const char *path)
{
	FILE *f = path ? fopen(path, "re") : NULL;
	char *buf, note[96];
	size_t n, keep;
	struct stat st;
	int ret;

	if (!f)
		return 0;
	buf = malloc(JUNIT_OUTPUT_MAX + 4);
	if (!buf) {
		fclose(f);
		return -1;
	}
	/* a few bytes more than kept, to see where the next character starts */
	n = fread(buf, 1, JUNIT_OUTPUT_MAX + 4, f);
	keep = cli_utf8_cut(buf, n, JUNIT_OUTPUT_MAX);
	ret = cli_xml_text(w, buf, keep, ESC_KEEP_LINES);
	if (!ret && keep < n && !fstat(fileno(f), &st)) {
		snprintf(note, sizeof(note), "\n[%" PRIu64 " more bytes not shown]\n",
			 (uint64_t)st.st_size - keep);
		ret = cli_xml_text(w, note, strlen(note), ESC_KEEP_LINES);
	}
	free(buf);
	fclose(f);
	return ret;
}

int
report_junit_head(xmlTextWriterPtr w, size_t tests, size_t failures)
{
	return xmlTextWriterStartElement(w, BAD_CAST "testsuite") < 0 ||
	       cli_xml_attr(w, "name", "flushlog check") ||
	       xmlTextWriterWriteFormatAttribute(w, BAD_CAST "tests", "%zu", tests) < 0 ||
	       xmlTextWriterWriteFormatAttribute(w, BAD_CAST "failures", "%zu",
						  failures) < 0 ? -1 : 0;
}

static int
junit_failure(xmlTextWriterPtr w, const struct report_state *r,
	      const char *output)
{
	int ret = xmlTextWriterStartElement(w, BAD_CAST "failure") < 0;

	if (r->same_as)
		ret = ret || (!strcmp(r->result, "timeout") &&
			      cli_xml_attr(w, "type", "timeout")) ||
		      xmlTextWriterWriteFormatAttribute(w, BAD_CAST "message",
				"the same as state %s at point %" PRIu64 ", which %s",
				r->same_as, r->same_as_point,
				strcmp(r->result, "timeout") ? "failed" : "timed out") < 0;
	else if (!strcmp(r->result, "timeout"))
		ret = ret || cli_xml_attr(w, "type", "timeout") ||
		      xmlTextWriterWriteFormatAttribute(w, BAD_CAST "message",
				"timed out: killed after %.0f s", r->seconds) < 0;
	else
		ret = ret || xmlTextWriterWriteFormatAttribute(w, BAD_CAST "message",
				"checker exited %d", r->exit_code) < 0;
	return ret || junit_output(w, output) ||
	       xmlTextWriterEndElement(w) < 0 ? -1 : 0;
}

int
report_junit_state(xmlTextWriterPtr w, const char *log_path,
		   const struct report_state *r, const char *output)
{
	char *name;
	int ret;

	if (asprintf(&name, "point:%" PRIu64 " %s state:%s", r->point, r->spec,
		     r->name) < 0)
		return -1;
	ret = xmlTextWriterStartElement(w, BAD_CAST "testcase") < 0 ||
	      cli_xml_attr(w, "classname", log_path) ||
	      cli_xml_attr(w, "name", name) ||
	      xmlTextWriterWriteFormatAttribute(w, BAD_CAST "time", "%.3f",
						r->seconds) < 0 ||
	      (report_state_failed(r) && junit_failure(w, r, output)) ||
	      xmlTextWriterEndElement(w) < 0;
	free(name);
	return ret ? -1 : 0;
}

int
report_junit_end(xmlTextWriterPtr w)
{
	return xmlTextWriterEndElement(w) < 0 ? -1 : 0;
}

static int
write_junit(FILE *out, const void *ctx)
{
	const struct check_run *run = ctx;
	xmlTextWriterPtr w = cli_xml_start(out);
	int failed;

	if (!w)
		return -1;
	failed = report_junit_head(w, run->done, run->failed);
	for (size_t i = 0; !failed && i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];
		struct report_state r;

		if (s->exit_code < 0)
			continue;
		report_state_of(s, &r);
		failed = report_junit_state(w, run->args->log_path, &r,
					    s->carried ? NULL : s->output);
	}
	return cli_xml_end(w, failed || report_junit_end(w));
}

int
write_report(const char *who, const char *path,
	     const struct cli_input *inputs, size_t nr_inputs,
	     int (*fn)(FILE *out, const void *ctx), const void *ctx)
{
	struct cli_output o;
	FILE *f;
	int ret;

	ret = cli_output_open(&o, who, path, OUTPUT_STREAM, 0, inputs,
			      nr_inputs);
	if (ret)
		return ret;
	f = cli_output_stdio(&o);
	errno = 0;
	if (!f || fn(f, ctx) || ferror(f)) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", who, path,
			errno ? strerror(errno) : "out of memory");
		cli_output_abort(&o);
		return EXIT_BROKEN_RUN;
	}
	return cli_output_close(&o);
}

/* The files check reads: no report may be one of them. */
size_t
check_inputs(const struct check_args *a, struct cli_input inputs[2])
{
	inputs[0] = (struct cli_input) { "the log", a->log_path };
	inputs[1] = (struct cli_input) { "the base", a->base };
	return 2;
}

/*
 * The --report and --junit reports as they stand; after an error, no
 * more.  One written as a stream (stdout, a FIFO, /dev/null) is written
 * once, when final: a stream cannot be rewritten.
 */
void
save_reports(struct check_run *run, bool final)
{
	const struct check_args *a = run->args;
	const char *paths[2] = { a->report, a->junit };
	int (*const fns[2])(FILE *, const void *) = { write_json, write_junit };
	struct cli_input inputs[2];
	size_t nr = check_inputs(a, inputs);

	for (int i = 0; i < 2 && !run->report_error; i++)
		if (paths[i] && (final || !cli_output_is_stream(paths[i])) &&
		    write_report("flushlog check", paths[i], inputs, nr, fns[i],
				 run))
			run->report_error = true;
	run->reports_dirty = false;
	run->reports_saved = progress_now();
}

/*
 * Reading a report back, a line at a time: each state line is a JSON
 * object with a comma after it but for the last; the first line is the
 * head object cut short after "states":[.  json-c parses them.
 */

/* The object a line holds, a comma after it or not; or NULL. */
static struct json_object *
parse_object(const char *line)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strcspn(line, "\n");
	struct json_object *o;

	if (!tok)
		return NULL;
	if (len && line[len - 1] == ',')
		len--;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static struct json_object *
member(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

static bool
get_string(struct json_object *o, const char *key, const char **out)
{
	struct json_object *v = member(o, key, json_type_string);

	*out = v ? json_object_get_string(v) : NULL;
	return v;
}

static bool
get_u64(struct json_object *o, const char *key, uint64_t *out)
{
	struct json_object *v = member(o, key, json_type_int);

	/* json-c keeps a number past INT64_MAX unsigned: it is not negative */
	if (!v || json_object_get_int64(v) < 0)
		return false;
	*out = json_object_get_uint64(v);
	return true;
}

static bool
get_size(struct json_object *o, const char *key, size_t *out)
{
	uint64_t v;

	if (!get_u64(o, key, &v) || v > SIZE_MAX)
		return false;
	*out = (size_t)v;
	return true;
}

/* A digest: 16 hex digits in a string. */
static bool
get_digest(struct json_object *o, const char *key, uint64_t *out)
{
	const char *at;

	if (!get_string(o, key, &at) || strlen(at) != 16 ||
	    strspn(at, "0123456789abcdef") != 16)
		return false;
	*out = strtoull(at, NULL, 16);
	return true;
}

static bool
get_bool(struct json_object *o, const char *key, bool *out)
{
	struct json_object *v = member(o, key, json_type_boolean);

	if (v)
		*out = json_object_get_boolean(v);
	return v;
}

/* The fields that reports have had since shards could be merged. */
static int
parse_shard_fields(struct json_object *o, struct report_head *h)
{
	const char *shard;
	int len = 0;

	h->options = member(o, "options", json_type_object);
	h->checker = member(o, "checker", json_type_array);
	if (!get_string(o, "shard", &shard) ||
	    sscanf(shard, "%u/%u%n", &h->shard_k, &h->shard_n, &len) != 2 ||
	    shard[len] || !h->shard_n || h->shard_k >= h->shard_n ||
	    !get_size(o, "planned", &h->planned) ||
	    !get_digest(o, "plan_all", &h->plan_all) ||
	    !get_digest(o, "log_digest", &h->log_digest) ||
	    !h->options || !h->checker)
		return -EINVAL;
	return 0;
}

static int
parse_head(struct json_object *o, struct report_head *h)
{
	size_t passed;

	if (!get_string(o, "log", &h->log_path) ||
	    !get_u64(o, "entries", &h->entries) ||
	    !get_digest(o, "plan", &h->plan) ||
	    !get_bool(o, "finished", &h->finished) ||
	    !get_size(o, "checked", &h->checked) ||
	    !get_size(o, "passed", &passed) ||
	    !get_size(o, "failed", &h->failed) ||
	    !get_size(o, "timeouts", &h->timeouts) ||
	    passed + h->failed != h->checked || h->timeouts > h->failed)
		return -EINVAL;
	if (!json_object_object_get_ex(o, "shard", NULL))
		return 0;	/* an older report */
	return parse_shard_fields(o, h);
}

/* -EINVAL if the line is not a report's first line, -ENOMEM. */
int
report_parse_head(const char *line, struct report_head *h)
{
	static const char open[] = ",\"states\":[";
	size_t len = strcspn(line, "\n");
	char *whole;
	int ret;

	*h = (struct report_head) { 0 };
	if (len < sizeof(open) || line[0] != '{' ||
	    strncmp(line + len - (sizeof(open) - 1), open, sizeof(open) - 1))
		return -EINVAL;
	/* closed, with no states, it is one object */
	if (asprintf(&whole, "%.*s]}\n", (int)len, line) < 0)
		return -ENOMEM;
	h->parsed = parse_object(whole);
	free(whole);
	if (!h->parsed)
		return -EINVAL;
	ret = parse_head(h->parsed, h);
	if (ret)
		report_head_release(h);
	return ret;
}

void
report_head_release(struct report_head *h)
{
	json_object_put(h->parsed);
	*h = (struct report_head) { 0 };
}

/* A string member copied to *at, moved on; NULL if there is none. */
static const char *
move_string(struct json_object *o, const char *key, char **at)
{
	const char *s;
	char *kept = *at;

	if (!get_string(o, key, &s))
		return NULL;
	*at = stpcpy(*at, s) + 1;
	return kept;
}

static int
parse_state(struct json_object *o, char *line, struct report_state *r)
{
	struct json_object *entry = member(o, "entry", json_type_int);
	struct json_object *seconds = member(o, "seconds", json_type_double);
	uint64_t exit_code;
	char *at = line;

	if (!get_u64(o, "point", &r->point) ||
	    !get_u64(o, "exit", &exit_code) || exit_code > 255 ||
	    !entry || json_object_get_int64(entry) < -1 ||
	    (json_object_object_get_ex(o, "index", NULL) &&
	     !get_u64(o, "index", &r->index)))
		return -EINVAL;
	if (!seconds)	/* a whole number of seconds is an int to json-c */
		seconds = member(o, "seconds", json_type_int);
	if (!seconds || json_object_get_double(seconds) < 0)
		return -EINVAL;
	/*
	 * The strings move into the line: each is shorter than its text in
	 * the line, quoted and perhaps escaped, and none is read twice.
	 */
	r->kind = move_string(o, "kind", &at);
	r->spec = r->kind ? move_string(o, "spec", &at) : NULL;
	r->name = r->spec ? move_string(o, "state", &at) : NULL;
	r->result = r->name ? move_string(o, "result", &at) : NULL;
	if (!r->result)
		return -EINVAL;
	if (json_object_object_get_ex(o, "same_as", NULL) &&
	    (!(r->same_as = move_string(o, "same_as", &at)) ||
	     !get_u64(o, "same_as_point", &r->same_as_point)))
		return -EINVAL;
	r->entry = json_object_get_int64(entry);
	r->seconds = json_object_get_double(seconds);
	r->exit_code = (int)exit_code;
	/* the verdict and the exit status must agree */
	if (!strcmp(r->result, "pass"))
		return exit_code ? -EINVAL : 0;
	if (!strcmp(r->result, "fail"))
		return exit_code ? 0 : -EINVAL;
	return strcmp(r->result, "timeout") ? -EINVAL : 0;
}

/* -EINVAL if the line is not a report's state line. */
int
report_parse_state(char *line, struct report_state *r)
{
	struct json_object *o = parse_object(line);
	int ret;

	*r = (struct report_state) { .index = NO_INDEX };
	if (!o)
		return -EINVAL;
	ret = parse_state(o, line, r);
	json_object_put(o);
	return ret;
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
	/*
	 * A result another state's check gave is this run's to give again,
	 * by its own --context (or --every-state): not carried.
	 */
	if (r.same_as)
		return 0;
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
	int ret = report_parse_head(line, &h);

	if (ret)
		return ret;
	if (h.plan != run->plan) {
		fprintf(stderr, "flushlog check: --resume: '%s' is a report of another log or of other options (plan %016" PRIx64 ", this check %016" PRIx64 ")\n",
			run->args->resume, h.plan, run->plan);
		ret = -ENOENT;
	}
	report_head_release(&h);
	return ret;
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

	f = fopen(path, "re");
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
		fprintf(stderr, "flushlog check: --resume: '%s' line %zu is not from a 'flushlog check --report' report\n",
			path, lineno);
	free(line);
	free(index);
	fclose(f);
	if (ret == -ENOMEM)
		fprintf(stderr, "flushlog check: --resume: out of memory\n");
	if (ret)
		return -EINVAL;
	check_note(run->args, "%zu states already checked in '%s'", run->carried,
		   path);
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
	/* a report's strings may hold anything, a label's spec any bytes */
	char *kind = cli_escape(r->kind, strlen(r->kind), ESC_CONTROL);
	char *spec = cli_escape(r->spec, strlen(r->spec), ESC_CONTROL);
	char *name = cli_escape(r->name, strlen(r->name), ESC_CONTROL);

	printf("%8" PRIu64 " %-6s %10" PRId64 " %-24s %-24s ", r->point,
	       kind ? kind : "?", r->entry, spec ? spec : "?", name ? name : "?");
	free(kind);
	free(spec);
	free(name);
	if (!strcmp(r->result, "timeout") && !r->same_as)
		printf("TIMEOUT (killed after %.0f s)", r->seconds);
	else if (!strcmp(r->result, "timeout"))
		printf("TIMEOUT");
	else
		printf("FAIL (exit %d)", r->exit_code);
	if (r->same_as) {
		char *same = cli_escape(r->same_as, strlen(r->same_as), ESC_CONTROL);

		printf(" (same as state %s at point %" PRIu64 ")", same ? same : "?",
		       r->same_as_point);
		free(same);
	}
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
check_note(const struct check_args *a, const char *fmt, ...)
{
	FILE *out = stdout_holds_report(a) ? stderr : stdout;
	va_list ap;

	if (stdout_holds_report(a) && cli_quiet)
		return;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	fflush(out);
}

int
summarise(const struct check_run *run, const char *self)
{
	const struct check_args *a = run->args;
	bool table = !stdout_holds_report(a);
	int ret = 0;

	/* a table of the failures: none, no table, the totals say it all */
	if (table && run->failed)
		report_print_head();
	for (size_t i = 0; i < run->nr_states; i++) {
		const struct state_result *s = &run->states[i];
		struct report_state r;

		if (!state_failed(s))
			continue;
		report_state_of(s, &r);
		if (table)
			report_print_failure(&r, s->carried ? " (from --resume)" : "");
		/* what it would save is its first's, saved under that name */
		if (s->carried || s->same_as)
			continue;
		if (a->save_dir && save_failure(run, s, self) && !ret)
			ret = -EIO;
		else if (!a->save_dir && s->output)
			unlink(s->output);
	}
	if (a->json)
		return write_json(stdout, run) ? -ENOMEM : ret;
	if (!table)
		return ret;
	report_print_totals(run->done, run->failed, run->timeouts);
	if (run->same)
		printf(", %zu of them the same as an earlier state (checked once)",
		       run->same);
	if (run->carried)
		printf(", %zu of them from '%s'", run->carried, a->resume);
	printf("%s\n", run->done < run->nr_states ?
	       " (stopped at the first failure)" : "");
	return ret;
}
