/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libFuzzer harnesses share: handing an input to fl_log_open()
 * (which opens logs by path) through a memfd, making a mutated flushlog
 * log's checksums right again so that the fuzzer gets past them, and an
 * assertion that libFuzzer reports as a crash.
 */
#ifndef FLUSHLOG_FUZZ_H
#define FLUSHLOG_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checksum.h"
#include "flushlog.h"
#include "internal.h"	/* a fuzzer checks the index inside */

/* A broken invariant is a finding: abort, and libFuzzer saves the input. */
#define FUZZ_ASSERT(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant broken: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* Inputs past this are skipped: -max_len keeps the fuzzer below it. */
#define FUZZ_MAX_INPUT	(1U << 20)

struct fuzz_file {
	int fd;
	char path[64];		/* /proc/self/fd/N: a path for fl_log_open */
};

/* One memfd per harness, rewritten for every input. */
static inline void
fuzz_file_init(struct fuzz_file *f, const char *name)
{
	f->fd = memfd_create(name, MFD_CLOEXEC);
	FUZZ_ASSERT(f->fd >= 0);
	snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
}

static inline void
fuzz_file_set(struct fuzz_file *f, const void *data, size_t size)
{
	FUZZ_ASSERT(ftruncate(f->fd, 0) == 0);
	FUZZ_ASSERT(pwrite(f->fd, data, size, 0) == (ssize_t)size);
}

/* A sparse image of bytes bytes, all zeroes. */
static inline void
fuzz_file_zero(struct fuzz_file *f, uint64_t bytes)
{
	FUZZ_ASSERT(ftruncate(f->fd, 0) == 0);
	FUZZ_ASSERT(ftruncate(f->fd, (off_t)bytes) == 0);
}

static inline void
fuzz_set_crc(unsigned char *hdr, size_t crc_offset)
{
	uint32_t crc = 0;

	memcpy(hdr + crc_offset, &crc, sizeof(crc));
	crc = htole32(fl_crc32c(hdr, FLUSHLOG_HEADER_SIZE));
	memcpy(hdr + crc_offset, &crc, sizeof(crc));
}

/*
 * Recompute the super block's checksum and, walking the entries as the
 * reader does, each header's and data's: a mutated field then reaches
 * the checks behind the checksums.  Returns whether buf is a flushlog
 * log at all (else it is left as it was).
 */
static inline bool
fuzz_fix_checksums(unsigned char *buf, size_t size)
{
	struct flushlog_super sb;
	uint64_t off, bs;

	if (size < sizeof(sb))
		return false;
	memcpy(&sb, buf, sizeof(sb));
	if (fl_le64(sb.magic) != FLUSHLOG_SUPER_MAGIC)
		return false;
	fuzz_set_crc(buf, offsetof(struct flushlog_super, crc));
	bs = fl_le32(sb.log_block_size);
	if (bs < FLUSHLOG_MIN_BLOCK_SIZE || bs > FLUSHLOG_MAX_BLOCK_SIZE ||
	    (bs & (bs - 1)))
		return true;
	for (off = bs; off < size && size - off >= bs;) {
		unsigned char *hdr = buf + off;
		struct flushlog_entry h;
		uint32_t len, crc;

		memcpy(&h, hdr, sizeof(h));
		if (fl_le32(h.magic) != FLUSHLOG_ENTRY_MAGIC)
			break;
		len = fl_le32(h.data_len);
		if (size - off - bs >= len) {
			crc = htole32(fl_crc32c(hdr + bs, len));
			memcpy(hdr + offsetof(struct flushlog_entry, data_crc),
			       &crc, sizeof(crc));
		}
		fuzz_set_crc(hdr, offsetof(struct flushlog_entry, crc));
		off += bs + (((uint64_t)len + bs - 1) & ~(bs - 1));
	}
	return true;
}

#endif /* FLUSHLOG_FUZZ_H */
