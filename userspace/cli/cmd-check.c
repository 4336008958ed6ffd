// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog check: run a checker on the state at every chosen crash point.
 *
 * This file parses the options and drives one run; the engine is in
 * check-run.c, failures and reports in check-report.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

enum {
	OPT_BASE, OPT_POINTS, OPT_STATES, OPT_MAX_REORDER, OPT_MAX_TORN,
	OPT_MAX_STATES, OPT_FROM, OPT_TO, OPT_JOBS, OPT_SHARD, OPT_KEEP_GOING,
	OPT_SAVE, OPT_REPORT, OPT_JUNIT, OPT_JSON, OPT_WORKDIR,
	OPT_TIMEOUT, OPT_RESUME, OPT_NO_ORDER_CHECK, OPT_IMAGES, OPT_STATE,
	OPT_EVERY_STATE, OPT_CONTEXT,
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
	[OPT_TO] = { "to", 0, "POINT",
		     "skip the points after POINT (e.g. a workload's last mark)" },
	[OPT_JOBS] = { "jobs", 'j', "N", "run N checkers at once (default 1)" },
	[OPT_SHARD] = { "shard", 0, "K/N",
			"check only the chosen states i with i % N == K (see merge)" },
	[OPT_KEEP_GOING] = { "keep-going", 'k', NULL,
			     "go on after a failing state" },
	[OPT_SAVE] = { "save-failures", 's', "DIR",
		       "keep images, output and a reproducer per failure" },
	[OPT_REPORT] = { "report", 0, "FILE",
			 "write the JSON report to FILE, kept up to date as states finish ('-': stdout)" },
	[OPT_JUNIT] = { "junit", 0, "FILE",
			"write JUnit XML, one test case per state ('-': stdout)" },
	[OPT_JSON] = { "json", 0, NULL,
		       "print the JSON report on stdout instead of the summary" },
	[OPT_WORKDIR] = { "workdir", 'w', "DIR",
			  "where state images go (default $TMPDIR or /tmp)" },
	[OPT_TIMEOUT] = { "timeout", 0, "SECONDS",
			  "kill a checker's process group after SECONDS: result timeout" },
	[OPT_RESUME] = { "resume", 0, "REPORT",
			 "skip the states REPORT (an earlier --report) has results for" },
	[OPT_NO_ORDER_CHECK] = { "no-order-check", 0, NULL,
				 "use a log not in durability order (states may be wrong)" },
	[OPT_IMAGES] = { "images", 0, "MODE",
			 "in-place (checkers only read), copy (a copy a state), or auto (default)" },
	[OPT_STATE] = { "state", 0, "NAME",
			"check the state NAME alone, its checker's output on stderr as it comes" },
	[OPT_EVERY_STATE] = { "every-state", 0, NULL,
			      "run the checker on every state, even one the same as an earlier" },
	[OPT_CONTEXT] = { "context", 0, "WHAT",
			  "what the checker reads besides the image: mark,last-mark,after-mark,promises, all (default) or none" },
	{ NULL },
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

const struct context_name context_names[] = {
	{ "mark", CONTEXT_MARK },
	{ "last-mark", CONTEXT_LAST_MARK },
	{ "after-mark", CONTEXT_AFTER_MARK },
	{ "promises", CONTEXT_PROMISES },
};
const size_t nr_context_names = sizeof(context_names) / sizeof(context_names[0]);

/*
 * --context: none alone, or names (all for every one).  An empty word is
 * refused rather than read as none, which lets the most states share.
 */
static unsigned int
parse_context(const struct cli_command *cmd, const char *arg)
{
	unsigned int context = 0;
	const char *word = arg;
	size_t i, len;

	if (!strcmp(arg, "none"))
		return 0;
	for (;;) {
		len = strcspn(word, ",");
		for (i = 0; i < nr_context_names; i++)
			if (strlen(context_names[i].name) == len &&
			    !strncmp(word, context_names[i].name, len))
				break;
		if (i < nr_context_names)
			context |= context_names[i].bit;
		else if (len == 3 && !strncmp(word, "all", 3))
			context |= CONTEXT_ALL;
		else
			cli_usage_error(cmd, "--context: '%.*s' is none of mark, last-mark, after-mark, promises, all (or none alone)",
					(int)len, word);
		if (!word[len])
			return context;
		word += len + 1;
	}
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
		.context = CONTEXT_ALL,
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
		case OPT_TO: a->to = arg; break;
		case OPT_JOBS: a->jobs = parse_bounded(cmd, "jobs", arg, 256); break;
		case OPT_SHARD:
			slash = strchr(arg, '/');
			if (!slash || sscanf(arg, "%u/%u", &a->shard_k, &a->shard_n) != 2 ||
			    !a->shard_n || a->shard_k >= a->shard_n)
				cli_usage_error(cmd, "--shard takes K/N with 0 <= K < N, not '%s'", arg);
			break;
		case OPT_KEEP_GOING: a->keep_going = true; break;
		case OPT_EVERY_STATE: a->every_state = true; break;
		case OPT_CONTEXT: a->context = parse_context(cmd, arg); break;
		case OPT_SAVE: a->save_dir = arg; break;
		case OPT_REPORT: a->report = arg; break;
		case OPT_JUNIT: a->junit = arg; break;
		case OPT_JSON: a->json = true; break;
		case OPT_WORKDIR: a->workdir = arg; break;
		case OPT_TIMEOUT:
			a->timeout = parse_bounded(cmd, "timeout", arg, 1U << 30);
			break;
		case OPT_RESUME: a->resume = arg; break;
		case OPT_NO_ORDER_CHECK: a->check_order = false; break;
		case OPT_IMAGES:
			if (!strcmp(arg, "auto"))
				a->images = IMAGES_AUTO;
			else if (!strcmp(arg, "in-place"))
				a->images = IMAGES_IN_PLACE;
			else if (!strcmp(arg, "copy"))
				a->images = IMAGES_COPY;
			else
				cli_usage_error(cmd, "--images takes auto, in-place or copy, not '%s'", arg);
			break;
		case OPT_STATE: a->state = arg; break;
		}
	}
	if (argc - cli_operand_index() < 1)
		cli_usage_error(cmd, "expected LOG -- CMD [ARGS...]");
	a->log_path = argv[cli_operand_index()];
	a->cmd = argv + cli_operand_index() + 1;
	a->cmd_argc = argc - cli_operand_index() - 1;
	if (!a->cmd_argc)
		cli_usage_error(cmd, "no checker: expected LOG -- CMD [ARGS...] with {} for the image");
	/* the report on stdout is what --json prints */
	if (a->report && !strcmp(a->report, "-")) {
		a->report = NULL;
		a->json = true;
	}
	if (a->json && a->junit && !strcmp(a->junit, "-"))
		cli_usage_error(cmd, "--junit -: stdout already takes the JSON report");
	/* one state is not shared out, and has no others to carry over */
	if (a->state && (a->shard_n > 1 || a->resume))
		cli_usage_error(cmd, "--state checks one state: it takes neither --shard nor --resume");
	if (!a->workdir)
		a->workdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	a->log_path = absolute(a->log_path, a->abs_log);
	if (a->base)
		a->base = absolute(a->base, a->abs_base);
	/* discarding zeroes keeps nothing: no discard state to check there */
	if (!a->base)
		a->states.flags |= FL_STATE_OPT_ZERO_BASE;
	if (strchr(a->cmd[0], '/'))
		a->cmd[0] = (char *)absolute(a->cmd[0], a->abs_cmd);
}

