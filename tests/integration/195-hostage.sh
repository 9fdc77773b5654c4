#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: multiuser
# TIMEOUT: 420
# IO: tiered the daemon's calls into a hung tier (a native file's I/O is the kernel's own: it waits as on any filesystem)
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
#  C. (issue 32) The file tier frozen again, on a mount with
#     --tier-timeout 3, with requests pinned to CPU 0 (on io_uring they
#     all go to CPU 0's queue): while user A's writer is stuck inside
#     the frozen tier holding its file's data lock, and A runs 40
#     layout loops and 4 verify loops of that tree and file, user B's
#     mkdir, create and RAM-tier write complete, B's own layout of the
#     whole mount (which walks A's stuck file) completes, and root's
#     quota set on A's tree completes (before: each of these waited for
#     the stuck writer); then 64 more O_DIRECT writes of A to the frozen
#     tier leave B's RAM-tier I/O on CPU 0 free to complete, and fail
#     with EIO once the tier has answered nothing for 3 s; after the
#     thaw the tier answers again and A's stuck writer's data is there.
# On /dev/fuse the loop's threads grow past libfuse's 10; on io_uring a
# queue adds a thread while every one of its threads is busy.
. "$(dirname "$0")/lib.sh"
t_need_progs
for c in fsfreeze mkfs.ext4 losetup setpriv getfattr taskset; do
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

# --- C: one user's requests on a frozen tier, with a timeout
t_remount -o allow_other --tier ram=ram:64M --tier disk=file:"$T/lo/tier":256M \
	--no-migrate --tier-timeout 3
chmod 0777 "$MNT"
mkdir "$MNT/a" "$MNT/b" && chown 1001:1001 "$MNT/a" && chown 1002:1002 "$MNT/b" ||
	t_fail "C: dirs"
setfattr -n user.tierfs.pin -v disk "$MNT/a" || t_fail "C: pin a to disk"
setfattr -n user.tierfs.tiers -v ram "$MNT/b" || t_fail "C: b on ram"
mkdir "$MNT/a/tree" || t_fail "C: a/tree"
python3 - "$MNT/a/tree" <<'PY' || t_fail "C: the tree"
import os, sys
for f in range(2000):
    os.close(os.open("%s/f%04d" % (sys.argv[1], f), os.O_CREAT | os.O_WRONLY, 0o644))
PY
chown -R 1001:1001 "$MNT/a/tree" || t_fail "C: chown the tree"
tval() { # KEY: of the disk tier's stats record
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v k="$1" '$1 == "tier" && $2 == "disk" { for (i = 3; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
inside_ge() { [ "$(tval io_inside)" -ge "$1" ]; }
on0() { taskset -c 0 "$@"; }
step "C: freezing the file tier"
fsfreeze -f "$T/lo" || t_fail "C: fsfreeze"
frozen=1
t_as "$A" dd if=/dev/zero of="$MNT/a/stuck" bs=1M count=4 oflag=direct status=none &
stuck=$!
t_wait_until $LIMIT inside_ge 1 || t_fail "C: A's writer did not reach the tier"
step "C: A's writer is inside the frozen tier; 40 layout and 4 verify loops on CPU 0"
loops=()
rm -f "$stop"
for i in $(seq 40); do
	t_as "$A" taskset -c 0 sh -c "while [ ! -e '$stop' ]; do getfattr -n user.tierfs.layout '$MNT/a' >/dev/null 2>&1; done" &
	loops+=($!)
done
for i in $(seq 4); do
	t_as "$A" taskset -c 0 sh -c "while [ ! -e '$stop' ]; do getfattr -n user.tierfs.verify '$MNT/a/stuck' >/dev/null 2>&1; done" &
	loops+=($!)
done
stop_loops() {
	touch "$stop"
	for p in "${loops[@]}"; do
		wait "$p"
	done
	loops=()
}
fail_c() { stop_loops; t_fail "$@"; }
for i in $(seq 10); do
	t_as "$B" timeout $LIMIT taskset -c 0 mkdir "$MNT/b/c$i" ||
		fail_c "C: B's mkdir $i on CPU 0 did not complete"
	t_as "$B" timeout $LIMIT taskset -c 0 touch "$MNT/b/c$i/f" ||
		fail_c "C: B's create $i on CPU 0"
	t_as "$B" timeout $LIMIT taskset -c 0 sh -c "echo $i >> '$MNT/b/f' && cat '$MNT/b/f' >/dev/null" ||
		fail_c "C: B's RAM-tier write $i on CPU 0"
done
step "C: B's layout of the whole mount"
t_as "$B" timeout $LIMIT getfattr -n user.tierfs.layout "$MNT" >/dev/null ||
	fail_c "C: B's layout of the mount (it walks A's stuck file) did not complete"
step "C: root's quota on A's tree"
timeout $LIMIT setfattr -n trusted.tierfs.quota -v 1G "$MNT/a" ||
	fail_c "C: the quota set on A's tree did not complete"
t_as "$B" timeout $LIMIT mkdir "$MNT/b/after-quota" ||
	fail_c "C: B's mkdir after the quota set"
stop_loops
step "C: 64 O_DIRECT writes of A to the frozen tier on CPU 0"
writers=()
for i in $(seq 64); do
	t_as "$A" taskset -c 0 dd if=/dev/zero of="$MNT/a/d$i" bs=1M count=1 oflag=direct status=none 2>/dev/null &
	writers+=($!)
done
for i in $(seq 5); do
	t_as "$B" timeout $LIMIT taskset -c 0 sh -c "echo w$i >> '$MNT/b/g' && cat '$MNT/b/g' >/dev/null" ||
		t_fail "C: B's RAM-tier I/O on CPU 0 during A's 64 writes"
done
refused() { [ "$(tval stall_refused)" -gt 0 ]; }
t_wait_until $LIMIT refused || t_fail "C: the frozen tier refused nothing (stall_refused $(tval stall_refused))"
[ "$(tval stalls)" -ge 1 ] || t_fail "C: stalls $(tval stalls)"
# A holds at most its share of the tier's calls inside
[ "$(tval io_inside)" -le 8 ] || t_fail "C: A has $(tval io_inside) calls inside the tier"
step "C: thawing"
thaw
for p in "${writers[@]}"; do
	timeout $LIMIT sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done" ||
		t_fail "C: a writer of A still waits after the thaw"
done
wait "$stuck" || t_fail "C: A's stuck writer failed after the thaw"
t_eq "$(stat -c %s "$MNT/a/stuck")" $((4 * M)) "C: the stuck writer's size"
t_eq "$(tr -d '\0' <"$MNT/a/stuck" | wc -c)" 0 "C: the stuck writer's data"
not_stalled() { [ "$(tval stalled)" = 0 ]; }
t_wait_until $LIMIT not_stalled || t_fail "C: the tier still stalled after the thaw"
t_as "$A" dd if=/dev/zero of="$MNT/a/after" bs=1M count=2 oflag=direct status=none ||
	t_fail "C: a write to the thawed tier"
t_pass
