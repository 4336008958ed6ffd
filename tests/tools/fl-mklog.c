// SPDX-License-Identifier: GPL-2.0
/*
 * fl-mklog: a test-only log writer.  It reads a script of operations and
 * writes a log of them, in dm-flushlog's format or dm-log-writes', and it
 * applies the same operations to an in-memory disk of its own to produce
 * the expected image at every crash point: the ground truth the replay
 * tests compare against.  It shares no code with libflushlog but the
 * format header and the CRC.
 *
 * usage: fl-mklog [-f flushlog|log-writes] [-e EXPECT_DIR] [-l] -o LOG SCRIPT
 *        fl-mklog --fields
 *
 * Script lines ('#' starts a comment):
 *   device SECTORS [BLOCK]     data device size in sectors, block size
 *   adddevice SECTORS [BLOCK]  one more data device (1, 2, ...), listed in
 *                              the super block of a version 3 log (and of
 *                              any other, to craft a bad one); no -e
 *   logblock BYTES             log block size (flushlog format)
 *   dirty                      leave the super block dirty (not closed)
 *   version N                  the super block's version (default 1, the
 *                              durability order); entries are written in
 *                              script order whatever it says (flushlog
 *                              format, without -e)
 *   nodata                     a no_data log: writes without their data
 *   checksum xxh64|crc32c      the data checksum (default crc32c; xxh64
 *                              sets FLUSHLOG_SF_DATA_XXH64)
 *   write SECTOR NR [fua] [preflush] [meta] [sync] [seed N] [ticks S C]
 *         [dev N] [failed]
 *   discard|zeroes|erase SECTOR NR [ticks S C] [dev N] [failed]
 *   flush [ticks S C] [dev N] [failed] (dev: the data device, default 0;
 *                              a flush's "baddev N" is not checked)
 *   mark LABEL [tick T]        (T: its submit and complete tick; default
 *                              one past the highest tick so far)
 *   resize SECTORS [dev N] [tick T]    the device's size from here on:
 *                              ranges after it are checked against it
 *   (failed: the bio failed, FLUSHLOG_F_FAILED: never durable, and a
 *   failed flush or FUA write is no crash point)
 *   empty                      no operation: a log of no entries
 *   raw op=N flags=N sector=N nr=N datalen=N label=S lwflags=N
 *                              (a crafted entry; lwflags: dm-log-writes')
 *
 * EXPECT_DIR gets point-K.img for each crash point K (0 the start, the
 * end last) and points.txt, one "K kind applied" line each: the script is
 * taken to be in durability order, as a version 1 log is, but for the
 * failed entries that change data, which a reader moves last, past the
 * end point: the model disk never gets them, no point's "applied" counts
 * them, and every image is as large as the largest size of device 0.  In a
 * dm-log-writes log that is so but for a write with preflush and not fua,
 * which the target logs at its completion: its crash point (its flush)
 * comes before its data, which is durable only at the next flush, and a
 * crash point between the two has the data the write replaced (where
 * nothing wrote over it since); "applied" counts the entries a reader's
 * durability order puts before the point.  -l prints each entry's offset
 * and size: "entry SEQ OFFSET BYTES".
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum.h"
#include "flushlog.h"

#define LW_MAGIC 0x6a736677736872ULL

enum fmt { FMT_FLUSHLOG, FMT_LOG_WRITES };

static enum fmt format = FMT_FLUSHLOG;
static uint64_t dev_sectors = 2048;
static uint32_t dev_block = 512, log_block = 512;
/* devices 1, 2, ... of a log of several (adddevice) */
static uint64_t more_sectors[FLUSHLOG_MAX_DEVICES];
static uint32_t more_block[FLUSHLOG_MAX_DEVICES], nr_devices = 1;
static int dirty, nodata, list_layout, data_xxh64;
static uint32_t version = FLUSHLOG_VERSION_DURABILITY_ORDER;
static unsigned char *disk;
static FILE *log_file;
static uint64_t log_off, nr_entries, tick, nr_points;
/* the failed entries that change data so far: a reader moves them last */
static uint64_t nr_failed_data;
/* the model disk's sectors: device 0's largest size so far */
static uint64_t disk_sectors;
/* each device's size where the script is, for its ranges */
static uint64_t size_now[FLUSHLOG_MAX_DEVICES];
static const char *expect_dir;
static FILE *points_txt;
static uint8_t uuid[16];

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fl-mklog: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void
put_at(const void *buf, size_t len, uint64_t off)
{
	if (fseeko(log_file, (off_t)off, SEEK_SET) ||
	    fwrite(buf, 1, len, log_file) != len)
		die("cannot write the log: %s", strerror(errno));
}

