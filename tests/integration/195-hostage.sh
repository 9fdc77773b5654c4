#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: multiuser
# TIMEOUT: 300
#
# No request holds the mount hostage (issue 17): while one user's
# requests wait for a long time, another user's still complete.  Hang
# limits only (60 s for something that takes milliseconds), no speed
# threshold.
#  A. A file tier whose filesystem is frozen (fsfreeze, as a hung NFS
#     server would be) under 12 O_DIRECT writers of user A: user B's
#     mkdir and a write to a file on the RAM tier complete, and once the
#     filesystem thaws, A's writers finish and their data reads back.
#  B. User A runs 12 loops of getfattr -n user.tierfs.layout on a tree of
#     20000 files: user B's mkdir, create and stat complete.
# On /dev/fuse the loop's threads grow past libfuse's 10; on io_uring a
# queue adds a thread while every one of its threads is busy.
. "$(dirname "$0")/lib.sh"
t_need_progs
for c in fsfreeze mkfs.ext4 losetup setpriv getfattr; do
	command -v "$c" >/dev/null || t_skip "$c missing"
done
A=1001:1001
B=1002:1002
M=1048576
LIMIT=60

# the file tier on a loop-mounted ext4 of the test's own
truncate -s 512M "$T/img" || t_fail "image"
mkfs.ext4 -q -F "$T/img" || t_fail mkfs
mkdir -p "$T/lo"
mount -o loop "$T/img" "$T/lo" || t_skip "cannot loop-mount an ext4 image here"
T_EXTRA_MOUNTS+=("$T/lo")
frozen=
thaw() { [ -z "$frozen" ] || fsfreeze -u "$T/lo" 2>/dev/null; frozen=; }
trap 'thaw; t_cleanup' EXIT
mkdir -p "$T/lo/tier"
t_mount -o allow_other --tier ram=ram:64M --tier disk=file:"$T/lo/tier":256M \
	--no-migrate
chmod 0777 "$MNT"
mkdir "$MNT/a" "$MNT/b" && chown 1001:1001 "$MNT/a" && chown 1002:1002 "$MNT/b" ||
	t_fail "dirs"
setfattr -n user.tierfs.pin -v disk "$MNT/a" || t_fail "pin a to disk"
setfattr -n user.tierfs.tiers -v ram "$MNT/b" || t_fail "b on ram"
t_as "$B" sh -c "echo before > '$MNT/b/f'" || t_fail "b's first write"

# where the test is, so that a run killed at its hang limit says where
step() { echo "$(date +%T) $*" >&2; }

# --- A: a frozen tier under 12 O_DIRECT writers
step "A: freezing the file tier"
fsfreeze -f "$T/lo" || t_skip "fsfreeze does not work here"
frozen=1
pids=()
for i in $(seq 12); do
	t_as "$A" dd if=/dev/zero of="$MNT/a/w$i" bs=1M count=4 oflag=direct \
		status=none &
	pids+=($!)
done
# wait until the daemon holds the writers (their files exist)
all_there() { [ "$(find "$MNT/a" -name 'w*' | wc -l)" -eq 12 ]; }
t_wait_until $LIMIT all_there || t_fail "A: the writers did not start"
step "A: 12 writers started; B's requests"
t_as "$B" timeout $LIMIT mkdir "$MNT/b/during" ||
	t_fail "A: B's mkdir did not complete while a tier was frozen"
t_as "$B" timeout $LIMIT sh -c "echo during >> '$MNT/b/f' && cat '$MNT/b/f' >/dev/null" ||
	t_fail "A: B's write to a RAM-tier file did not complete"
t_as "$B" timeout $LIMIT stat "$MNT/b/during" >/dev/null || t_fail "A: B's stat"
step "A: thawing; waiting for the writers"
thaw
for p in "${pids[@]}"; do
	wait "$p" || t_fail "A: a writer failed after the thaw"
done
step "A: writers done"
for i in $(seq 12); do
	t_eq "$(stat -c %s "$MNT/a/w$i")" $((4 * M)) "A: w$i's size"
	t_eq "$(tr -d '\0' <"$MNT/a/w$i" | wc -c)" 0 "A: w$i's data"
done
rm -rf "$MNT/a"/w*

# --- B: 12 layout loops on a large tree
step "B: the tree"
mkdir -p "$MNT/a/tree"
python3 - "$MNT/a/tree" <<'PY' || t_fail "B: the tree"
import os, sys
top = sys.argv[1]
for d in range(100):
    p = "%s/d%03d" % (top, d)
    os.mkdir(p)
    for f in range(200):
        os.close(os.open("%s/f%03d" % (p, f), os.O_CREAT | os.O_WRONLY, 0o644))
PY
chown -R 1001:1001 "$MNT/a/tree"
stop=$T/stop
loops=()
step "B: 12 layout loops; B's requests"
for i in $(seq 12); do
	t_as "$A" sh -c "while [ ! -e '$stop' ]; do getfattr -n user.tierfs.layout '$MNT/a/tree' >/dev/null 2>&1; done" &
	loops+=($!)
done
for i in $(seq 20); do
	t_as "$B" timeout $LIMIT mkdir "$MNT/b/m$i" ||
		{ touch "$stop"; t_fail "B: B's mkdir $i did not complete during 12 layout loops"; }
	t_as "$B" timeout $LIMIT touch "$MNT/b/m$i/f" ||
		{ touch "$stop"; t_fail "B: B's create $i"; }
done
touch "$stop"
step "B: waiting for the loops to stop"
for p in "${loops[@]}"; do
	wait "$p"
done
step "B: loops done"
t_pass
