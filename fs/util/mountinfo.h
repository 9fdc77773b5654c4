/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mountinfo.h -- read the lines of /proc/self/mountinfo (proc(5)), for
 * tierctl (which mounts are tierfs, which mount a path is on) and for
 * the daemon (is the mount point already a live tierfs?).  Pure string
 * work on a line the caller owns; no allocation, no locks.
 */
#ifndef TIERFS_UTIL_MOUNTINFO_H
#define TIERFS_UTIL_MOUNTINFO_H

#include <stdbool.h>

/* One line of /proc/self/mountinfo, split in place: the pointers point
 * into that line. */
struct mountinfo_entry {
	unsigned dev_major, dev_minor; /* of the filesystem: st_dev */
	char *mountpoint;	       /* unescaped */
	char *fstype;		       /* "fuse.tierfs", "ext4", ... */
	char *source;		       /* unescaped; "" when the line has none */
	char *mount_opts;	       /* "rw,nosuid,relatime" */
	char *super_opts;	       /* the filesystem's: "rw,user_id=0" */
};

/**
 * mountinfo_parse() - split @line (as getline() gives it) into @e
 * Return: false for a line that is not of the documented shape (@e is
 * then undefined and @line partly split).
 */
bool mountinfo_parse(char *line, struct mountinfo_entry *e);

/**
 * unescape_octal() - undo the kernel's octal escapes in place ("\040"
 * for a space, "\011" for a tab, "\134" or "\\" for a backslash), as
 * /proc writes paths and the control channel quotes names
 */
void unescape_octal(char *s);

#endif /* TIERFS_UTIL_MOUNTINFO_H */
