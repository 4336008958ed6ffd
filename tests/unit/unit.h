/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the unit tests; a test that cannot set up exits 1. */
#ifndef FLUSHLOG_UNIT_H
#define FLUSHLOG_UNIT_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A new image of size bytes, zeroes, open for reading and writing. */
static inline int
fresh_image(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		perror(path);
		exit(1);
	}
	return fd;
}

#endif /* FLUSHLOG_UNIT_H */
