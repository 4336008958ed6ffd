/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out-of-tree builds only (drivers/Kbuild defines FLUSHLOG_OUT_OF_TREE):
 * which interfaces the kernel being built against has, told by the
 * interfaces themselves, never by a version number, so that a backport is
 * recognised too.  dm-flushlog.c tests these symbols; scripts/make-patches
 * resolves every test with unifdef for the tree it writes a series for, so
 * that in-tree the target reads as if written for that tree alone.
 */
#ifndef DM_FLUSHLOG_COMPAT_H
#define DM_FLUSHLOG_COMPAT_H

/* 6.5: block devices are opened with a blk_mode_t, not an fmode_t */
#ifdef BLK_OPEN_READ
#define FLUSHLOG_HAVE_BLK_OPEN
#endif

/* after 6.1: module_dm() registers a target on load, unregisters it on unload */
#ifdef module_dm
#define FLUSHLOG_HAVE_MODULE_DM
#endif

/* 6.9: bios carry their submitter's write lifetime hint (rw_hint.h) */
#ifdef _LINUX_RW_HINT_H
#define FLUSHLOG_HAVE_BIO_WRITE_HINT
#endif

#endif
