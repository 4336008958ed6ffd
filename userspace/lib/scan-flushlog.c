// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading a dm-flushlog log: the super block, then entry after entry.
 *
 * A CLEAN log states its entry count, and every one of them must check
 * out.  A DIRTY log was not closed (its writer crashed, or is still
 * writing): entries are taken until the first slot that does not hold the
 * next entry of this log, and an entry whose header or data was not wholly
 * written is the torn tail.  A header that passes its checksum but makes
 * no sense is corruption in either case.
 *
 * Version 1 logs hold their entries in durability order, version 2 logs in
 * completion order: those are put in durability order once read
 * (order.c), so the rest of the library sees one order.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "internal.h"

enum slot_status {
	SLOT_OK,
	SLOT_UNWRITTEN,	/* no entry of this log: zeroes, stale, past the end */
	SLOT_TORN,	/* this log's entry, but its header is half written */
	SLOT_BAD,	/* an entry of this log that cannot be right */
	SLOT_DATA_BAD,	/* good header, data missing or mismatched */
};

#define WINDOW_SIZE	(1U << 20)

struct slot {
	enum slot_status status;
	struct flushlog_entry hdr;
	struct fl_entry e;
	char why[160];
};

static bool
crc_matches(const void *hdr, size_t crc_offset, uint32_t *want)
{
	unsigned char copy[FLUSHLOG_HEADER_SIZE];
	uint32_t stored;

	memcpy(copy, hdr, sizeof(copy));
	memcpy(&stored, copy + crc_offset, sizeof(stored));
	memset(copy + crc_offset, 0, sizeof(stored));
	*want = fl_crc32c(copy, sizeof(copy));
	return fl_le32(stored) == *want;
}

static bool
valid_block_size(uint32_t size)
{
	return fl_is_pow2(size) && size >= FLUSHLOG_MIN_BLOCK_SIZE &&
	       size <= FLUSHLOG_MAX_BLOCK_SIZE;
}

static bool
valid_device_size(uint64_t sectors, uint32_t block_size)
{
	return sectors && sectors <= (UINT64_MAX >> 10) &&
	       !((sectors << FLUSHLOG_SECTOR_SHIFT) % block_size);
}

/*
 * An image of all the devices, each at its largest and from a 4 KiB
 * boundary: it must fit below 2^54 sectors, as one device does.
 */
static uint64_t
image_sectors(const struct fl_device *devices, uint32_t nr)
{
	uint64_t image = 0;

	for (uint32_t d = 0; d < nr; d++)
		image = ((image + 7) & ~(uint64_t)7) + devices[d].sectors;
	return image;
}

/*
 * The data devices: a version 3 super block lists them, and device 0
 * repeats the fields that versions 1 and 2 have for their one device.  A
 * number no device has used yet is listed as zeroes: absent.
 */
