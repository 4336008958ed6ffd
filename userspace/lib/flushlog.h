/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libflushlog: read, index and replay write logs made by dm-flushlog (and
 * by the kernel's dm-log-writes target, or QEMU's blklogwrites driver).
 *
 * The library never prints and never exits: functions return 0 or a
 * negative errno and describe failures in a struct fl_error.  Build with
 * $(pkg-config --cflags --libs libflushlog); see libflushlog(3).
 *
 * How the ABI grows without breaking (libflushlog.so.1 keeps working for
 * programs built against an older flushlog.h):
 * - The structs the library hands out (fl_log_info, fl_counts, fl_entry,
 *   fl_point, fl_device) may gain fields at their end in a later minor
 *   version.  1.1 added fl_entry.device, fl_log_info.nr_devices and
 *   .image_sectors, struct fl_device, fl_log_device() and
 *   fl_replay_open_device(): a program that uses them needs 1.1
 *   (fl_version()), as its symbols say.  1.2 added fl_counts.resizes and
 *   .failed, and fl_device.first_sectors (a log with RESIZE entries).
 *   1.3 added the fl_log_open() flag FL_OPEN_LOGGED_ORDER, which an older
 *   library ignores: a program that needs it checks fl_version().
 *   1.4 added fl_log_promises(), 1.5 fl_state_contents_name().
 *   Reach each through the pointer the library returns, one at a time:
 *   never step a pointer from one to the next, never rely on their
 *   sizeof.  The library never takes one of them back as an argument.
 * - What may grow in other ways is opaque: the log, a replay, lists of
 *   points and of states, a state, a state image.
 * - The structs a caller fills in (fl_state_opts, fl_replay_stats) go with
 *   their size, as openat2(2)'s do: fields past that size take their zero
 *   defaults (or are not written); a larger struct whose unknown fields are
 *   not all zero is refused with -E2BIG.
 * - struct fl_error is the exception: callers keep one on the stack for
 *   every call, so its size and layout are fixed for libflushlog.so.1;
 *   a later field takes spare room.  A message longer than msg is cut at
 *   a UTF-8 character boundary and ends in "...".
 */
#ifndef FLUSHLOG_H
#define FLUSHLOG_H

/*
 * The library's version: the soname is libflushlog.so.MAJOR, and MAJOR
 * changes only when the ABI breaks.  fl_version() says which version a
 * program runs with, FL_LIB_VERSION which it was built against.
 */
#define FL_LIB_VERSION_MAJOR	1
#define FL_LIB_VERSION_MINOR	5
#define FL_LIB_VERSION_PATCH	0
#define FL_LIB_VERSION	(FL_LIB_VERSION_MAJOR * 10000 + \
			 FL_LIB_VERSION_MINOR * 100 + FL_LIB_VERSION_PATCH)

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/dm-flushlog.h>

/* The format's fields in host order. */
#define fl_le16(x)	le16toh(x)
#define fl_le32(x)	le32toh(x)
#define fl_le64(x)	le64toh(x)

/* "1.2.0": the version of the library this program runs with */
const char *fl_version(void);

enum fl_format {
	FL_FORMAT_FLUSHLOG = 1,		/* dm-flushlog, this header's format */
	FL_FORMAT_LOG_WRITES = 2,	/* dm-log-writes / QEMU blklogwrites */
};

/*
 * The versions read: dm-flushlog's FLUSHLOG_VERSION_DURABILITY_ORDER to
 * FLUSHLOG_VERSION (<linux/dm-flushlog.h>), and dm-log-writes' one.
 */
#define FL_LOG_WRITES_VERSION	1

/* What an error is about, so a caller can tell a bad log from the rest. */
enum fl_error_source {
	FL_ERR_NONE = 0,
	FL_ERR_LOG,		/* the log is corrupt or torn */
	FL_ERR_ARG,		/* a bad argument, or a request the log cannot meet */
	FL_ERR_OUTPUT,		/* the image (the replay's target) failed */
	FL_ERR_IO,		/* the log could not be opened or read */
	FL_ERR_NOMEM,		/* out of memory */
};