static void
free_states(struct check_run *run)
{
	for (size_t i = 0; i < run->nr_states; i++) {
		free(run->states[i].image);
		free(run->states[i].output);
	}
	free(run->states);
	fl_states_free(run->plan_states);
	fl_points_free(run->points);
}

/* Every report refused before a state is checked, not after. */
static int
check_reports(const struct check_args *a)
{
	struct cli_input inputs[2];
	size_t nr = check_inputs(a, inputs);
	int ret = 0;

	if (a->report)
		ret = cli_output_check("flushlog check", a->report, OUTPUT_STREAM,
				       0, inputs, nr);
	if (!ret && a->junit)
		ret = cli_output_check("flushlog check", a->junit, OUTPUT_STREAM,
				       0, inputs, nr);
	return ret;
}

static int
run_check(const struct cli_command *cmd, int argc, char **argv)
{
	struct check_run run = { .work_fd = -1, .follow_fd = -1 };
	struct fl_error err = { 0 };
	struct check_args a;
	char self[PATH_MAX];
	ssize_t n;
	int ret;

	parse_args(cmd, argc, argv, &a);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(self, sizeof(self), "flushlog");
	ret = check_reports(&a);
	if (ret)
		return ret;
	ret = cli_open_ordered_log(cmd, a.log_path, a.check_order, &run.log);
	if (ret)
		return ret;
	ret = check_promises(&run, a.log_path);
	if (ret) {
		fl_log_close(run.log);
		return ret == -ENOMEM ? EXIT_BROKEN_RUN : EXIT_BAD_LOG;
	}
	run.args = &a;
	progress_init(&run.progress, "flushlog check");
	if (make_work_dir(&run, &a)) {
		fl_log_close(run.log);
		return EXIT_BROKEN_RUN;
	}
	catch_signals(&run);
	ret = choose_states(&run);
	if (!ret && a.resume)
		ret = load_resume(&run);
	if (ret) {
		release_signals(&run);
		free_states(&run);
		fl_log_close(run.log);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_BROKEN_RUN;
	}
	if (!run.nr_states && run.planned)
		cli_warn(cmd, "no state in shard %u/%u: the run has %zu", a.shard_k,
			 a.shard_n, run.planned);
	else if (!run.nr_states)
		cli_warn(cmd, "no state to check: no crash point of the chosen kinds%s",
			 a.from ? " from --from on" : "");
	ret = run_states(&run, &err);
	run.finished = !ret && !run.cannot_run && run.done == run.nr_states;
	if (a.report || a.junit) {
		run.report_error = false;
		save_reports(&run, true);
	}
	/* a run that went wrong says so before the verdict it reached */
	if (run.cannot_run) {
		ret = EXIT_BROKEN_RUN;
	} else if (ret) {
		ret = cli_report(cmd, &err);
	} else {
		n = summarise(&run, self);
		if (n == -ENOMEM)
			fprintf(stderr, "flushlog check: out of memory\n");
		ret = n || run.report_error ? EXIT_BROKEN_RUN :
		      run.failed ? EXIT_FAILED : EXIT_OK;
	}
	release_signals(&run);
	free_states(&run);
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
		"FLUSHLOG_STATE_NAME and FLUSHLOG_STATE.  Promises, marks labelled\n"
		"promise:KEY=VALUE (crashtest's flushlog-promise), are owed by every crash after\n"
		"them: FLUSHLOG_PROMISE_KEY holds each key's last value promised before\n"
		"the point (unset: none yet), FLUSHLOG_PROMISES the keys that have one;\n"
		"a promise mark of another form refuses the log.  Of a log of several data\n"
		"devices (format version 3) the file holds every device, one after\n"
		"another as 'flushlog info' lists them, and FLUSHLOG_DEVICES says where\n"
		"each is: START+SECTORS per device, in 512-byte sectors, space\n"
		"separated (for a loop device's --offset, or a dm-linear table); a\n"
		"flush makes only its own device's writes durable.  Each job (-j) has one image\n"
		"that only moves forward through the log: a state costs the entries\n"
		"since the job's last state and its own extra entries, saved before and\n"
		"undone after its checker, whatever the image's size.  The image is\n"
		"sealed (a fixed mtime) while the checker runs: one that writes to it\n"
		"anyway (a mount replaying a journal) is caught and the image rebuilt\n"
		"from the base; with --images auto every later state then gets a copy\n"
		"of its own (a reflink or a sparse copy), as with --images copy from\n"
		"the start, which a checker may write to freely.  Nothing a checker\n"
		"started may write to an image in place after it exits: its process\n"
		"group is killed then.  --states epoch adds\n"
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
		"run with exit 4: keep those two codes for that.  The log must be in\n"
		"durability order (checked as 'flushlog info' does; exit 3 otherwise);\n"
		"--no-order-check is for logs known to be misordered, whose states may\n"
		"be wrong.  --report and --junit are rewritten as states finish (at most\n"
		"once a second), so a killed run leaves a report of what it checked; the\n"
		"JSON has one state a line, and --resume REPORT takes the states REPORT\n"
		"has a result for as done, carrying their results over.  --json prints\n"
		"that report on stdout at the end instead of the table of failures, and\n"
		"the other lines check prints go to stderr.  --report and --junit follow\n"
		"the output rule of flushlog(1) OUTPUTS: '-' is stdout (--report - is\n"
		"--json; --junit - prints the JUnit XML there instead of the table), a\n"
		"FIFO or character device gets its report once, at the end, and the log\n"
		"or the base is refused.  Labels and checker output\n"
		"may hold any bytes: in JSON and XML a byte that is not UTF-8 is written\n"
		"\\xNN, and in XML (and the table) control characters too, so the\n"
		"reports always parse; a mark:LABEL spec so written names its mark.\n"
		"On a terminal, a progress line on stderr counts the states and\n"
		"estimates the time left.  A log with no entries has two crash points,\n"
		"its start and its end: the base.  --state NAME checks one state (a name\n"
		"from a report or 'replay --state') as a run of the same options would,\n"
		"its checker's output copied to stderr as it comes; a NAME those options\n"
		"do not plan is a usage error.  A state the same as an earlier one, the\n"
		"same image (the same entries applied, but for marks and empty flushes)\n"
		"and the same FLUSHLOG_MARK, FLUSHLOG_LAST_MARK, FLUSHLOG_AFTER_MARK,\n"
		"FLUSHLOG_DEVICES and promises, is checked once: the later one gets the\n"
		"first's result, reported with \"same_as\" (its name) and counted among\n"
		"the states checked; --context says which of those variables the checker\n"
		"reads (none: the image alone, as an fsck).  A checker whose verdict\n"
		"depends on FLUSHLOG_POINT, FLUSHLOG_ENTRY, FLUSHLOG_SPEC, FLUSHLOG_KIND\n"
		"or a state's name needs --every-state.\n"
		"Exit status 0 when every state passed, 1 when one failed or timed out,\n"
		"2 for a usage error or a refused output, 3 for a bad log, 4 when the run\n"
		"could not be done: a checker that cannot run, a work folder, image or\n"
		"report that cannot be made or written (flushlog(1) EXIT STATUS).",
	.example =
		"  flushlog check --base before.img log.img -- e2fsck -fn {}\n"
		"  flushlog check -j 2 -k --save-failures fails --junit check.xml log.img -- ./fsck-state {}\n"
		"  flushlog check --states epoch,torn -K 1 --max-states 2000 log.img -- ./fsck-state {}\n"
		"  flushlog check -k --json log.img -- ./fsck-state {} | jq -r '.states[] | select(.result != \"pass\") | .spec'\n"
		"  # 8 machines, one shard each (Slurm array, K = $SLURM_ARRAY_TASK_ID):\n"
		"  flushlog check -k --shard $SLURM_ARRAY_TASK_ID/8 --report shard-$SLURM_ARRAY_TASK_ID.json log.img -- ./check {}\n"
		"  flushlog merge --report report.json shard-*.json     # when all 8 are done\n"
		"  flushlog check --state 14+16 --states epoch log.img -- ./fsck-state {}   # one state again",
	.options = check_options,
	.run = run_check,
};
