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
#    fusermount -u removes: no thread, ring or mount is left;
#  - issue 32, with the daemon's test faults (TIERFS_TEST_URING_FAULTS,
#    kernel_uring_i.h): replies whose submit fails for a while (EAGAIN,
#    EINTR, EBUSY) still reach their callers; a reply that cannot be
#    sent is counted lost, and its queue goes on; an entry the kernel
#    fails leaves the counters (threads, gone) true and its queue
#    serving; SIGTERM while files are open and stats and policy loops
#    run on both CPUs ends the daemon cleanly (the rings stop before the
#    mount is freed: the ASan legs see any use after free); an idle
#    mount's ring threads do not wake, and their buffers are counted.
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

# --- issue 32: replies whose submit fails for a while get through
ncpu=$(nproc)
TIERFS_TEST_URING_FAULTS=again=30 t_mount --transport uring --tier ram=ram:16M
t_wait_until 10 transport_is uring || t_fail "again: transport $(mstat transport)"
for i in $(seq 40); do
	timeout 30 sh -c "mkdir '$MNT/d$i' && echo $i > '$MNT/d$i/f' && rm -r '$MNT/d$i'" ||
		t_fail "again: the ops of round $i did not complete (a reply was dropped)"
done
[ "$(mstat uring_retries)" -ge 30 ] ||
	t_fail "again: uring_retries $(mstat uring_retries), expected >= 30"
t_eq "$(mstat uring_lost)" 0 "again: nothing lost"
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "again: $T_DAEMON_PROBLEM"

# the faults pick the 60th LISTXATTR (opcode 23): a loop of them, on
# CPU 0, makes it (the kernel caches no xattr list; the test's own
# stats reads are GETXATTRs)
stat_loop() { # FILE-TO-TOUCH-WHEN-DONE
	taskset -c 0 sh -c "for i in \$(seq 100); do getfattr -d '$MNT' >/dev/null 2>&1 || exit 1; done; touch '$1'"
}
# --- a reply that cannot be sent: counted lost, the rest goes on
TIERFS_TEST_URING_FAULTS=lose=23:60 t_mount --transport uring --tier ram=ram:16M
t_wait_until 10 transport_is uring || t_fail "lose: transport $(mstat transport)"
stat_loop "$T/lose-done" &
loop=$!
lost_one() { [ "$(mstat uring_lost)" = 1 ]; }
t_wait_until 30 lost_one || t_fail "lose: uring_lost $(mstat uring_lost), expected 1"
[ -e "$T/lose-done" ] && t_fail "lose: the loop whose reply was lost finished"
# every CPU's queue still serves (a new entry replaces the lost one
# where it was the queue's last)
for c in $(seq 0 $((ncpu - 1))); do
	t_check timeout 30 taskset -c "$c" sh -c "mkdir '$MNT/c$c' && echo x > '$MNT/c$c/f' && cat '$MNT/c$c/f' >/dev/null"
done
t_eq "$(mstat uring_lost)" 1 "lose: one lost"
# the caller of the lost reply waits until the daemon ends: SIGTERM
kill -TERM "$T_PID"
wait "$T_PID"
rc=$?
pid=$T_PID
T_PID=
t_eq "$rc" 0 "lose: the daemon's exit status after SIGTERM"
timeout 30 sh -c "while kill -0 $loop 2>/dev/null; do sleep 0.1; done" ||
	t_fail "lose: the caller still waits after the daemon ended"
t_san_reports "$pid" && t_fail "lose: sanitizer report"
t_is_mounted "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }

