// SPDX-License-Identifier: GPL-2.0
/*
 * fl-rewrite-in-flight: write a device from pages that another process
 * rewrites while the writes are in flight, so that the bytes the disk
 * reads differ from those the pages held when each write was issued.  A
 * child scribbles without pause over a shared mapping; the parent writes
 * it with O_DIRECT, 64 KiB at a time, COUNT times, each to a new place
 * while the device lasts.  The disk keeps whatever it read mid-rewrite,
 * for good: nothing writes those blocks again.
 *
 * (Rewriting a mapping of the device itself under msync proves less: a
 * page changed under writeback is dirtied again and written again, so the
 * end state converges whatever the target logged.)
 *
 * usage: fl-rewrite-in-flight DEVICE COUNT
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK (64U << 10)

static void
die(const char *what)
{
	fprintf(stderr, "fl-rewrite-in-flight: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A new byte in every sector, sweep after sweep, never the same twice. */
static void
scribble(volatile unsigned char *map, size_t len)
{
	unsigned int n = 0;

	for (;;) {
		for (size_t off = 0; off < len; off += 512)
			map[off + n % 512] = (unsigned char)((n * 2654435761U) >> 24);
		n++;
	}
}

/* Writer and scribbler on CPUs of their own, so that they overlap. */
static void
run_on_cpu(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Returns once the scribbler runs: writes before it would prove nothing. */
static pid_t
start_scribbler(unsigned char *map, size_t len)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	volatile int *started;
	pid_t child;

	started = mmap(NULL, sizeof(*started), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (started == MAP_FAILED)
		die("mmap");
	child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		if (cpus > 1)
			run_on_cpu(cpus - 1);
		*started = 1;
		scribble(map, len);
	}
	if (cpus > 1)
		run_on_cpu(0);
	while (!*started)
		sched_yield();
	return child;
}

int
main(int argc, char **argv)
{
	unsigned long i, count;
	unsigned char *map;
	pid_t child;
	off_t size;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: fl-rewrite-in-flight DEVICE COUNT\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 10);
	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0)
		die(argv[1]);
	size = lseek(fd, 0, SEEK_END);
	if (size < (off_t)CHUNK) {
		fprintf(stderr, "fl-rewrite-in-flight: %s is smaller than 64 KiB\n",
			argv[1]);
		return 1;
	}
	size -= size % CHUNK;
	map = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mmap");
	child = start_scribbler(map, CHUNK);
	for (i = 0; i < count; i++)
		if (pwrite(fd, map, CHUNK, (off_t)(i * CHUNK) % size) != CHUNK)
			die("pwrite");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (fsync(fd))
		die("fsync");
	printf("%lu writes of pages rewritten all along\n", count);
	return 0;
}
