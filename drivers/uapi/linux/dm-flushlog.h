/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/**
 * DOC: dm-flushlog log format
 *
 * The dm-flushlog on-disk log format, version 3.
 *
 * This header is the one definition of the format: the dm-flushlog target,
 * libflushlog and docs/log-format.md all follow it.  Every field is
 * little-endian and fixed-width, so a log written on one machine reads the
 * same on any other.
 *
 * Layout of the log device, in log blocks of sb.log_block_size bytes (512 or
 * the log device's logical block size if larger)::
 *
 *   block 0        1          1+h+d0     ...
 *   [ super ][ entry 0 | data 0 ][ entry 1 | data 1 ] ... [ entry N-1 | ... ]
 *              1 block  d0 blocks
 *
 * Each entry is one header block followed by the entry's data, if any,
 * padded with zeroes to a whole number of log blocks.  Entry k+1 starts
 * right after entry k's padded data, so the log is read in one forward
 * pass.  With 512-byte log blocks an entry costs exactly one sector more
 * than the data it carries.
 *
 * Order.  Version 2 entries are in completion order: the order of their
 * complete_tick.  The writer streams each entry to the log as soon as its
 * bio completes, so its memory stays bounded whatever the workload.
 * Durability order follows from the ticks alone: a write W (or discard,
 * write-zeroes, secure erase) is guaranteed durable once it completed with
 * FLUSHLOG_F_FUA, or once a FLUSH entry F completed with
 * F.submit_tick > W.complete_tick.  A reader rebuilds durability order by
 * keeping the non-FUA writes aside, in log order, and letting each FLUSH
 * entry take out, just before itself, those that completed before the
 * flush was submitted (always a prefix of them); FUA writes and marks stay
 * where they are, and writes no flush covered go last.
 *
 * Version 1 logs hold their entries in that durability order already: their
 * writer kept each completed write in memory until the flush that covers it
 * completed.  Readers take both versions; a version 1 reader refuses
 * version 2.  In durability order, the writes in entries 0..k are exactly
 * those a device with a volatile write cache is guaranteed to hold once the
 * operation of entry k completed, for every entry k that is a crash point
 * (a FLUSH entry, a write with FLUSHLOG_F_FUA, or a MARK).
 *
 * Devices.  A version 3 log may hold the writes of several data devices
 * (up to FLUSHLOG_MAX_DEVICES) in one order and one tick domain: a
 * filesystem with an external journal, or a raid1, on devices that each
 * have their own volatile cache.  The super block lists the devices, and
 * each entry names its own in entry.device; sector ranges are that
 * device's.  A flush is a device's own: FLUSH entry F of device d makes
 * durable only d's writes that completed before F was submitted, so a
 * reader keeps the waiting writes of each device apart.  A crash point of
 * any device is a crash point of all of them: the writes in entries 0..k
 * of durability order are, on every device, those guaranteed durable
 * when the operation of entry k completed.  Versions 1 and 2 have one
 * device, device 0, and their entry.device is zero.  A writer that adds a
 * device to a log it has started rewrites the super block, listing it,
 * before it logs the device's first entry.
 *
 * Time.  The target keeps one event counter, the tick, and stamps each
 * logged bio when it is submitted (submit_tick) and when it completes
 * (complete_tick); a mark gets one tick for both.  With them a reader needs
 * nothing else to know what a crash could leave on the media:
 *  - write W is guaranteed durable once W completed with FUA, or once a
 *    FLUSH F completed with F.submit_tick > W.complete_tick;
 *  - at the crash point of entry k (in durability order), every write W
 *    after k with W.submit_tick < entry k's complete_tick had been
 *    submitted but was not yet guaranteed: it may or may not be on the
 *    media;
 *  - where two entries overlap, one submitted after the other completed
 *    holds the shared sectors, whichever of them comes first in
 *    durability order (a FUA write overtakes an older write that waits
 *    for its flush).
 *
 * Integrity.  Each header carries a CRC32C of itself and a checksum of its
 * data: CRC32C, or with FLUSHLOG_SF_DATA_XXH64 the low 32 bits of XXH64
 * with seed 0 (the kernel's xxh64(buf, len, 0)).  The target writes
 * CRC32C; readers also take XXH64, which logs of other writers (and of
 * the target before it was submitted) carry.
 *
 * Size.  A device may change size while its log goes on (a table reload
 * that grows or shrinks it).  super.devices[d].sectors (data_sectors for
 * device 0) is the device's size when it was first listed; a RESIZE entry
 * says that from its place in the log on, device entry.device has
 * entry.sector sectors.  Every range lies within its device's size where
 * the entry stands in the log, and an image of the device is as large as
 * the largest of its sizes.  A RESIZE has one tick, as a mark does, stays
 * where it is in durability order and is not a crash point.
 *
 * Failed bios.  A bio that failed is logged with FLUSHLOG_F_FAILED: what
 * it left on its range is unknown.  Each logical block of the range may
 * hold its old content or the bio's (zeroes for write-zeroes, anything for
 * a discard), in any mix, at every crash point from the bio's submission
 * on, until a write submitted after the failed one completed holds it.  A
 * failed entry is never guaranteed durable, and a failed FLUSH makes
 * nothing durable.  A failed write's data is what the bio carried.
 *
 * Extensions.  A reader refuses an entry whose op or flags it does not
 * know, naming it, and never skips one.  RESIZE and FLUSHLOG_F_FAILED
 * came after version 3 was first written, without a new version: a
 * reader older than them refuses a log that holds one rather than
 * misreading it, and reads every other log as before.  A version
 * changes when a field changes meaning.
 *
 * The super block is rewritten at a clean shutdown with the entry count and
 * FLUSHLOG_STATE_CLEAN (but for a log whose writes failed, which stays
 * DIRTY); while it says DIRTY, a reader takes entries until the first one
 * whose magic, log_id, seq or checksums do not match: that is the torn
 * tail, reported and never replayed.
 *
 * CRC32C means the Castagnoli CRC as in iSCSI: initial value ~0, reflected,
 * final xor ~0 (the check value of "123456789" is 0xe3069283); in the
 * kernel, ~crc32c(~0, buf, len).  A checksum field reads as zero while its
 * own checksum is computed.
 */
