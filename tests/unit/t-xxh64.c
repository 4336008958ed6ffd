// SPDX-License-Identifier: GPL-2.0
/*
 * t-xxh64 FILE...: print each file's XXH64 (seed 0) as xxhsum -H1 does,
 * "HASH  FILE", computed whole with fl_xxh64() and, to check that pieces
 * add up, fed in pieces of every size from 1 to 97 bytes in turn; a file
 * whose two results differ is named on stderr and the exit code is 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	do {
		if (*len == cap) {
			unsigned char *p = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	fclose(f);
	return buf ? buf : malloc(1);
}

int
main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct fl_xxh64 s;
		size_t len, at = 0, step = 1;
		unsigned char *buf = slurp(argv[i], &len);
		uint64_t whole;

		if (!buf) {
			fprintf(stderr, "t-xxh64: cannot read %s\n", argv[i]);
			return 2;
		}
		whole = fl_xxh64(buf, len);
		fl_xxh64_init(&s);
		while (at < len) {
			size_t n = len - at < step ? len - at : step;

			fl_xxh64_update(&s, buf + at, n);
			at += n;
			step = step % 97 + 1;
		}
		if (fl_xxh64_final(&s) != whole) {
			fprintf(stderr, "t-xxh64: %s: %016" PRIx64 " whole, %016" PRIx64 " in pieces\n",
				argv[i], whole, fl_xxh64_final(&s));
			bad = 1;
		}
		printf("%016" PRIx64 "  %s\n", whole, argv[i]);
		free(buf);
	}
	return bad;
}
