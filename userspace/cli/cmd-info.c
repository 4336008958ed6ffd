// SPDX-License-Identifier: GPL-2.0
/* flushlog info: what a log is, and whether every checksum in it holds. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "encode.h"

enum { OPT_JSON, OPT_QUICK };

static const struct cli_option info_options[] = {
	[OPT_JSON] = { "json", 0, NULL, "print one JSON object instead of text" },
	[OPT_QUICK] = { "quick", 0, NULL,
			"check headers only, not the data checksums" },
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

/*
 * Which checksum a flushlog log's data has: its super block says.  NULL
 * for a log with none: dm-log-writes', or one of headers only (no_data).
 */
static const char *
data_checksum_name(const struct fl_log_info *info)
{
	if (info->format == FL_FORMAT_LOG_WRITES ||
	    (info->super_flags & FLUSHLOG_SF_NO_DATA))
		return NULL;
	return info->super_flags & FLUSHLOG_SF_DATA_XXH64 ? "xxh64" : "crc32c";
}

/*
 * The end of a device's line: where RESIZE entries changed its size, its
 * size is the largest, an image's, and the one it was first listed with
 * follows.
 */
static void
print_resized(const struct fl_device *dev)
{
	if (dev->first_sectors && dev->first_sectors != dev->sectors)
		printf(" (the largest of its sizes; %" PRIu64 " when first listed)",
		       dev->first_sectors);
	putchar('\n');
}

/*
 * Crash points are what 'flushlog points' lists and check counts: the
 * start, one at each entry that ends one (a flush, a FUA write, a mark),
 * and the end.
 */
static void
print_text(const char *path, const struct fl_log *log, size_t nr_points)
{
	const struct fl_log_info *info = fl_log_info(log);
	const struct fl_counts *c = fl_log_counts(log);
	char uuid[37];

	printf("log:              ");
	cli_print_escaped(stdout, path);
	putchar('\n');
	printf("format:           %s version %u\n",
	       fl_format_name(info->format), info->version);
	printf("state:            %s\n", state_name(info));
	if (info->format == FL_FORMAT_FLUSHLOG) {
		format_uuid(info->uuid, uuid);
		printf("uuid:             %s\n", uuid);
	}
	printf("log block size:   %u\n", info->log_block_size);
	if (!info->data_sectors && info->nr_devices > 1) {
		printf("data device:      absent (no entry)\n");
	} else {
		printf("data block size:  %u\n", info->data_block_size);
		printf("data device:      %" PRIu64 " sectors%s", info->data_sectors,
		       info->data_size_known ? "" : " (highest sector written; the format does not record the size)");
		print_resized(fl_log_device(log, 0));
	}
	for (uint32_t d = 1; d < info->nr_devices; d++) {
		const struct fl_device *dev = fl_log_device(log, d);
		char label[24];

		snprintf(label, sizeof(label), "data device %u:", d);
		if (!dev->sectors) {
			printf("%-18sabsent (no entry)\n", label);
			continue;
		}
		printf("%-18s%" PRIu64 " sectors of %u-byte blocks, from sector %" PRIu64 " of an image of all",
		       label, dev->sectors, dev->block_size, dev->image_sector);
		print_resized(dev);
	}
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
	printf("  resizes:        %" PRIu64 "\n", c->resizes);
	printf("  failed:         %" PRIu64 " (never guaranteed durable)\n",
	       c->failed);
	printf("crash points:     %zu (the start, %" PRIu64 " at entries, the end)\n",
	       nr_points, c->crash_points);
	printf("index memory:     %" PRIu64 " bytes\n", info->index_bytes);
	printf("ordering ticks:   %s\n", !info->has_ticks ?
	       "no (durability order only)" : info->order_verified ?
	       "yes, durability order verified" : "yes (not checked: --quick)");
	if (info->format == FL_FORMAT_LOG_WRITES)
		printf("data checksums:   none in this format\n");
	else if (!data_checksum_name(info))
		printf("data checksums:   none (no_data: headers only)\n");
	else
		printf("data checksums:   %s, %s\n", data_checksum_name(info),
		       info->data_verified ? "all verified" : "not checked (--quick)");
	if (info->torn)
		printf("torn tail:        entry %" PRIu64 " at offset %" PRIu64 ": %s\n",
		       info->torn_entry, info->torn_offset, info->torn_reason);
	else
		printf("torn tail:        none\n");
}

static int
add_u64(struct json_object *o, const char *key, uint64_t value)
{
	return cli_json_add(o, key, json_object_new_uint64(value));
}

static int
add_bool(struct json_object *o, const char *key, bool value)
{
	return cli_json_add(o, key, json_object_new_boolean(value));
}

/* "torn": where a dirty log ends, or null */
static int
add_torn(struct json_object *o, const struct fl_log_info *info)
{
	struct json_object *torn;

	if (!info->torn)
		return cli_json_add_null(o, "torn");
	torn = json_object_new_object();
	if (!torn)
		return -1;
	if (add_u64(torn, "entry", info->torn_entry) ||
	    add_u64(torn, "offset", info->torn_offset) ||
	    cli_json_add(torn, "reason", cli_json_string(info->torn_reason))) {
		json_object_put(torn);
		return -1;
	}
	return cli_json_add(o, "torn", torn);
}