#ifndef _UAPI_LINUX_DM_FLUSHLOG_H
#define _UAPI_LINUX_DM_FLUSHLOG_H

#include <linux/types.h>

#define FLUSHLOG_SUPER_MAGIC	0x474f4c4853554c46ULL	/* "FLUSHLOG" */
#define FLUSHLOG_ENTRY_MAGIC	0x45474f4cU		/* "LOGE" */
#define FLUSHLOG_VERSION	3	/* completion order, several devices */
#define FLUSHLOG_VERSION_DEVICES 3	/* the first with super.devices */
#define FLUSHLOG_VERSION_COMPLETION_ORDER 2	/* completion order, one device */
#define FLUSHLOG_VERSION_DURABILITY_ORDER 1	/* read, no longer written */

#define FLUSHLOG_SECTOR_SHIFT	9	/* sector and length unit: 512 bytes */
#define FLUSHLOG_HEADER_SIZE	512	/* bytes of a super or entry header */
#define FLUSHLOG_MIN_BLOCK_SIZE	512
#define FLUSHLOG_MAX_BLOCK_SIZE	65536
#define FLUSHLOG_LABEL_MAX	64	/* bytes of a mark label, no NUL needed */
#define FLUSHLOG_MAX_DEVICES	16	/* data devices a version 3 log holds */

/* super.state */
enum flushlog_state {
	FLUSHLOG_STATE_DIRTY = 1,	/* being written, or its writer died */
	FLUSHLOG_STATE_CLEAN = 2,	/* closed: nr_entries and used are true */
};

