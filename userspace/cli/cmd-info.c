// SPDX-License-Identifier: GPL-2.0
/* flushlog info: what a log is, and whether every checksum in it holds. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"

static const struct cli_option info_options[] = {
	{ "json", 'j', NULL, "print one JSON object instead of text" },
	{ "quick", 'q', NULL, "check headers only, not the data checksums" },
	{ NULL },
};

static void
format_uuid(const uint8_t *u, char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

static const char *
state_name(const struct fl_log_info *info)
{
	if (info->format == FL_FORMAT_LOG_WRITES)
		return "unknown (the format has no state)";
	if (info->super_flags & FLUSHLOG_SF_ERROR)
		return info->clean ? "clean, stopped by a log I/O error" :
				     "dirty, stopped by a log I/O error";
	if (info->super_flags & FLUSHLOG_SF_FULL)
		return info->clean ? "clean, log filled up" :
				     "dirty, log filled up";
	return info->clean ? "clean" : "dirty (not closed)";
}

static void
print_text(const char *path, const struct fl_log_info *info)
{
	const struct fl_counts *c = &info->counts;
	char uuid[37];

	printf("log:              %s\n", path);
	printf("format:           %s version %u\n",
	       fl_format_name(info->format), info->version);
	printf("state:            %s\n", state_name(info));
	if (info->format == FL_FORMAT_FLUSHLOG) {
		format_uuid(info->uuid, uuid);
		printf("uuid:             %s\n", uuid);
	}
	printf("log block size:   %u\n", info->log_block_size);
	printf("data block size:  %u\n", info->data_block_size);
	printf("data device:      %" PRIu64 " sectors%s\n", info->data_sectors,
	       info->data_size_known ? "" : " (highest sector written; the format does not record the size)");
	printf("log size:         %" PRIu64 " bytes, %" PRIu64 " used\n",
	       info->log_bytes, info->used_bytes);
	printf("entries:          %" PRIu64 "\n", info->nr_entries);
	printf("  writes:         %" PRIu64 " (%" PRIu64 " data bytes)\n",
	       c->writes, c->data_bytes);
	printf("  flushes:        %" PRIu64 "\n", c->flushes);
	printf("  fua writes:     %" PRIu64 "\n", c->fua);
	printf("  discards:       %" PRIu64 "\n", c->discards);
	printf("  write-zeroes:   %" PRIu64 "\n", c->write_zeroes);
	printf("  secure erases:  %" PRIu64 "\n", c->secure_erases);
	printf("  marks:          %" PRIu64 "\n", c->marks);
	printf("crash points:     %" PRIu64 " (plus the end)\n",
	       c->crash_points);
	printf("index memory:     %" PRIu64 " bytes\n", info->index_bytes);
	printf("ordering ticks:   %s\n", !info->has_ticks ?
	       "no (durability order only)" : info->order_verified ?
	       "yes, durability order verified" : "yes (not checked: --quick)");
	printf("data checksums:   %s\n",
	       info->format == FL_FORMAT_LOG_WRITES ? "none in this format" :
	       info->data_verified ? "all verified" : "not checked (--quick)");
	if (info->torn)
		printf("torn tail:        entry %" PRIu64 " at offset %" PRIu64 ": %s\n",
		       info->torn_entry, info->torn_offset, info->torn_reason);
	else
		printf("torn tail:        none\n");
}

static void
print_json(const char *path, const struct fl_log_info *info)
{
	const struct fl_counts *c = &info->counts;
	char uuid[37];

	format_uuid(info->uuid, uuid);
	printf("{\"log\":");
	json_string(stdout, path);
	printf(",\"format\":\"%s\",\"version\":%u,\"clean\":%s,\"full\":%s,\"error\":%s,\"uuid\":\"%s\"",
	       fl_format_name(info->format), info->version,
	       info->clean ? "true" : "false",
	       info->super_flags & FLUSHLOG_SF_FULL ? "true" : "false",
	       info->super_flags & FLUSHLOG_SF_ERROR ? "true" : "false",
	       info->format == FL_FORMAT_FLUSHLOG ? uuid : "");
	printf(",\"log_block_size\":%u,\"data_block_size\":%u,\"data_sectors\":%" PRIu64 ",\"data_size_known\":%s",
	       info->log_block_size, info->data_block_size, info->data_sectors,
	       info->data_size_known ? "true" : "false");
	printf(",\"log_bytes\":%" PRIu64 ",\"used_bytes\":%" PRIu64 ",\"entries\":%" PRIu64,
	       info->log_bytes, info->used_bytes, info->nr_entries);
	printf(",\"writes\":%" PRIu64 ",\"data_bytes\":%" PRIu64 ",\"flushes\":%" PRIu64 ",\"fua\":%" PRIu64 ",\"discards\":%" PRIu64 ",\"write_zeroes\":%" PRIu64 ",\"secure_erases\":%" PRIu64 ",\"marks\":%" PRIu64 ",\"crash_points\":%" PRIu64,
	       c->writes, c->data_bytes, c->flushes, c->fua, c->discards,
	       c->write_zeroes, c->secure_erases, c->marks, c->crash_points);
	printf(",\"index_bytes\":%" PRIu64, info->index_bytes);
	printf(",\"has_ticks\":%s,\"data_verified\":%s,\"order_verified\":%s,\"torn\":",
	       info->has_ticks ? "true" : "false",
	       info->data_verified ? "true" : "false",
	       info->order_verified ? "true" : "false");
	if (info->torn) {
		printf("{\"entry\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"reason\":",
		       info->torn_entry, info->torn_offset);
		json_string(stdout, info->torn_reason);
		printf("}}\n");
	} else {
		printf("null}\n");
	}
}

static int
run_info(const struct cli_command *cmd, int argc, char **argv)
{
	bool json = false, quick = false;
	struct fl_log *log;
	const char *arg;
	int opt, ret;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == 0)
			json = true;
		else
			quick = true;
	}
	if (argc - cli_operand_index() != 1)
		cli_usage_error(cmd, "expected one LOG");
	ret = cli_open_log(cmd, argv[cli_operand_index()],
			   quick ? 0 : FL_OPEN_VERIFY_DATA | FL_OPEN_CHECK_ORDER,
			   &log);
	if (ret)
		return ret;
	if (json)
		print_json(argv[cli_operand_index()], fl_log_info(log));
	else
		print_text(argv[cli_operand_index()], fl_log_info(log));
	fl_log_close(log);
	return fflush(stdout) ? EXIT_FAILED : EXIT_OK;
}

const struct cli_command cmd_info = {
	.name = "info",
	.synopsis = "[--json] [--quick] LOG",
	.summary = "Describe a log and check it.",
	.description =
		"Reads the whole log (a file or block device), checks every header and\n"
		"data checksum and, from the ticks, that entries are in durability\n"
		"order, and prints its format, state, sizes and entry counts.\n"
		"A log that was not closed cleanly ends at its first incomplete entry:\n"
		"that torn tail is reported, and exit status stays 0.",
	.example = "  flushlog info /dev/vdc\n  flushlog info --json run/log.img | jq .crash_points",
	.options = info_options,
	.run = run_info,
};
