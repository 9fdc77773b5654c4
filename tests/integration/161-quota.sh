#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: limits
# TIMEOUT: 120
#
# Quotas per directory (trusted.tierfs.quota, issue 11), with two
# unprivileged users A and B and 1M extents:
#  - only root sets a quota (EPERM otherwise); bad values (malformed,
#    unknown tier, a key twice, a file) fail with one errno, nothing set;
#  - A's write into /job1 (ram:2M,total:10M) stops with EDQUOT at 10M,
#    the first 2M on ram and the rest on disk (the tier cap spills);
#    B's write into /job2 (10M) still succeeds;
#  - df DIR shows the quota as the size, user.tierfs.quota and tierctl
#    quota the use; rm gives the use back;
#  - rename and link across quota trees fail with EXDEV, mv copies;
#    within one tree they work; every quota counts its names (inodes=,
#    the inode limits themselves: 164-inode-units.sh);
#  - a quota set on a directory with data counts that data; nested
#    quotas charge every one above; removing the attribute lifts it;
#  - migration (tierctl migrate, the migrator's demotion) moves the use
#    per tier along, and a move into a tier past its cap is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"
command -v setpriv >/dev/null || t_skip "setpriv missing"
command -v setfattr >/dev/null || t_skip "setfattr missing"
[ -n "${TIERCTL:-}" ] || t_skip "TIERCTL not set"

A=1001:1001
B=1002:1002
Q=trusted.tierfs.quota

mkdir -p "$T/disk" || t_fail mkdir
t_mount -o allow_other --tier ram=ram:16M --tier disk=file:"$T/disk":64M \
	--no-migrate
chmod 0755 "$MNT" || t_fail chmod
mkdir "$MNT/job1" "$MNT/job2" && chown 1001:1001 "$MNT/job1" &&
	chown 1002:1002 "$MNT/job2" || t_fail "job dirs"

# the use against the limits, without the figures of the job report
# (KEY=N, no "/"; 165-quota-report.sh)
usage() { t_xattr "$1" user.tierfs.quota |
	sed -E ':a; s/ [a-z_]+=[0-9]+( |$)/\1/; ta'; }
no_quota() { ! getfattr --absolute-names -n "$Q" -- "$1" >/dev/null 2>&1; }

# --- who may set it, and bad values ---
t_errno EPERM t_as $A "$SC" setxattr "$MNT/job1" "$Q" 10M none
no_quota "$MNT/job1" || t_fail "a non-root user set a quota"
for bad in "" bogus 10X -5M ram:1M,ram:2M nvme:1G ram:1M,,total:5M \
	"total:" ":5M" "ram:1M," "10M 20M"; do
	t_errno EINVAL "$SC" setxattr "$MNT/job1" "$Q" "${bad:--}" none
done
no_quota "$MNT/job1" || t_fail "a bad value set a quota"
echo x >"$MNT/afile" || t_fail afile
t_errno ENOTDIR "$SC" setxattr "$MNT/afile" "$Q" 10M none

# --- set ---
t_ok "$SC" setxattr "$MNT/job1" "$Q" ram:2M,total:10M none
t_ok "$SC" setxattr "$MNT/job2" "$Q" 10M none
t_eq "$(getfattr --absolute-names --only-values -n "$Q" "$MNT/job1")" \
	ram:2M,total:10M "the value as set"
t_eq "$(usage "$MNT/job1")" "total=0/$((10 * M)) ram=0/$((2 * M)) disk=0/- inodes=0/- dir=/job1" \
	"usage of an empty quota"

# --- EDQUOT at the total, the tier cap spills ---
out=$(t_as $A dd if=/dev/zero of="$MNT/job1/f" bs=1M count=20 conv=fsync 2>&1) &&
	t_fail "a write past the quota succeeded: $out"
