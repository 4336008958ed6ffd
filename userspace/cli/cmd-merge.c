// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog merge: one report from the --json reports of a sharded check.
 *
 * Each shard's report says which run it is part of: the log's digest, the
 * options that shape the states and their verdicts, the checker, its
 * shard K/N, and plan_all, the digest of the log and of every planned
 * state's name in order, which is the plan of a run without --shard.
 * Reports that differ in any of these are refused: their verdicts are not
 * of one run.  Each state line carries its index among all planned
 * states, so that states no report has a result for, and states two
 * reports have, are found without the log.  The merged report is the one
 * a run without --shard would have written (its plan is plan_all), so
 * that check --resume takes it and checks what is missing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { OPT_REPORT, OPT_JUNIT, OPT_JSON };

static const struct cli_option merge_options[] = {
	[OPT_REPORT] = { "report", 0, "FILE", "write the merged JSON report to FILE ('-': stdout)" },
	[OPT_JUNIT] = { "junit", 0, "FILE",
			"write the merged JUnit XML, one test case per state ('-': stdout)" },
	[OPT_JSON] = { "json", 0, NULL,
		       "print the merged JSON report on stdout instead of the summary" },
	{ NULL },
};

/* How many missing or duplicate states are named before they are counted. */
#define NAMED_AT_MOST	8

/* One shard's report: its first line and its state lines, parsed in place. */
struct shard_report {
	const char *path;
	char *head_line;
	struct report_head head;
	char **lines;
	struct report_state *states;
	size_t nr, cap;
	bool duplicate;		/* another report is of the same shard */
};

struct merge {
	struct shard_report *reports;
	size_t nr_reports;
	size_t planned;
	/* by index among the planned states: the result, and whose it is */
	const struct report_state **result;
	const struct shard_report **owner;
	struct report_head head;	/* of the merged report */
	size_t missing, duplicates;
	bool refused;		/* not of one run: nothing is written */
	struct progress progress;	/* while the reports are read */
};