/* Deterministic sector contents: differ by seed and by sector. */
static void
fill(unsigned char *buf, uint64_t sector, uint32_t nr, uint64_t seed)
{
	for (uint32_t s = 0; s < nr; s++) {
		uint64_t x = seed * 0x9e3779b97f4a7c15ULL + sector + s + 1;

		for (int i = 0; i < 512; i += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(buf + s * 512 + i, &x, 8);
		}
	}
}

/*
 * A dm-log-writes write with preflush and not fua whose data no flush has
 * made durable yet: its sectors, what they held before it, and which of
 * them still hold its data (nothing wrote over them since).
 */
static struct {
	int on;
	uint64_t sector, nr;
	unsigned char *old, *still;
} pending;

/* Sectors [sector, sector + nr) of the disk were written over. */
static void
pending_overwritten(uint64_t sector, uint64_t nr)
{
	for (uint64_t s = sector; pending.on && s < sector + nr; s++)
		if (s >= pending.sector && s < pending.sector + pending.nr)
			pending.still[s - pending.sector] = 0;
}

/* The expected image of the next point; the start is point 0. */
static void
save_point(const char *kind)
{
	int held = pending.on && strcmp(kind, "end");
	char path[4096];
	FILE *f;

	if (strcmp(kind, "start"))
		nr_points++;
	if (!expect_dir)
		return;
	/* a reader moves the pending write past the crash points */
	fprintf(points_txt, "%" PRIu64 " %s %" PRIu64 "\n", nr_points, kind,
		nr_entries - nr_failed_data - held);
	snprintf(path, sizeof(path), "%s/point-%" PRIu64 ".img", expect_dir,
		 nr_points);
	f = fopen(path, "wb");
	if (!f || fwrite(disk, 512, disk_sectors, f) != disk_sectors)
		die("cannot write '%s'", path);
	for (uint64_t i = 0; held && i < pending.nr; i++)
		if (pending.still[i] &&
		    (fseeko(f, (off_t)(pending.sector + i) * 512, SEEK_SET) ||
		     fwrite(pending.old + i * 512, 512, 1, f) != 1))
			die("cannot write '%s'", path);
	if (fclose(f))
		die("cannot write '%s'", path);
}

/*
 * Every image as large as device 0's largest size, which a reader's
 * images are: those saved before a RESIZE grew it get zeroes at the end.
 */
static void
pad_points(void)
{
	char path[4096];

	for (uint64_t k = 0; expect_dir && k <= nr_points; k++) {
		snprintf(path, sizeof(path), "%s/point-%" PRIu64 ".img",
			 expect_dir, k);
		if (truncate(path, (off_t)(disk_sectors * 512)))
			die("cannot grow '%s': %s", path, strerror(errno));
	}
}

struct op {
	uint16_t op, flags;
	uint64_t sector, seed, nr;
	uint64_t lw_flags;	/* raw dm-log-writes flags to add */
	uint32_t data_len;
	uint64_t submit, complete;
	const char *label;
	uint32_t device;
	int raw;
};

