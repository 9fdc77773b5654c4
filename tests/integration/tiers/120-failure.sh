#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: failure
# TIMEOUT: 120
# IO: tiered spill around a failing tier's device
#
# Tier failures behind tierfs's back; the mount must live on and keep
# every other byte intact:
#  - a file tier whose filesystem fills up below the tier's configured size
#    (a 6M tier on an 8M tmpfs, then a filler takes the rest): new extents
#    spill to the next tier; an overwrite that needs new device blocks
#    fails without damaging the bytes it did not write (a failed write
#    never damages data already stored); with no next tier the write
#    fails with ENOSPC
#    (or EIO) and nothing else changes; after the filler goes, the tier
#    takes data again;
#  - a pmem tier on such a device reserved its space at mount: filling
#    the device behind its back changes nothing;
#  - the tier's private directory removed (rm -r) behind tierfs's back
#    (the slab itself has no name: it is an unlinked file): the daemon's
#    open fd (file tier) or mapping (pmem tier) keeps the data, so reads
#    still return it -- that is the documented behaviour
#    (tiers/tier_file.c);
#  - the slab file truncated to 0 behind tierfs's back (through the
#    daemon's /proc/PID/fd, slab_of in tlib.sh): reads of the lost
#    data fail with EIO, never zeros; new data still goes somewhere;
#  - one flipped byte in the slab of a file tier and of a pmem tier:
#    after dropping the page cache a read gives EIO, not wrong data;
#    csum_errors counts it, user.tierfs.verify says errors=1, other files
#    read fine, a forced migration refuses to copy the bad extent, and
#    rewriting the file heals it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/disk" "$T/pm" || t_fail mkdir


# --- a file tier whose filesystem fills up below its configured size
t_tmpfs "$T/small" 8M
t_mount --tier fast=file:"$T/small":6M --tier disk=file:"$T/disk":64M --no-migrate
pat_w -s 1 "$MNT/pre" 0 2M
t_eq "$(layout "$MNT/pre")" "fast=$((2 * M)) disk=0" "layout before the filler"
# an extent with only its first page written: the rest of its slot is a
# hole in the sparse slab, which needs device blocks when written
pat_w -s 1 "$MNT/half" 0 4K
dd if=/dev/zero of="$T/small/filler" bs=4K count=4096 2>/dev/null # bounded: 16M, twice the tmpfs
t_eq "$(df --output=avail "$T/small" | tail -n 1 | tr -d ' ')" 0 "free space on the filled tmpfs"
out=$("$P" -s 2 w "$MNT/new" 0 4M)
t_eq "$out" "OK $((4 * M))" "write while the fast tier's device is full"
t_eq "$(layout "$MNT/new")" "fast=0 disk=$((4 * M))" "layout of data written while the device is full"
# pre's two extents and half's one unit (tiers/tier.h)
t_eq "$(tstat fast used)" $((2 * M + U)) "fast tier used after failed placements"
# (at whichever offset the kernel's writeback sent first)
grep -qE "the filesystem under tier 'fast' \($T/small\) is full below the tier's configured size: placement of inode $(stat -c %i "$MNT/new") at offset [0-9]+ goes to the next tier" "$T_LOG" ||
	t_fail "no log line for the full filesystem under tier fast: $(cat "$T_LOG")"
echo "fast tier on a full device: $(stats | grep '^tier fast')"
alive "device full"
pat_v -d -s 1 "$MNT/pre" 0 2M
# a write over that page and into the hole fails for want of blocks; the
# bytes it did not report written must still be the old ones
out=$("$P" -s 7 -b 64K w "$MNT/half" 0 64K)
case $out in
OK*) done=$((64 * K)) ;;
"ERR write "*" done "*) done=${out##* done } ;;
*) t_fail "overwrite on a full device: '$out'" ;;
esac
echo "overwrite of a half-backed extent on a full device: $out"
drop_caches
if [ "$done" -gt 0 ]; then
	out=$("$P" -d v -s 7 "$MNT/half" 0 "$((done < 4096 ? done : 4096))") ||
		t_soft_fail "bytes reported written by a failed overwrite: $out"
fi
if [ "$done" -lt 4096 ]; then
	out=$("$P" v -s 1 "$MNT/half" "$done" $((4096 - done))) ||
		t_soft_fail "old bytes not written by a failed overwrite (ENOSPC from the device) are damaged: $out"