#define FL_NO_ENTRY	UINT64_MAX

struct fl_error {
	enum fl_error_source source;
	uint64_t entry;		/* entry concerned, or FL_NO_ENTRY */
	uint64_t offset;	/* byte offset in the log, or FL_NO_ENTRY */
	char msg[512];		/* what went wrong, lowercase, no full stop */
	uint64_t spare[8];	/* room for later fields; zeroed on error */
};

/* Derived index bit in fl_entry.flags, beside FLUSHLOG_F_*. */
#define FL_ENTRY_CRASH_POINT	(1U << 15)	/* a crash point ends here */
/* issued after a later entry completed: where they overlap, it wins */
#define FL_ENTRY_OVERTAKES	(1U << 14)

/*
 * One index entry per log entry, whatever the data size.
 * Fields use the native format's units (512-byte sectors, FLUSHLOG_OP_*)
 * whichever format the log is in.
 *
 * The index is in durability order, the order replay applies: an entry's
 * number (its place in the index) is what "entry:N", points, states and
 * messages about an open log name.  A version 2 or 3 log stores its
 * entries in completion order, so there seq, the entry's number in the
 * log file (the CLI's logged_seq), differs, as it does in a dm-log-writes
 * log for a write with PREFLUSH and not FUA, whose data waits for the
 * next flush, and the crash points it passes; offset always locates its
 * bytes.  While a log is being read, before its order is known, messages
 * name entries by seq.
 */
struct fl_entry {
	uint64_t offset;	/* byte offset of the entry header in the log */
	uint64_t seq;		/* entry number in the log: 0, 1, 2, ... */
	uint64_t sector;	/* first data-device sector */
	uint64_t submit_tick;
	uint64_t complete_tick;
	uint32_t nr_sectors;
	uint32_t data_len;	/* bytes of data in the log */
	uint32_t data_crc;	/* 0 where the format has none */
	uint16_t op;		/* enum flushlog_op */
	uint16_t flags;		/* FLUSHLOG_F_* | FL_ENTRY_CRASH_POINT */
	uint32_t device;	/* data device: 0 but in a version 3 log */
};

/*
 * crash_points: the entries that end a crash point, two fewer than the
 * crash points fl_log_points() lists (the start and the end).
 */
struct fl_counts {
	uint64_t writes, flushes, fua, discards, write_zeroes, secure_erases;
	uint64_t marks, crash_points, data_bytes;
	uint64_t resizes;	/* RESIZE entries (1.2) */
	uint64_t failed;	/* entries of bios that failed, F_FAILED (1.2) */
};

struct fl_log_info {
	enum fl_format format;
	unsigned int version;
	uint32_t log_block_size;	/* bytes per log block */
	uint32_t data_block_size;	/* data device's logical block size */
	uint64_t data_sectors;		/* data device size, sectors */
	bool data_size_known;		/* false: data_sectors = highest used */
	uint64_t log_bytes;		/* size of the log file or device */
	uint64_t used_bytes;		/* through the end of the last entry */
	uint64_t super_entries;		/* entry count the super block states */
	uint64_t nr_entries;		/* valid entries found */
	bool clean;			/* closed cleanly (always for log-writes) */
	uint32_t super_flags;		/* FLUSHLOG_SF_* */
	uint8_t uuid[16];
	uint64_t create_time_ns;
	bool has_ticks;			/* submit/complete order is recorded */
	bool data_verified;		/* every data checksum was checked */
	bool order_verified;		/* durability order was checked */
	bool torn;			/* a dirty log ended in a partial entry */
	uint64_t torn_entry;		/* its seq: entries before it */
	uint64_t torn_offset;
	char torn_reason[256];
	uint64_t index_bytes;		/* memory the index takes */
	uint32_t nr_devices;		/* data devices; 1 but in version 3 */
	uint64_t image_sectors;		/* of an image of all devices */
};