static void
emit_flushlog(const struct op *o, const unsigned char *data)
{
	struct flushlog_entry h = { 0 };
	size_t label_len = o->label ? strlen(o->label) : 0;

	h.magic = htole32(FLUSHLOG_ENTRY_MAGIC);
	memcpy(&h.log_id, uuid, 8);
	h.seq = htole64(nr_entries);
	h.sector = htole64(o->sector);
	h.nr_sectors = htole32((uint32_t)o->nr);
	h.data_len = htole32(o->data_len);
	h.op = htole16(o->op);
	h.flags = htole16(o->flags);
	h.data_crc = htole32(!data ? 0 : data_xxh64 ?
			     (uint32_t)fl_xxh64(data, o->data_len) :
			     fl_crc32c(data, o->data_len));
	h.submit_tick = htole64(o->submit);
	h.complete_tick = htole64(o->complete);
	h.time_ns = htole64(o->complete * 1000);
	h.label_len = htole32((uint32_t)label_len);
	h.device = htole32(o->device);
	memcpy(h.label, o->label ? o->label : "",
	       label_len < sizeof(h.label) ? label_len : sizeof(h.label));
	h.crc = htole32(fl_crc32c(&h, sizeof(h)));
	put_at(&h, sizeof(h), log_off);
	if (log_block > sizeof(h)) {
		static const unsigned char zero[FLUSHLOG_MAX_BLOCK_SIZE];

		put_at(zero, log_block - sizeof(h), log_off + sizeof(h));
	}
	if (list_layout)
		printf("entry %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", nr_entries,
		       log_off, log_block + ((o->data_len + log_block - 1) & ~(uint64_t)(log_block - 1)));
	log_off += log_block;
	if (data && o->data_len) {
		uint64_t padded = (o->data_len + log_block - 1) & ~(uint64_t)(log_block - 1);
		static const unsigned char zero[FLUSHLOG_MAX_BLOCK_SIZE];

		put_at(data, o->data_len, log_off);
		/* the padding too: a last entry's would be missing from the file */
		put_at(zero, padded - o->data_len, log_off + o->data_len);
		log_off += padded;
	}
}

static void
emit_log_writes(const struct op *o, const unsigned char *data)
{
	unsigned char hdr[FLUSHLOG_MAX_BLOCK_SIZE] = { 0 };
	uint64_t units = dev_block / 512, flags = 0, f[4];
	size_t label_len = o->label ? strlen(o->label) : 0;

	if (o->op == FLUSHLOG_OP_WRITE_ZEROES || o->op == FLUSHLOG_OP_SECURE_ERASE ||
	    o->op == FLUSHLOG_OP_RESIZE)
		die("dm-log-writes has no %s", fl_op_name(o->op));
	if (o->flags & FLUSHLOG_F_FAILED)
		die("dm-log-writes has no failed bios");
	if (o->flags & FLUSHLOG_F_PREFLUSH || o->op == FLUSHLOG_OP_FLUSH)
		flags |= 1;
	if (o->flags & FLUSHLOG_F_FUA)
		flags |= 2;
	if (o->op == FLUSHLOG_OP_DISCARD)
		flags |= 4;
	if (o->op == FLUSHLOG_OP_MARK)
		flags |= 8;
	if (o->flags & FLUSHLOG_F_META)
		flags |= 16;
	flags |= o->lw_flags;
	f[0] = htole64(o->sector / units);
	f[1] = htole64(o->nr / units);
	f[2] = htole64(flags);
	f[3] = htole64(label_len);
	memcpy(hdr, f, sizeof(f));
	memcpy(hdr + sizeof(f), o->label ? o->label : "", label_len);
	put_at(hdr, dev_block, log_off);
	if (list_layout)
		printf("entry %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", nr_entries,
		       log_off, (uint64_t)dev_block + (data ? o->data_len : 0));
	log_off += dev_block;
	if (data) {
		put_at(data, o->data_len, log_off);
		log_off += o->data_len;
	}
}

