// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CRC32C (Castagnoli), as the log format defines it: init ~0, reflected,
 * final xor ~0.  On x86-64 with SSE4.2 three independent crc32q streams run
 * side by side and are merged with a precomputed "shift by N zero bytes"
 * operator, since one stream is bound by the instruction's 3-cycle latency
 * (method from Mark Adler's crc32c.c).  Elsewhere a slicing-by-8 table.
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "flushlog.h"

#define CRC32C_POLY	0x82f63b78U	/* reflected */
#define STRIDE_LONG	8192
#define STRIDE_SHORT	256

static uint32_t slice_table[8][256];
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static int have_sse42;

static uint32_t
gf2_matrix_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void
gf2_matrix_square(uint32_t *square, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		square[n] = gf2_matrix_times(mat, mat[n]);
}

/* The operator that appends len zero bytes to a CRC; len a power of two. */
static void
zeros_operator(uint32_t *even, size_t len)
{
	uint32_t odd[32], row = 1;

	odd[0] = CRC32C_POLY;
	for (int n = 1; n < 32; n++, row <<= 1)
		odd[n] = row;
	gf2_matrix_square(even, odd);	/* 2 zero bits */
	gf2_matrix_square(odd, even);	/* 4 zero bits */
	do {
		gf2_matrix_square(even, odd);
		len >>= 1;
		if (!len)
			return;
		gf2_matrix_square(odd, even);
		len >>= 1;
	} while (len);
	memcpy(even, odd, sizeof(odd));
}

static void
zeros_table(uint32_t table[4][256], size_t len)
{
	uint32_t op[32];

	zeros_operator(op, len);
	for (uint32_t n = 0; n < 256; n++) {
		table[0][n] = gf2_matrix_times(op, n);
		table[1][n] = gf2_matrix_times(op, n << 8);
		table[2][n] = gf2_matrix_times(op, n << 16);
		table[3][n] = gf2_matrix_times(op, n << 24);
	}
}

static uint32_t
crc_shift(uint32_t table[4][256], uint32_t crc)
{
	return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^
	       table[2][(crc >> 16) & 0xff] ^ table[3][crc >> 24];
}

static void
init_tables(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t crc = n;

		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ CRC32C_POLY : crc >> 1;
		slice_table[0][n] = crc;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++)
			slice_table[k][n] = (slice_table[k - 1][n] >> 8) ^
				slice_table[0][slice_table[k - 1][n] & 0xff];
	zeros_table(shift_long, STRIDE_LONG);
	zeros_table(shift_short, STRIDE_SHORT);
#if defined(__x86_64__)
	__builtin_cpu_init();
	have_sse42 = __builtin_cpu_supports("sse4.2") &&
		     !getenv("FLUSHLOG_NO_HW_CRC");
#endif
}

static uint32_t
crc32c_sw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = slice_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w = fl_le64(w) ^ crc;
		crc = slice_table[7][w & 0xff] ^
		      slice_table[6][(w >> 8) & 0xff] ^
		      slice_table[5][(w >> 16) & 0xff] ^
		      slice_table[4][(w >> 24) & 0xff] ^
		      slice_table[3][(w >> 32) & 0xff] ^
		      slice_table[2][(w >> 40) & 0xff] ^
		      slice_table[1][(w >> 48) & 0xff] ^
		      slice_table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = slice_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

/* Three interleaved streams of stride bytes each, merged by shifting. */
__attribute__((target("sse4.2"))) static uint64_t
crc32c_3way(uint64_t crc0, const unsigned char **pp, size_t *lenp,
	    size_t stride, uint32_t table[4][256])
{
	const unsigned char *p = *pp;
	size_t len = *lenp;

	while (len >= 3 * stride) {
		uint64_t crc1 = 0, crc2 = 0, w0, w1, w2;
		const unsigned char *end = p + stride;

		do {
			memcpy(&w0, p, 8);
			memcpy(&w1, p + stride, 8);
			memcpy(&w2, p + 2 * stride, 8);
			crc0 = _mm_crc32_u64(crc0, w0);
			crc1 = _mm_crc32_u64(crc1, w1);
			crc2 = _mm_crc32_u64(crc2, w2);
			p += 8;
		} while (p < end);
		crc0 = crc_shift(table, (uint32_t)crc0) ^ crc1;
		crc0 = crc_shift(table, (uint32_t)crc0) ^ crc2;
		p += 2 * stride;
		len -= 3 * stride;
	}
	*pp = p;
	*lenp = len;
	return crc0;
}

__attribute__((target("sse4.2"))) static uint32_t
crc32c_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t crc0 = crc, w;

	while (len && ((uintptr_t)p & 7)) {
		crc0 = _mm_crc32_u8((uint32_t)crc0, *p++);
		len--;
	}
	crc0 = crc32c_3way(crc0, &p, &len, STRIDE_LONG, shift_long);
	crc0 = crc32c_3way(crc0, &p, &len, STRIDE_SHORT, shift_short);
	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		crc0 = _mm_crc32_u64(crc0, w);
	}
	while (len--)
		crc0 = _mm_crc32_u8((uint32_t)crc0, *p++);
	return (uint32_t)crc0;
}
#endif

uint32_t
fl_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tables_once, init_tables);
#if defined(__x86_64__)
	if (have_sse42)
		return crc32c_hw(crc, buf, len);
#endif
	return crc32c_sw(crc, buf, len);
}

uint32_t
fl_crc32c(const void *buf, size_t len)
{
	return ~fl_crc32c_update(~0U, buf, len);
}
