/* SPDX-License-Identifier: GPL-2.0 */
/* libflushlog internals shared between its files; not installed. */
#ifndef FLUSHLOG_INTERNAL_H
#define FLUSHLOG_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "flushlog.h"

struct fl_mark {
	uint64_t entry;
	char *label;
};

struct fl_log {
	int fd;
	const unsigned char *map;	/* the whole log, read-only */
	uint64_t map_len;
	struct fl_log_info info;
	struct fl_entry *entries;	/* info.nr_entries of them */
	uint64_t entries_cap;
	struct fl_mark *marks;
	uint64_t nr_marks, marks_cap;
};

__attribute__((format(printf, 5, 6))) int
fl_set_error(struct fl_error *err, enum fl_error_source source,
	     uint64_t entry, uint64_t offset, const char *fmt, ...);

int fl_scan_flushlog(struct fl_log *log, unsigned int flags,
		     struct fl_error *err);
int fl_scan_log_writes(struct fl_log *log, struct fl_error *err);
int fl_log_add_entry(struct fl_log *log, const struct fl_entry *e,
		     const char *label, size_t label_len);
int fl_log_check_order(const struct fl_log *log, struct fl_error *err);
int fl_log_reserve(struct fl_log *log, uint64_t nr_entries);
void fl_log_release(struct fl_log *log, uint64_t *released, uint64_t offset);

/* Sorted, disjoint sector ranges [start, end) (states.c). */
struct fl_range {
	uint64_t start, end;
};

struct fl_ranges {
	struct fl_range *v;
	size_t n, cap;
};

int fl_ranges_add(struct fl_ranges *s, uint64_t start, uint64_t end);
int fl_ranges_remove(struct fl_ranges *s, uint64_t start, uint64_t end);
/* Discards add their sectors, other data entries take theirs away. */
int fl_ranges_update(struct fl_ranges *s, const struct fl_entry *e);
void fl_ranges_free(struct fl_ranges *s);
/* The first range ending after sector at (touching: or at it). */
size_t fl_ranges_find(const struct fl_ranges *s, uint64_t at, bool touching);

static inline uint64_t
fl_round_up(uint64_t x, uint64_t align)
{
	return (x + align - 1) & ~(align - 1);
}

static inline bool
fl_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

#endif /* FLUSHLOG_INTERNAL_H */