/*
 * A data device of the log; device 0's figures are also in fl_log_info.
 * An image of the log (fl_replay_open(), states, check) holds every
 * device, one after another from image_sector on, each 4 KiB aligned:
 * for one device, the device itself.
 */
struct fl_device {
	uint64_t sectors;		/* its largest size (see data_size_known) */
	uint32_t block_size;		/* its logical block size */
	uint64_t image_sector;		/* where it starts in an image */
	/*
	 * Its size when first listed (1.2): RESIZE entries change it, and
	 * an image holds the largest, sectors.
	 */
	uint64_t first_sectors;
};

#define FL_ALL_DEVICES	UINT32_MAX	/* fl_replay_open_device(): all */

struct fl_log;

/* fl_log_open() flags */
#define FL_OPEN_VERIFY_DATA	(1U << 0)	/* check every data CRC now */
#define FL_OPEN_CHECK_ORDER	(1U << 1)	/* check durability order */
/*
 * Keep a dm-log-writes log's entries in the order they were logged, the
 * order its own replay-log applies them (flushlog replay-log): entry N is
 * then the N-th entry in the log, seq N.  Without it, the data of a write
 * with PREFLUSH and not FUA moves to the next flush (see struct fl_entry).
 * Such a write's flush is then no crash point: the points and states of a
 * log opened so are not the crash's, only its replay in logged order is.
 * No effect on a flushlog log.  A library older than 1.3 ignores the flag.
 */
#define FL_OPEN_LOGGED_ORDER	(1U << 2)

int fl_log_open(const char *path, unsigned int flags, struct fl_log **logp,
		struct fl_error *err);
/* The same from an open file descriptor, which stays the caller's. */
int fl_log_open_fd(int fd, unsigned int flags, struct fl_log **logp,
		   struct fl_error *err);
void fl_log_close(struct fl_log *log);
const struct fl_log_info *fl_log_info(const struct fl_log *log);
/* How many entries of each kind the log holds. */
const struct fl_counts *fl_log_counts(const struct fl_log *log);
/* Entry number (0 to nr_entries - 1, durability order); NULL past the end. */
const struct fl_entry *fl_log_entry(const struct fl_log *log, uint64_t number);
/* Data device 0 to nr_devices - 1; NULL past the end. */
const struct fl_device *fl_log_device(const struct fl_log *log,
				      uint32_t device);
/* The label of a MARK entry, NUL-terminated; "" for any other entry. */
const char *fl_log_label(const struct fl_log *log, uint64_t entry);
const char *fl_format_name(enum fl_format format);
const char *fl_op_name(unsigned int op);

/*
 * Crash points.  A point is where a crash may stop the log; its state is
 * the replay of the first nr_applied entries (0 = the base image).  The
 * start, before any entry, is point 0: a crash before the first flush
 * leaves the base and whatever of the first epoch reached the media.
 * Points 1, 2, ... end at entries, the end point last.
 */
enum fl_point_kind {
	FL_POINT_START,		/* before any entry */
	FL_POINT_FLUSH,		/* a cache flush completed */
	FL_POINT_FUA,		/* a FUA write completed */
	FL_POINT_MARK,		/* a user's mark */
	FL_POINT_END,		/* after the last entry */
};

struct fl_point {
	uint64_t number;	/* 0 (the start), 1, 2, ...: "point:N" */
	enum fl_point_kind kind;
	uint64_t nr_applied;	/* entries replayed to reach this state */
	uint64_t flush_number;	/* "flush:K" for FLUSH and FUA points, else 0 */
};

const char *fl_point_kind_name(enum fl_point_kind kind);

/* A list of crash points, in log order. */
struct fl_points;

/* All crash points of the log: the start first, the end last. */
int fl_log_points(const struct fl_log *log, struct fl_points **points,
		  struct fl_error *err);