/* A failed write, discard, write-zeroes or secure erase. */
static int
failed_data(const struct op *o)
{
	return (o->flags & FLUSHLOG_F_FAILED) && o->op >= FLUSHLOG_OP_WRITE &&
	       o->op <= FLUSHLOG_OP_SECURE_ERASE;
}

static int
is_point(const struct op *o)
{
	if (o->flags & FLUSHLOG_F_FAILED)
		return 0;	/* it guaranteed nothing */
	if (o->op == FLUSHLOG_OP_FLUSH || o->op == FLUSHLOG_OP_MARK)
		return 1;
	if (format == FMT_LOG_WRITES && (o->flags & FLUSHLOG_F_PREFLUSH))
		return 1;
	return (o->flags & FLUSHLOG_F_FUA) != 0;
}

/* A dm-log-writes write whose flush is its crash point, before its data. */
static int
flush_before_data(const struct op *o)
{
	return format == FMT_LOG_WRITES && o->op == FLUSHLOG_OP_WRITE && !o->raw &&
	       (o->flags & FLUSHLOG_F_PREFLUSH) && !(o->flags & FLUSHLOG_F_FUA);
}

/*
 * Before operation o is applied: a flush (an empty one, or a write's
 * preflush) makes a pending write durable; o may start one, after the
 * crash point of its flush.
 */
static void
pending_before(const struct op *o)
{
	if (format != FMT_LOG_WRITES)
		return;
	if (o->op == FLUSHLOG_OP_FLUSH || (o->flags & FLUSHLOG_F_PREFLUSH)) {
		free(pending.old);
		free(pending.still);
		memset(&pending, 0, sizeof(pending));
	}
	if (!flush_before_data(o))
		return;
	save_point("flush");
	if (o->device)
		return;		/* the model disk is device 0's */
	pending.on = 1;
	pending.sector = o->sector;
	pending.nr = o->nr;
	pending.old = malloc(o->nr * 512);
	pending.still = malloc(o->nr);
	if (!pending.old || !pending.still)
		die("out of memory");
	memcpy(pending.old, disk + o->sector * 512, o->nr * 512);
	memset(pending.still, 1, o->nr);
}

/*
 * A RESIZE: device 0's model disk grows to its largest size (zeroes, as
 * a reader's image holds where nothing wrote) and keeps what lies past a
 * smaller one, as the image does.
 */
static void
resize_disk(const struct op *o)
{
	size_now[o->device] = o->sector;
	if (o->device || o->sector <= disk_sectors)
		return;
	disk = realloc(disk, o->sector * 512);
	if (!disk)
		die("out of memory");
	memset(disk + disk_sectors * 512, 0, (o->sector - disk_sectors) * 512);
	disk_sectors = o->sector;
}

