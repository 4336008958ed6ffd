// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Promises: what a workload was told had been made durable, logged as it
 * was told so, as marks labelled "promise:KEY=VALUE" (crashtest's
 * flushlog-promise; docs/applications.md).  A crash state at a point owes
 * every promise logged before the point; of a key promised again and
 * again (a transaction counter, a ref's commit), the last value before
 * the point is the one a checker holds it to.
 *
 * Each call sorts the promise marks by key: O(P log P) for P of them,
 * whatever the number of keys.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PROMISE_PREFIX		"promise:"
#define PROMISE_PREFIX_LEN	(sizeof(PROMISE_PREFIX) - 1)

/* One promise mark: its key is label[0, key_len), its value after '='. */
struct promise {
	const char *label;	/* past "promise:" */
	size_t key_len;
	uint64_t mark;		/* its index in log->marks */
};

/* KEY: a shell variable's name, so that it can be one's suffix. */
static bool
valid_key(const char *key, size_t len)
{
	if (!len || (key[0] >= '0' && key[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = key[i];

		if (!(c == '_' || (c >= '0' && c <= '9') ||
		      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return false;
	}
	return true;
}

static int
cmp_key_then_mark(const void *a, const void *b)
{
	const struct promise *x = a, *y = b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->label, y->label, n);

	if (c)
		return c;
	if (x->key_len != y->key_len)
		return x->key_len < y->key_len ? -1 : 1;
	return (x->mark > y->mark) - (x->mark < y->mark);
}

/* The promise marks of the log, each checked: their number, or < 0. */
static int64_t
collect_promises(const struct fl_log *log, struct promise **out,
		 struct fl_error *err)
{
	struct promise *p = NULL;
	size_t n = 0;

	for (uint64_t k = 0; k < log->nr_marks; k++) {
		const struct fl_mark *m = &log->marks[k];
		const char *key, *eq;

		if (strncmp(m->label, PROMISE_PREFIX, PROMISE_PREFIX_LEN))
			continue;
		key = m->label + PROMISE_PREFIX_LEN;
		eq = strchr(key, '=');
		if (!eq || !eq[1] || !valid_key(key, eq - key)) {
			const struct fl_entry *e = &log->entries[m->entry];

			free(p);
			fl_set_error(err, FL_ERR_LOG, e->seq, e->offset,
				     "entry %" PRIu64 " at offset %" PRIu64 ": mark '%s' is no promise: promise:KEY=VALUE, KEY of letters, digits and '_' (not first a digit), VALUE not empty",
				     e->seq, e->offset, m->label);
			return -EINVAL;
		}
		if (!n || !(n & (n - 1))) {
			struct promise *q = realloc(p, (n ? 2 * n : 1) * sizeof(*p));

			if (!q) {
				free(p);
				fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, 0,
					     "out of memory for the promises");
				return -ENOMEM;
			}
			p = q;
		}
		p[n++] = (struct promise) { key, eq - key, k };
	}
	*out = p;
	return n;
}

/* A key: the mark that first promised it, and the last value due. */
struct key {
	const char *key;
	size_t key_len;
	uint64_t first_mark;
	const char *value;	/* NULL: nothing promised yet */
};

static int
cmp_first_mark(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	return (x->first_mark > y->first_mark) - (x->first_mark < y->first_mark);
}

static bool
same_key(const struct promise *a, const struct promise *b)
{
	return a->key_len == b->key_len && !memcmp(a->label, b->label, a->key_len);
}

int
fl_log_promises(const struct fl_log *log, uint64_t nr_applied,
		fl_promise_fn fn, void *ctx, struct fl_error *err)
{
	uint64_t due = fl_log_first_mark(log, nr_applied, false);
	struct promise *p;
	int64_t n = collect_promises(log, &p, err);
	struct key *keys;
	size_t nr_keys = 0;
	int ret = 0;

	if (n <= 0)
		return n;
	keys = calloc(n, sizeof(*keys));
	if (!keys) {
		free(p);
		fl_set_error(err, FL_ERR_NOMEM, FL_NO_ENTRY, 0,
			     "out of memory for the promises");
		return -ENOMEM;
	}
	/* by key, each key's in log order: one pass finds first and last */
	qsort(p, n, sizeof(*p), cmp_key_then_mark);
	for (int64_t i = 0; i < n; i++) {
		struct key *k;

		if (!i || !same_key(&p[i - 1], &p[i])) {
			k = &keys[nr_keys++];
			*k = (struct key) { p[i].label, p[i].key_len, p[i].mark, NULL };
		} else {
			k = &keys[nr_keys - 1];
		}
		if (p[i].mark < due)
			k->value = p[i].label + p[i].key_len + 1;
	}
	qsort(keys, nr_keys, sizeof(*keys), cmp_first_mark);
	for (size_t i = 0; i < nr_keys && fn && !ret; i++)
		ret = fn(ctx, keys[i].key, keys[i].key_len, keys[i].value);
	free(keys);
	free(p);
	return ret;
}
