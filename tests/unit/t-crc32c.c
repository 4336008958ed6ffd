// SPDX-License-Identifier: GPL-2.0
/*
 * fl_crc32c() against a bit-at-a-time reference over every alignment and
 * many lengths, including the 3 x 8 KiB and 3 x 256-byte strides of the
 * interleaved SSE4.2 path, and the standard check value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "flushlog.h"

static uint32_t
reference(const unsigned char *p, size_t len)
{
	uint32_t crc = ~0U;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78U : crc >> 1;
	}
	return ~crc;
}

int
main(void)
{
	static const size_t lens[] = {
		0, 1, 7, 8, 9, 255, 256, 767, 768, 769, 4096, 24575, 24576,
		24577, 25000, 49152 + 768 + 13, 131072,
	};
	size_t max = 131072 + 8;
	unsigned char *buf = malloc(max);
	uint32_t got;
	int bad = 0;

	if (!buf)
		return 1;
	got = fl_crc32c("123456789", 9);
	if (got != 0xe3069283U) {
		fprintf(stderr, "check value: got 0x%08x, expected 0xe3069283\n", got);
		return 1;
	}
	srand(42);
	for (size_t i = 0; i < max; i++)
		buf[i] = (unsigned char)rand();
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		for (size_t align = 0; align < 8; align++) {
			uint32_t want = reference(buf + align, lens[l]);

			got = fl_crc32c(buf + align, lens[l]);
			if (got != want) {
				fprintf(stderr, "length %zu at alignment %zu: got 0x%08x, expected 0x%08x\n",
					lens[l], align, got, want);
				bad = 1;
			}
		}
	}
	/* incremental use equals one call */
	got = ~fl_crc32c_update(fl_crc32c_update(~0U, buf, 1000), buf + 1000, 30000);
	if (got != reference(buf, 31000)) {
		fprintf(stderr, "incremental crc differs\n");
		bad = 1;
	}
	free(buf);
	if (!bad)
		printf("crc32c matches the reference\n");
	return bad;
}
