// SPDX-License-Identifier: GPL-2.0
/*
 * fl-sgio: write FILE to DEVICE at LBA with one SCSI WRITE(10) sent by
 * ioctl(SG_IO), as sg_raw or sg_unmap would: a passthrough command that
 * never becomes a bio of the device it is sent to.  FILE's size is a
 * whole number of 512-byte blocks, at most 64 KiB.
 *
 * Exit 0: the disk took the command; 2: the ioctl failed, its errno's
 * name (ENOTTY, ...) on stdout; 1: anything else (the command failed on
 * the disk, a bad argument, FILE unreadable).
 *
 * usage: fl-sgio DEVICE LBA FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <scsi/sg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MAX_LEN (64U << 10)

int
main(int argc, char **argv)
{
	static unsigned char buf[MAX_LEN];
	unsigned char cdb[10] = { 0x2a }, sense[32];
	struct sg_io_hdr io;
	unsigned long lba;
	ssize_t len;
	int fd, in;

	if (argc != 4) {
		fprintf(stderr, "usage: fl-sgio DEVICE LBA FILE\n");
		return 1;
	}
	lba = strtoul(argv[2], NULL, 0);
	in = open(argv[3], O_RDONLY);
	if (in < 0 || (len = read(in, buf, sizeof(buf))) <= 0 || len % 512) {
		fprintf(stderr, "fl-sgio: %s: not 1 to 128 blocks of 512 bytes\n", argv[3]);
		return 1;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "fl-sgio: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	cdb[2] = lba >> 24;
	cdb[3] = lba >> 16;
	cdb[4] = lba >> 8;
	cdb[5] = lba;
	cdb[7] = (len / 512) >> 8;
	cdb[8] = len / 512;
	memset(&io, 0, sizeof(io));
	io.interface_id = 'S';
	io.dxfer_direction = SG_DXFER_TO_DEV;
	io.cmd_len = sizeof(cdb);
	io.cmdp = cdb;
	io.dxfer_len = len;
	io.dxferp = buf;
	io.mx_sb_len = sizeof(sense);
	io.sbp = sense;
	io.timeout = 20000;
	if (ioctl(fd, SG_IO, &io) < 0) {
		int e = errno;

		printf("%s\n", strerrorname_np(e) ?: "unknown");
		fprintf(stderr, "fl-sgio: SG_IO: %s\n", strerror(e));
		return 2;
	}
	if (io.status || io.host_status || io.driver_status) {
		fprintf(stderr, "fl-sgio: WRITE(10) failed: status 0x%x host 0x%x driver 0x%x\n",
			io.status, io.host_status, io.driver_status);
		return 1;
	}
	return 0;
}
