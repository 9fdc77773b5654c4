#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: failure
# TIMEOUT: 180
# IO: tiered extents on a PMem tier and their spill
#
# What a crash leaves, free space from the device, tier path rules
# (issue 11):
#  - kill -9 of a daemon with data on a file tier and a pmem tier (pmem
#    emulated on a plain file), each on its own tmpfs: once the dead mount
#    is unmounted no backing data is left (the tmpfs' use is back where it
#    was, no slab in the tier directories, du about 0); a remount works,
#    removes the dead mount's empty private directories and an older
#    tierfs's named slab, and says so in one log line per tier;
#  - a file tier whose backing filesystem (a tmpfs) fills from outside:
#    df of the mount, the stats and `tierctl status` show no more free
#    space than the device has; new data spills to the next tier; once
#    the tier is seen as full its io_errors stop growing; when space
#    returns the tier takes data again;
#  - two file tiers on one small tmpfs whose sizes sum above it are
#    refused with one line, nothing mounted; sizes that fit mount;
#  - a tier path at or under the mount point (also through a symlink) is
#    refused with one line, nothing mounted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"
: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$TIERCTL" ] || t_fail "tierctl binary '$TIERCTL' missing (set TIERCTL)"

# used_kb DIR -- 1K blocks in use on the filesystem of DIR
used_kb() { df --output=used "$1" | tail -n 1 | tr -d ' '; }
# avail_b DIR -- bytes free (to unprivileged users) on the filesystem of DIR
avail_b() { echo $(($(df --output=avail "$1" | tail -n 1 | tr -d ' ') * 1024)); }
# hum2b SIZE -- "4.0M", "512K", "0" (tierctl's human sizes) in bytes
hum2b() {
	awk -v s="$1" 'BEGIN {
		u = substr(s, length(s)); n = s + 0; m = 1
		if (u == "K") m = 1024; else if (u == "M") m = 1048576
		else if (u == "G") m = 1073741824; else if (u == "T") m = 1099511627776
		printf "%.0f\n", n * m }'
}
# status_free TIER -- the FREE column of `tierctl status` for TIER, bytes
status_free() {
	local col
	col=$("$TIERCTL" status "$MNT" | awk -v t="$1" '
		$1 == "TIER" { for (i = 1; i <= NF; i++) if ($i == "FREE") c = i }
		c && $1 == t { print $c }')
	[ -n "$col" ] || t_fail "no tier $1 in tierctl status: $("$TIERCTL" status "$MNT" 2>&1)"
	hum2b "$col"
}

# refuse DESC GLOB ARGS... -- tierfs ARGS must exit non-zero with one
# line matching GLOB, and mount nothing
refuse() {
	local desc=$1 glob=$2 out rc n
	shift 2
	out=$(timeout 20 "$TIERFS_BIN" -f "$@" 2>&1)
	rc=$?
	if t_is_mounted "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
		t_soft_fail "$desc: mounted"
		return
	fi
	n=$(printf '%s\n' "$out" | grep -c .)
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		t_soft_fail "$desc: not refused (exit $rc): '$out'"
	elif [ "$n" -ne 1 ]; then
		t_soft_fail "$desc: expected one line, got $n: '$out'"
	elif [[ "$out" != $glob ]]; then
		t_soft_fail "$desc: '$out' does not match '$glob'"
	else
		echo "$desc: $out"
	fi
}

# ------------------------------------------------------------ kill -9
t_tmpfs "$T/fdev" 64M
t_tmpfs "$T/pdev" 64M
mkdir -p "$T/fdev/tier" "$T/pdev/tier" "$T/disk" || t_fail mkdir
f0=$(used_kb "$T/fdev")
p0=$(used_kb "$T/pdev")
t_mount --tier pm=pmem:"$T/pdev/tier":16M --tier fl=file:"$T/fdev/tier":40M --no-migrate
pat_w -s 1 "$MNT/big" 0 48M
t_eq "$(layout "$MNT/big")" "pm=$((16 * M)) fl=$((32 * M))" "layout before the crash"
sync
[ $(($(used_kb "$T/fdev") - f0)) -ge $((32 * 1024)) ] ||
	t_fail "the file tier's data is not on its tmpfs: $(used_kb "$T/fdev") KB used, $f0 before"
[ $(($(used_kb "$T/pdev") - p0)) -ge $((16 * 1024)) ] ||
	t_fail "the pmem tier's data is not on its tmpfs: $(used_kb "$T/pdev") KB used, $p0 before"

pid=$T_PID
kill -9 "$pid" || t_fail "kill -9 $pid"
wait "$pid" 2>/dev/null
T_PID=
fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" || t_fail "cannot unmount the dead mount"
t_is_mounted "$MNT" && t_fail "the dead mount is still mounted"
for d in fdev pdev; do
	used=$(used_kb "$T/$d")
	base=$f0
	[ "$d" = pdev ] && base=$p0
	[ "$used" -le $((base + 64)) ] ||
		t_soft_fail "$d: $used KB used after kill -9, $base before: backing data outlived the daemon"
	du=$(du -sk "$T/$d/tier" | cut -f1)
	[ "$du" -le 64 ] || t_soft_fail "$d: du of the tier directory is $du KB after kill -9"
	t_eq "$(find "$T/$d/tier" -name slab)" "" "slab files in $d after kill -9"
	# what is left: the dead mount's private directory and its empty lock
	t_eq "$(find "$T/$d/tier" -type f ! -size 0)" "" "non-empty files in $d after kill -9"
	t_eq "$(tier_dirs "$T/$d/tier" | wc -l)" 1 "private directories in $d after kill -9"
done
echo "after kill -9: fdev $(used_kb "$T/fdev") KB used (was $f0), pdev $(used_kb "$T/pdev") KB (was $p0)"

# an older tierfs's leftover: a named slab with data, no lock file
mkdir -m 0700 "$T/fdev/tier/tierfs-old-ABCDEF" || t_fail mkdir
dd if=/dev/urandom of="$T/fdev/tier/tierfs-old-ABCDEF/slab" bs=1M count=4 status=none || t_fail dd
t_mount --tier pm=pmem:"$T/pdev/tier":16M --tier fl=file:"$T/fdev/tier":40M --no-migrate
grep -q "tier 'fl': removed 2 directories left by dead mounts in $T/fdev/tier (4194304 bytes of data)" "$T_LOG" ||
	t_soft_fail "no log line for the sweep of the file tier: $(cat "$T_LOG")"
grep -q "tier 'pm': removed 1 directory left by dead mounts in $T/pdev/tier (0 bytes of data)" "$T_LOG" ||
	t_soft_fail "no log line for the sweep of the pmem tier: $(cat "$T_LOG")"
t_eq "$(tier_dirs "$T/fdev/tier" | wc -l) $(tier_dirs "$T/pdev/tier" | wc -l)" "1 1" "private directories after the remount"
[ "$(used_kb "$T/fdev")" -le $((f0 + 64)) ] ||
	t_soft_fail "the old slab was not freed: $(used_kb "$T/fdev") KB used, $f0 before"
pat_w -s 2 "$MNT/again" 0 20M
pat_v -d -s 2 "$MNT/again" 0 20M
t_unmount
t_eq "$(tier_dirs "$T/fdev/tier")$(tier_dirs "$T/pdev/tier")" "" "private directories after a clean unmount"

# --------------------------------------- a device that fills from outside
t_tmpfs "$T/small" 16M
t_mount --tier fast=file:"$T/small":12M --tier disk=file:"$T/disk":64M
pat_w -s 3 "$MNT/a" 0 2M
t_eq "$(layout "$MNT/a")" "fast=$((2 * M)) disk=0" "layout before the filler"
t_eq "$(tstat fast free)" $((10 * M)) "fast free before the filler"
dd if=/dev/zero of="$T/small/filler" bs=1M count=10 status=none || t_fail "filler"
sleep 0.5 # the daemon looks at statvfs() at most every 200 ms
real=$(avail_b "$T/small")
t_eq "$real" $((4 * M)) "free on the small tmpfs after the filler"
t_eq "$(tstat fast free)" "$real" "fast free in the stats with $real bytes on its device"
sf=$(status_free fast)
[ "$sf" -le "$real" ] || t_soft_fail "tierctl status shows $sf bytes free on fast, the device has $real"
dfa=$(avail_b "$MNT")
disk_free=$(tstat disk free)
[ "$dfa" -le $((real + disk_free)) ] ||
	t_soft_fail "df of the mount shows $dfa bytes free, the tiers have at most $((real + disk_free))"
echo "device with $real bytes free: df avail $dfa, status free(fast) $sf"

# the rest goes too
dd if=/dev/zero of="$T/small/filler2" bs=64K count=512 status=none 2>/dev/null # bounded: twice the tmpfs
t_eq "$(avail_b "$T/small")" 0 "free on the small tmpfs after the second filler"
pat_w -s 4 "$MNT/new" 0 4M
t_eq "$(layout "$MNT/new")" "fast=0 disk=$((4 * M))" "layout of data written while the device is full"
grep -q "the filesystem under tier 'fast' ($T/small) is full below the tier's configured size" "$T_LOG" ||
	t_soft_fail "no log line for the full device: $(cat "$T_LOG")"
sleep 0.5
t_eq "$(tstat fast free)" 0 "fast free with its device full"
[ "$(status_free fast)" -eq 0 ] || t_soft_fail "tierctl status shows $(status_free fast) free on a full fast tier"
[ "$(avail_b "$MNT")" -le "$(tstat disk free)" ] ||
	t_soft_fail "df of the mount shows $(avail_b "$MNT") bytes free, disk has $(tstat disk free) and fast none"
e1=$(tstat fast io_errors)
pat_w -s 5 "$MNT/more" 0 3M
wait_passes 4
e2=$(tstat fast io_errors)
t_eq "$e2" "$e1" "fast io_errors while its device stays full (placement and 4 migrator passes)"
t_eq "$(layout "$MNT/more")" "fast=0 disk=$((3 * M))" "layout of more data while the device is full"
echo "fast tier on a full device: $(stats | grep '^tier fast')"

# space comes back
rm -f "$T/small/filler" "$T/small/filler2"
pat_w -s 6 "$MNT/back" 0 1M
t_eq "$(layout "$MNT/back")" "fast=$M disk=0" "layout once the device has room again"
sleep 0.5
[ "$(tstat fast free)" -gt 0 ] || t_soft_fail "fast free stays 0 after the device has room again"
pat_v -d -s 3 "$MNT/a" 0 2M
pat_v -d -s 4 "$MNT/new" 0 4M
pat_v -d -s 5 "$MNT/more" 0 3M
t_unmount

# ------------------------------------- two file tiers on one small tmpfs
t_tmpfs "$T/two" 8M
mkdir -p "$T/two/a" "$T/two/b" || t_fail mkdir
refuse "two 6M file tiers on one 8M tmpfs" \
	"tierfs: tiers 'a', 'b' are on one filesystem ($T/two/a) and together need 12M, but it has 8M free" \
	--tier a=file:"$T/two/a":6M --tier b=file:"$T/two/b":6M "$MNT"
t_eq "$(tier_dirs "$T/two/a")$(tier_dirs "$T/two/b")" "" "directories left by a refused mount"
t_mount --tier a=file:"$T/two/a":4M --tier b=file:"$T/two/b":4M
t_eq "$(avail_b "$MNT")" $((8 * M)) "df of two 4M tiers on one 8M tmpfs"
t_unmount

# -------------------------------------- tier paths under the mount point
mkdir -p "$MNT/sub" || t_fail mkdir
ln -s "$MNT/sub" "$T/link"
refuse "a tier path under the mount point" \
	"tierfs: tier 'x' ($MNT/sub) is at or under the mount point '$MNT': tier paths must lie outside it" \
	--tier x=file:"$MNT/sub":8M "$MNT"
refuse "a tier path equal to the mount point" \
	"tierfs: tier 'x' ($MNT) is at or under the mount point '$MNT': tier paths must lie outside it" \
	--tier r=ram:8M --tier x=file:"$MNT":8M "$MNT"
refuse "a tier path under the mount point through a symlink" \
	"tierfs: tier 'x' ($T/link) is at or under the mount point '$MNT': tier paths must lie outside it" \
	--tier x=pmem:"$T/link":8M "$MNT"
t_eq "$(ls -A "$MNT/sub")" "" "backing data made under the mount point by a refused mount"
rm -f "$T/link"
rmdir "$MNT/sub"

t_done