/* super.flags */
#define FLUSHLOG_SF_NO_DATA	(1U << 0)	/* writes logged without data */
#define FLUSHLOG_SF_FULL	(1U << 1)	/* log filled: see on_full */
#define FLUSHLOG_SF_ERROR	(1U << 2)	/* log I/O failed, logging stopped */
#define FLUSHLOG_SF_DATA_XXH64	(1U << 3)	/* data_crc: XXH64, not CRC32C */
#define FLUSHLOG_SF_ALL		(FLUSHLOG_SF_NO_DATA | FLUSHLOG_SF_FULL | \
				 FLUSHLOG_SF_ERROR | FLUSHLOG_SF_DATA_XXH64)

/*
 * A data device of a version 3 log: super.devices[entry.device].  All
 * zeroes: absent, a number below nr_devices that no entry uses.
 */
struct flushlog_device {
	__le64	sectors;	/* sectors the target maps, when listed */
	__le32	block_size;	/* logical block size of the device */
	__le32	reserved;	/* zero */
};

/*
 * The super block, at byte 0 of the log device.  In a version 3 log
 * data_sectors and data_block_size repeat devices[0]'s (zero if absent).
 */
struct flushlog_super {
	__le64	magic;		/* FLUSHLOG_SUPER_MAGIC */
	__le32	version;	/* FLUSHLOG_VERSION */
	__le32	crc;		/* CRC32C of these 512 bytes */
	__le32	log_block_size;	/* bytes per log block, power of 2 */
	__le32	data_block_size; /* logical block size of the data device */
	__le64	data_sectors;	/* sectors the target maps, when listed */
	__le64	log_sectors;	/* capacity of the log device, in sectors */
	__le64	nr_entries;	/* entries in the log; true when CLEAN */
	__le64	used_sectors;	/* log sectors used incl. super; when CLEAN */
	__le32	state;		/* enum flushlog_state */
	__le32	flags;		/* FLUSHLOG_SF_* */
	__u8	uuid[16];	/* random, new for every log */
	__le64	log_id;		/* uuid bytes 0..7 as le64: stamped in entries */
	__le64	create_time_ns;	/* CLOCK_REALTIME when the log was started */
	/* version 3; zero in versions 1 and 2, which have one device */
	__le32	nr_devices;	/* entries of devices[] in use, 1 or more */
	__le32	reserved1;	/* zero */
	struct flushlog_device devices[FLUSHLOG_MAX_DEVICES];
	__u8	reserved[152];	/* zero */
};

/* entry.op: what the logged bio did */
enum flushlog_op {
	FLUSHLOG_OP_WRITE = 1,		/* data follows, unless F_NO_DATA */
	FLUSHLOG_OP_DISCARD = 2,	/* range may read back as anything */
	FLUSHLOG_OP_WRITE_ZEROES = 3,	/* range reads back as zeroes */
	FLUSHLOG_OP_SECURE_ERASE = 4,	/* a discard that must erase */
	FLUSHLOG_OP_FLUSH = 5,		/* a cache flush completed here */
	FLUSHLOG_OP_MARK = 6,		/* a user's label; no I/O */
	FLUSHLOG_OP_RESIZE = 7,		/* the device's size is now .sector */
};

/* entry.flags: the bio's REQ_* flags that matter to ordering */
#define FLUSHLOG_F_PREFLUSH	(1U << 0)	/* bio carried REQ_PREFLUSH */
#define FLUSHLOG_F_FUA		(1U << 1)	/* bio carried REQ_FUA */
#define FLUSHLOG_F_META		(1U << 2)	/* bio carried REQ_META */
#define FLUSHLOG_F_SYNC		(1U << 3)	/* bio carried REQ_SYNC */
#define FLUSHLOG_F_NO_DATA	(1U << 4)	/* a write whose data was not kept */
#define FLUSHLOG_F_NOUNMAP	(1U << 5)	/* write-zeroes with REQ_NOUNMAP */
#define FLUSHLOG_F_FAILED	(1U << 6)	/* the bio failed: outcome unknown */
#define FLUSHLOG_F_ALL		(FLUSHLOG_F_PREFLUSH | FLUSHLOG_F_FUA | \
				 FLUSHLOG_F_META | FLUSHLOG_F_SYNC | \
				 FLUSHLOG_F_NO_DATA | FLUSHLOG_F_NOUNMAP | \
				 FLUSHLOG_F_FAILED)