size_t fl_points_count(const struct fl_points *points);
/* Point i of the list (0 to count - 1); NULL past the end. */
const struct fl_point *fl_points_get(const struct fl_points *points, size_t i);
/*
 * The points of some kinds (a mask of FL_POINT_BIT(kind)) at positions
 * from to to (numbers of applied entries; UINT64_MAX: to the end).  The
 * start is a crash point too: the point at from, or where from is no
 * point's (entry:N), a start point of its own there (number 0).  A to
 * before from is refused with -EINVAL.
 */
#define FL_POINT_BIT(kind)	(1U << (kind))
int fl_points_select(const struct fl_points *all, unsigned int kinds,
		     uint64_t from, uint64_t to, struct fl_points **chosen,
		     struct fl_error *err);
void fl_points_free(struct fl_points *points);
/*
 * Resolve "start", "end", "entry:N", "flush:K", "point:K" (point:0 is the
 * start) or "mark:LABEL" to a number of entries to apply.
 */
int fl_log_resolve_point(const struct fl_log *log, const char *spec,
			 uint64_t *nr_applied, struct fl_error *err);

/*
 * Incremental replay onto an image (regular file or block device):
 * fl_replay_to(r, n) applies the entries from the current position up to
 * n, so stepping through points costs one pass over the log in all.
 */
struct fl_replay;

typedef void (*fl_progress_fn)(void *arg, uint64_t done, uint64_t total);

int fl_replay_open(struct fl_log *log, int image_fd, struct fl_replay **rp,
		   struct fl_error *err);
/*
 * The image is data device `device` of the log: only that device's
 * entries reach it, at the places in the joint order the log gives them.
 * FL_ALL_DEVICES: every device, at its fl_device.image_sector, as
 * fl_replay_open() does.
 */
int fl_replay_open_device(struct fl_log *log, uint32_t device, int image_fd,
			  struct fl_replay **rp, struct fl_error *err);
int fl_replay_seek(struct fl_replay *r, uint64_t nr_applied,
		   struct fl_error *err);
int fl_replay_to(struct fl_replay *r, uint64_t nr_applied,
		 struct fl_error *err);
uint64_t fl_replay_position(const struct fl_replay *r);
void fl_replay_set_progress(struct fl_replay *r, fl_progress_fn fn,
			    void *arg);

/* How the data replayed so far reached the image, in bytes. */
struct fl_replay_stats {
	uint64_t cloned_bytes;	/* shared with the log's blocks (a reflink) */
	uint64_t copied_bytes;	/* copied by the kernel (copy_file_range) */
	uint64_t written_bytes;	/* read and written through the library */
};

/*
 * Fills the first size bytes of stats (sizeof(*stats)), and zeroes past
 * what this library knows; below FL_REPLAY_STATS_SIZE_VER0, -EINVAL.
 */
#define FL_REPLAY_STATS_SIZE_VER0	24
int fl_replay_stats(const struct fl_replay *r, struct fl_replay_stats *stats,
		    size_t size);
void fl_replay_close(struct fl_replay *r);

/*
 * Crash states (states.c).  At each crash point, the writes logged later
 * but submitted before the point's epoch ended may be on the media too:
 * the epoch model adds every subset of at most max_reorder of them, the
 * torn model one of them in part (a head or a tail, cut at data block
 * boundaries, at most max_torn cuts a write).  The discard model adds the
 * state in which every discard so far kept its old data (a device need not
 * zero what it is told to discard), where it can differ from the prefix
 * state: a discarded sector held data (a write, or with !zero_base the
 * base's) and was not written since.  Write-zeroes and secure erases are guarantees: they always leave
 * zeroes.  The prefix state of every point is always included.
 *
 * A state is named "N[+E,...][~T:A+L][%]": the first N entries, entries
 * E..., sectors A..A+L-1 of entry T, and with "%" every discard among them
 * ignored, its sectors holding what they held before it.  Names use only
 * digits and "+,~:%": safe unquoted in a shell and as a folder name.
 */
