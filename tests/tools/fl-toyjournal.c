// SPDX-License-Identifier: GPL-2.0
/*
 * fl-toyjournal: a tiny journal on a raw block device, with one correct
 * way of committing and broken ones, and a checker for its on-disk state:
 * the writer that crash tests must catch (or, for modes whose breakage
 * lies inside a flush epoch, the one that the flush-boundary model cannot).
 *
 *   fl-toyjournal write DEV MODE [NR_TX]
 *   fl-toyjournal check IMAGE
 *
 * Transaction i owns 4 KiB blocks 1 + i * 5 .. 5 + i * 5: four journal
 * blocks, then a commit block holding a magic, i and the CRC32C of the
 * four.  A state is consistent when every commit block that is there
 * matches its journal blocks.  Modes:
 *   correct       journal writes, wait, flush, commit with FUA
 *   commit-first  commit (FUA) before the journal writes
 *   no-wait       commit (flush + FUA) while the journal writes are still
 *                 in flight (they are held back until it completed)
 *   no-flush      journal writes, wait, commit with FUA but no flush
 *   same-epoch    journal writes, wait, commit without FUA, one flush
 *                 after: wrong, but every flush boundary looks right
 *   first-epoch   correct, but for transaction 0: its journal writes and
 *                 commit with no flush or FUA at all, the first flush
 *                 only after them: the one defect lies in the first epoch,
 *                 before any crash point but the start
 *   trust-discard correct transactions, then the journal emptied with a
 *                 discard (and a flush) and transaction 0 written again,
 *                 in generation 1: it trusts the discard to zero the old
 *                 records, which a device need not do
 *
 * Commit blocks carry a generation (0, or 1 after trust-discard emptied
 * the journal): recovery reads transactions from 0 up to the first slot
 * without a commit, and one of an older generation than transaction 0's
 * is a stale record it would replay.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

#include "checksum.h"
#include "flushlog.h"

#define BLOCK		4096
#define JOURNAL_BLOCKS	4
#define TX_BLOCKS	(JOURNAL_BLOCKS + 1)
#define COMMIT_MAGIC	0x54494d4d4f43594fULL	/* "OYCOMMIT" */

struct commit_block {
	uint64_t magic;
	uint64_t txid;
	uint32_t crc;
	uint32_t gen;		/* the journal's generation */
};

struct journal_write {
	int fd;
	unsigned int tx, block, gen;
	pthread_mutex_t *hold;	/* no-wait: released after the commit */
};

static unsigned char *
block_buf(void)
{
	void *p;

	if (posix_memalign(&p, BLOCK, BLOCK))
		exit(3);
	return p;
}

static void
journal_content(unsigned int tx, unsigned int b, unsigned int gen,
		unsigned char *buf)
{
	for (unsigned int i = 0; i < BLOCK; i++)
		buf[i] = (unsigned char)(tx * 31 + b * 7 + i * 13 + 1 + gen * 101);
}

static off_t
block_offset(unsigned int tx, unsigned int b)
{
	return (off_t)(1 + tx * TX_BLOCKS + b) * BLOCK;
}

static void
must_pwrite(int fd, const void *buf, off_t off)
{
	if (pwrite(fd, buf, BLOCK, off) != BLOCK) {
		perror("fl-toyjournal: pwrite");
		exit(3);
	}
}

static void *
write_journal_block(void *arg)
{
	struct journal_write *jw = arg;
	unsigned char *buf = block_buf();

	if (jw->hold) {
		pthread_mutex_lock(jw->hold);
		pthread_mutex_unlock(jw->hold);
	}
	journal_content(jw->tx, jw->block, jw->gen, buf);
	must_pwrite(jw->fd, buf, block_offset(jw->tx, jw->block));
	free(buf);
	return NULL;
}

static uint32_t
journal_crc(unsigned int tx, unsigned int gen)
{
	unsigned char *buf = block_buf();
	uint32_t crc = ~0U;

	for (unsigned int b = 0; b < JOURNAL_BLOCKS; b++) {
		journal_content(tx, b, gen, buf);
		crc = fl_crc32c_update(crc, buf, BLOCK);
	}
	free(buf);
	return ~crc;
}

static void
write_commit(int fd, int fua_fd, unsigned int tx, unsigned int gen)
{
	unsigned char *buf = block_buf();
	struct commit_block c = {
		.magic = COMMIT_MAGIC, .txid = tx, .crc = journal_crc(tx, gen),
		.gen = gen,
	};

	memset(buf, 0, BLOCK);
	memcpy(buf, &c, sizeof(c));
	must_pwrite(fua_fd >= 0 ? fua_fd : fd, buf,
		    block_offset(tx, JOURNAL_BLOCKS));
	free(buf);
}

static void
flush(int fd)
{
	if (fdatasync(fd)) {
		perror("fl-toyjournal: fdatasync");
		exit(3);
	}
}

/* The journal writes of one transaction, in threads; joined unless held. */
static void
journal_writes(int fd, unsigned int tx, unsigned int gen, pthread_mutex_t *hold,
	       pthread_t *threads, struct journal_write *jw)
{
	for (unsigned int b = 0; b < JOURNAL_BLOCKS; b++) {
		jw[b] = (struct journal_write) { fd, tx, b, gen, hold };
		if (pthread_create(&threads[b], NULL, write_journal_block, &jw[b]))
			exit(3);
	}
	if (hold)
		return;
	for (unsigned int b = 0; b < JOURNAL_BLOCKS; b++)
		pthread_join(threads[b], NULL);
}

