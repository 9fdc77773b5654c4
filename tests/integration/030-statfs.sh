#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: capacity
# TIMEOUT: 60
# IO: tiered allocation units of extents and spill
#
# statfs/df: total is the tier capacity; free drops by allocation units
# (4 KiB: tiers/tier.h) as data is written (a 5-byte file costs one unit,
# not an extent; a hole costs nothing) and comes back after delete, also for an unlinked file once its
# last fd closes.  The read-only user.tierfs.layout xattr gives the bytes
# per tier, including spill from a full first tier into the second.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc
M=1048576
U=4096 # the allocation unit

total_bytes() { echo $(($(t_statfs blocks "$1") * $(t_statfs frsize "$1"))); }
free_bytes() { echo $(($(t_statfs bfree "$1") * $(t_statfs frsize "$1"))); }
avail_bytes() { echo $(($(t_statfs bavail "$1") * $(t_statfs frsize "$1"))); }
free_is() { [ "$(free_bytes "$MNT")" = "$1" ]; }
# expect_free BYTES WHAT -- wait up to 5s (frees after unlink are queued
# behind the kernel's FORGET) for statfs free to be BYTES
expect_free() {
	t_wait_until 5 free_is "$1" ||
		t_fail "$2: statfs free $(free_bytes "$MNT"), expected $1"
}
layout() {
	getfattr --only-values -n user.tierfs.layout "$1" 2>/dev/null ||
		echo "(getfattr failed)"
}

t_mount --tier ram=ram:64M
t_eq "$(total_bytes "$MNT")" $((64 * M)) "statfs total"
t_eq "$(free_bytes "$MNT")" $((64 * M)) "statfs free on an empty mount"
t_eq "$(avail_bytes "$MNT")" $((64 * M)) "statfs avail on an empty mount"
t_eq "$(df -B1 --output=size "$MNT" | tail -n 1 | tr -d ' ')" $((64 * M)) "df size"
mkdir "$MNT/d" || t_fail mkdir
t_eq "$(total_bytes "$MNT/d")" $((64 * M)) "statfs total in a subdirectory"

t_check "$PROGS/pattern" -f w "$MNT/d/eight" 0 8M >/dev/null
expect_free $((56 * M)) "after writing 8M"
t_eq "$(avail_bytes "$MNT")" $((56 * M)) "statfs avail after writing 8M"
t_eq "$(df -B1 --output=used "$MNT" | tail -n 1 | tr -d ' ')" $((8 * M)) "df used"
t_eq "$(layout "$MNT/d/eight")" "ram=$((8 * M))" "layout of an 8M file"

# a small write costs one unit; a hole costs nothing
t_ok "$SC" write "$MNT/small" 0 hello
expect_free $((56 * M - U)) "after a 5-byte file"
t_eq "$(layout "$MNT/small")" "ram=$U" "layout of a 5-byte file"
t_eq "$(t_stat blocks "$MNT/small")" 8 "st_blocks of a 5-byte file"
t_ok "$SC" open "$MNT/sparse" creat,w
t_ok "$SC" truncate "$MNT/sparse" 1G
expect_free $((56 * M - U)) "after a 1G sparse truncate"
t_eq "$(layout "$MNT/sparse")" "ram=0" "layout of a file that is all hole"
t_ok "$SC" write "$MNT/sparse" 700M x
expect_free $((56 * M - 2 * U)) "after one byte in the middle of a sparse file"

# delete frees
rm "$MNT/d/eight" || t_fail rm
expect_free $((64 * M - 2 * U)) "after deleting the 8M file"
rm "$MNT/small" "$MNT/sparse" || t_fail rm
expect_free $((64 * M)) "after deleting everything"

# an unlinked file keeps its space until its last close
t_check "$PROGS/pattern" -f w "$MNT/held" 0 4M >/dev/null
expect_free $((60 * M)) "after writing 4M"
exec 3<"$MNT/held"
rm "$MNT/held" || t_fail rm
sleep 0.3
t_eq "$(free_bytes "$MNT")" $((60 * M)) "statfs free while an unlinked file is open"
"$PROGS/pattern" v /dev/fd/3 0 4M >/dev/null || t_fail "unlinked open file content"
exec 3<&-
expect_free $((64 * M)) "after closing the unlinked file"

# truncate down frees the units beyond the new size
t_check "$PROGS/pattern" -f w "$MNT/tr" 0 6M >/dev/null
expect_free $((58 * M)) "after writing 6M"
t_ok "$SC" truncate "$MNT/tr" $((2 * M + 1))
expect_free $((62 * M - U)) "after truncating 6M to 2M+1"
t_eq "$(layout "$MNT/tr")" "ram=$((2 * M + U))" "layout after truncate"
t_ok "$SC" truncate "$MNT/tr" 0
expect_free $((64 * M)) "after truncating to 0"

# 64K extents: the unit stays 4 KiB
t_remount --tier ram=ram:8M --extent-size 64K
t_eq "$(total_bytes "$MNT")" $((8 * M)) "statfs total with 64K extents"
t_ok "$SC" write "$MNT/s" 0 x
t_ok "$SC" write "$MNT/s" 200000 y
expect_free $((8 * M - 2 * U)) "two bytes in two 64K extents"
t_eq "$(layout "$MNT/s")" "ram=$((2 * U))" "layout with 64K extents"
# 64M extents: the unit is 64M / 256 = 256K
t_remount --tier ram=ram:256M --extent-size 64M
t_ok "$SC" write "$MNT/s" 0 x
expect_free $((256 * M - 256 * 1024)) "one byte with 64M extents"
t_eq "$(t_stat blocks "$MNT/s")" 512 "st_blocks of one byte with 64M extents"

# two tiers: the first fills, the rest spills into the second
# (--no-migrate: the migrator would demote from the full tier a to b and
# change the layouts checked here while the test runs)
t_remount --no-migrate --tier a=ram:8M --tier b=ram:8M
t_eq "$(total_bytes "$MNT")" $((16 * M)) "statfs total of two tiers"
t_check "$PROGS/pattern" -f w "$MNT/big" 0 12M >/dev/null
t_eq "$(layout "$MNT/big")" "a=$((8 * M)) b=$((4 * M))" "layout of a file spilling into tier b"
expect_free $((4 * M)) "two tiers after 12M"
t_check "$PROGS/pattern" v "$MNT/big" 0 12M >/dev/null
t_ok "$SC" write "$MNT/one" 0 z
t_eq "$(layout "$MNT/one")" "a=0 b=$U" "layout of a file placed in tier b"
rm "$MNT/big" || t_fail rm
expect_free $((16 * M - U)) "two tiers after delete"
t_check "$PROGS/pattern" -f w "$MNT/again" 0 2M >/dev/null
t_eq "$(layout "$MNT/again")" "a=$((2 * M)) b=0" "new data goes to the first tier again"

t_pass
