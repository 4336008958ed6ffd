// SPDX-License-Identifier: GPL-2.0
/*
 * checksum-speed: the reader's cost of each data checksum the format
 * knows, on the library's own functions (userspace/lib/crc32c.c and
 * xxh64.c): GB/s over a 1 MiB buffer of random bytes, hot in the cache,
 * the median of ROUNDS rounds of 1 GiB each, the two taking turns.  Run it
 * with FLUSHLOG_NO_HW_CRC=1 for the table CRC32C a reader without SSE4.2
 * falls back to.
 *
 * usage: checksum-speed [ROUNDS]   (default 5)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "checksum.h"

#define BUF_SIZE	(1 << 20)
#define PASSES		1024		/* 1 GiB a round */
#define MAX_ROUNDS	99

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* seconds for PASSES checksums of buf; sink keeps the calls alive */
static double
round_crc32c(const unsigned char *buf, uint64_t *sink)
{
	double start = now();

	for (int i = 0; i < PASSES; i++)
		*sink += fl_crc32c(buf, BUF_SIZE);
	return now() - start;
}

static double
round_xxh64(const unsigned char *buf, uint64_t *sink)
{
	double start = now();

	for (int i = 0; i < PASSES; i++)
		*sink += (uint32_t)fl_xxh64(buf, BUF_SIZE);
	return now() - start;
}

int
main(int argc, char **argv)
{
	double crc[MAX_ROUNDS], xxh[MAX_ROUNDS], gib = PASSES / 1024.0;
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	unsigned char *buf = malloc(BUF_SIZE);
	uint64_t sink = 0;

	if (!buf || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: checksum-speed [ROUNDS]   (1 to %d)\n", MAX_ROUNDS);
		return 2;
	}
	srandom(1);
	for (int i = 0; i < BUF_SIZE; i++)
		buf[i] = random();
	round_crc32c(buf, &sink);	/* warm up: tables, cache, clock */
	round_xxh64(buf, &sink);
	for (int r = 0; r < rounds; r++) {
		crc[r] = round_crc32c(buf, &sink);
		xxh[r] = round_xxh64(buf, &sink);
	}
	qsort(crc, rounds, sizeof(*crc), cmp_double);
	qsort(xxh, rounds, sizeof(*xxh), cmp_double);
	printf("crc32c %.2f GiB/s, xxh64 %.2f GiB/s (1 MiB buffers, median of %d; sink %x)\n",
	       gib / crc[rounds / 2], gib / xxh[rounds / 2], rounds, (unsigned)(sink & 0xff));
	free(buf);
	return 0;
}