/*
 * Empty the journal with a discard, trusting it to leave zeroes, and
 * start generation 1 with transaction 0: recovery stops at the first slot
 * without a commit, which only a zeroing device guarantees is slot 1.
 */
static void
empty_by_discard(int fd, int fua_fd, unsigned int nr_tx, pthread_t *threads,
		 struct journal_write *jw)
{
	uint64_t range[2] = { BLOCK, (uint64_t)nr_tx * TX_BLOCKS * BLOCK };

	if (ioctl(fd, BLKDISCARD, range)) {
		perror("fl-toyjournal: BLKDISCARD");
		exit(3);
	}
	flush(fd);
	journal_writes(fd, 0, 1, NULL, threads, jw);
	flush(fd);
	write_commit(fd, fua_fd, 0, 1);
}

static int
do_write(const char *dev, const char *mode, unsigned int nr_tx)
{
	int fd = open(dev, O_WRONLY | O_DIRECT);
	int fua_fd = open(dev, O_WRONLY | O_DIRECT | O_DSYNC);
	struct journal_write jw[JOURNAL_BLOCKS];
	pthread_t threads[JOURNAL_BLOCKS];
	pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;

	if (fd < 0 || fua_fd < 0) {
		fprintf(stderr, "fl-toyjournal: cannot open '%s': %s\n", dev,
			strerror(errno));
		return 3;
	}
	for (unsigned int tx = 0; tx < nr_tx; tx++) {
		if (!strcmp(mode, "correct") || !strcmp(mode, "trust-discard")) {
			journal_writes(fd, tx, 0, NULL, threads, jw);
			flush(fd);
			write_commit(fd, fua_fd, tx, 0);
		} else if (!strcmp(mode, "commit-first")) {
			write_commit(fd, fua_fd, tx, 0);
			journal_writes(fd, tx, 0, NULL, threads, jw);
			flush(fd);
		} else if (!strcmp(mode, "no-wait")) {
			pthread_mutex_lock(&hold);
			journal_writes(fd, tx, 0, &hold, threads, jw);
			flush(fd);
			write_commit(fd, fua_fd, tx, 0);
			pthread_mutex_unlock(&hold);
			for (unsigned int b = 0; b < JOURNAL_BLOCKS; b++)
				pthread_join(threads[b], NULL);
			flush(fd);
		} else if (!strcmp(mode, "no-flush")) {
			journal_writes(fd, tx, 0, NULL, threads, jw);
			write_commit(fd, fua_fd, tx, 0);
		} else if (!strcmp(mode, "first-epoch") && tx == 0) {
			journal_writes(fd, tx, 0, NULL, threads, jw);
			write_commit(fd, -1, tx, 0);
			flush(fd);
		} else if (!strcmp(mode, "first-epoch")) {
			journal_writes(fd, tx, 0, NULL, threads, jw);
			flush(fd);
			write_commit(fd, fua_fd, tx, 0);
		} else if (!strcmp(mode, "same-epoch")) {
			journal_writes(fd, tx, 0, NULL, threads, jw);
			write_commit(fd, -1, tx, 0);
			flush(fd);
		} else {
			fprintf(stderr, "fl-toyjournal: unknown mode '%s'\n", mode);
			return 2;
		}
	}
	if (!strcmp(mode, "trust-discard"))
		empty_by_discard(fd, fua_fd, nr_tx, threads, jw);
	flush(fd);
	close(fd);
	close(fua_fd);
	return 0;
}

static int
do_check(const char *path)
{
	unsigned char *buf = block_buf();
	int fd = open(path, O_RDONLY), bad = 0;
	bool in_run = true;	/* every slot so far had a commit */
	uint32_t gen0 = 0;
	struct commit_block c;

	if (fd < 0) {
		fprintf(stderr, "fl-toyjournal: cannot open '%s': %s\n", path,
			strerror(errno));
		return 3;
	}
	for (unsigned int tx = 0;; tx++) {
		uint32_t crc = ~0U;

		if (pread(fd, buf, BLOCK, block_offset(tx, JOURNAL_BLOCKS)) != BLOCK)
			break;
		memcpy(&c, buf, sizeof(c));
		if (c.magic != COMMIT_MAGIC) {
			in_run = false;
			continue;
		}
		if (!tx)
			gen0 = c.gen;
		if (in_run && c.gen < gen0) {
			printf("transaction %u: a stale record of generation %u after generation %u's transaction 0: recovery would replay it\n",
			       tx, c.gen, gen0);
			bad = 1;
		}
		for (unsigned int b = 0; b < JOURNAL_BLOCKS; b++) {
			if (pread(fd, buf, BLOCK, block_offset(tx, b)) != BLOCK)
				return 3;
			crc = fl_crc32c_update(crc, buf, BLOCK);
		}
		if (c.txid != tx || ~crc != c.crc) {
			printf("transaction %u: committed, but its journal blocks do not match its checksum\n",
			       tx);
			bad = 1;
		}
	}
	free(buf);
	close(fd);
	return bad;
}

int
main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "write"))
		return do_write(argv[2], argv[3],
				argc > 4 ? (unsigned int)atoi(argv[4]) : 8);
	if (argc == 3 && !strcmp(argv[1], "check"))
		return do_check(argv[2]);
	fprintf(stderr, "usage: fl-toyjournal write DEV MODE [NR_TX] | check IMAGE\n");
	return 2;
}
