#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: options
# TIMEOUT: 90
#
# Mount safety (issue 19):
#  - the mount's source names its config file (or "tierfs:NAME+NAME" for
#    tiers from the command line), so that `mount -a` sees an fstab line
#    mounted and skips it instead of stacking a second tierfs;
#  - a second tierfs on a live tierfs mount point is refused with one
#    line and a non-zero exit; the first mount and its files stay;
#  - a dead tierfs (daemon killed) on the mount point is refused too,
#    with a line that says how to unmount it;
#  - -o remount (as mount.fuse3 runs it: tierfs SOURCE DIR -o remount,..)
#    changes ro/rw and the mount flags of the live mount and keeps its
#    data; it refuses tierfs settings, another source and FUSE options
#    the mount does not have, each with one line, changing nothing.
# Remounts run the daemon binary itself ($TIERFS_BIN_REAL): the io_uring
# leg's wrapper adds --transport, a setting a remount refuses.
. "$(dirname "$0")/lib.sh"
t_need_progs

one_mount() {
	t_eq "$(awk -v m="$MNT" '$5 == m' /proc/self/mountinfo | wc -l)" 1 \
		"mounts on $MNT ($1)"
}

# refused WHAT PATTERN CMD... -- CMD must fail with one line like PATTERN
refused() {
	local what=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	[ "$rc" -ne 0 ] || t_fail "$what: exit 0, wanted a refusal (output: $out)"
	t_eq "$(printf '%s\n' "$out" | wc -l)" 1 "$what: lines of output ($out)"
	t_like "$out" "*$pat*" "$what"
}

cat >"$T/scratch.conf" <<'EOF'
[tier.ram]
kind = ram
size = 32M
EOF

# --- the source names the config; mount -a skips the mounted line
t_mount "$T/scratch.conf"
t_eq "$(findmnt -n -o SOURCE "$MNT")" "$T/scratch.conf" "source of a config mount"
echo data >"$MNT/f" || t_fail "write"
printf '%s %s fuse.tierfs nofail 0 0\n' "$T/scratch.conf" "$MNT" >"$T/fstab"
out=$(mount -T "$T/fstab" -a -v 2>&1) || t_fail "mount -a over the live mount: $out"
t_like "$out" "*already mounted*" "mount -a on the mounted line"
one_mount "after mount -a"

# --- a second tierfs on the live one: refused, the first stays
refused "a second tierfs" "already a live tierfs mount (source $T/scratch.conf)" \
	"$TIERFS_BIN" --tier ram=ram:8M "$MNT"
refused "a second tierfs, same config" "already a live tierfs mount" \
	"$TIERFS_BIN" "$T/scratch.conf" "$MNT"
one_mount "after two refused mounts"
t_eq "$(cat "$MNT/f")" data "the first mount's file"

# --- -o remount: mount flags yes, settings no
"$TIERFS_BIN_REAL" "$T/scratch.conf" "$MNT" -o remount,ro,dev,suid ||
	t_fail "remount ro"
t_like "$(findmnt -n -o OPTIONS "$MNT")" "ro,*" "options after remount ro"
out=$(touch "$MNT/g" 2>&1) && t_fail "a create on the read-only mount worked"
t_like "$out" "*Read-only file system*" "a create on the read-only mount"
"$TIERFS_BIN_REAL" "$T/scratch.conf" "$MNT" -o remount,rw,nosuid,nodev,noexec ||
	t_fail "remount rw"
t_like "$(findmnt -n -o OPTIONS "$MNT")" "rw,nosuid,nodev,noexec*" "options after remount rw,noexec"
echo more >>"$MNT/f" || t_fail "write after remount rw"
t_eq "$(cat "$MNT/f")" "data
more" "the file across two remounts"
refused "remount with a setting" "not tierfs settings" \
	"$TIERFS_BIN_REAL" "$T/scratch.conf" "$MNT" -o remount,high_watermark=50
refused "remount with a tier" "needs a new mount" \
	"$TIERFS_BIN_REAL" --tier ram=ram:8M "$T/scratch.conf" "$MNT" -o remount
refused "remount with another source" "serves $T/scratch.conf, not tierfs:other" \
	"$TIERFS_BIN_REAL" tierfs:other "$MNT" -o remount,ro
refused "remount with a FUSE option" "cannot change 'allow_other'" \
	"$TIERFS_BIN_REAL" "$T/scratch.conf" "$MNT" -o remount,allow_other
t_like "$(findmnt -n -o OPTIONS "$MNT")" "rw,nosuid,nodev,noexec*" "options after refused remounts"
one_mount "after the remounts"

# --- tiers from the command line name themselves
mkdir -p "$T/disk"
t_remount --tier fast=ram:8M --tier disk=file:"$T/disk":32M
t_eq "$(findmnt -n -o SOURCE "$MNT")" "tierfs:fast+disk" "source of a command-line mount"

# --- a dead tierfs: refused, with the way out
kill -9 "$T_PID"
wait "$T_PID" 2>/dev/null
T_PID=
# the connection dies when the last reference to the daemon's /dev/fuse
# goes; over io_uring the ring's teardown, which holds one, finishes in a
# kernel worker after the process is gone
dead_mount() { stat -f "$MNT" 2>&1 | grep -q "not connected"; }
t_wait_until 30 dead_mount || t_fail "the mount of a killed daemon still answers statfs"
refused "a tierfs on a dead one" "daemon is gone (source tierfs:fast+disk): unmount it first" \
	"$TIERFS_BIN" --tier ram=ram:8M "$MNT"
umount -l "$MNT" || t_fail "umount -l of the dead mount"
refused "remount of nothing" "no tierfs is mounted" \
	"$TIERFS_BIN_REAL" "$MNT" -o remount,ro
t_mount --tier ram=ram:8M
t_eq "$(findmnt -n -o SOURCE "$MNT")" "tierfs:ram" "source after the dead mount went"
t_pass