static __attribute__((format(printf, 2, 3))) void
refuse(struct merge *m, const char *fmt, ...)
{
	va_list ap;

	progress_clear(&m->progress);
	fprintf(stderr, "flushlog merge: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	m->refused = true;
}

/* Keep a state line, parsed in place; -ENOMEM, and it is not kept. */
static int
add_line(struct shard_report *rep, char *line)
{
	if (rep->nr == rep->cap) {
		size_t cap = rep->cap ? 2 * rep->cap : 64;
		char **lines = reallocarray(rep->lines, cap, sizeof(*lines));
		struct report_state *states;

		if (!lines)
			return -ENOMEM;
		rep->lines = lines;
		states = reallocarray(rep->states, cap, sizeof(*states));
		if (!states)
			return -ENOMEM;
		rep->states = states;
		rep->cap = cap;
	}
	rep->lines[rep->nr] = line;
	return report_parse_state(line, &rep->states[rep->nr++]);
}

/* Its lines, as 'flushlog check --json' writes them; -EINVAL with a message. */
static int
parse_report(struct merge *m, struct shard_report *rep, FILE *f)
{
	size_t cap = 0, lineno = 1, failed = 0;
	bool ended = false;
	char *line = NULL;
	int ret;

	if (getline(&rep->head_line, &cap, f) <= 0)
		goto bad;
	ret = report_parse_head(rep->head_line, &rep->head);
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		goto bad;
	if (!rep->head.shard_n) {
		refuse(m, "'%s' is a report of an older flushlog check, which did not say what it shares with other shards: check again",
		       rep->path);
		return -EINVAL;
	}
	for (cap = 0; getline(&line, &cap, f) > 0; line = NULL, cap = 0) {
		lineno++;
		if (ended)
			goto bad;	/* something after the end */
		if (!strcmp(line, "]}\n")) {
			ended = true;
			free(line);
			continue;
		}
		ret = add_line(rep, line);
		if (ret == -ENOMEM) {
			free(line);
			return ret;
		}
		if (ret || rep->states[rep->nr - 1].index == NO_INDEX) {
			line = NULL;
			goto bad;
		}
		failed += report_state_failed(&rep->states[rep->nr - 1]);
	}
	free(line);
	if (!ended) {
		refuse(m, "'%s' ends at line %zu, before the end of its states: cut short?",
		       rep->path, lineno);
		return -EINVAL;
	}
	if (rep->nr != rep->head.checked || failed != rep->head.failed) {
		refuse(m, "'%s' counts %zu states, %zu failed, but lists %zu, %zu failed",
		       rep->path, rep->head.checked, rep->head.failed, rep->nr,
		       failed);
		return -EINVAL;
	}
	return 0;
bad:
	free(line);
	refuse(m, "'%s' line %zu is not from a 'flushlog check --report' report",
	       rep->path, lineno);
	return -EINVAL;
}

static int
read_report(struct merge *m, struct shard_report *rep)
{
	FILE *f = fopen(rep->path, "r");
	int ret;

	if (!f) {
		refuse(m, "cannot open '%s': %s", rep->path, strerror(errno));
		return -EINVAL;
	}
	ret = parse_report(m, rep, f);
	fclose(f);
	return ret;
}

/* Is rep of the same run as first?  If not, say what differs. */
static bool
same_run(struct merge *m, const struct shard_report *first,
	 const struct shard_report *rep)
{
	const struct report_head *a = &first->head, *b = &rep->head;

	if (a->log_digest != b->log_digest || a->entries != b->entries) {
		refuse(m, "'%s' is a report on another log than '%s' ('%s', digest %016" PRIx64 ", against '%s', digest %016" PRIx64 ")",
		       rep->path, first->path, b->log_path, b->log_digest,
		       a->log_path, a->log_digest);
	} else if (!json_object_equal(a->options, b->options)) {
		refuse(m, "'%s' was checked with other options than '%s':\n  %s\n  %s",
		       rep->path, first->path, cli_json_text(b->options),
		       cli_json_text(a->options));
	} else if (!json_object_equal(a->checker, b->checker)) {
		refuse(m, "'%s' ran another checker than '%s':\n  %s\n  %s",
		       rep->path, first->path, cli_json_text(b->checker),
		       cli_json_text(a->checker));
	} else if (a->shard_n != b->shard_n) {
		refuse(m, "'%s' is shard %u/%u, '%s' shard %u/%u: the shards of one run are of one N",
		       rep->path, b->shard_k, b->shard_n, first->path,
		       a->shard_k, a->shard_n);
	} else if (a->planned != b->planned || a->plan_all != b->plan_all) {
		refuse(m, "'%s' plans other states than '%s' (%zu, plan %016" PRIx64 ", against %zu, plan %016" PRIx64 "): another version of flushlog?",
		       rep->path, first->path, b->planned, b->plan_all,
		       a->planned, a->plan_all);
	} else {
		return true;
	}
	return false;
}

/* Two reports of one shard: the second one's states are not taken. */
static void
find_duplicate_shards(struct merge *m)
{
	for (size_t i = 1; i < m->nr_reports; i++) {
		struct shard_report *rep = &m->reports[i];

		for (size_t j = 0; j < i && !rep->duplicate; j++) {
			if (m->reports[j].head.shard_k != rep->head.shard_k ||
			    m->reports[j].duplicate)
				continue;
			refuse(m, "'%s' and '%s' are both shard %u/%u",
			       m->reports[j].path, rep->path, rep->head.shard_k,
			       rep->head.shard_n);
			rep->duplicate = true;
		}
	}
}

/* Put each state of rep at its index: its shard's, and no other report's. */
static void
place_states(struct merge *m, const struct shard_report *rep)
{
	const struct report_head *h = &rep->head;

	for (size_t i = 0; i < rep->nr; i++) {
		const struct report_state *r = &rep->states[i];

		if (r->index >= m->planned || r->index % h->shard_n != h->shard_k) {
			refuse(m, "'%s': state %s has index %" PRIu64 ", which is not one of shard %u/%u's %zu states",
			       rep->path, r->name, r->index, h->shard_k,
			       h->shard_n, m->planned);
			continue;
		}
		if (!m->result[r->index]) {
			m->result[r->index] = r;
			m->owner[r->index] = rep;
			continue;
		}
		if (m->duplicates++ < NAMED_AT_MOST)
			refuse(m, "state %s (index %" PRIu64 ") has results in '%s' and in '%s'",
			       r->name, r->index, m->owner[r->index]->path,
			       rep->path);
	}
}

/* The states of shard k that no report has a result for, named. */
static void
report_missing(struct merge *m, unsigned int k, unsigned int n,
	       const struct shard_report *rep)
{
	size_t share = 0, missing = 0;
	char named[NAMED_AT_MOST * 24] = "";

	for (size_t i = k; i < m->planned; i += n) {
		share++;
		if (m->result[i])
			continue;
		if (missing++ < NAMED_AT_MOST)
			snprintf(named + strlen(named), sizeof(named) - strlen(named),
				 "%s%zu", missing > 1 ? ", " : "", i);
	}
	m->missing += missing;
	if (!missing)
		return;
	if (!rep)
		fprintf(stderr, "flushlog merge: shard %u/%u is missing: no report has its %zu states (numbers %s%s of 0 to %zu)\n",
			k, n, share, named, missing > NAMED_AT_MOST ? ", ..." : "",
			m->planned - 1);
	else
		fprintf(stderr, "flushlog merge: shard %u/%u ('%s') has no result for %zu of its %zu states (numbers %s%s of 0 to %zu): it stopped early (killed, or at a failure without --keep-going)\n",
			k, n, rep->path, missing, share, named,
			missing > NAMED_AT_MOST ? ", ..." : "", m->planned - 1);
}

static int
find_missing(struct merge *m)
{
	unsigned int n = m->reports[0].head.shard_n;
	/* a shard k >= planned has no state to miss */
	size_t shards = n < m->planned ? n : m->planned;
	const struct shard_report **by_shard = calloc(shards ? shards : 1,
						      sizeof(*by_shard));

	if (!by_shard)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_reports; i++)
		if (m->reports[i].head.shard_k < shards)
			by_shard[m->reports[i].head.shard_k] = &m->reports[i];
	for (size_t k = 0; k < shards; k++)
		report_missing(m, (unsigned int)k, n, by_shard[k]);
	free(by_shard);
	return 0;
}

