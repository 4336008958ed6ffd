/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The format's checksums (crc32c.c, xxh64.c), for the library and the
 * test and bench tools that write logs; not part of the library's API.
 */
#ifndef FLUSHLOG_CHECKSUM_H
#define FLUSHLOG_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

uint32_t fl_crc32c(const void *buf, size_t len);
uint32_t fl_crc32c_update(uint32_t crc, const void *buf, size_t len);
uint64_t fl_xxh64(const void *buf, size_t len);	/* seed 0 */

#endif
