// SPDX-License-Identifier: GPL-2.0
/*
 * flushlog: inspect and replay write logs of dm-flushlog (and of
 * dm-log-writes).  Git-style: "flushlog COMMAND [options] ARGS".
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_command *const commands[] = {
	&cmd_info, &cmd_dump, &cmd_points, &cmd_replay, &cmd_check,
	&cmd_merge, &cmd_plot, &cmd_replay_log,
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *out)
{
	fprintf(out, "usage: flushlog COMMAND [options] ARGS\n\n"
		"Inspect and replay block-device write logs made by dm-flushlog\n"
		"(or by dm-log-writes), to check every state a crash could leave.\n\n"
		"commands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(out, "\noptions:\n"
		"  -V, --version  print the version and exit\n"
		"  -h, --help     show this help and exit\n"
		"\n'flushlog COMMAND --help' describes a command.\n");
}

/*
 * Called replay-log or flushlog-replay-log (a symlink to flushlog, as make
 * install and the build make), it is 'flushlog replay-log': a drop-in for
 * fstests' replay-log, which fstests with patches/fstests runs through
 * LOGWRITES_REPLAY.
 */
static bool
called_as_replay_log(const char *argv0)
{
	const char *name = strrchr(argv0, '/');

	name = name ? name + 1 : argv0;
	return !strcmp(name, "replay-log") || !strcmp(name, "flushlog-replay-log");
}

int
main(int argc, char **argv)
{
	if (argc > 0 && called_as_replay_log(argv[0]))
		return cmd_replay_log.run(&cmd_replay_log, argc, argv);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2)
			for (size_t i = 0; i < NR_COMMANDS; i++)
				if (!strcmp(argv[2], commands[i]->name))
					return cli_usage(commands[i], stdout), EXIT_OK;
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		cli_version(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i]->name))
			return commands[i]->run(commands[i], argc - 1, argv + 1);
	fprintf(stderr, "flushlog: '%s' is not a flushlog command (see 'flushlog --help')\n",
		argv[1]);
	return EXIT_USAGE;
}