static int
check_devices(struct fl_log *log, const struct flushlog_super *sb,
	      struct fl_error *err)
{
	struct fl_log_info *info = &log->info;
	uint32_t nr = fl_le32(sb->nr_devices);
	const unsigned char *rest;
	uint64_t image;

#define DEVICES_BAD(...) \
	(fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0, "super block: " \
		      __VA_ARGS__), -EBADMSG)

	if (info->version < FLUSHLOG_VERSION_DEVICES) {
		rest = (const unsigned char *)&sb->nr_devices;
		for (size_t i = 0; i < offsetof(struct flushlog_super, reserved) -
		     offsetof(struct flushlog_super, nr_devices); i++)
			if (rest[i])
				return DEVICES_BAD("a version %u log has a device table",
						   info->version);
		info->nr_devices = 1;
		log->devices[0] = (struct fl_device) {
			.sectors = info->data_sectors,
			.block_size = info->data_block_size,
		};
		return 0;
	}
	if (!nr || nr > FLUSHLOG_MAX_DEVICES)
		return DEVICES_BAD("invalid device count %u (1 to %u)", nr,
				   FLUSHLOG_MAX_DEVICES);
	if (sb->reserved1)
		return DEVICES_BAD("reserved field is not zero");
	info->nr_devices = nr;
	for (uint32_t d = 0; d < FLUSHLOG_MAX_DEVICES; d++) {
		const struct flushlog_device *dev = &sb->devices[d];
		struct fl_device *to = &log->devices[d];

		if (d >= nr) {
			if (dev->sectors || dev->block_size || dev->reserved)
				return DEVICES_BAD("device %u of %u is listed", d,
						   nr);
			continue;
		}
		to->sectors = fl_le64(dev->sectors);
		to->block_size = fl_le32(dev->block_size);
		if (dev->reserved)
			return DEVICES_BAD("device %u: reserved field is not zero",
					   d);
		if (!to->sectors && !to->block_size)
			continue;	/* absent */
		if (!valid_block_size(to->block_size))
			return DEVICES_BAD("device %u: invalid block size %u",
					   d, to->block_size);
		if (!valid_device_size(to->sectors, to->block_size))
			return DEVICES_BAD("device %u: invalid size %" PRIu64 " sectors",
					   d, to->sectors);
	}
	image = image_sectors(log->devices, nr);
	if (image > (UINT64_MAX >> 10))
		return DEVICES_BAD("devices of %" PRIu64 " sectors in all: more than an image can hold",
				   image);
	if (log->devices[0].sectors != info->data_sectors ||
	    log->devices[0].block_size != info->data_block_size)
		return DEVICES_BAD("device 0 (%" PRIu64 " sectors of %u bytes) differs from the data device (%" PRIu64 " sectors of %u bytes)",
				   log->devices[0].sectors,
				   log->devices[0].block_size,
				   info->data_sectors, info->data_block_size);
	return 0;
#undef DEVICES_BAD
}

static int
check_super(struct fl_log *log, const struct flushlog_super *sb,
	    struct fl_error *err)
{
	struct fl_log_info *info = &log->info;
	uint32_t want, state, flags, version;
	uint64_t used;
	int ret;

#define SUPER_BAD(...) \
	(fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0, "super block: " \
		      __VA_ARGS__), -EBADMSG)

	version = fl_le32(sb->version);
	if (version < FLUSHLOG_VERSION_DURABILITY_ORDER ||
	    version > FLUSHLOG_VERSION)
		return SUPER_BAD("unsupported version %u (this reader knows %u to %u)",
				 version, FLUSHLOG_VERSION_DURABILITY_ORDER,
				 FLUSHLOG_VERSION);
	if (!crc_matches(sb, offsetof(struct flushlog_super, crc), &want))
		return SUPER_BAD("checksum mismatch (stored 0x%08x, computed 0x%08x)",
				 fl_le32(sb->crc), want);
	info->format = FL_FORMAT_FLUSHLOG;
	info->version = version;
	info->log_block_size = fl_le32(sb->log_block_size);
	info->data_block_size = fl_le32(sb->data_block_size);
	info->data_sectors = fl_le64(sb->data_sectors);
	info->data_size_known = true;
	info->super_entries = fl_le64(sb->nr_entries);
	info->super_flags = flags = fl_le32(sb->flags);
	info->create_time_ns = fl_le64(sb->create_time_ns);
	info->has_ticks = true;
	memcpy(info->uuid, sb->uuid, sizeof(info->uuid));
	state = fl_le32(sb->state);
	used = fl_le64(sb->used_sectors);

	if (!valid_block_size(info->log_block_size))
		return SUPER_BAD("invalid log block size %u",
				 info->log_block_size);
	/* version 3: device 0's, checked in check_devices(), may be absent */
	if (version < FLUSHLOG_VERSION_DEVICES &&
	    !valid_block_size(info->data_block_size))
		return SUPER_BAD("invalid data block size %u",
				 info->data_block_size);
	if (version < FLUSHLOG_VERSION_DEVICES &&
	    !valid_device_size(info->data_sectors, info->data_block_size))
		return SUPER_BAD("invalid data device size %" PRIu64 " sectors",
				 info->data_sectors);
	ret = check_devices(log, sb, err);
	if (ret)
		return ret;
	for (uint32_t d = 0; d < info->nr_devices; d++) {
		log->devices[d].first_sectors = log->devices[d].sectors;
		log->size_now[d] = log->devices[d].sectors;
	}
	if (state != FLUSHLOG_STATE_DIRTY && state != FLUSHLOG_STATE_CLEAN)
		return SUPER_BAD("invalid state %u", state);
	if (flags & ~FLUSHLOG_SF_ALL)
		return SUPER_BAD("unknown flags 0x%x", flags & ~FLUSHLOG_SF_ALL);
	if (fl_le64(sb->log_id) != fl_le64(*(const __le64 *)sb->uuid))
		return SUPER_BAD("log id does not match the uuid");
	info->clean = state == FLUSHLOG_STATE_CLEAN;
	if (info->log_block_size > log->size)
		return SUPER_BAD("log of %" PRIu64 " bytes is shorter than one log block",
				 log->size);
	if (info->clean && (used > log->size >> FLUSHLOG_SECTOR_SHIFT ||
			    used << FLUSHLOG_SECTOR_SHIFT <
			    info->log_block_size))
		return SUPER_BAD("log is truncated or its used size is wrong: %" PRIu64 " sectors used, %" PRIu64 " bytes present",
				 used, log->size);
	return 0;