#define FL_STATES_PREFIX	(1U << 0)
#define FL_STATES_EPOCH		(1U << 1)
#define FL_STATES_TORN		(1U << 2)
#define FL_STATES_DISCARD	(1U << 3)
#define FL_STATE_MAX_REORDER	8
#define FL_STATE_NAME_MAX	256
/*
 * At most this many candidate states are listed: more must be sampled
 * (max_states), so that listing never takes more than about 200 MB.
 */
#define FL_STATES_LIMIT		1000000

/*
 * No hidden padding, so that every byte a newer caller may set is one
 * this library checks.  Zero is each field's default.
 */
struct fl_state_opts {
	uint64_t max_states;	/* a deterministic sample size; 0: all */
	uint32_t models;	/* FL_STATES_*; 0: prefix */
	uint32_t max_reorder;	/* epoch: K, 1..FL_STATE_MAX_REORDER; 0: 1 */
	uint32_t max_torn;	/* torn: cuts a write; 0: 1 */
	uint32_t flags;		/* FL_STATE_OPT_* */
};
#define FL_STATE_OPT_ZERO_BASE	(1U << 0)	/* the log began on zeroes */
/* The first struct fl_state_opts: a smaller opts_size is refused. */
#define FL_STATE_OPTS_SIZE_VER0	24

/* One crash state; a list of them. */
struct fl_state;
struct fl_states;

/*
 * The distinct states of the given points, sorted by base;
 * *candidates is how many there were before duplicates were dropped
 * and before sampling.  Counting comes first and costs O(N log N) for N
 * entries; more than FL_STATES_LIMIT candidates without a sample (or a
 * larger sample) is refused with -E2BIG, more than 2^64 with -EOVERFLOW,
 * *candidates set.  opts_size is sizeof(*opts): below
 * FL_STATE_OPTS_SIZE_VER0 it is refused with -EINVAL, a larger struct
 * with a field this library does not know set with -E2BIG and
 * *candidates 0.
 */
int fl_log_states(const struct fl_log *log, const struct fl_points *points,
		  const struct fl_state_opts *opts, size_t opts_size,
		  struct fl_states **states, uint64_t *candidates,
		  struct fl_error *err);
size_t fl_states_count(const struct fl_states *states);
/* State i of the list (0 to count - 1), owned by the list; NULL past the end. */
const struct fl_state *fl_states_get(const struct fl_states *states, size_t i);
void fl_states_free(struct fl_states *states);

/*
 * A state's name; its point: the number of a point of the list given to
 * fl_log_states (a start point fl_points_select added is number 0).
 */
int fl_state_name(const struct fl_state *s, char *buf, size_t len);
/*
 * The name of what a state holds: two states of a log with the same
 * contents name hold the same bytes (a prefix state's counts its entries
 * up to the next that changes data, so that crash points with only marks
 * or empty flushes between them share it).  Different ones may too, by
 * chance: the same data written twice.
 * Since 1.5.
 */
int fl_state_contents_name(const struct fl_log *log, const struct fl_state *s,
			   char *buf, size_t len);
uint64_t fl_state_point(const struct fl_state *s);
/* Entries [0, base) are applied whole, and maybe some later ones. */
uint64_t fl_state_base(const struct fl_state *s);
/* The last entry the state applies (whole or in part), or -1: none. */
int64_t fl_state_last_entry(const struct fl_state *s);
/* "%": its discards left the old data (fl_state_apply_base needs the base). */
bool fl_state_keeps_discards(const struct fl_state *s);
/*
 * Prefix: exactly what the point at position nr_applied guarantees (a
 * reordered state can fold into a plain name without being one).
 */
bool fl_state_is_prefix(const struct fl_state *s, uint64_t nr_applied);
/* Parse a state's name into a new state (fl_state_free). */
int fl_state_parse(const struct fl_log *log, const char *name,
		   struct fl_state **s, struct fl_error *err);
