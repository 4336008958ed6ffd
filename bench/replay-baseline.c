// SPDX-License-Identifier: GPL-2.0
/*
 * replay-baseline: what fstests' replay-log does, as the yardstick for
 * flushlog replay.  One plain loop over the log in file order: pread an
 * entry's header block, pread its data into one buffer, pwrite it to the
 * image.  No index, no ordering, no read-ahead of its own; discards punch
 * a hole.  With -k it also checks each flushlog entry's data checksum
 * (CRC32C or XXH64, as the super block says) before writing it, the
 * least a replay that verifies can do.
 *
 * It reads a dm-log-writes log, or a flushlog log whose file order is the
 * order to apply (version 1, or a version 2 log written without
 * concurrency, as bench/gen-replay's is): a yardstick, not a replay tool.
 *
 * usage: replay-baseline [-c] [-k] LOG IMAGE
 *   -c  create IMAGE anew (empty; a flushlog log's is sized to its device
 *       first, as flushlog does), else write onto it as it is
 *   -k  verify the flushlog format's data checksums
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "checksum.h"
#include "flushlog.h"

#define LW_MAGIC	0x6a736677736872ULL
#define LW_FLUSH	(1U << 0)
#define LW_DISCARD	(1U << 2)
#define LW_MARK		(1U << 3)

struct lw_super {
	__le64 magic, version, nr_entries;
	__le32 sectorsize;
} __attribute__((packed));

struct lw_entry {
	__le64 sector, nr_sectors, flags, data_len;
};

/* One entry as the loop sees it, whichever the format. */
struct step {
	uint64_t dst, len;	/* image bytes */
	uint64_t data_len;	/* bytes of data that follow the header */
	uint64_t slot;		/* header and data, padded: to the next entry */
	bool discard;
	bool has_crc;
	bool xxh64;		/* the crc is XXH64's low 32 bits, not CRC32C */
	uint32_t crc;
};

static int log_fd, image_fd;
static unsigned char *buf;
static size_t buf_cap;
static bool verify, create;

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "replay-baseline: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
read_at(void *p, size_t len, uint64_t off)
{
	ssize_t n = pread(log_fd, p, len, (off_t)off);

	if (n != (ssize_t)len)
		die("cannot read %zu bytes of log at %" PRIu64 ": %s", len, off,
		    n < 0 ? strerror(errno) : "short read");
}

static void
data_buffer(size_t len)
{
	if (len <= buf_cap)
		return;
	free(buf);
	buf = malloc(len);
	if (!buf)
		die("out of memory for %zu bytes", len);
	buf_cap = len;
}

static void
apply(const struct step *s, uint64_t seq, uint64_t off, uint32_t block)
{
	if (s->discard) {
		if (fallocate(image_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)s->dst, (off_t)s->len))
			die("entry %" PRIu64 ": cannot punch a hole: %s", seq,
			    strerror(errno));
		return;
	}
	if (!s->data_len)
		return;
	data_buffer(s->data_len);
	read_at(buf, s->data_len, off + block);
	if (verify && s->has_crc &&
	    (s->xxh64 ? (uint32_t)fl_xxh64(buf, s->data_len) :
	     fl_crc32c(buf, s->data_len)) != s->crc)
		die("entry %" PRIu64 " at offset %" PRIu64 ": data checksum mismatch",
		    seq, off);
	if (pwrite(image_fd, buf, s->data_len, (off_t)s->dst) !=
	    (ssize_t)s->data_len)
		die("entry %" PRIu64 ": cannot write the image: %s", seq,
		    strerror(errno));
}