#undef SUPER_BAD
}

/*
 * A RESIZE: the device's new size in .sector, one tick, nothing else; a
 * size as a super block's would be, and an image of every device at its
 * largest that still fits.
 */
static const char *
check_resize(const struct fl_log *log, const struct fl_entry *e,
	     const struct flushlog_entry *h, char *why, size_t len)
{
	const struct fl_device *dev = &log->devices[e->device];
	struct fl_device grown[FLUSHLOG_MAX_DEVICES];

	if (e->nr_sectors || e->data_len || h->label_len || e->flags)
		return snprintf(why, len, "resize with a range, data, a label or flags"),
		       why;
	if (e->submit_tick != e->complete_tick)
		return snprintf(why, len, "resize with two ticks (%" PRIu64 " and %" PRIu64 "): it has one",
				e->submit_tick, e->complete_tick), why;
	if (!valid_device_size(e->sector, dev->block_size))
		return snprintf(why, len, "resize of device %u to an invalid size of %" PRIu64 " sectors",
				e->device, e->sector), why;
	if (e->sector <= dev->sectors)
		return NULL;
	/* the table of sizes with this device grown: 16 of them, cheap */
	memcpy(grown, log->devices, sizeof(grown));
	grown[e->device].sectors = e->sector;
	if (image_sectors(grown, log->info.nr_devices) > (UINT64_MAX >> 10))
		return snprintf(why, len, "resize of device %u to %" PRIu64 " sectors: more than an image of all can hold",
				e->device, e->sector), why;
	return NULL;
}