/* "devices": each data device's sectors and block size */
static int
add_devices(struct json_object *o, const struct fl_log *log)
{
	struct json_object *devs = json_object_new_array();

	if (!devs)
		return -1;
	for (uint32_t d = 0; d < fl_log_info(log)->nr_devices; d++) {
		const struct fl_device *dev = fl_log_device(log, d);
		struct json_object *one = json_object_new_object();

		if (!one || json_object_array_add(devs, one)) {
			json_object_put(one);
			json_object_put(devs);
			return -1;
		}
		if (add_u64(one, "sectors", dev->sectors) ||
		    add_u64(one, "first_sectors", dev->first_sectors) ||
		    add_u64(one, "block_size", dev->block_size) ||
		    add_u64(one, "image_sector", dev->image_sector)) {
			json_object_put(devs);
			return -1;
		}
	}
	return cli_json_add(o, "devices", devs);
}

/*
 * -1 if out of memory.  "crash_points" counts the points as points lists
 * them; "crash_point_entries" the entries that end one, two fewer.
 */
static int
print_json(const char *path, const struct fl_log *log, size_t nr_points)
{
	const struct fl_log_info *info = fl_log_info(log);
	const struct fl_counts *c = fl_log_counts(log);
	struct json_object *o = json_object_new_object();
	char uuid[37];
	int ret;

	if (!o)
		return -1;
	format_uuid(info->uuid, uuid);
	ret = cli_json_add(o, "log", cli_json_string(path)) ||
	      cli_json_add(o, "format", json_object_new_string(fl_format_name(info->format))) ||
	      add_u64(o, "version", info->version) ||
	      add_bool(o, "clean", info->clean) ||
	      add_bool(o, "full", info->super_flags & FLUSHLOG_SF_FULL) ||
	      add_bool(o, "error", info->super_flags & FLUSHLOG_SF_ERROR) ||
	      cli_json_add(o, "uuid", json_object_new_string(
			info->format == FL_FORMAT_FLUSHLOG ? uuid : "")) ||
	      add_u64(o, "log_block_size", info->log_block_size) ||
	      add_u64(o, "data_block_size", info->data_block_size) ||
	      add_u64(o, "data_sectors", info->data_sectors) ||
	      add_bool(o, "data_size_known", info->data_size_known) ||
	      add_devices(o, log) ||
	      add_u64(o, "log_bytes", info->log_bytes) ||
	      add_u64(o, "used_bytes", info->used_bytes) ||
	      add_u64(o, "entries", info->nr_entries) ||
	      add_u64(o, "writes", c->writes) ||
	      add_u64(o, "data_bytes", c->data_bytes) ||
	      add_u64(o, "flushes", c->flushes) ||
	      add_u64(o, "fua", c->fua) ||
	      add_u64(o, "discards", c->discards) ||
	      add_u64(o, "write_zeroes", c->write_zeroes) ||
	      add_u64(o, "secure_erases", c->secure_erases) ||
	      add_u64(o, "marks", c->marks) ||
	      add_u64(o, "resizes", c->resizes) ||
	      add_u64(o, "failed", c->failed) ||
	      add_u64(o, "crash_points", nr_points) ||
	      add_u64(o, "crash_point_entries", c->crash_points) ||
	      add_u64(o, "index_bytes", info->index_bytes) ||
	      add_bool(o, "has_ticks", info->has_ticks) ||
	      (!data_checksum_name(info) ?
	       cli_json_add_null(o, "data_checksum") :
	       cli_json_add(o, "data_checksum",
			    json_object_new_string(data_checksum_name(info)))) ||
	      add_bool(o, "data_verified", info->data_verified) ||
	      add_bool(o, "order_verified", info->order_verified) ||
	      add_torn(o, info);
	if (!ret)
		ret = cli_json_print(stdout, o);
	json_object_put(o);
	return ret;
}

static int
run_info(const struct cli_command *cmd, int argc, char **argv)
{
	bool json = false, quick = false;
	struct fl_error err = { 0 };
	struct fl_points *points;
	struct fl_log *log;
	const char *arg;
	int opt, ret;

	while ((opt = cli_next_option(cmd, argc, argv, &arg)) >= 0) {
		if (opt == OPT_JSON)
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
	if (fl_log_points(log, &points, &err)) {
		fl_log_close(log);
		return cli_report(cmd, &err);
	}
	ret = 0;
	if (json)
		ret = print_json(argv[cli_operand_index()], log,
				 fl_points_count(points));
	else
		print_text(argv[cli_operand_index()], log,
			   fl_points_count(points));
	fl_points_free(points);
	fl_log_close(log);
	if (ret)
		fprintf(stderr, "flushlog info: out of memory\n");
	return ret ? EXIT_BROKEN_RUN : cli_flush_stdout(cmd);
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
		"that torn tail is reported, and exit status stays 0.  --quick reads\n"
		"the headers only.  On a terminal, a progress line on stderr shows how\n"
		"much of the log has been read.",
	.example = "  flushlog info /dev/vdc\n  flushlog info --json run/log.img | jq .crash_points",
	.options = info_options,
	.run = run_info,
};