/* Log one operation and apply it to the model disk. */
static void
do_op(struct op *o)
{
	unsigned char *data = NULL;
	uint64_t end = o->sector + o->nr;
	int has_range = o->op >= FLUSHLOG_OP_WRITE && o->op <= FLUSHLOG_OP_SECURE_ERASE;
	/* a failed bio's data goes in the log, never on the model disk */
	int model = !o->device && !failed_data(o);

	if (!o->submit && !o->complete) {
		/* a raw mark or resize has one tick, as the format wants */
		o->submit = ++tick;
		o->complete = o->op == FLUSHLOG_OP_MARK ||
			      o->op == FLUSHLOG_OP_RESIZE ? tick : ++tick;
	}
	if (!o->raw && has_range && end > size_now[o->device])
		die("%s %" PRIu64 "+%" PRIu64 " beyond device %u's %" PRIu64 " sectors",
		    fl_op_name(o->op), o->sector, o->nr, o->device,
		    size_now[o->device]);
	if (!o->raw && o->op == FLUSHLOG_OP_RESIZE)
		resize_disk(o);
	nr_failed_data += failed_data(o) != 0;
	pending_before(o);
	if (o->op == FLUSHLOG_OP_WRITE && !o->raw) {
		if (nodata) {
			o->flags |= FLUSHLOG_F_NO_DATA;
		} else {
			o->data_len = o->nr * 512;
			data = malloc(o->data_len);
			if (!data)
				die("out of memory");
			fill(data, o->sector, o->nr, o->seed ? o->seed : nr_entries + 1);
			if (model && !flush_before_data(o))
				pending_overwritten(o->sector, o->nr);
			if (model)
				memcpy(disk + o->sector * 512, data, o->data_len);
		}
	} else if (!o->raw && o->op >= FLUSHLOG_OP_DISCARD &&
		   o->op <= FLUSHLOG_OP_SECURE_ERASE && model) {
		pending_overwritten(o->sector, o->nr);
		memset(disk + o->sector * 512, 0, (size_t)o->nr * 512);
	} else if (o->raw && o->data_len) {
		data = calloc(1, o->data_len);
		if (!data)
			die("out of memory");
	}
	if (format == FMT_FLUSHLOG)
		emit_flushlog(o, data);
	else
		emit_log_writes(o, data);
	nr_entries++;
	free(data);
	if (is_point(o) && !flush_before_data(o))
		save_point(o->op == FLUSHLOG_OP_MARK ? "mark" :
			   o->op == FLUSHLOG_OP_FLUSH || (o->flags & FLUSHLOG_F_PREFLUSH) ?
			   "flush" : "fua");
}

static uint64_t
num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (!*s || *end)
		die("not a number: '%s'", s);
	return v;
}

static void
parse_tail(struct op *o, char **tok, int n)
{
	for (int i = 0; i < n; i++) {
		if (!strcmp(tok[i], "fua"))
			o->flags |= FLUSHLOG_F_FUA;
		else if (!strcmp(tok[i], "preflush"))
			o->flags |= FLUSHLOG_F_PREFLUSH;
		else if (!strcmp(tok[i], "meta"))
			o->flags |= FLUSHLOG_F_META;
		else if (!strcmp(tok[i], "sync"))
			o->flags |= FLUSHLOG_F_SYNC;
		else if (!strcmp(tok[i], "failed"))
			o->flags |= FLUSHLOG_F_FAILED;
		else if (!strcmp(tok[i], "seed") && i + 1 < n)
			o->seed = num(tok[++i]);
		else if (!strcmp(tok[i], "dev") && i + 1 < n) {
			o->device = (uint32_t)num(tok[++i]);
			if (o->device >= nr_devices)
				die("dev %u: the script adds %u device%s",
				    o->device, nr_devices,
				    nr_devices == 1 ? "" : "s");
		} else if (!strcmp(tok[i], "baddev") && i + 1 < n) {
			o->device = (uint32_t)num(tok[++i]);	/* unchecked */
			if (o->op != FLUSHLOG_OP_FLUSH ||
			    o->device >= FLUSHLOG_MAX_DEVICES)
				die("baddev: a flush's, below %d", FLUSHLOG_MAX_DEVICES);
		}
		else if (!strcmp(tok[i], "ticks") && i + 2 < n) {
			o->submit = num(tok[++i]);
			o->complete = num(tok[++i]);
			if (o->complete > tick)
				tick = o->complete;
		} else
			die("unknown word '%s'", tok[i]);
	}
}

