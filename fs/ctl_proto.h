/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_proto.h -- the control channel between tierctl and the daemon.
 * The only fs/ header that tools/ may include.
 *
 * The channel is the mount itself: extended attributes on the files and
 * directories that a command is about, so there is no socket to find,
 * and the kernel's permission checks apply before the daemon adds its
 * own.  Read-only queries are getxattr calls that anyone who can see the
 * file may make; actions are setxattr calls on names under
 * TIERFS_XATTR_CTL, which the daemon checks (owner or root; root only
 * for whole-mount actions) and validates (one clear errno, no change, on
 * anything malformed).  Virtual attributes are never listed by
 * listxattr, so `cp -a` and `getfattr -d` do not copy or show them.
 *
 * Queries (getxattr; values are text, no trailing NUL):
 *   TIERFS_XATTR_LAYOUT    file or dir: "NAME=BYTES" for every tier in
 *                          stack order, space separated; on a directory,
 *                          summed over everything below it
 *   TIERFS_XATTR_EXTENTS   file: "START LENGTH TIER\n" per run of
 *                          consecutive extents on one tier (bytes; holes
 *                          are left out)
 *   TIERFS_XATTR_EFFECTIVE file or dir: the policy in force, one line per
 *                          key: "KEY=VALUE FROM\n", FROM being the
 *                          directory (path from the mount root) or file
 *                          that sets it, or "default"
 *   TIERFS_XATTR_STATS     mount root: counters, one record a line:
 *                          "tier NAME kind=K path=P size=B used=B free=B
 *                          extents=N read_bytes=B read_ops=N write_bytes=B
 *                          write_ops=N promotions=N promote_bytes=B
 *                          demotions=N demote_bytes=B spills=N
 *                          csum_errors=N io_errors=N draining=0|1"
 *                          "migrator enabled=0|1 passes=N moved=N
 *                          retries=N failures=N high_watermark=PCT
 *                          low_watermark=PCT bandwidth=B drain_stuck=N"
 *                          "mount extent_size=B inodes=N"
 *                          New keys may be appended to a record; readers
 *                          skip keys they do not know.
 *   TIERFS_XATTR_VERIFY    file: reads every extent back and checks its
 *                          checksums: "extents=N checked=N errors=N"
 *
 * Policies (stored attributes, listed, inherited; see DESIGN.md):
 *   TIERFS_XATTR_TIERS, _PIN, _SPLIT, _PROMOTE
 *
 * Actions (setxattr):
 *   TIERFS_XATTR_CTL_MIGRATE file: "TIER" or "TIER START LENGTH" (bytes):
 *                          move those extents to TIER now; returns when
 *                          done.  ENOSPC if TIER fills up, EINVAL for a
 *                          bad value, EPERM if not owner or root.
 *   TIERFS_XATTR_CTL_DRAIN mount root, root only: "TIER": stop placing new
 *                          data on TIER and have the migrator move
 *                          everything off it.  Returns at once (the
 *                          request would otherwise hold the kernel's lock
 *                          on the mount root): watch the tier's used= fall
 *                          to 0; drain_stuck=N > 0 on the migrator line
 *                          means N extents found no room elsewhere.  With
 *                          --no-migrate the move happens in the request
 *                          and ENOSPC reports a drain that cannot finish.
 *                          "" or "-" ends draining: every tier takes new
 *                          data again.
 */
#ifndef TIERFS_CTL_PROTO_H
#define TIERFS_CTL_PROTO_H

#define TIERFS_XATTR_PREFIX "user.tierfs."

#define TIERFS_XATTR_TIERS "user.tierfs.tiers"
#define TIERFS_XATTR_PIN "user.tierfs.pin"
#define TIERFS_XATTR_SPLIT "user.tierfs.split"
#define TIERFS_XATTR_PROMOTE "user.tierfs.promote"

#define TIERFS_XATTR_LAYOUT "user.tierfs.layout"
#define TIERFS_XATTR_EXTENTS "user.tierfs.extents"
#define TIERFS_XATTR_EFFECTIVE "user.tierfs.effective"
#define TIERFS_XATTR_STATS "user.tierfs.stats"
#define TIERFS_XATTR_VERIFY "user.tierfs.verify"

#define TIERFS_XATTR_CTL "user.tierfs.ctl."
#define TIERFS_XATTR_CTL_MIGRATE "user.tierfs.ctl.migrate"
#define TIERFS_XATTR_CTL_DRAIN "user.tierfs.ctl.drain"

/* The fstype in /proc/self/mountinfo, for finding mounts. */
#define TIERFS_FSTYPE "fuse.tierfs"

#endif /* TIERFS_CTL_PROTO_H */