t_like "$out" "*Disk quota exceeded*" "dd past the quota"
t_eq "$(layout "$MNT/job1/f")" "ram=$((2 * M)) disk=$((8 * M))" "layout at the quota"
t_eq "$(usage "$MNT/job1")" \
	"total=$((10 * M))/$((10 * M)) ram=$((2 * M))/$((2 * M)) disk=$((8 * M))/- inodes=1/- dir=/job1" \
	"usage at the quota"
out=$(t_as $B dd if=/dev/zero of="$MNT/job2/g" bs=1M count=5 conv=fsync 2>&1) ||
	t_fail "B's write failed while A is at A's quota: $out"
t_eq "$(layout "$MNT/job2/g")" "ram=$((5 * M)) disk=0" "B's data on ram"

# --- df and tierctl ---
t_eq "$(df -B1 --output=size "$MNT/job1" | tail -1 | tr -d ' ')" $((10 * M)) "df size of job1"
t_eq "$(df -B1 --output=avail "$MNT/job1" | tail -1 | tr -d ' ')" 0 "df avail of job1"
t_eq "$(df -B1 --output=avail "$MNT/job2" | tail -1 | tr -d ' ')" $((5 * M)) "df avail of job2"
out=$(t_as $A "$TIERCTL" quota "$MNT/job1") || t_fail "tierctl quota: $out"
t_like "$out" "*quota on /job1*total*10M of 10M*100.0%*ram*2M of 2M*disk*8M (no limit)*" "tierctl quota"
out=$("$TIERCTL" quota --json --compact "$MNT/job2") || t_fail "tierctl quota --json: $out"
t_like "$out" '*"dir":"/job2","total":{"used":5242880,"limit":10485760}*' "tierctl quota --json"
out=$("$TIERCTL" quota "$MNT") || t_fail "tierctl quota of the root: $out"
t_like "$out" "*no quota*" "tierctl quota without a quota"

# --- rm gives it back ---
rm "$MNT/job1/f" || t_fail rm
t_eq "$(usage "$MNT/job1")" "total=0/$((10 * M)) ram=0/$((2 * M)) disk=0/- inodes=0/- dir=/job1" "usage after rm"
t_as $A dd if=/dev/zero of="$MNT/job1/f" bs=1M count=3 conv=fsync 2>/dev/null || t_fail "write after rm"
t_as $A truncate -s 1M "$MNT/job1/f" || t_fail truncate
t_eq "$(usage "$MNT/job1")" "total=$M/$((10 * M)) ram=$M/$((2 * M)) disk=0/- inodes=1/- dir=/job1" "usage after truncate"

# --- EXDEV across quota trees, not within one ---
t_errno EXDEV "$SC" rename "$MNT/job2/g" "$MNT/job1/g"
t_errno EXDEV "$SC" rename "$MNT/afile" "$MNT/job1/afile"
t_errno EXDEV "$SC" link "$MNT/job2/g" "$MNT/job1/g"
t_errno EXDEV "$SC" rename "$MNT/job1" "$MNT/job2/job1"
mkdir "$MNT/job1/sub" || t_fail mkdir
t_ok "$SC" rename "$MNT/job1/f" "$MNT/job1/sub/f"
t_ok "$SC" link "$MNT/job1/sub/f" "$MNT/job1/f2"
t_ok "$SC" rename "$MNT/job1/sub" "$MNT/job1/sub2"
t_ok "$SC" rename "$MNT/job1" "$MNT/job1x"
t_ok "$SC" rename "$MNT/job1x" "$MNT/job1"
mv "$MNT/job2/g" "$MNT/job1/g" || t_fail "mv across quota trees"
t_eq "$(usage "$MNT/job1")" "total=$((6 * M))/$((10 * M)) ram=$((2 * M))/$((2 * M)) disk=$((4 * M))/- inodes=4/- dir=/job1" \
	"usage after mv in"
t_eq "$(usage "$MNT/job2")" "total=0/$((10 * M)) ram=0/- disk=0/- inodes=0/- dir=/job2" "usage after mv out"