fi
v=$(t_xattr "$MNT/half" user.tierfs.verify)
[ "$v" = "extents=1 checked=1 errors=0" ] ||
	t_soft_fail "verify of an extent after a failed overwrite: '$v'"
pat_v -d -s 2 "$MNT/new" 0 4M
# overwriting data already on the tier still works (its blocks exist)
pat_w -s 3 "$MNT/pre" 4096 64K
pat_v -d -s 3 "$MNT/pre" 4096 64K
pat_w -s 1 "$MNT/pre" 4096 64K
rm "$T/small/filler"
pat_w -s 4 "$MNT/new2" 0 1M
t_eq "$(layout "$MNT/new2")" "fast=$M disk=0" "layout after the device has room again"
pat_v -d -s 1 "$MNT/pre" 0 2M
pat_v -d -s 2 "$MNT/new" 0 4M

# the same with no tier to spill to: ENOSPC (EIO accepted), nothing lost
t_remount --tier fast=file:"$T/small":6M --no-migrate
pat_w -s 1 "$MNT/pre" 0 2M
dd if=/dev/zero of="$T/small/filler" bs=64K count=256 2>/dev/null # bounded: twice the tmpfs
out=$("$P" -s 2 w "$MNT/new" 0 4M)
# (a device that fills behind tierfs's back is not in the free-space
# reserve: with the writeback cache the error comes from close(2))
case $out in
"ERR write ENOSPC "* | "ERR write EIO "* | "ERR close ENOSPC"* | "ERR close EIO"*)
	echo "single tier, device full: $out" ;;
*) t_fail "write to a single tier whose device is full: '$out', expected ENOSPC or EIO" ;;
esac
t_eq "$(tstat fast used)" $((2 * M)) "used after a failed write"
alive "ENOSPC from the device"
pat_v -d -s 1 "$MNT/pre" 0 2M
rm "$T/small/filler"
pat_w -s 5 "$MNT/new" 0 3M
pat_v -d -s 5 "$MNT/new" 0 3M
pat_v -d -s 1 "$MNT/pre" 0 2M
t_unmount

# a pmem tier reserves its space at mount: a full device changes nothing
t_remount --tier pm=pmem:"$T/small":6M --tier disk=file:"$T/disk":64M --no-migrate
pat_w -s 1 "$MNT/pre" 0 1M
dd if=/dev/zero of="$T/small/filler" bs=4K count=4096 2>/dev/null # bounded: 16M, twice the tmpfs
pat_w -s 2 "$MNT/new" 0 4M
t_eq "$(layout "$MNT/new")" "pm=$((4 * M)) disk=0" "pmem tier on a full device"
rm "$MNT/new" || t_fail rm
wait_for 5 'pm used $(tstat pm used) after rm, expected 1M' eval '[ "$(tstat pm used)" = $M ]'
pat_w -s 3 "$MNT/new" 0 4M
t_eq "$(layout "$MNT/new")" "pm=$((4 * M)) disk=0" "pmem tier on a full device, freed slots reused"
pat_v -d -s 1 "$MNT/pre" 0 1M
pat_v -d -s 3 "$MNT/new" 0 4M
t_eq "$(tstat pm io_errors)" 0 "I/O errors of a reserved pmem tier"
rm "$T/small/filler"
t_unmount

# --- slab removed, then truncated, behind tierfs's back; pmem and file
for kind in file pmem; do
	echo "== slab of a $kind tier"
	t_remount --tier ram=ram:2M --tier slow="$kind:$T/disk:32M" --no-migrate
	pat_w -s 11 "$MNT/keep" 0 2M
	pat_w -s 12 "$MNT/victim" 0 3M
	t_eq "$(layout "$MNT/victim")" "ram=0 slow=$((3 * M))" "layout of the victim"
	slab=$(slab_of "$T/disk")
	bd=$(tier_dirs "$T/disk")
	[ -n "$bd" ] || t_fail "no private directory in $T/disk"
	rm -r "$bd" || t_fail "rm -r $bd"
	drop_caches
	# documented: the open fd / mapping keeps the data
	pat_v -d -s 12 "$MNT/victim" 0 3M
	pat_w -s 13 "$MNT/after-rm" 0 2M
	pat_v -d -s 13 "$MNT/after-rm" 0 2M
	alive "removing the $kind slab"
	t_remount --tier ram=ram:2M --tier slow="$kind:$T/disk:32M" --no-migrate
	pat_w -s 11 "$MNT/keep" 0 2M
	pat_w -s 12 "$MNT/victim" 0 3M
	slab=$(slab_of "$T/disk")
	truncate -s 0 "$slab" || t_fail "truncate $slab"
	drop_caches
	t_eq "$(read_err "$MNT/victim" 0 4096)" EIO "read of data whose $kind slab was truncated"
	t_eq "$(read_err "$MNT/victim" $((2 * M + 5)) 100)" EIO "read of the last extent of a truncated $kind slab"
	pat_v -d -s 11 "$MNT/keep" 0 2M
	alive "truncating the $kind slab"
	out=$("$P" -s 14 w "$MNT/after-trunc" 0 1M)
	case $out in
	OK*) pat_v -d -s 14 "$MNT/after-trunc" 0 1M ;;
	# a device failure is not foreseen by the free-space reserve: with the
	# writeback cache the error comes from close(2)
	"ERR write EIO "* | "ERR write ENOSPC "* | "ERR close EIO"* | "ERR close ENOSPC"*)
		echo "write after truncating the $kind slab: $out" ;;
	*) t_fail "write after truncating the $kind slab: $out" ;;
	esac
	pat_v -d -s 11 "$MNT/keep" 0 2M
	alive "writing after truncating the $kind slab"
