#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: failure
# TIMEOUT: 120
#
# A dead network tier is a failed tier, not a dead mount (issue 16, item
# 7).  With sshfs under a file tier and sshfs killed, reads of tierfs
# files failed with ENOTCONN ("Transport endpoint is not connected"),
# which every program reads as a dead mount, though the daemon lived.
#
# Here the network filesystem is passfs (progs/passfs.c), a FUSE
# passthrough of a directory of this test: a file tier lives on it under
# a small RAM tier (which first shows that a file tier works on a FUSE
# filesystem at all: the named-slab fallback for the missing O_TMPFILE,
# fallocate, io_uring reads and writes).  Data pinned to the file tier
# is written and synced, then passfs is killed with SIGKILL: every call
# on its mount now fails with ENOTCONN.  Then, after dropping the page
# cache so that reads reach the daemon:
#  - reading that data gives EIO (not ENOTCONN), also through O_DIRECT,
#    copy_file_range (cp) and tierctl migrate; an overwrite in place
#    fails with EIO (at write(2) for part of a page, which the kernel
#    reads first; at close for whole pages); the tier's io_errors counts
#    the failures;
#  - the log names the tier and the real cause once ("read error on
#    tier 'f': ... Transport endpoint is not connected (the program gets
#    EIO)");
#  - the daemon is alive and the mount usable: a file on the RAM tier
#    reads back and a new one is written and read; a new file pinned to
#    the dead tier spills to RAM, each failed reserve counted in
#    io_errors (logged as "placement error on tier 'f'", but not twice in
#    one interval: the log still has one line for the tier);
#  - unmount is clean.  passfs's mount is lazily unmounted at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"
: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$PROGS/passfs" ] || t_fail "passfs missing (PROGS='$PROGS')"

BACK=$T/back # passfs's directory
PFS=$T/pfs   # its mount point: the file tier's path
PFS_PID=
mkdir -p "$BACK" "$PFS" || t_fail mkdir

dead_exit() {
	local rc=$?
	trap - EXIT
	# tierfs first (it holds the slab open on passfs), then passfs
	t_unmount
	if [ -n "$PFS_PID" ]; then
		kill -9 "$PFS_PID" 2>/dev/null
		wait "$PFS_PID" 2>/dev/null
	fi
	t_is_mounted "$PFS" && umount -l "$PFS" 2>/dev/null
	(exit $rc)
	t_cleanup
}
trap dead_exit EXIT

"$PROGS/passfs" "$BACK" "$PFS" -f >"$T/passfs.log" 2>&1 &
PFS_PID=$!
t_wait_until 5 mountpoint -q "$PFS" ||
	t_fail "passfs did not mount: $(cat "$T/passfs.log")"

t_mount --tier ram=ram:8M --tier "f=file:$PFS:64M"
grep -q . "$T_LOG" && { cat "$T_LOG"; t_fail "log not empty after mount"; }

# on the FUSE tier: 4M pinned there, byte-exact through it
mkdir "$MNT/cold" && setfattr -n user.tierfs.pin -v f "$MNT/cold" ||
	t_fail "pin on f"
pat_w -s 7 "$MNT/cold/a" 0 $((4 * M))
pat_w -s 8 "$MNT/hot" 0 $((1 * M))
sync
t_eq "$(on_tier f "$MNT/cold/a")" $((4 * M)) "bytes of cold/a on the FUSE tier"
t_eq "$(on_tier ram "$MNT/hot")" $((1 * M)) "bytes of hot on RAM"
echo 3 >/proc/sys/vm/drop_caches
pat_v -s 7 "$MNT/cold/a" 0 $((4 * M))
pat_v -d -s 7 "$MNT/cold/a" 0 $((4 * M))
ls -a "$BACK"/tierfs-f-* | grep -q fuse_hidden ||
	t_fail "no slab of tier f in passfs's directory: $(ls -la "$BACK"/*)"
t_eq "$(tstat f io_errors)" 0 "io_errors of f while passfs lives"
echo "a file tier works on passfs: 4M written and read back"

# the network filesystem dies
kill -9 "$PFS_PID"
wait "$PFS_PID" 2>/dev/null
PFS_PID=
t_errno ENOTCONN "$SC" stat "$PFS"
echo 3 >/proc/sys/vm/drop_caches

