#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: data
# TIMEOUT: 300
#
# The memory follower (fs/memwatch.h, issue 18) in a real memory cgroup
# (v1 where the memory controller is mounted there, else v2): the daemon
# holds 200M of file data in a 256M RAM tier over a file tier; the
# cgroup's limit is then set to what it uses plus 256M, and a "job" in
# the same cgroup takes 192M, which leaves less than the 160M reserve.
# The RAM tier's limit must go down, the migrator must demote until the
# cgroup has its reserve again, the job must live, every byte must read
# back exact, and the limit must grow again once the job is gone.  With
# --no-memory-follow the wait for the reserve fails.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
command -v python3 >/dev/null || t_skip "no python3"
if ldd "$TIERFS_BIN" 2>/dev/null | grep -q libtsan; then
	# TSan's shadow of what the daemon touches is charged to the
	# cgroup too, and is not given back: its numbers mean nothing
	t_skip "under TSan the cgroup's usage is mostly shadow memory"
fi

# the cgroup: a child of ours on the v1 memory hierarchy, or of the v2 root
CG= CGV1= CGPARENT=
v1mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -n "$v1mnt" ]; then
	own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
	CGPARENT=$v1mnt${own%/}
	CGV1=1
else
	v2mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	[ -n "$v2mnt" ] || t_skip "no cgroup hierarchy with a memory controller"
	grep -qw memory "$v2mnt/cgroup.controllers" 2>/dev/null ||
		t_skip "cgroup v2 without the memory controller"
	grep -qw memory "$v2mnt/cgroup.subtree_control" ||
		echo +memory >"$v2mnt/cgroup.subtree_control" 2>/dev/null ||
		t_skip "cannot enable the memory controller for child cgroups"
	CGPARENT=$v2mnt
fi
CG=$CGPARENT/tierfs-test.$$
mkdir "$CG" 2>/dev/null || t_skip "cannot make a cgroup under $CGPARENT"
HOG=
cg_cleanup() {
	[ -n "$HOG" ] && kill "$HOG" 2>/dev/null && wait "$HOG" 2>/dev/null
	[ -n "$T_PID" ] && echo "$T_PID" >"$CGPARENT/cgroup.procs" 2>/dev/null
	rmdir "$CG" 2>/dev/null
}
trap 'rc=$?; cg_cleanup; (exit $rc); t_cleanup' EXIT

usage() {
	if [ -n "$CGV1" ]; then cat "$CG/memory.usage_in_bytes"
	else cat "$CG/memory.current"; fi
}
set_limit() {
	if [ -n "$CGV1" ]; then echo "$1" >"$CG/memory.limit_in_bytes"
	else echo "$1" >"$CG/memory.max"; fi
}
# field TYPE NAME KEY of the stats ("-" for a line without a name)
field() {
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v t="$1" -v n="$2" -v k="$3" '$1 == t && (n == "-" || $2 == n) {
			for (i = 2; i <= NF; i++) { split($i, kv, "=");
				if (kv[1] == k) { print kv[2]; exit } } }'
}
shrunk_once() { [ "$(field memory - shrinks)" -ge 1 ]; }
# the cgroup has its reserve again, or the RAM tier gave all it holds
# (what else the cgroup holds is not the follower's to give)
reserve_back() {
	local used
	used=$(field tier ram used)
	[ "$used" -le "$(field tier ram limit)" ] &&
		{ [ "$(field memory - short_by)" -le 0 ] || [ "$used" -eq 0 ]; }
}
grown() { [ "$(field memory - grows)" -ge 1 ] && \
	[ "$(field tier ram limit)" -gt "$shrunk" ]; }

# ASan keeps freed memory in a quarantine (256M by default), which the
# cgroup is charged for and which would count as the daemon's own use
export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=4:thread_local_quarantine_size_kb=64"
mkdir -p "$T/ft"
t_mount --tier ram=ram:256M --tier f=file:"$T/ft":1G --memory-reserve 160M
echo "$T_PID" >"$CG/cgroup.procs" || t_fail "cannot move the daemon into $CG"
t_eq "$(field memory - follow)" 1 "the follower runs on a RAM tier over a file tier"
t_eq "$(field tier ram limit)" $((256 << 20)) "the RAM tier's limit at mount"

# 200M of data, all of it in the RAM tier
t_check "$P" -b 1M -s 11 w "$MNT/a" 0 120M >/dev/null
t_check "$P" -b 1M -s 12 w "$MNT/b" 0 80M >/dev/null
sync "$MNT/a" "$MNT/b"
[ "$(field tier ram used)" -ge $((190 << 20)) ] ||
	t_fail "the RAM tier holds $(field tier ram used) bytes, not the 200M written"
t_eq "$(field memory - shrinks)" 0 "no shrink while memory is plentiful"

# the limit: what the cgroup uses now plus 256M; the job takes 192M of it
set_limit $(($(usage) + (256 << 20))) || t_fail "cannot set the cgroup's limit"
sh -c 'echo $$ >"$1/cgroup.procs" && exec python3 -c "
import sys, time
x = b\"\\1\" * (192 << 20)
open(sys.argv[1], \"w\").write(\"ready\")
time.sleep(600)" "$2"' hog "$CG" "$T/hog-ready" &
HOG=$!
t_wait_until 30 test -s "$T/hog-ready" || t_fail "the job did not start"

t_wait_until 60 shrunk_once ||
	t_fail "the follower never lowered the limit: $(getfattr --only-values -n user.tierfs.stats "$MNT" | grep -E '^(memory|tier ram)'); cgroup usage $(usage)"
t_wait_until 60 reserve_back ||
	t_fail "the cgroup did not get its reserve back: $(getfattr --only-values -n user.tierfs.stats "$MNT" | grep -E '^(memory|tier ram)')"
shrunk=$(field tier ram limit)
[ "$shrunk" -lt $((256 << 20)) ] || t_fail "the RAM tier's limit is still its size"
[ "$(field tier ram demote_bytes)" -gt 0 ] || t_fail "nothing was demoted"
kill -0 "$HOG" 2>/dev/null || t_fail "the job in the cgroup died"
st=$("$TIERCTL" status "$MNT")
t_like "$st" "*tier ram takes at most * of its 256M while memory is short*" \
	"tierctl status names the lowered limit"
t_check "$P" -s 11 v "$MNT/a" 0 120M >/dev/null
t_check "$P" -s 12 v "$MNT/b" 0 80M >/dev/null

# the job ends and the node gets memory back: the limit grows again
kill "$HOG"
wait "$HOG" 2>/dev/null
HOG=
set_limit $(($(usage) + (1 << 30))) || t_fail "cannot raise the cgroup's limit"
t_wait_until 60 grown || t_fail "the RAM tier's limit did not grow back: $(field tier ram limit)"
t_check "$P" -s 11 v "$MNT/a" 0 120M >/dev/null

# bad values: one line, no mount
for bad in 0 -5 12Q; do
	out=$("$TIERFS_BIN" --tier ram=ram:16M --memory-reserve "$bad" "$T/nomnt" 2>&1) &&
		t_fail "--memory-reserve $bad was taken"
	t_like "$out" "*memory reserve*" "the error for --memory-reserve $bad"
done
t_pass