static void
parse_raw(struct op *o, char **tok, int n)
{
	o->raw = 1;
	for (int i = 0; i < n; i++) {
		char *eq = strchr(tok[i], '=');

		if (!eq)
			die("raw: expected key=value, got '%s'", tok[i]);
		*eq++ = '\0';
		if (!strcmp(tok[i], "op"))
			o->op = (uint16_t)num(eq);
		else if (!strcmp(tok[i], "flags"))
			o->flags = (uint16_t)num(eq);
		else if (!strcmp(tok[i], "sector"))
			o->sector = num(eq);
		else if (!strcmp(tok[i], "nr"))
			o->nr = num(eq);
		else if (!strcmp(tok[i], "lwflags"))
			o->lw_flags = num(eq);
		else if (!strcmp(tok[i], "datalen"))
			o->data_len = (uint32_t)num(eq);
		else if (!strcmp(tok[i], "label"))
			o->label = strdup(eq);
		else
			die("raw: unknown key '%s'", tok[i]);
	}
}

static void
write_super(void)
{
	unsigned char block[FLUSHLOG_MAX_BLOCK_SIZE] = { 0 };

	if (format == FMT_LOG_WRITES) {
		uint64_t f[3] = { htole64(LW_MAGIC), htole64(1),
				  htole64(nr_entries) };
		uint32_t ss = htole32(dev_block);

		memcpy(block, f, sizeof(f));
		memcpy(block + sizeof(f), &ss, sizeof(ss));
		put_at(block, dev_block, 0);
	} else {
		struct flushlog_super sb = { 0 };

		sb.magic = htole64(FLUSHLOG_SUPER_MAGIC);
		sb.version = htole32(version);
		sb.log_block_size = htole32(log_block);
		sb.data_block_size = htole32(dev_block);
		sb.data_sectors = htole64(dev_sectors);
		sb.log_sectors = htole64(log_off / 512);
		sb.nr_entries = htole64(dirty ? 0 : nr_entries);
		sb.used_sectors = htole64(dirty ? 0 : log_off / 512);
		sb.state = htole32(dirty ? FLUSHLOG_STATE_DIRTY :
				   FLUSHLOG_STATE_CLEAN);
		sb.flags = htole32((nodata ? FLUSHLOG_SF_NO_DATA : 0) |
				   (data_xxh64 ? FLUSHLOG_SF_DATA_XXH64 : 0));
		memcpy(sb.uuid, uuid, sizeof(uuid));
		memcpy(&sb.log_id, uuid, 8);
		sb.create_time_ns = htole64(1);
		if (version >= FLUSHLOG_VERSION || nr_devices > 1) {
			sb.nr_devices = htole32(nr_devices);
			sb.devices[0].sectors = htole64(dev_sectors);
			sb.devices[0].block_size = htole32(dev_block);
			for (uint32_t d = 1; d < nr_devices; d++) {
				sb.devices[d].sectors = htole64(more_sectors[d]);
				sb.devices[d].block_size = htole32(more_block[d]);
			}
		}
		sb.crc = htole32(fl_crc32c(&sb, sizeof(sb)));
		memcpy(block, &sb, sizeof(sb));
		put_at(block, log_block, 0);
	}
}

/* The format's fields, for corruption tests: "NAME OFFSET SIZE". */
static void
print_fields(void)
{
#define F(type, field) printf("%s.%s %zu %zu\n", #type, #field, \
	offsetof(struct type, field), sizeof(((struct type *)0)->field))
	F(flushlog_super, magic); F(flushlog_super, version);
	F(flushlog_super, crc); F(flushlog_super, log_block_size);
	F(flushlog_super, data_block_size); F(flushlog_super, data_sectors);
	F(flushlog_super, log_sectors); F(flushlog_super, nr_entries);
	F(flushlog_super, used_sectors); F(flushlog_super, state);
	F(flushlog_super, flags); F(flushlog_super, uuid);
	F(flushlog_super, log_id); F(flushlog_super, create_time_ns);
	F(flushlog_super, nr_devices); F(flushlog_super, devices);
	F(flushlog_entry, magic); F(flushlog_entry, crc);
	F(flushlog_entry, log_id); F(flushlog_entry, seq);
	F(flushlog_entry, sector); F(flushlog_entry, nr_sectors);
	F(flushlog_entry, data_len); F(flushlog_entry, op);
	F(flushlog_entry, flags); F(flushlog_entry, data_crc);
	F(flushlog_entry, submit_tick); F(flushlog_entry, complete_tick);
	F(flushlog_entry, time_ns); F(flushlog_entry, label_len);
	F(flushlog_entry, device); F(flushlog_entry, label);