/*
 * With every state there, their names in order must make the plan every
 * report says they share: a state line edited by hand is caught here.
 */
static void
check_plan(struct merge *m)
{
	const struct report_head *h = &m->reports[0].head;
	uint64_t plan = h->log_digest;

	for (size_t i = 0; i < m->planned; i++)
		plan = plan_add_state(plan, m->result[i]->name);
	if (plan != h->plan_all)
		refuse(m, "the states of the reports do not make up their plan (%016" PRIx64 ", not %016" PRIx64 "): was a report edited?",
		       plan, h->plan_all);
}

/* The merged report's first line: a run without --shard. */
static void
merged_head(struct merge *m)
{
	m->head = m->reports[0].head;
	m->head.parsed = NULL;	/* its strings stay the first report's */
	m->head.plan = m->head.plan_all;
	m->head.shard_k = 0;
	m->head.shard_n = 1;
	m->head.finished = !m->missing;
	m->head.checked = m->head.failed = m->head.timeouts = 0;
	for (size_t i = 0; i < m->planned; i++) {
		const struct report_state *r = m->result[i];

		if (!r)
			continue;
		m->head.checked++;
		if (report_state_failed(r)) {
			m->head.failed++;
			m->head.timeouts += !strcmp(r->result, "timeout");
		}
	}
}

static int
write_json(FILE *out, const void *ctx)
{
	const struct merge *m = ctx;
	bool first = true;
	int ret;

	ret = report_json_head(out, &m->head);
	for (size_t i = 0; !ret && i < m->planned; i++) {
		if (!m->result[i])
			continue;
		ret = report_json_state(out, m->result[i], first);
		first = false;
	}
	report_json_end(out);
	return ret;
}

/* The checkers' output stayed with the shards (their --junit has it). */
static int
write_junit(FILE *out, const void *ctx)
{
	const struct merge *m = ctx;
	xmlTextWriterPtr w = cli_xml_start(out);
	int failed;

	if (!w)
		return -1;
	failed = report_junit_head(w, m->head.checked, m->head.failed);
	for (size_t i = 0; !failed && i < m->planned; i++)
		if (m->result[i])
			failed = report_junit_state(w, m->head.log_path,
						    m->result[i], NULL);
	return cli_xml_end(w, failed || report_junit_end(w));
}