void fl_state_free(struct fl_state *s);
/*
 * Apply a state's extra and torn entries, in log order, to an image that
 * holds the state's first base entries.  A state that keeps discards
 * also gets its discarded sectors back as they were before the discards:
 * from the log, or where no entry wrote them, from base_fd, the image the
 * log began from (-1: it began as zeroes).
 */
int fl_state_apply(struct fl_log *log, int image_fd, const struct fl_state *s,
		   struct fl_error *err);
int fl_state_apply_base(struct fl_log *log, int image_fd, int base_fd,
			const struct fl_state *s, struct fl_error *err);

/*
 * State images (state-image.c): one image file that holds state after
 * state, moving forward through the log, so that a state costs what
 * differs from the one before rather than a copy of the image.  Enter the
 * states in ascending base order (fl_log_states lists them so); an earlier
 * base rebuilds the image from the base.  Entering replays up to the
 * state's base, saves the bytes its extras cover and applies them;
 * leaving puts those bytes back.  The image is sealed while entered: if
 * anything wrote to it (its mtime and ctime tell), leaving rebuilds it from
 * the base instead and returns 1.
 */
struct fl_state_image;

/*
 * Create the image at path (it must not exist), holding base_fd's bytes
 * (-1: zeroes, the logged device's size); removed again by close.
 */
int fl_state_image_open(struct fl_log *log, const char *path, int base_fd,
			struct fl_state_image **imp, struct fl_error *err);
int fl_state_image_enter(struct fl_state_image *im, const struct fl_state *s,
			 struct fl_error *err);
/* 0: undone; 1: it had been written to, and was rebuilt; < 0: an error. */
int fl_state_image_leave(struct fl_state_image *im, struct fl_error *err);
/* A copy of the entered state at path, shared blocks where possible: its fd. */
int fl_state_image_copy(struct fl_state_image *im, const char *path,
			struct fl_error *err);
const char *fl_state_image_path(const struct fl_state_image *im);
/* How often the image was rebuilt from the base. */
uint64_t fl_state_image_rebuilds(const struct fl_state_image *im);
void fl_state_image_close(struct fl_state_image *im);
/* Copy a file, holes kept: only src's data extents are read. */
int fl_copy_sparse(int src, int dst);

/*
 * What a checker may need to know of a state at the point at position
 * nr_applied.  Last mark: the label of the last mark among the point's
 * entries.  After mark: the first mark logged at or after the crash, so
 * that nothing issued after it can be in the state; a prefix state is the
 * crash at its point, another may be a crash as late as the end of the
 * point's epoch.  NULL where there is no such mark.
 */
const char *fl_log_last_mark(const struct fl_log *log, uint64_t nr_applied);
const char *fl_state_after_mark(const struct fl_log *log,
				const struct fl_state *s, uint64_t nr_applied);

/*
 * Promises (docs/applications.md): marks labelled "promise:KEY=VALUE" that a
 * workload logs once it has been told something is durable (KEY: letters,
 * digits and '_', not first a digit; VALUE: not empty).  A crash at the
 * point at position nr_applied owes each key the last value promised
 * before the point.  fn gets every key of the log once, in the order of
 * its first promise, value NULL for a key not promised before the point
 * (key is not NUL-terminated: key_len); a non-zero return stops the walk
 * and is returned; fn NULL only checks the marks.  A "promise:" mark of
 * another form is refused with -EINVAL (FL_ERR_LOG, its entry named);
 * out of memory, -ENOMEM.  Since 1.4.
 */
typedef int (*fl_promise_fn)(void *ctx, const char *key, size_t key_len,
			     const char *value);
int fl_log_promises(const struct fl_log *log, uint64_t nr_applied,
		    fl_promise_fn fn, void *ctx, struct fl_error *err);

/* Fill the image with zeroes over [offset, offset + len). */
int fl_zero_range(int fd, uint64_t offset, uint64_t len, bool is_blockdev);

#endif /* FLUSHLOG_H */