/* Checks of a header whose checksum is right: the writer meant it. */
static const char *
check_header(const struct fl_log *log, const struct fl_entry *e,
	     const struct flushlog_entry *h, char *why, size_t len)
{
	const struct fl_log_info *info = &log->info;
	uint32_t label_len = fl_le32(h->label_len);
	uint64_t end = e->sector + e->nr_sectors, size;
	const struct fl_device *dev;
	uint32_t align;
	bool has_range = fl_changes_data(e);

	if (e->op < FLUSHLOG_OP_WRITE || e->op > FLUSHLOG_OP_RESIZE)
		return snprintf(why, len, "unknown operation %u", e->op), why;
	if (e->device >= info->nr_devices)
		return snprintf(why, len, "device %u of a log of %u device%s",
				e->device, info->nr_devices,
				info->nr_devices == 1 ? "" : "s"), why;
	dev = &log->devices[e->device];
	if (!dev->sectors)
		return snprintf(why, len, "device %u, which the super block lists as absent",
				e->device), why;
	align = dev->block_size >> FLUSHLOG_SECTOR_SHIFT;
	size = log->size_now[e->device];
	if (e->flags & ~FLUSHLOG_F_ALL)
		return snprintf(why, len, "unknown flags 0x%x",
				e->flags & ~FLUSHLOG_F_ALL), why;
	if (e->submit_tick > e->complete_tick)
		return snprintf(why, len, "completes (tick %" PRIu64 ") before it was submitted (tick %" PRIu64 ")",
				e->complete_tick, e->submit_tick), why;
	if (e->op == FLUSHLOG_OP_RESIZE)
		return check_resize(log, e, h, why, len);
	/* a mark is no bio: it cannot fail */
	if (e->op == FLUSHLOG_OP_MARK && (e->flags & FLUSHLOG_F_FAILED))
		return snprintf(why, len, "failed flag on a mark"), why;
	if (has_range && !e->nr_sectors)
		return snprintf(why, len, "%s of zero length",
				fl_op_name(e->op)), why;
	if (!has_range && (e->nr_sectors || e->sector || e->data_len))
		return snprintf(why, len, "%s with a sector range or data",
				fl_op_name(e->op)), why;
	/* the size in effect where the entry stands in the log */
	if (has_range && (end < e->sector || end > size))
		return snprintf(why, len, "sectors %" PRIu64 "+%u beyond device %u's %" PRIu64 " sectors%s",
				e->sector, e->nr_sectors, e->device, size,
				size == dev->first_sectors ? "" :
				" (its size since a resize)"), why;
	if (has_range && (e->sector % align || e->nr_sectors % align))
		return snprintf(why, len, "sectors %" PRIu64 "+%u not aligned to device %u's %u-byte block",
				e->sector, e->nr_sectors, e->device,
				dev->block_size), why;
	if (e->flags & FLUSHLOG_F_NO_DATA) {
		if (e->op != FLUSHLOG_OP_WRITE || e->data_len ||
		    !(info->super_flags & FLUSHLOG_SF_NO_DATA))
			return snprintf(why, len, "no-data flag on a %s of a log with data",
					fl_op_name(e->op)), why;
	} else if (e->op == FLUSHLOG_OP_WRITE &&
		   e->data_len != (uint64_t)e->nr_sectors << FLUSHLOG_SECTOR_SHIFT) {
		return snprintf(why, len, "data length %u does not match %u sectors",
				e->data_len, e->nr_sectors), why;
	} else if (e->op != FLUSHLOG_OP_WRITE && e->data_len) {
		return snprintf(why, len, "%s carrying %u bytes of data",
				fl_op_name(e->op), e->data_len), why;
	}
	if (e->op == FLUSHLOG_OP_MARK ? !label_len || label_len > FLUSHLOG_LABEL_MAX
				      : label_len != 0)
		return snprintf(why, len, "invalid label length %u", label_len),
		       why;
	for (uint32_t i = label_len; i < FLUSHLOG_LABEL_MAX; i++)
		if (h->label[i])
			return snprintf(why, len, "label not zero padded"), why;
	return NULL;
}

/*
 * A failed flush or FUA write guarantees nothing, so it ends no crash
 * point; a RESIZE, like a mark a single tick, is no crash point either.
 */
static bool
is_crash_point(const struct fl_entry *e)
{
	if (fl_entry_failed(e) || e->op == FLUSHLOG_OP_RESIZE)
		return false;
	return e->op == FLUSHLOG_OP_FLUSH || e->op == FLUSHLOG_OP_MARK ||
	       (e->flags & FLUSHLOG_F_FUA);
}

/* From a RESIZE on, its device's ranges are checked against its size. */
static void
note_resize(struct fl_log *log, const struct fl_entry *e)
{
	struct fl_device *dev = &log->devices[e->device];

	log->size_now[e->device] = e->sector;
	if (e->sector > dev->sectors)
		dev->sectors = e->sector;
	if (!e->device)
		log->info.data_sectors = dev->sectors;
}