# --- set on a directory with data; nested; removed ---
mkdir "$MNT/job3" && dd if=/dev/zero of="$MNT/job3/h" bs=1M count=3 conv=fsync 2>/dev/null ||
	t_fail "job3"
t_ok "$SC" setxattr "$MNT/job3" "$Q" 100M none
t_like "$(usage "$MNT/job3")" "total=$((3 * M))/$((100 * M)) *" "usage counted when set"
mkdir "$MNT/job3/in" || t_fail mkdir
t_ok "$SC" setxattr "$MNT/job3/in" "$Q" total:2M none
out=$(dd if=/dev/zero of="$MNT/job3/in/x" bs=1M count=4 conv=fsync 2>&1) && t_fail "nested quota passed"
t_like "$out" "*Disk quota exceeded*" "nested quota"
t_like "$(usage "$MNT/job3/in/x")" \
	"total=$((2 * M))/$((2 * M)) *dir=/job3/in"$'\n'"total=$((5 * M))/$((100 * M)) *dir=/job3" \
	"nested usage charges both"
setfattr -x "$Q" "$MNT/job3/in" || t_fail "remove the quota"
no_quota "$MNT/job3/in" || t_fail "the attribute is still there"
dd if=/dev/zero of="$MNT/job3/in/x" bs=1M count=4 conv=fsync 2>/dev/null || t_fail "write after the quota was removed"
t_like "$(usage "$MNT/job3/in")" "total=$((7 * M))/$((100 * M)) *dir=/job3" "usage after removal"
t_ok "$SC" setxattr "$MNT/job3/in" "$Q" 5M none
t_like "$(usage "$MNT/job3/in")" "total=$((4 * M))/$((5 * M)) *dir=/job3/in*" "set again: usage kept"
rm -r "$MNT/job3" || t_fail "rm -r job3"

# --- migration moves the use per tier ---
t_remount -o allow_other --tier ram=ram:8M --tier disk=file:"$T/disk":64M \
	--high-watermark 75 --low-watermark 50
mkdir "$MNT/j" || t_fail mkdir
t_ok "$SC" setxattr "$MNT/j" "$Q" ram:4M,total:20M none
dd if=/dev/zero of="$MNT/j/f" bs=1M count=6 conv=fsync 2>/dev/null || t_fail "write j/f"
t_eq "$(layout "$MNT/j/f")" "ram=$((4 * M)) disk=$((2 * M))" "layout under a ram cap"
"$TIERCTL" migrate -q "$MNT/j/f" disk || t_fail "tierctl migrate to disk"
t_eq "$(usage "$MNT/j")" "total=$((6 * M))/$((20 * M)) ram=0/$((4 * M)) disk=$((6 * M))/- inodes=1/- dir=/j" \
	"usage after a migration down"
"$TIERCTL" migrate -q "$MNT/j/f" ram 2>/dev/null && t_fail "a migration past the ram cap succeeded"
t_eq "$(layout "$MNT/j/f")" "ram=$((4 * M)) disk=$((2 * M))" "layout after a migration up to the cap"
t_eq "$(usage "$MNT/j")" "total=$((6 * M))/$((20 * M)) ram=$((4 * M))/$((4 * M)) disk=$((2 * M))/- inodes=1/- dir=/j" \
	"usage after a migration up"
# the migrator: 4M of j plus 3M elsewhere passes the high mark (6M)
dd if=/dev/zero of="$MNT/other" bs=1M count=3 conv=fsync 2>/dev/null || t_fail "write other"
wait_for 10 'RAM not brought down: used $(tstat ram used)' \
	eval '[ "$(tstat ram used)" -le $((4 * M)) ]'
wait_idle
ram=$(on_tier ram "$MNT/j/f")
t_like "$(usage "$MNT/j")" "total=$((6 * M))/$((20 * M)) ram=$ram/$((4 * M)) disk=$((6 * M - ram))/- *" \
	"usage follows the migrator"
rm -r "$MNT/j" || t_fail "rm j"
t_pass