#undef F
}

/*
 * The model disk takes operations in script order: durability order, the
 * truth for a version 1 log only.
 */
static void
set_version(uint64_t v)
{
	if (format != FMT_FLUSHLOG)
		die("version: only the flushlog format has one to set");
	if (v > UINT32_MAX)
		die("version %" PRIu64 " does not fit its 32-bit field", v);
	if (expect_dir && v != FLUSHLOG_VERSION_DURABILITY_ORDER)
		die("version %" PRIu64 ": -e images are in script order, a version %u log's",
		    v, FLUSHLOG_VERSION_DURABILITY_ORDER);
	version = (uint32_t)v;
}

static void
run_script(FILE *in)
{
	char line[1024];
	int started = 0;

	while (fgets(line, sizeof(line), in)) {
		char *tok[32], *save = NULL, *t;
		struct op o = { 0 };
		int n = 0;

		if ((t = strchr(line, '#')))
			*t = '\0';
		for (t = strtok_r(line, " \t\n", &save); t && n < 32;
		     t = strtok_r(NULL, " \t\n", &save))
			tok[n++] = t;
		if (!n)
			continue;
		if (!strcmp(tok[0], "device") && n >= 2 && !started) {
			dev_sectors = num(tok[1]);
			if (n > 2)
				dev_block = (uint32_t)num(tok[2]);
			continue;
		}
		if (!strcmp(tok[0], "adddevice") && n >= 2 && !started) {
			if (nr_devices == FLUSHLOG_MAX_DEVICES)
				die("adddevice: at most %d devices",
				    FLUSHLOG_MAX_DEVICES);
			if (expect_dir)
				die("adddevice: -e models device 0 alone");
			more_sectors[nr_devices] = num(tok[1]);
			more_block[nr_devices++] = n > 2 ? (uint32_t)num(tok[2])
							 : 512;
			continue;
		}
		if (!strcmp(tok[0], "logblock") && n == 2 && !started) {
			log_block = (uint32_t)num(tok[1]);
			continue;
		}
		if (!strcmp(tok[0], "dirty")) {
			dirty = 1;
			continue;
		}
		if (!strcmp(tok[0], "version") && n == 2) {
			set_version(num(tok[1]));
			continue;
		}
		if (!strcmp(tok[0], "nodata") && !started) {
			nodata = 1;
			continue;
		}
		if (!strcmp(tok[0], "checksum") && n == 2 && !started &&
		    (!strcmp(tok[1], "xxh64") || !strcmp(tok[1], "crc32c"))) {
			data_xxh64 = !strcmp(tok[1], "xxh64");
			continue;
		}
		if (!started) {
			started = 1;
			disk_sectors = size_now[0] = dev_sectors;
			for (uint32_t d = 1; d < nr_devices; d++)
				size_now[d] = more_sectors[d];
			disk = calloc(dev_sectors, 512);
			if (!disk)
				die("out of memory");
			log_off = format == FMT_LOG_WRITES ? dev_block : log_block;
			save_point("start");
		}
		if (!strcmp(tok[0], "empty") && n == 1)
			continue;	/* a log of no entries */
		if (!strcmp(tok[0], "write") && n >= 3) {
			o.op = FLUSHLOG_OP_WRITE;
		} else if (!strcmp(tok[0], "discard") && n >= 3) {
			o.op = FLUSHLOG_OP_DISCARD;
		} else if (!strcmp(tok[0], "zeroes") && n >= 3) {
			o.op = FLUSHLOG_OP_WRITE_ZEROES;
		} else if (!strcmp(tok[0], "erase") && n >= 3) {
			o.op = FLUSHLOG_OP_SECURE_ERASE;
		} else if (!strcmp(tok[0], "flush")) {
			o.op = FLUSHLOG_OP_FLUSH;
			o.flags = FLUSHLOG_F_PREFLUSH;
			parse_tail(&o, tok + 1, n - 1);
			do_op(&o);
			continue;
		} else if (!strcmp(tok[0], "mark") &&
			   (n == 2 || (n == 4 && !strcmp(tok[2], "tick")))) {
			o.op = FLUSHLOG_OP_MARK;
			o.label = tok[1];
			o.submit = o.complete = n == 4 ? num(tok[3]) : ++tick;
			if (o.complete > tick)
				tick = o.complete;
			do_op(&o);
			continue;
		} else if (!strcmp(tok[0], "resize") && n >= 2) {
			o.op = FLUSHLOG_OP_RESIZE;
			o.sector = num(tok[1]);
			for (int i = 2; i < n; i++) {
				if (!strcmp(tok[i], "tick") && i + 1 < n)
					o.submit = num(tok[++i]);
				else if (!strcmp(tok[i], "dev") && i + 1 < n &&
					 num(tok[i + 1]) < nr_devices)
					o.device = (uint32_t)num(tok[++i]);
				else
					die("resize: unknown word '%s'", tok[i]);
			}
			/* one tick, as a mark's */
			o.complete = o.submit = o.submit ? o.submit : ++tick;
			if (o.complete > tick)
				tick = o.complete;
			do_op(&o);
			continue;
		} else if (!strcmp(tok[0], "raw")) {
			parse_raw(&o, tok + 1, n - 1);
			do_op(&o);
			/* parse_raw's copy: tok is overwritten line by line */
			free((char *)o.label);
			continue;
		} else {
			die("cannot parse '%s'", tok[0]);
		}
		o.sector = num(tok[1]);
		o.nr = (uint32_t)num(tok[2]);
		parse_tail(&o, tok + 3, n - 3);
		do_op(&o);
	}
	if (!started)
		die("the script has no operations");
}

