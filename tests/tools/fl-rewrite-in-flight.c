// SPDX-License-Identifier: GPL-2.0
/*
 * fl-rewrite-in-flight: write a device from pages that another process
 * rewrites while the writes are in flight, so that the bytes the disk
 * reads can differ from those the pages held when the write was issued.
 * A child scribbles without pause over a shared mapping while the parent
 * writes, in one of two ways:
 *
 *   mmap    the mapping is the device's own page cache; the parent calls
 *           msync(MS_SYNC) COUNT times (writeback of pages that change
 *           under it, as an mmap user of a filesystem without stable
 *           pages gets), then stops the child and syncs once more
 *   direct  the mapping is anonymous; the parent writes it to the device
 *           with O_DIRECT, 64 KiB at a time, COUNT times, each to a new
 *           place while the device lasts: the disk keeps whatever it
 *           read mid-rewrite
 *
 * usage: fl-rewrite-in-flight mmap|direct DEVICE COUNT
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
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

static void
stop_scribbler(pid_t child)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

int
main(int argc, char **argv)
{
	unsigned long i, count;
	unsigned char *map;
	bool direct;
	pid_t child;
	off_t size;
	int fd;

	if (argc != 4 || (strcmp(argv[1], "mmap") && strcmp(argv[1], "direct"))) {
		fprintf(stderr, "usage: fl-rewrite-in-flight mmap|direct DEVICE COUNT\n");
		return 2;
	}
	direct = !strcmp(argv[1], "direct");
	count = strtoul(argv[3], NULL, 10);
	fd = open(argv[2], O_RDWR | (direct ? O_DIRECT : 0));
	if (fd < 0)
		die(argv[2]);
	size = lseek(fd, 0, SEEK_END);
	if (size < (off_t)CHUNK)
		die("device smaller than 64 KiB");
	size -= size % CHUNK;
	map = mmap(NULL, direct ? CHUNK : (size_t)size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | (direct ? MAP_ANONYMOUS : 0), direct ? -1 : fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	child = start_scribbler(map, direct ? CHUNK : (size_t)size);
	for (i = 0; i < count; i++) {
		if (direct ? pwrite(fd, map, CHUNK, (i * CHUNK) % size) != CHUNK
			   : msync(map, size, MS_SYNC) != 0)
			die(direct ? "pwrite" : "msync");
	}
	stop_scribbler(child);
	if ((!direct && msync(map, size, MS_SYNC)) || fsync(fd))
		die("final sync");
	printf("%s: %lu writes of pages rewritten all along\n", argv[1], count);
	return 0;
}
