// SPDX-License-Identifier: GPL-2.0
/*
 * fl-memhog: push a machine into swap and check that what came back from
 * it is what went out.  Maps MIB MiB of anonymous memory and, PASSES
 * times, writes every page with its number and the pass's, then reads
 * every page back, the last written first, and checks it.  A pass over
 * more memory than the machine has sends pages to swap and brings them
 * back.  Prints a line a pass; exit 0 when every page read back right, 1
 * at the first that did not (or when the memory cannot be mapped).
 *
 * usage: fl-memhog MIB PASSES
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	size_t mib, pages, page = (size_t)sysconf(_SC_PAGESIZE), i, w;
	unsigned int passes, pass;
	uint64_t *mem;

	if (argc != 3) {
		fprintf(stderr, "usage: fl-memhog MIB PASSES\n");
		return 1;
	}
	mib = strtoul(argv[1], NULL, 0);
	passes = strtoul(argv[2], NULL, 0);
	pages = (mib << 20) / page;
	mem = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("fl-memhog: mmap");
		return 1;
	}
	for (pass = 1; pass <= passes; pass++) {
		for (i = 0; i < pages; i++) {
			uint64_t *p = mem + i * (page / 8);

			/* a word every 512 bytes: every sector of the page */
			for (w = 0; w < page / 8; w += 64)
				p[w] = ((uint64_t)pass << 48) ^ (i << 12) ^ w;
		}
		/*
		 * Back to front: the pages written last are still in memory,
		 * so only those that went to swap come back from it, once.
		 */
		for (i = pages; i-- > 0;) {
			uint64_t *p = mem + i * (page / 8);

			for (w = 0; w < page / 8; w += 64) {
				if (p[w] != (((uint64_t)pass << 48) ^ (i << 12) ^ w)) {
					fprintf(stderr, "fl-memhog: pass %u: page %zu word %zu reads %#llx\n",
						pass, i, w, (unsigned long long)p[w]);
					return 1;
				}
			}
		}
		printf("fl-memhog: pass %u: %zu MiB written and read back\n", pass, mib);
		fflush(stdout);
	}
	return 0;
}