static void
summarise_merge(const struct merge *m)
{
	if (m->head.failed)
		report_print_head();
	for (size_t i = 0; i < m->planned; i++)
		if (m->result[i] && report_state_failed(m->result[i]))
			report_print_failure(m->result[i], "");
	report_print_totals(m->head.checked, m->head.failed, m->head.timeouts);
	printf(", from %zu shard report%s", m->nr_reports,
	       m->nr_reports == 1 ? "" : "s");
	if (m->missing)
		printf("; %zu of the %zu planned states have no result",
		       m->missing, m->planned);
	printf("\n");
}

/* Read, compare and place every report; m->refused if they are not one run. */
static int
gather(struct merge *m)
{
	const struct shard_report *first = NULL;
	int ret;

	for (size_t i = 0; i < m->nr_reports; i++) {
		progress_show(&m->progress, false, "reading report %zu of %zu",
			      i + 1, m->nr_reports);
		ret = read_report(m, &m->reports[i]);
		if (ret == -ENOMEM)
			return ret;
		if (!ret && first)
			same_run(m, first, &m->reports[i]);
		else if (!ret)
			first = &m->reports[i];
	}
	progress_clear(&m->progress);
	if (m->refused)
		return 0;
	m->planned = m->reports[0].head.planned;
	if (m->planned > FL_STATES_LIMIT) {
		refuse(m, "'%s' plans %zu states, more than a check can (%d)",
		       m->reports[0].path, m->planned, FL_STATES_LIMIT);
		return 0;
	}
	m->result = calloc(m->planned ? m->planned : 1, sizeof(*m->result));
	m->owner = calloc(m->planned ? m->planned : 1, sizeof(*m->owner));
	if (!m->result || !m->owner)
		return -ENOMEM;
	find_duplicate_shards(m);
	for (size_t i = 0; i < m->nr_reports; i++)
		if (!m->reports[i].duplicate)
			place_states(m, &m->reports[i]);
	if (m->duplicates > NAMED_AT_MOST)
		refuse(m, "%zu more states have results in two reports",
		       m->duplicates - NAMED_AT_MOST);
	if (m->refused)
		return 0;
	if (find_missing(m))
		return -ENOMEM;
	if (!m->missing)
		check_plan(m);
	return 0;
}

static void
free_merge(struct merge *m)
{
	for (size_t i = 0; i < m->nr_reports; i++) {
		struct shard_report *rep = &m->reports[i];

		for (size_t j = 0; j < rep->nr; j++)
			free(rep->lines[j]);
		free(rep->lines);
		free(rep->states);
		free(rep->head_line);
		report_head_release(&rep->head);
	}
	free(m->reports);
	free(m->result);
	free(m->owner);
}

/* The reports given, which no output may be; NULL if out of memory. */
static struct cli_input *
merge_inputs(const struct merge *m)
{
	struct cli_input *inputs = calloc(m->nr_reports, sizeof(*inputs));

	for (size_t i = 0; inputs && i < m->nr_reports; i++)
		inputs[i] = (struct cli_input) { "the report", m->reports[i].path };
	return inputs;
}

/* --report and --junit: refused before anything is read, or written. */
static int
write_merged(const struct merge *m, const char *report, const char *junit,
	     bool check_only)
{
	struct cli_input *inputs = merge_inputs(m);
	const char *paths[2] = { report, junit };
	int (*const fns[2])(FILE *, const void *) = { write_json, write_junit };
	int ret = 0;

	if (!inputs) {
		fprintf(stderr, "flushlog merge: out of memory\n");
		return EXIT_BROKEN_RUN;
	}
	for (int i = 0; i < 2 && !ret; i++) {
		if (!paths[i])
			continue;
		if (check_only)
			ret = cli_output_check("flushlog merge", paths[i], OUTPUT_STREAM,
					       0, inputs, m->nr_reports);
		else
			ret = write_report("flushlog merge", paths[i], inputs,
					   m->nr_reports, fns[i], m);
	}
	free(inputs);
	return ret;
}