/*
 * An entry header: the first 512 bytes of a log block.
 *
 * Device-mapper core splits a bio with REQ_PREFLUSH and data into an empty
 * flush and the write, so dm-flushlog logs them as a FLUSH entry and a
 * WRITE entry with ticks of their own; F_PREFLUSH on a WRITE entry comes
 * only from other writers of the format.
 *
 * A RESIZE entry's sector is the device's new size, in sectors.
 */
struct flushlog_entry {
	__le32	magic;		/* FLUSHLOG_ENTRY_MAGIC */
	__le32	crc;		/* CRC32C of these 512 bytes */
	__le64	log_id;		/* super.log_id: tells stale entries apart */
	__le64	seq;		/* entry number: 0, 1, 2, ... */
	__le64	sector;		/* first data-device sector; 0 if no range */
	__le32	nr_sectors;	/* length on the data device, in sectors */
	__le32	data_len;	/* bytes of data after this header */
	__le16	op;		/* enum flushlog_op */
	__le16	flags;		/* FLUSHLOG_F_* */
	__le32	data_crc;	/* checksum of the data_len bytes of data */
	__le64	submit_tick;	/* tick when the target issued the bio */
	__le64	complete_tick;	/* tick when the bio completed */
	__le64	time_ns;	/* CLOCK_MONOTONIC at completion */
	__le32	label_len;	/* bytes used in label (MARK only) */
	__le32	device;	/* version 3: index in super.devices; else zero */
	__u8	label[FLUSHLOG_LABEL_MAX];	/* mark label, zero padded */
	__u8	reserved[368];	/* zero */
};

/*
 * Compile-time checks: any change of size or offset changes the format.
 * C11's _Static_assert is not C++, whose users skip the checks.
 */
#ifndef __cplusplus
#define FLUSHLOG_CHECK_OFFSET(type, field, off) \
	_Static_assert(__builtin_offsetof(struct type, field) == (off), \
		       #type "." #field " moved")
_Static_assert(sizeof(struct flushlog_super) == FLUSHLOG_HEADER_SIZE,
	       "flushlog_super must be 512 bytes");
_Static_assert(sizeof(struct flushlog_entry) == FLUSHLOG_HEADER_SIZE,
	       "flushlog_entry must be 512 bytes");
FLUSHLOG_CHECK_OFFSET(flushlog_super, log_block_size, 16);
FLUSHLOG_CHECK_OFFSET(flushlog_super, nr_entries, 40);
FLUSHLOG_CHECK_OFFSET(flushlog_super, state, 56);
FLUSHLOG_CHECK_OFFSET(flushlog_super, uuid, 64);
FLUSHLOG_CHECK_OFFSET(flushlog_super, log_id, 80);
FLUSHLOG_CHECK_OFFSET(flushlog_super, nr_devices, 96);
FLUSHLOG_CHECK_OFFSET(flushlog_super, devices, 104);
FLUSHLOG_CHECK_OFFSET(flushlog_super, reserved, 360);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, seq, 16);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, nr_sectors, 32);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, op, 40);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, data_crc, 44);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, submit_tick, 48);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, label_len, 72);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, device, 76);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, label, 80);
FLUSHLOG_CHECK_OFFSET(flushlog_entry, reserved, 144);
#undef FLUSHLOG_CHECK_OFFSET
#endif /* __cplusplus */

#endif /* _UAPI_LINUX_DM_FLUSHLOG_H */