static void
replay_log_writes(const unsigned char *sb_block)
{
	struct lw_super sb;
	uint64_t off, n;
	uint32_t ss;

	memcpy(&sb, sb_block, sizeof(sb));
	ss = le32toh(sb.sectorsize);
	n = le64toh(sb.nr_entries);
	if (ss < 512 || ss > FLUSHLOG_MAX_BLOCK_SIZE)
		die("bad sector size %u", ss);
	data_buffer(ss);
	off = ss;
	for (uint64_t seq = 0; seq < n; seq++) {
		struct step s = { 0 };
		struct lw_entry h;
		uint64_t flags;

		read_at(buf, ss, off);		/* the header's whole unit */
		memcpy(&h, buf, sizeof(h));
		flags = le64toh(h.flags);
		s.dst = le64toh(h.sector) * ss;
		s.len = le64toh(h.nr_sectors) * ss;
		s.discard = flags & LW_DISCARD;
		if (!(flags & (LW_DISCARD | LW_MARK)))
			s.data_len = s.len;
		apply(&s, seq, off, ss);
		off += ss + s.data_len;
	}
}

static void
replay_flushlog(const unsigned char *sb_block)
{
	struct flushlog_super sb;
	uint64_t off, n;
	uint32_t block;

	memcpy(&sb, sb_block, sizeof(sb));
	block = le32toh(sb.log_block_size);
	n = le64toh(sb.nr_entries);
	if (block < 512 || block > FLUSHLOG_MAX_BLOCK_SIZE)
		die("bad log block size %u", block);
	/* as flushlog does: a new image is the device's size from the start */
	if (create && ftruncate(image_fd, (off_t)(le64toh(sb.data_sectors) <<
						  FLUSHLOG_SECTOR_SHIFT)))
		die("cannot size the image: %s", strerror(errno));
	data_buffer(block);
	off = block;
	for (uint64_t seq = 0; seq < n; seq++) {
		struct step s = { 0 };
		struct flushlog_entry h;
		unsigned int op;

		read_at(buf, block, off);
		memcpy(&h, buf, sizeof(h));
		op = le16toh(h.op);
		s.dst = le64toh(h.sector) << FLUSHLOG_SECTOR_SHIFT;
		s.len = (uint64_t)le32toh(h.nr_sectors) << FLUSHLOG_SECTOR_SHIFT;
		s.data_len = le32toh(h.data_len);
		s.discard = op >= FLUSHLOG_OP_DISCARD &&
			    op <= FLUSHLOG_OP_SECURE_ERASE;
		s.has_crc = true;
		s.xxh64 = le32toh(sb.flags) & FLUSHLOG_SF_DATA_XXH64;
		s.crc = le32toh(h.data_crc);
		apply(&s, seq, off, block);
		off += block + ((s.data_len + block - 1) & ~(uint64_t)(block - 1));
	}
}

int
main(int argc, char **argv)
{
	unsigned char sb[FLUSHLOG_HEADER_SIZE];
	int flags = O_WRONLY | O_CLOEXEC, c;
	uint64_t magic;

	while ((c = getopt(argc, argv, "ck")) != -1) {
		switch (c) {
		case 'c':
			flags |= O_CREAT | O_TRUNC;
			create = true;
			break;
		case 'k':
			verify = true;
			break;
		default:
			die("usage: replay-baseline [-c] [-k] LOG IMAGE");
		}
	}
	if (argc - optind != 2)
		die("usage: replay-baseline [-c] [-k] LOG IMAGE");
	log_fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
	if (log_fd < 0)
		die("cannot open '%s': %s", argv[optind], strerror(errno));
	image_fd = open(argv[optind + 1], flags, 0644);
	if (image_fd < 0)
		die("cannot open '%s': %s", argv[optind + 1], strerror(errno));
	read_at(sb, sizeof(sb), 0);
	memcpy(&magic, sb, sizeof(magic));
	if (le64toh(magic) == LW_MAGIC)
		replay_log_writes(sb);
	else if (le64toh(magic) == FLUSHLOG_SUPER_MAGIC)
		replay_flushlog(sb);
	else
		die("'%s' is not a log", argv[optind]);
	if (close(image_fd))
		die("cannot write the image: %s", strerror(errno));
	return 0;
}