/* What the slot at off holds; an error only if the log cannot be read. */
static int
read_slot(const struct fl_log *log, struct fl_log_window *w, uint64_t off,
	  uint64_t seq, bool verify_data, struct slot *s, struct fl_error *err)
{
	const struct fl_log_info *info = &log->info;
	struct flushlog_entry *h = &s->hdr;
	struct fl_entry *e = &s->e;
	const unsigned char *p;
	uint64_t log_id;
	uint32_t want;
	int ret;

	memcpy(&log_id, info->uuid, sizeof(log_id));
	s->status = SLOT_UNWRITTEN;
	if (off > log->size || log->size - off < info->log_block_size) {
		snprintf(s->why, sizeof(s->why),
			 "header past the end of the log (%" PRIu64 " bytes)",
			 log->size);
		return 0;
	}
	ret = fl_window_header(w, off, sizeof(*h), &p, err);
	if (ret)
		return ret;
	memcpy(h, p, sizeof(*h));
	if (fl_le32(h->magic) != FLUSHLOG_ENTRY_MAGIC) {
		snprintf(s->why, sizeof(s->why), "no entry magic");
		return 0;
	}
	if (h->log_id != log_id) {
		snprintf(s->why, sizeof(s->why),
			 "entry of another log (log id 0x%016" PRIx64 ")",
			 fl_le64(h->log_id));
		return 0;
	}
	s->status = SLOT_TORN;
	if (!crc_matches(h, offsetof(struct flushlog_entry, crc), &want)) {
		snprintf(s->why, sizeof(s->why),
			 "header checksum mismatch (stored 0x%08x, computed 0x%08x)",
			 fl_le32(h->crc), want);
		return 0;
	}
	if (fl_le64(h->seq) != seq) {
		snprintf(s->why, sizeof(s->why),
			 "sequence number %" PRIu64 " where %" PRIu64 " belongs",
			 fl_le64(h->seq), seq);
		return 0;
	}
	*e = (struct fl_entry) {
		.offset = off,
		.sector = fl_le64(h->sector),
		.submit_tick = fl_le64(h->submit_tick),
		.complete_tick = fl_le64(h->complete_tick),
		.nr_sectors = fl_le32(h->nr_sectors),
		.data_len = fl_le32(h->data_len),
		.data_crc = fl_le32(h->data_crc),
		.op = fl_le16(h->op),
		.flags = fl_le16(h->flags),
		/* reserved0 before version 3, which readers never looked at */
		.device = info->version < FLUSHLOG_VERSION_DEVICES ? 0 :
			  fl_le32(h->device),
	};
	if (check_header(log, e, h, s->why, sizeof(s->why))) {
		s->status = SLOT_BAD;
		return 0;
	}
	if (is_crash_point(e))
		e->flags |= FL_ENTRY_CRASH_POINT;
	s->status = SLOT_DATA_BAD;
	if (log->size - off - info->log_block_size <
	    fl_round_up(e->data_len, info->log_block_size)) {
		snprintf(s->why, sizeof(s->why),
			 "%u bytes of data run past the end of the log (%" PRIu64 " bytes)",
			 e->data_len, log->size);
		return 0;
	}
	if (verify_data && e->data_len) {
		ret = fl_window_checksum(w, off + info->log_block_size, e->data_len,
				    &want, err);
		if (ret)
			return ret;
		if (want != e->data_crc) {
			snprintf(s->why, sizeof(s->why),
				 "data checksum mismatch (stored 0x%08x, computed 0x%08x)",
				 e->data_crc, want);
			return 0;
		}
	}
	s->status = SLOT_OK;
	return 0;
}

static uint64_t
slot_size(const struct fl_log *log, const struct fl_entry *e)
{
	return log->info.log_block_size +
	       fl_round_up(e->data_len, log->info.log_block_size);
}

static int
entry_error(struct fl_error *err, uint64_t seq, uint64_t off, const char *why)
{
	fl_set_error(err, FL_ERR_LOG, seq, off, "entry %" PRIu64 " at offset %" PRIu64 ": %s",
		     seq, off, why);
	return -EBADMSG;
}

/*
 * A dirty log's first failed slot ends it.  A slot of this log that was
 * half written is its torn tail.  A writer with several log writes in
 * flight can crash with a later entry intact behind a torn one, so that
 * too is a torn tail, though the reason says what lies beyond.
 */
