// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * XXH64, as the kernel's lib/xxhash.c computes it (seed 0 here): the data
 * checksum of logs whose super block has FLUSHLOG_SF_DATA_XXH64, which the
 * target wrote by default before 1.0.0 and other writers may still write.
 * The target now writes CRC32C (docs/target.md says why); headers have
 * always been CRC32C.
 */
#include <endian.h>
#include <string.h>

#include "internal.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t
read64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline uint32_t
read32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t
xxh_round(uint64_t acc, uint64_t input)
{
	return rotl64(acc + input * P2, 31) * P1;
}

static inline uint64_t
xxh_merge(uint64_t acc, uint64_t val)
{
	return (acc ^ xxh_round(0, val)) * P1 + P4;
}

void
fl_xxh64_init(struct fl_xxh64 *s)
{
	*s = (struct fl_xxh64){
		.v = { P1 + P2, P2, 0, -P1 },
	};
}

static void
stripe(struct fl_xxh64 *s, const unsigned char *p)
{
	for (int i = 0; i < 4; i++)
		s->v[i] = xxh_round(s->v[i], read64(p + 8 * i));
}

void
fl_xxh64_update(struct fl_xxh64 *s, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	s->total += len;
	if (s->held) {
		size_t n = 32 - s->held < len ? 32 - s->held : len;

		memcpy(s->mem + s->held, p, n);
		s->held += n;
		p += n;
		len -= n;
		if (s->held < 32)
			return;
		stripe(s, s->mem);
		s->held = 0;
	}
	for (; len >= 32; p += 32, len -= 32)
		stripe(s, p);
	memcpy(s->mem, p, len);
	s->held = len;
}

uint64_t
fl_xxh64_final(const struct fl_xxh64 *s)
{
	const unsigned char *p = s->mem, *end = s->mem + s->held;
	uint64_t h;

	if (s->total >= 32) {
		h = rotl64(s->v[0], 1) + rotl64(s->v[1], 7) +
		    rotl64(s->v[2], 12) + rotl64(s->v[3], 18);
		for (int i = 0; i < 4; i++)
			h = xxh_merge(h, s->v[i]);
	} else {
		h = P5;
	}
	h += s->total;
	for (; p + 8 <= end; p += 8)
		h = rotl64(h ^ xxh_round(0, read64(p)), 27) * P1 + P4;
	if (p + 4 <= end) {
		h = rotl64(h ^ (uint64_t)read32(p) * P1, 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl64(h ^ *p * P5, 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	return h ^ (h >> 32);
}

uint64_t
fl_xxh64(const void *buf, size_t len)
{
	struct fl_xxh64 s;

	fl_xxh64_init(&s);
	fl_xxh64_update(&s, buf, len);
	return fl_xxh64_final(&s);
}

void
fl_data_sum_init(struct fl_data_sum *s, const struct fl_log *log)
{
	s->xxh64 = log->info.super_flags & FLUSHLOG_SF_DATA_XXH64;
	if (s->xxh64)
		fl_xxh64_init(&s->x);
	else
		s->crc = ~0U;
}

void
fl_data_sum_update(struct fl_data_sum *s, const void *buf, size_t len)
{
	if (s->xxh64)
		fl_xxh64_update(&s->x, buf, len);
	else
		s->crc = fl_crc32c_update(s->crc, buf, len);
}

uint32_t
fl_data_sum_final(const struct fl_data_sum *s)
{
	return s->xxh64 ? (uint32_t)fl_xxh64_final(&s->x) : ~s->crc;
}

uint32_t
fl_data_checksum(const struct fl_log *log, const void *buf, size_t len)
{
	struct fl_data_sum s;

	fl_data_sum_init(&s, log);
	fl_data_sum_update(&s, buf, len);
	return fl_data_sum_final(&s);
}
