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
 *                          consecutive extents on one tier (bytes,
 *                          decimal, up to 20 digits; holes are left out),
 *                          in file order.  The whole list in one value,
 *                          so E2BIG when it would be longer than
 *                          TIERFS_XATTR_VALUE_MAX: read it in pages (below)
 *   TIERFS_XATTR_EXTENTS_AT "user.tierfs.extents@OFFSET", OFFSET a byte
 *                          offset in decimal digits (no sign, at most
 *                          UINT64_MAX; EINVAL otherwise): one page of the
 *                          list, see "Paged lists" below
 *   TIERFS_XATTR_EFFECTIVE file or dir: the policy in force, one line per
 *                          key: "KEY=VALUE FROM\n".  VALUE has no space.
 *                          FROM is the rest of the line: "default", "(this
 *                          file)", or the directory that sets the key as
 *                          a path from the mount root ("/a/b"), escaped
 *                          so that it holds no newline: a backslash is
 *                          "\\", and every byte below 0x20 and 0x7f is a
 *                          backslash and three octal digits ("\012" for a
 *                          newline); other bytes, spaces included, are
 *                          as they are.  A path whose escaped form is
 *                          longer than TIERFS_EFFECTIVE_FROM_MAX keeps
 *                          only its last components, after "..."
 *                          ("..." + "/c/d"), so that the value of all
 *                          four keys always fits in one getxattr
 *   TIERFS_XATTR_STATS     mount root: counters, one record a line:
 *                          "tier NAME kind=K path=P size=B used=B free=B
 *                          extents=N read_bytes=B read_ops=N write_bytes=B
 *                          write_ops=N promotions=N promote_bytes=B
 *                          demotions=N demote_bytes=B spills=N
 *                          csum_errors=N io_errors=N draining=0|1
 *                          limit=B lend_cap=B" (lend_cap: what the tier
 *                          holds at most when it lends, --page-cache
 *                          only; 0 when it does not lend)
 *                          "migrator enabled=0|1 passes=N moved=N
 *                          retries=N failures=N high_watermark=PCT
 *                          low_watermark=PCT bandwidth=B drain_stuck=N"
 *                          "mount extent_size=B inodes=N"
 *                          (inodes: the inode units in use, inode.h:
 *                          inodes, extra links, long symlink targets;
 *                          issue 11, appended to "mount": max_inodes=N
 *                          the unit limit, 0 none; xattr_bytes=B charged
 *                          by user.* xattrs; max_xattr_bytes=B their
 *                          limit, 0 none; rss=B the daemon's resident
 *                          memory; issue 32: ctl_computed=N the
 *                          computed values made, a size probe too, the
 *                          stats text excepted)
 *                          New keys may be appended to a record; readers
 *                          skip keys they do not know.
 *   TIERFS_XATTR_VERIFY    file: reads every extent back and checks its
 *                          checksums: "extents=N checked=N errors=N"
 *
 * Every computed value fits in TIERFS_XATTR_VALUE_MAX bytes (the
 * kernel's XATTR_SIZE_MAX: a longer value cannot pass getxattr(2)) or
 * the daemon refuses it with E2BIG -- only the unpaged extent list can be
 * that long.
 *
 * Paged lists.  getxattr("user.tierfs.extents@OFFSET") answers the runs
 * of the extents from the one holding byte OFFSET on (a run that begins
 * before OFFSET is listed from that extent), as many whole lines as fit,
 * and, when the list goes on, a last line
 *
 *     "next N\n"         N: the OFFSET of the next page, always > OFFSET
 *
 * (a word, not digits, so it is never taken for a run).  A page without
 * that line is the last one; a page past the end of the data is empty.
 * A page, "next" line included, is at most TIERFS_XATTR_VALUE_MAX bytes,
 * so one getxattr with a buffer that large always succeeds and needs no
 * size probe; a probe (size 0) answers the length of the same page, and
 * a call that follows it with that size sees the same page unless the
 * file changed meanwhile (then ERANGE: probe again).  A reader starts at
 * "@0" and follows "next" until a page has none.  Each page is read
 * under the file's data lock, but the pages are not one snapshot: a
 * file written or migrated meanwhile shows its state at each page.  To
 * bound the work of one request a page stops after TIERFS_PAGE_EXTENTS
 * extents, so a longer run may continue on the next page on the same
 * tier: readers that count runs merge a run with the one before it when
 * it starts where that one ends, on the same tier.
 *
 * Quotas (issue 11; fs/quota.h):
 *   TIERFS_XATTR_QUOTA_SET stored on a directory
 *                          by root only: "SIZE" (all tiers) or
 *                          "KEY:SIZE,..." with KEY a tier name, "total"
 *                          or "inodes" (a count);
 *                          getxattr returns it as it was set
 *   TIERFS_XATTR_QUOTA     file or dir, computed, read-only: one line per
 *                          quota that applies, innermost first:
 *                          "total=USED/LIMIT NAME=USED/LIMIT ...
 *                          inodes=USED/LIMIT dir=PATH\n"
 *                          with every tier in stack order; bytes (inode
 *                          units for "inodes") in
 *                          decimal, LIMIT "-" for none; PATH the quota
 *                          directory from the mount root, escaped as FROM
 *                          above (not shortened), the rest of the line.
 *                          ENODATA when no quota applies.  New keys may
 *                          come before "dir="; readers skip keys they do
 *                          not know.
 *                          Issue 19 (the job report) adds, after
 *                          "inodes=", figures of the quota's directory
 *                          since its quota was first set, each "KEY=N"
 *                          (no "/": a count, not a use against a limit):
 *                          peak_bytes=B the most "total" used has been;
 *                          write_bytes=B stored by writes and writebacks
 *                          of the files below (bytes as the programs
 *                          wrote them); spill_bytes=B tier space taken on
 *                          tiers other than the first one (RAM in the
 *                          default stack) by new and growing extents and
 *                          by extents that moved down because their tier
 *                          was full or capped -- also when a policy kept
 *                          them off the first tier; not the migrator's
 *                          moves; read_bytes=B served by reads that
 *                          reached the daemon (what the kernel's page
 *                          cache served never does, and the daemon
 *                          cannot count it); read_below_bytes=B of
 *                          those, from a tier other than the first one
 *                          (the rest came from the first tier or were
 *                          holes); writeback_errors=N writebacks of the
 *                          kernel's page cache that failed (their error
 *                          goes to the program's fsync or close);
 *                          writeback_lost_bytes=B what those did not
 *                          store.  A nested quota's figures are in those
 *                          of every quota above it too
 *
 * Policies (stored attributes, listed, inherited; names as the project's design fixes them):
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
 *   TIERFS_XATTR_CTL_CLOCK mount root, root only, and only on a mount
 *                          started with --test-clock (for tests; EINVAL
 *                          elsewhere, as an unknown action): "MS", up
 *                          to TIERFS_TEST_CLOCK_MAX_MS decimal digits:
 *                          the test clock that the heat and the
 *                          migrator follow moves MS milliseconds on.
 *                          Returns once the migrator passes that the
 *                          new time made due have ended (one at most).
 */
#ifndef TIERFS_CTL_PROTO_H
#define TIERFS_CTL_PROTO_H

#define TIERFS_XATTR_PREFIX "user.tierfs."

#define TIERFS_XATTR_TIERS "user.tierfs.tiers"
#define TIERFS_XATTR_PIN "user.tierfs.pin"
#define TIERFS_XATTR_SPLIT "user.tierfs.split"
#define TIERFS_XATTR_PROMOTE "user.tierfs.promote"
#define TIERFS_XATTR_IO "user.tierfs.io" /* native|tiered (issue 33) */

#define TIERFS_XATTR_LAYOUT "user.tierfs.layout"
#define TIERFS_XATTR_EXTENTS "user.tierfs.extents"
/* the paged form: this prefix followed by the decimal OFFSET */
#define TIERFS_XATTR_EXTENTS_AT "user.tierfs.extents@"
/* the first word of the last line of a page that is not the last */
#define TIERFS_PAGE_NEXT "next"
#define TIERFS_XATTR_EFFECTIVE "user.tierfs.effective"
#define TIERFS_XATTR_STATS "user.tierfs.stats"
#define TIERFS_XATTR_VERIFY "user.tierfs.verify"
#define TIERFS_XATTR_QUOTA "user.tierfs.quota"
#define TIERFS_XATTR_QUOTA_SET "trusted.tierfs.quota"
/* The job report's figures in a line of TIERFS_XATTR_QUOTA (issue 19),
 * each "KEY=N", in the order the daemon writes them (see "Quotas" above),
 * and the key that ends a line. */
#define TIERFS_QUOTA_PEAK "peak_bytes"
#define TIERFS_QUOTA_WRITE "write_bytes"
#define TIERFS_QUOTA_SPILL "spill_bytes"
#define TIERFS_QUOTA_READ "read_bytes"
#define TIERFS_QUOTA_READ_BELOW "read_below_bytes"
#define TIERFS_QUOTA_WB_ERRORS "writeback_errors"
#define TIERFS_QUOTA_WB_LOST "writeback_lost_bytes"
#define TIERFS_QUOTA_DIR "dir"

#define TIERFS_XATTR_CTL "user.tierfs.ctl."
#define TIERFS_XATTR_CTL_MIGRATE "user.tierfs.ctl.migrate"
#define TIERFS_XATTR_CTL_DRAIN "user.tierfs.ctl.drain"
#define TIERFS_XATTR_CTL_CLOCK "user.tierfs.ctl.clock" /* tests only */
/* The longest step of the test clock, in ms: a day. */
#define TIERFS_TEST_CLOCK_MAX_MS 86400000u

/* Longest tier name (1..32 of [A-Za-z0-9_-]; tiers/tier.h TIER_NAME_MAX). */
#define TIERFS_TIER_NAME_MAX 32
/* Longest computed value (XATTR_SIZE_MAX of <linux/limits.h>). */
#define TIERFS_XATTR_VALUE_MAX 65536
/* Extents one page of a paged list covers at most. */
#define TIERFS_PAGE_EXTENTS (1u << 20)
/* Longest escaped FROM path in user.tierfs.effective before it is
 * shortened to ".../last/components". */
#define TIERFS_EFFECTIVE_FROM_MAX 12288

/* The fstype in /proc/self/mountinfo, for finding mounts. */
#define TIERFS_FSTYPE "fuse.tierfs"

#endif /* TIERFS_CTL_PROTO_H */