static int
run_merge(const struct cli_command *cmd, int argc, char **argv)
{
	const char *report = NULL, *junit = NULL, *arg;
	struct merge m = { 0 };
	bool json = false;
	int opt, ret;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == OPT_REPORT)
			report = arg;
		else if (opt == OPT_JUNIT)
			junit = arg;
		else
			json = true;
	}
	if (argc - cli_operand_index() < 1)
		cli_usage_error(cmd, "expected one or more REPORT files");
	/* the report on stdout is what --json prints */
	if (report && !strcmp(report, "-")) {
		report = NULL;
		json = true;
	}
	if (json && junit && !strcmp(junit, "-"))
		cli_usage_error(cmd, "--junit -: stdout already takes the JSON report");
	m.nr_reports = (size_t)(argc - cli_operand_index());
	m.reports = calloc(m.nr_reports, sizeof(*m.reports));
	if (!m.reports) {
		fprintf(stderr, "flushlog merge: out of memory\n");
		return EXIT_BROKEN_RUN;
	}
	for (size_t i = 0; i < m.nr_reports; i++)
		m.reports[i].path = argv[cli_operand_index() + i];
	ret = write_merged(&m, report, junit, true);
	if (ret) {
		free_merge(&m);
		return ret;
	}
	progress_init(&m.progress, "flushlog merge");
	ret = gather(&m);
	progress_clear(&m.progress);
	if (ret || m.refused) {
		if (ret)
			fprintf(stderr, "flushlog merge: out of memory\n");
		else
			fprintf(stderr, "flushlog merge: nothing written\n");
		free_merge(&m);
		return ret ? EXIT_BROKEN_RUN : EXIT_USAGE;
	}
	merged_head(&m);
	ret = write_merged(&m, report, junit, false);
	if (json && write_json(stdout, &m)) {
		fprintf(stderr, "flushlog merge: out of memory\n");
		ret = EXIT_BROKEN_RUN;
	} else if (!json && !(junit && !strcmp(junit, "-"))) {
		summarise_merge(&m);
	}
	/* a run that went wrong, then the verdict, then what is missing */
	if (!ret && m.head.failed)
		ret = EXIT_FAILED;
	else if (!ret && m.missing)
		ret = EXIT_INCOMPLETE;
	free_merge(&m);
	return ret;
}

const struct cli_command cmd_merge = {
	.name = "merge",
	.synopsis = "[options] REPORT...",
	.summary = "Merge the reports of a sharded check into one.",
	.description =
		"Reads the --report files of 'flushlog check --shard K/N' runs, one for\n"
		"each K, and writes the report, JSON and JUnit, that one run without\n"
		"--shard would have written, the states in its order; --resume takes\n"
		"it.  --json prints that JSON report on stdout instead of the summary.  The reports must be of one run: the same log (by the digest of\n"
		"its entries, whatever its path), the same options that shape the\n"
		"states and their verdicts (points, --from, models, bounds, sample,\n"
		"--timeout, the order check, --base by its file name and size), the\n"
		"same checker argv (give it at one path everywhere) and the same N.\n"
		"Reports that differ, two reports of one shard, or two results for\n"
		"one state are refused with exit 2, naming the files and what differs,\n"
		"and nothing is written.  A shard with no report, and states of\n"
		"a shard that stopped early (killed, or at its first failure without\n"
		"--keep-going), are listed by their numbers among the planned states;\n"
		"the merged report is written (\"finished\": false, so that check\n"
		"--resume checks the rest) and the exit status is 5, or 1 if a state\n"
		"failed.  Otherwise the failed states are listed as check lists them,\n"
		"and the exit status is 0 when every state passed and 1 when one failed\n"
		"or timed out.  --report and --junit follow the output rule of\n"
		"flushlog(1) OUTPUTS ('-' is stdout: --report - is --json), and one of\n"
		"the REPORTs given is refused as an output (exit 2).  The\n"
		"JUnit report has no checker output: each shard's own --junit has it.\n"
		"On a terminal, a progress line on stderr says which report is read.",
	.example =
		"  # 4 shards, anywhere (a Slurm array, a Kubernetes Indexed Job, ...):\n"
		"  flushlog check -k --shard 2/4 --report shard-2.json log.img -- ./check {}\n"
		"  # then, with every shard-K.json in one folder:\n"
		"  flushlog merge --report report.json --junit junit.xml shard-*.json",
	.options = merge_options,
	.run = run_merge,
};