# --- an entry the kernel fails: the counters stay true, the queue serves
TIERFS_TEST_URING_FAULTS=badcommit=23:60 t_mount --transport uring --tier ram=ram:16M
t_wait_until 10 transport_is uring || t_fail "badcommit: transport $(mstat transport)"
stat_loop "$T/bad-done" &
loop=$!
gone_one() { [ "$(mstat uring_gone)" = 1 ]; }
t_wait_until 30 gone_one || t_fail "badcommit: uring_gone $(mstat uring_gone), expected 1"
# the stats count the ring threads there are: those of the daemon
# pinned to one CPU (a kick thread, also pinned, lives a moment)
pinned_threads() {
	local t n=0
	for t in /proc/"$T_PID"/task/*; do
		grep -q '^Cpus_allowed_list:[[:space:]]*[0-9]*$' "$t/status" 2>/dev/null &&
			n=$((n + 1))
	done
	echo "$n"
}
counted_right() { [ "$(mstat uring_threads)" = "$(pinned_threads)" ]; }
t_wait_until 10 counted_right ||
	t_fail "badcommit: uring_threads $(mstat uring_threads), ring threads $(pinned_threads)"
for c in $(seq 0 $((ncpu - 1))); do
	t_check timeout 30 taskset -c "$c" sh -c "mkdir '$MNT/c$c' && echo x > '$MNT/c$c/f' && cat '$MNT/c$c/f' >/dev/null"
done
kill -TERM "$T_PID"
wait "$T_PID"
rc=$?
pid=$T_PID
T_PID=
t_eq "$rc" 0 "badcommit: the daemon's exit status after SIGTERM"
timeout 30 sh -c "while kill -0 $loop 2>/dev/null; do sleep 0.1; done" ||
	t_fail "badcommit: the caller still waits after the daemon ended"
t_san_reports "$pid" && t_fail "badcommit: sanitizer report"
t_is_mounted "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }

# --- SIGTERM with files open, stats and policy loops running on every
# CPU: the rings stop before what they read is freed
mkdir -p "$T/disk2"
t_mount --transport uring --tier ram=ram:16M --tier disk=file:"$T/disk2":64M
t_wait_until 10 transport_is uring || t_fail "term: transport $(mstat transport)"
mkdir "$MNT/p" && echo data >"$MNT/p/f" || t_fail "term: setup"
exec 7<"$MNT/p/f" 8>>"$MNT/p/g"
loops=()
# the loops work in the mount (their cwd), so that they go on after the
# daemon's unmount detached it, until the connection ends
for c in $(seq 0 $((ncpu - 1))); do
	(cd "$MNT/p" && exec taskset -c "$c" sh -c "while getfattr -n user.tierfs.stats . >/dev/null 2>&1; do :; done") &
	loops+=($!)
	(cd "$MNT/p" && exec taskset -c "$c" sh -c "while setfattr -n user.tierfs.tiers -v disk,ram . 2>/dev/null &&
		setfattr -n user.tierfs.tiers -v ram,disk . 2>/dev/null; do :; done") &
	loops+=($!)
done
busy() { [ "$(mstat uring_requests)" -gt 2000 ]; }
t_wait_until 30 busy || t_fail "term: the loops did not run"
kill -TERM "$T_PID"
wait "$T_PID"
rc=$?
pid=$T_PID
T_PID=
exec 7<&- 8>&-
for p in "${loops[@]}"; do
	timeout 30 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done" || kill -9 "$p"
	wait "$p" 2>/dev/null
done
t_eq "$rc" 0 "term: the daemon's exit status after SIGTERM"
t_san_reports "$pid" && t_fail "term: sanitizer report from the daemon"
t_is_mounted "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }

# --- an idle mount costs nothing: its ring threads sleep until a request
# comes (a thread that woke every 500 ms switched 4 times in 2 s); the
# buffers are counted
t_mount --transport uring --tier ram=ram:16M
t_wait_until 10 transport_is uring || t_fail "idle: transport $(mstat transport)"
nthreads=$(mstat uring_threads)
bufs=$(mstat uring_buffer_bytes)
[ "$nthreads" -ge "$ncpu" ] || t_fail "idle: $nthreads ring threads for $ncpu CPUs"
# each an entry of at least 1 MiB (max_write): what the kernel asks for
[ "$bufs" -ge $((nthreads * 1048576)) ] ||
	t_fail "idle: uring_buffer_bytes $bufs for $nthreads threads"
switches() { # the context switches of each ring thread (pinned to one CPU)
	local t
	for t in /proc/"$T_PID"/task/*; do
		grep -q '^Cpus_allowed_list:[[:space:]]*[0-9]*$' "$t/status" 2>/dev/null ||
			continue
		awk '/ctxt_switches/ { n += $2 } END { print n }' "$t/status"
	done
}
before=$(switches | tr '\n' ' ')
sleep 2 # an idle period; nothing of the test touches the mount in it
after=$(switches | tr '\n' ' ')
read -r -a b <<<"$before"
read -r -a a <<<"$after"
t_eq "${#a[@]}" "${#b[@]}" "idle: ring threads before and after"
for i in "${!a[@]}"; do
	# one stray request of some other program is allowed
	[ $((a[i] - b[i])) -le 2 ] ||
		t_fail "idle: a ring thread switched $((a[i] - b[i])) times in 2 idle seconds"
done
t_unmount

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