static int
end_dirty_log(struct fl_log *log, struct fl_log_window *w, struct slot *s,
	      uint64_t seq, uint64_t off, struct fl_error *err)
{
	struct fl_log_info *info = &log->info;
	const char *beyond = "";
	struct slot next;
	int ret;

	if (s->status == SLOT_BAD)
		return entry_error(err, seq, off, s->why);
	if (s->status == SLOT_UNWRITTEN)
		return 0;
	if (s->status == SLOT_DATA_BAD) {
		ret = read_slot(log, w, off + slot_size(log, &s->e), seq + 1,
				false, &next, err);
		if (ret)
			return ret;
		if (next.status == SLOT_OK || next.status == SLOT_DATA_BAD)
			beyond = "; a later entry follows intact, ignored";
	}
	info->torn = true;
	info->torn_entry = seq;
	info->torn_offset = off;
	snprintf(info->torn_reason, sizeof(info->torn_reason), "%s%s", s->why,
		 beyond);
	return 0;
}

static int
scan_entries(struct fl_log *log, struct fl_log_window *w, bool verify_data,
	     struct fl_error *err)
{
	struct fl_log_info *info = &log->info;
	uint64_t off = info->log_block_size, seq;
	struct slot s;
	int ret;

	for (seq = 0; !info->clean || seq < info->super_entries; seq++) {
		ret = read_slot(log, w, off, seq, verify_data, &s, err);
		if (ret)
			return ret;
		if (s.status != SLOT_OK) {
			if (info->clean)
				return entry_error(err, seq, off, s.why);
			ret = end_dirty_log(log, w, &s, seq, off, err);
			if (ret)
				return ret;
			break;
		}
		if (s.e.op == FLUSHLOG_OP_RESIZE)
			note_resize(log, &s.e);
		ret = fl_log_add_entry(log, &s.e, (const char *)s.hdr.label,
				       fl_le32(s.hdr.label_len));
		if (ret)
			return fl_set_error(err, FL_ERR_NOMEM, seq, off,
					    "out of memory indexing entry %" PRIu64,
					    seq), ret;
		off += slot_size(log, &s.e);
	}
	info->used_bytes = off;
	return 0;
}

int
fl_scan_flushlog(struct fl_log *log, unsigned int flags, struct fl_error *err)
{
	struct fl_log_info *info = &log->info;
	struct flushlog_super sb;
	struct fl_log_window w;
	bool verify_data;
	uint64_t used;
	int ret;

	ret = fl_log_pread(log, &sb, sizeof(sb), 0, err);
	if (ret)
		return ret;
	ret = check_super(log, &sb, err);
	if (ret)
		return ret;
	verify_data = (flags & FL_OPEN_VERIFY_DATA) || !info->clean;
	if (info->clean && info->super_entries >
	    log->size / info->log_block_size)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
				    "super block: %" PRIu64 " entries cannot fit in a log of %" PRIu64 " bytes",
				    info->super_entries, log->size),
		       -EBADMSG;
	if ((info->clean && fl_log_reserve(log, info->super_entries)) ||
	    fl_window_init(&w, log, WINDOW_SIZE))
		return fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, 0,
				    "out of memory for an index of %" PRIu64 " entries",
				    info->super_entries), -ENOMEM;
	ret = scan_entries(log, &w, verify_data, err);
	fl_window_free(&w);
	if (ret)
		return ret;
	info->data_verified = verify_data;
	used = fl_le64(sb.used_sectors);
	if (info->clean && used << FLUSHLOG_SECTOR_SHIFT != info->used_bytes)
		return fl_set_error(err, FL_ERR_LOG, FL_NO_ENTRY, 0,
				    "super block: %" PRIu64 " sectors used, but its %" PRIu64 " entries end at byte %" PRIu64,
				    used, info->super_entries, info->used_bytes),
		       -EBADMSG;
	if (info->version != FLUSHLOG_VERSION_DURABILITY_ORDER) {
		ret = fl_log_to_durability_order(log, err);
		if (ret)
			return ret;
	}
	return fl_log_failed_last(log, err);
}