done
t_unmount

# --- one flipped byte in a slab
for kind in file pmem; do
	echo "== corruption on a $kind tier"
	t_remount --tier slow="$kind:$T/disk:16M" --no-migrate
	# the first extent of the first file is at offset 0 of the slab
	pat_w -s 21 "$MNT/bad" 0 100K
	pat_w -s 22 "$MNT/good" 0 100K
	t_eq "$(t_xattr "$MNT/bad" user.tierfs.verify)" "extents=1 checked=1 errors=0" "verify before corruption"
	before=$(tstat slow csum_errors)
	flip "$(slab_of "$T/disk")" 1000
	drop_caches
	t_eq "$(read_err "$MNT/bad" 0 4096)" EIO "buffered read of a corrupt $kind extent"
	out=$("$P" -d v -s 21 "$MNT/bad" 0 100K)
	t_like "$out" "ERR read EIO *" "direct read of a corrupt $kind extent"
	if cat "$MNT/bad" >/dev/null 2>&1; then
		t_fail "cat of a corrupt file on a $kind tier succeeded"
	fi
	after=$(tstat slow csum_errors)
	[ "$after" -gt "$before" ] || t_fail "csum_errors did not grow ($before -> $after)"
	# one log line that says what happened, to which file, where
	ino=$(stat -c %i "$MNT/bad")
	grep -q "checksum mismatch on tier 'slow': read of inode $ino at offset 0 " "$T_LOG" ||
		t_fail "no checksum line naming inode $ino, offset 0 in the log: $(cat "$T_LOG")"
	t_eq "$(t_xattr "$MNT/bad" user.tierfs.verify)" "extents=1 checked=1 errors=1" "verify after corruption"
	pat_v -d -s 22 "$MNT/good" 0 100K
	t_eq "$(t_xattr "$MNT/good" user.tierfs.verify)" "extents=1 checked=1 errors=0" "verify of the good file"
	alive "corruption on $kind"
	# rewriting the whole file heals it
	"$SC" truncate "$MNT/bad" 0 >/dev/null
	pat_w -s 23 "$MNT/bad" 0 100K
	drop_caches
	pat_v -d -s 23 "$MNT/bad" 0 100K
	t_eq "$(t_xattr "$MNT/bad" user.tierfs.verify)" "extents=1 checked=1 errors=0" "verify after rewriting"
done

# a corrupt extent is never copied by migration
t_remount --tier ram=ram:4M --tier slow=file:"$T/disk":16M --no-migrate
t_ok "$SC" setxattr "$MNT" user.tierfs.tiers slow 0
pat_w -s 31 "$MNT/bad" 0 100K
t_eq "$(layout "$MNT/bad")" "ram=0 slow=$((100 * K))" "layout with tiers=slow (25 units)"
flip "$(slab_of "$T/disk")" 5000
t_errno EIO "$SC" setxattr "$MNT/bad" user.tierfs.ctl.migrate ram 0
t_eq "$(layout "$MNT/bad")" "ram=0 slow=$((100 * K))" "layout after a refused migration"
t_eq "$(tstat ram used)" 0 "ram used after a refused migration"
drop_caches
t_eq "$(read_err "$MNT/bad" 4096 100)" EIO "read after a refused migration"

t_done