int
main(int argc, char **argv)
{
	const char *out = NULL;
	char path[4096];
	FILE *in;
	int c;

	if (argc == 2 && !strcmp(argv[1], "--fields"))
		return print_fields(), 0;
	while ((c = getopt(argc, argv, "f:e:lo:")) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "flushlog"))
				format = FMT_FLUSHLOG;
			else if (!strcmp(optarg, "log-writes"))
				format = FMT_LOG_WRITES;
			else
				die("unknown format '%s'", optarg);
			break;
		case 'e':
			expect_dir = optarg;
			break;
		case 'l':
			list_layout = 1;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			die("usage: fl-mklog [-f FORMAT] [-e DIR] [-l] -o LOG SCRIPT");
		}
	}
	if (!out || optind != argc - 1)
		die("usage: fl-mklog [-f FORMAT] [-e DIR] [-l] -o LOG SCRIPT");
	in = strcmp(argv[optind], "-") ? fopen(argv[optind], "r") : stdin;
	if (!in)
		die("cannot open '%s': %s", argv[optind], strerror(errno));
	log_file = fopen(out, "w+b");
	if (!log_file)
		die("cannot create '%s': %s", out, strerror(errno));
	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)(0x5a + 37 * i);
	if (expect_dir) {
		if (mkdir(expect_dir, 0755) && errno != EEXIST)
			die("cannot create '%s': %s", expect_dir, strerror(errno));
		snprintf(path, sizeof(path), "%s/points.txt", expect_dir);
		points_txt = fopen(path, "w");
		if (!points_txt)
			die("cannot create '%s'", path);
	}
	run_script(in);
	save_point("end");
	pad_points();
	write_super();
	if (points_txt && fclose(points_txt))
		die("cannot write points.txt");
	if (fclose(log_file))
		die("cannot write '%s'", out);
	return 0;
}
