// SPDX-License-Identifier: GPL-2.0
/*
 * The progress line: what a long command is doing, on a terminal only.
 *
 * It goes to stderr, one line redrawn in place, and only when stderr is a
 * terminal and --quiet was not given: a log or a script reading stderr
 * gets errors and warnings, never a stream of carriage returns.
 *
 * Some long steps are one library call with no progress of its own (a
 * log read and verified by fl_log_open(), the states planned by
 * fl_log_states()): progress_while() runs them while a thread draws the
 * line, from the bytes the process has read (the rchar of /proc/self/io,
 * every byte read() and pread() returned) or from the time taken.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Redrawn at most this often, in seconds. */
#define REDRAW_INTERVAL	0.2
/*
 * A step with no count of its own shorter than this shows no line at all:
 * no flicker.  FLUSHLOG_PROGRESS_DELAY sets it (seconds), as
 * GIT_PROGRESS_DELAY does git's.
 */
#define DEFAULT_DELAY	0.5

double
progress_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double
start_delay(void)
{
	const char *s = getenv("FLUSHLOG_PROGRESS_DELAY");
	char *end;
	double d;

	if (!s || !*s)
		return DEFAULT_DELAY;
	d = strtod(s, &end);
	return *end || d < 0 ? DEFAULT_DELAY : d;
}

void
progress_init(struct progress *p, const char *who)
{
	*p = (struct progress) {
		.who = who,
		.on = !cli_quiet && isatty(STDERR_FILENO),
		.start = progress_now(),
		.delay = start_delay(),
	};
}

void
progress_show(struct progress *p, bool now, const char *fmt, ...)
{
	double t;
	va_list ap;

	if (!p->on)
		return;
	t = progress_now();
	if (!now && p->shown && t - p->drawn < REDRAW_INTERVAL)
		return;
	p->drawn = t;
	fprintf(stderr, "\r\033[K%s: ", p->who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	p->shown = true;
}

void
progress_clear(struct progress *p)
{
	if (!p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = false;
}

void
progress_eta(const struct progress *p, uint64_t done, uint64_t total,
	     char *buf, size_t len)
{
	double took = progress_now() - p->start, left;
	unsigned long s;

	buf[0] = '\0';
	/* the first states say little of the rest: wait for some */
	if (!done || done >= total || took < 2)
		return;
	left = took * (double)(total - done) / (double)done;
	s = (unsigned long)(left + 0.5);
	if (s >= 3600)
		snprintf(buf, len, " ETA %luh%02lum", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(buf, len, " ETA %lum%02lus", s / 60, s % 60);
	else
		snprintf(buf, len, " ETA %lus", s);
}

/* Bytes this process has read so far; 0 if /proc does not say. */
static uint64_t
bytes_read(void)
{
	FILE *f = fopen("/proc/self/io", "re");
	uint64_t rchar = 0;
	char line[128];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %" SCNu64, &rchar) == 1)
			break;
	fclose(f);
	return rchar;
}

struct watch {
	struct progress *p;
	const char *what;
	uint64_t bytes, read_before;
	pthread_mutex_t lock;	/* protects done */
	pthread_cond_t wake;
	bool done;
};

static void
draw_watch(struct watch *w)
{
	double took = progress_now() - w->p->start;
	uint64_t got;

	if (took < w->p->delay)
		return;
	if (!w->bytes) {
		progress_show(w->p, true, "%s (%.0f s)", w->what, took);
		return;
	}
	got = bytes_read() - w->read_before;
	/* a second pass over some of it must not show more than all */
	if (got >= w->bytes)
		got = w->bytes - 1;
	if (w->bytes >= 1 << 20)
		progress_show(w->p, true, "%s: %3u%% of %" PRIu64 " MiB", w->what,
			      (unsigned int)(got * 100 / w->bytes), w->bytes >> 20);
	else
		progress_show(w->p, true, "%s: %3u%% of %" PRIu64 " KiB", w->what,
			      (unsigned int)(got * 100 / w->bytes), w->bytes >> 10);
}

static void *
watch_thread(void *arg)
{
	struct watch *w = arg;
	struct timespec until;

	pthread_mutex_lock(&w->lock);
	while (!w->done) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)(REDRAW_INTERVAL * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->wake, &w->lock, &until);
		if (!w->done)
			draw_watch(w);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int
progress_while(struct progress *p, const char *what, uint64_t bytes,
	       int (*fn)(void *arg), void *arg)
{
	struct watch w = {
		.p = p, .what = what, .bytes = bytes,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.wake = PTHREAD_COND_INITIALIZER,
	};
	pthread_t thread;
	int ret;

	if (!p->on)
		return fn(arg);
	p->start = progress_now();
	w.read_before = bytes_read();
	if (!p->delay)
		draw_watch(&w);		/* no delay: a line at once */
	if (pthread_create(&thread, NULL, watch_thread, &w))
		return fn(arg);		/* no line, the work all the same */
	ret = fn(arg);
	pthread_mutex_lock(&w.lock);
	w.done = true;
	pthread_cond_signal(&w.wake);
	pthread_mutex_unlock(&w.lock);
	pthread_join(thread, NULL);
	progress_clear(p);
	return ret;
}