e0=$(tstat f io_errors)
t_eq "$(read_err "$MNT/cold/a" 0 16)" EIO "read of cold/a at 0"
t_eq "$(read_err "$MNT/cold/a" $((3 * M)) 16)" EIO "read of cold/a at 3M"
out=$("$P" v -d -s 7 "$MNT/cold/a" 0 $((1 * M)) 2>&1) &&
	t_fail "O_DIRECT read of cold/a succeeded: $out"
case $out in
*"not connected"* | *ENOTCONN*) t_fail "O_DIRECT read: $out" ;;
esac
e1=$(tstat f io_errors)
[ "$e1" -ge $((e0 + 2)) ] || t_fail "io_errors of f: $e0 then $e1 after failed reads"
echo "reads on the dead tier: EIO; io_errors $e0 -> $e1"

# copy_file_range (cp uses it) and tierctl migrate: EIO too
out=$(cp "$MNT/cold/a" "$MNT/copy" 2>&1) && t_fail "cp of cold/a succeeded"
t_like "$out" "*Input/output error*" "cp of cold/a"
rm -f "$MNT/copy"
out=$("$TIERCTL" migrate "$MNT/cold/a" ram 2>&1) &&
	t_fail "tierctl migrate off the dead tier succeeded: $out"
case $out in
*"not connected"*) t_fail "tierctl migrate: $out" ;;
esac
echo "tierctl migrate: $(echo "$out" | head -n 1)"
# overwrites in place: part of a page needs the page read first, so
# write(2) itself fails; whole pages go to the cache and their
# writeback fails: close (which flushes) says EIO
t_errno EIO "$SC" write "$MNT/cold/a" 0 overwrite
out=$("$P" w -s 11 "$MNT/cold/a" $((1 * M)) 65536 2>&1) &&
	t_fail "whole-page overwrite on the dead tier succeeded"
t_like "$out" "*EIO*" "whole-page overwrite on the dead tier"
echo "overwrite of whole pages: $out"

# the log: the tier, the real cause, what the program got
grep -q "read error on tier 'f': inode [0-9]* at offset [0-9]*: Transport endpoint is not connected (the program gets EIO)" "$T_LOG" ||
	{ cat "$T_LOG"; t_fail "no log line naming tier f and the cause"; }

# the daemon lives, the mount and the RAM tier work
kill -0 "$T_PID" 2>/dev/null || t_fail "tierfs daemon died"
alive "the file tier died"
pat_v -s 8 "$MNT/hot" 0 $((1 * M))
pat_w -s 9 "$MNT/new" 0 $((2 * M))
t_ok "$SC" fsync "$MNT/new"
echo 3 >/proc/sys/vm/drop_caches
pat_v -s 9 "$MNT/new" 0 $((2 * M))
t_eq "$(on_tier ram "$MNT/new")" $((2 * M)) "bytes of new on RAM"
# new extents pinned to the dead tier spill past it, each failed
# reserve counted (and logged, but within the interval of the read
# error's line: no second line)
e2=$(tstat f io_errors)
pat_w -s 10 "$MNT/cold/b" 0 $((2 * M))
t_ok "$SC" fsync "$MNT/cold/b"
echo 3 >/proc/sys/vm/drop_caches
pat_v -s 10 "$MNT/cold/b" 0 $((2 * M))
t_eq "$(layout "$MNT/cold/b")" "ram=$((2 * M)) f=0" "layout of cold/b"
e3=$(tstat f io_errors)
[ "$e3" -ge $((e2 + 2)) ] || t_fail "io_errors of f: $e2 then $e3 after 2 placements"
t_eq "$(grep -c "error on tier 'f'" "$T_LOG")" 1 "error lines of tier f in the log"
"$TIERCTL" status "$MNT" >"$T/status" 2>&1 || t_fail "tierctl status: $(cat "$T/status")"
grep -i "not connected" "$T/status" && t_fail "tierctl status mentions ENOTCONN"
echo "daemon alive, RAM tier reads and writes, new data spills past f"
echo "--- daemon log ---"
cat "$T_LOG"

t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
t_pass
