#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: transport
# TIMEOUT: 180
#
# FUSE over io_uring (issue 17): the transport is negotiated, shown and
# used, and it leaves nothing behind.  Needs root and a kernel with the
# fuse module's enable_uring parameter (6.14+); the test turns it on for
# itself and restores it at exit.
#  - enable_uring=0: transport=auto mounts on /dev/fuse; transport=uring
#    is refused with one line and nothing is mounted;
#  - enable_uring=1: transport=auto and uring use the rings (the stats
#    say transport=uring, and uring_requests grows with the requests);
#    transport=dev stays on /dev/fuse;
#  - data written and read through the rings is intact, also across a
#    cache drop, and the kill-suid/sgid flag reaches the daemon on a
#    write that came over a ring;
#  - a signal during a long read (an interrupt, which the kernel still
#    sends over /dev/fuse) ends the reader; the mount goes on;
#  - unmount ends the daemon, and kill -9 leaves only a mount that
#    fusermount -u removes: no thread, ring or mount is left.
. "$(dirname "$0")/lib.sh"
t_need_progs
param=/sys/module/fuse/parameters/enable_uring
[ -w "$param" ] || t_skip "no $param: this kernel has no FUSE over io_uring"
old=$(cat "$param")
restore() { echo "$old" >"$param"; }
trap 'restore; t_cleanup' EXIT
# lib.sh's wrapper would force a transport; this test picks its own
TIERFS_BIN=$TIERFS_BIN_REAL
mstat() {
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v k="$1" '$1 == "mount" { for (i = 2; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
# transport in force, waiting for the queues to register (they start
# right after INIT)
transport_is() { [ "$(mstat transport)" = "$1" ]; }

# --- enable_uring=0
echo 0 >"$param"
t_mount --transport auto --tier ram=ram:64M
t_eq "$(mstat transport)" dev "auto without enable_uring: /dev/fuse"
t_unmount
out=$("$TIERFS_BIN" -f --transport uring --tier ram=ram:64M "$MNT" 2>&1)
rc=$?
[ "$rc" -ne 0 ] || t_fail "transport=uring mounted without enable_uring"
t_eq "$(wc -l <<<"$out")" 1 "one line for a refused transport=uring: $out"
t_like "$out" "tierfs: transport=uring*enable_uring*" "the refusal says what to do"
mountpoint -q "$MNT" && t_fail "something is mounted after the refusal"

# --- enable_uring=1
echo 1 >"$param"
t_mount --transport dev --tier ram=ram:64M
t_eq "$(mstat transport)" dev "transport=dev stays on /dev/fuse"
t_unmount
t_mount --tier ram=ram:64M
t_wait_until 10 transport_is uring || t_fail "auto with enable_uring: transport $(mstat transport)"
t_unmount
mkdir -p "$T/disk"
t_mount -o allow_other --transport uring --tier ram=ram:16M \
	--tier disk=file:"$T/disk":256M
t_wait_until 10 transport_is uring || t_fail "transport=uring: transport $(mstat transport)"
before=$(mstat uring_requests)
# data through the rings, spilling to the file tier
t_check "$PROGS/pattern" -s 4 w "$MNT/f" 0 48M >/dev/null
sync
echo 3 >/proc/sys/vm/drop_caches
t_check "$PROGS/pattern" -s 4 v "$MNT/f" 0 48M >/dev/null
t_check "$PROGS/pattern" -d -s 4 v "$MNT/f" 0 48M >/dev/null
mkdir "$MNT/d" && touch "$MNT/d/a" && mv "$MNT/d/a" "$MNT/d/b" && rm "$MNT/d/b" &&
	rmdir "$MNT/d" || t_fail "metadata over the rings"
after=$(mstat uring_requests)
[ "$after" -gt $((before + 100)) ] ||
	t_fail "uring_requests went from $before to $after: the rings were not used"
# kill-suid/sgid through a ring: a write by another user clears it
chmod 0777 "$MNT" && touch "$MNT/s" && chmod 06777 "$MNT/s" || t_fail "setup suid"
t_as 1001:1001 sh -c "echo x >> '$MNT/s'" || t_fail "write as uid 1001"
t_eq "$(stat -c %a "$MNT/s")" 777 "a write over a ring clears suid/sgid"

# --- a signal during a long read: an interrupt over /dev/fuse
t_check "$PROGS/pattern" -s 5 w "$MNT/big" 0 200M >/dev/null
sync
echo 3 >/proc/sys/vm/drop_caches
( exec dd if="$MNT/big" of=/dev/null bs=64K iflag=direct status=none ) &
rd=$!
reading() { [ "$(awk '/^rchar/ { print $2 }' "/proc/$rd/io" 2>/dev/null || echo 1)" -gt 0 ]; }
t_wait_until 10 reading || true
kill -INT "$rd" 2>/dev/null
wait "$rd"
kill -0 "$T_PID" || t_fail "the daemon died after an interrupted read"
t_check "$PROGS/pattern" -s 5 v "$MNT/big" 0 200M >/dev/null
rm -f "$MNT/big" "$MNT/f"

# --- unmount ends everything
pid=$T_PID
t_unmount
kill -0 "$pid" 2>/dev/null && t_fail "the daemon lives on after unmount"
mountpoint -q "$MNT" && t_fail "still mounted"

# --- kill -9: the kernel cleans the rings; fusermount -u the mount
t_mount --transport uring --tier ram=ram:16M
t_wait_until 10 transport_is uring || t_fail "transport=uring (again)"
echo data >"$MNT/x"
kill -9 "$T_PID"
wait "$T_PID" 2>/dev/null
T_PID=
fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
mountpoint -q "$MNT" && t_fail "mount left after kill -9"
# a fresh mount on the same point works
t_mount --transport uring --tier ram=ram:16M
t_wait_until 10 transport_is uring || t_fail "transport=uring after kill -9"
t_unmount
t_pass
