#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: multiuser
# TIMEOUT: 240
#
# The Slurm plugin's node-side parts that act as root on what a job's
# user controls (issue 32): the removal of a job directory
# (contrib/slurm/job_remove.c) and the bounded wait for the child that
# writes the report as the user (job_report.c), driven by
# contrib/slurm/jobdir_test outside Slurm, so that the sanitizer builds
# run them instrumented (200-slurm runs the plugin under real Slurm,
# where it cannot be instrumented).  The job directories are MNT/jobN of
# a tierfs mount, owned by nobody.  Checks:
#  - a tree 300 directories deep with a file at each level goes (the
#    removal keeps at most 64 directories open and moves deeper ones up);
#  - a symlink, or a file, where the job directory should be: the name
#    goes, the link's target stays;
#  - a process of the job's user exchanges a subdirectory of 2000 files
#    and a symlink to 2000 root-owned decoys of the same names while root
#    removes the directory, 10 rounds: every decoy survives, the
#    directory goes, rc=0;
#  - three FUSE mounts left (a dead one, a live one 3 levels down, a
#    live one on the directory itself): all detached (mounts=3), the
#    directory removed, rc=0, and the live daemons end;
#  - the report child, as the user, opens a file on a FUSE mount whose
#    daemon is stopped and is stopped itself: the call returns "timed
#    out" (the child killed after 10 s) within a generous limit;
#  - a dead tierfs (daemon killed): rc<0 with ENOTCONN (or ECONNABORTED),
#    the node's error (the epilog fails and drains the node).
. "$(dirname "$0")/lib.sh"

: "${JOBDIR_TEST:=$(dirname "$TIERFS_BIN")/../contrib/slurm/jobdir_test}"
[ -x "$JOBDIR_TEST" ] ||
	t_skip "jobdir_test '$JOBDIR_TEST' not built (no slurm/spank.h or libslurm: install libslurm-dev)"
[ -x "$PROGS/passfs" ] || t_fail "passfs missing (PROGS='$PROGS')"
[ -x "$PROGS/sc" ] || t_fail "sc missing (PROGS='$PROGS')"
JOB_UID=$(id -u nobody) || t_skip "no user nobody"
JOB_GID=$(id -g nobody)
U=$JOB_UID:$JOB_GID
PIDS=()

jd_exit() {
	local rc=$? pid m
	trap - EXIT
	for pid in "${PIDS[@]}"; do
		kill -CONT "$pid" 2>/dev/null
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for m in $(awk -v t="$T/" 'index($2, t) == 1 && $2 != t "mnt" { print $2 }' /proc/self/mounts | tac); do
		umount -l "$m" 2>/dev/null
	done
	(exit $rc)
	t_cleanup
}
trap jd_exit EXIT

t_mount -o allow_other --tier ram=ram:64M
chmod 755 "$MNT"
t_as "$U" true # opens $T for traversal

# as_user_bg CMD... -- CMD as nobody in the background; its pid (setpriv
# execs CMD) in BG_PID, killed at exit.  Not t_as in the background: $!
# would be the subshell that runs the function, not CMD.
as_user_bg() {
	setpriv --reuid="$JOB_UID" --regid="$JOB_GID" --clear-groups -- "$@" &
	BG_PID=$!
	PIDS+=("$BG_PID")
}

# rm_job N -- jobdir_test remove on MNT/jobN; its line in OUT
rm_job() {
	OUT=$("$JOBDIR_TEST" remove "$MNT" "job$1" 2>"$T/stderr") ||
		t_fail "jobdir_test remove job$1: $(cat "$T/stderr")"
}
# job_dir N -- an empty MNT/jobN of the user's, as the prolog makes it
job_dir() {
	mkdir -m 0700 "$MNT/job$1" && chown "$U" "$MNT/job$1" || t_fail "mkdir job$1"
}

# ------------------------------------------------------- a deep tree
job_dir 1
t_as "$U" bash -c 'cd "$1" && for i in $(seq 300); do
	echo "$i" >f && mkdir d && cd d || exit 1
done && head -c 1M /dev/zero >big' sh "$MNT/job1" || t_fail "cannot make the deep tree"
rm_job 1
t_like "$OUT" "rc=0 removed=601 mounts=0 skipped=0 *" "removal of a tree 300 deep"
[ -e "$MNT/job1" ] && t_fail "job1 still there: $OUT"
echo "300 levels deep: $OUT"

# ------------------------------- a symlink or a file in the directory's place
mkdir "$T/target" && touch "$T/target/keep"
ln -s "$T/target" "$MNT/job2"
rm_job 2
t_like "$OUT" "rc=0 *" "removal of a symlink job2"
[ -e "$MNT/job2" ] || [ -L "$MNT/job2" ] && t_fail "job2 still there"
[ -e "$T/target/keep" ] || t_fail "the removal of a symlink job2 went through it"
echo file >"$MNT/job3"
rm_job 3
t_like "$OUT" "rc=0 *" "removal of a file job3"
[ -e "$MNT/job3" ] && t_fail "job3 still there"

# --------------------------------------------- a symlink swapped in, 10 rounds
# (as in 200-slurm: a/sub and a/lnk -> $DECOY exchanged, a new link made
# when the removal took one, until the real directory is gone)
NSWAP=2000
DECOY=$T/decoy
mkdir "$DECOY" && (cd "$DECOY" && touch $(seq -f f%g $NSWAP)) || t_fail "cannot make the decoys"
SWAPPER='cd "$1/a" || exit 1
ln -s "$3" lnk
touch "$2"
while [ -d sub -a ! -L sub ] || [ -d lnk -a ! -L lnk ]; do
	"$4" rename2 exchange sub lnk >/dev/null
	for l in sub lnk; do
		[ -e $l ] || [ -L $l ] || ln -s "$3" $l 2>/dev/null
	done
done'
mkdir -m 1777 "$T/flags"
for round in $(seq 10); do
	id=$((100 + round))
	job_dir $id
	t_as "$U" bash -c 'mkdir -p "$1/a/sub" && cd "$1/a/sub" && touch $(seq -f f%g "$2")' \
		sh "$MNT/job$id" $NSWAP || t_fail "round $round: cannot fill job$id"
	as_user_bg bash -c "$SWAPPER" swapper "$MNT/job$id" "$T/flags/$id" "$DECOY" "$PROGS/sc"
	spid=$BG_PID
	t_wait_until 20 test -e "$T/flags/$id" || t_fail "round $round: the swapper does not start"
	rm_job $id
	t_wait_until 20 eval '! kill -0 '"$spid"' 2>/dev/null'
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	n=$(find "$DECOY" -type f | wc -l)
	[ "$n" -eq $NSWAP ] ||
		t_fail "round $round: the removal deleted $((NSWAP - n)) decoys behind the swapped-in symlink ($OUT)"
	t_like "$OUT" "rc=0 *" "round $round: the removal with a swapper"
	[ -e "$MNT/job$id" ] && t_fail "round $round: job$id still there: $OUT"
	echo "swap round $round: $OUT"
done

# ------------------------------------------------------------ mounts left
job_dir 4
t_as "$U" mkdir -p "$MNT/job4/dead" "$MNT/job4/d1/d2/live" || t_fail "mkdir in job4"
mkdir "$T/b1" "$T/b2" "$T/b3" || t_fail "mkdir"
# fuse DIR MOUNTPOINT -- passfs, as root (users cannot open /dev/fuse
# everywhere; the removal does not care who mounted), allow_other so
# that the user reaches it; its pid in FUSE_PID
fuse() {
	"$PROGS/passfs" "$1" "$2" -f -o allow_other >>"$T/passfs.log" 2>&1 &
	FUSE_PID=$!
	PIDS+=("$FUSE_PID")
	t_wait_until 10 t_is_mounted "$2" ||
		t_fail "passfs did not mount on $2: $(tail -n 3 "$T/passfs.log")"
}
fuse "$T/b1" "$MNT/job4/dead"
kill -9 "$FUSE_PID"
wait "$FUSE_PID" 2>/dev/null
fuse "$T/b2" "$MNT/job4/d1/d2/live"
live1=$FUSE_PID
fuse "$T/b3" "$MNT/job4"
live2=$FUSE_PID
rm_job 4
t_like "$OUT" "rc=0 * mounts=3 *" "removal of job4 with three mounts"
[ -e "$MNT/job4" ] && t_fail "job4 still there: $OUT"
left=$(awk -v d="$MNT/job4" '$2 == d || index($2, d "/") == 1' /proc/self/mounts)
[ -z "$left" ] || t_fail "mounts left under job4: $left"
t_wait_until 20 eval '! kill -0 '"$live1"' 2>/dev/null && ! kill -0 '"$live2"' 2>/dev/null' ||
	t_fail "the passfs daemons still run after their mounts were detached"
echo "three mounts: $OUT"

# ------------------------------------------- a report child that hangs
mkdir "$T/b4" "$T/hang" || t_fail "mkdir"
fuse "$T/b4" "$T/hang"
hang_pid=$FUSE_PID
: >"$T/hang/out" || t_fail "cannot make a file on passfs"
job_dir 5
setfattr -n user.slurm.tierfs_report_to -v "$T/hang/out" "$MNT/job5" || t_fail "setfattr"
kill -STOP "$hang_pid"
"$JOBDIR_TEST" report-to "$MNT" job5 "$JOB_UID" "$JOB_GID" "the line" \
	>"$T/report.out" 2>"$T/report.err" &
rpid=$!
PIDS+=("$rpid")
child() { pgrep -u "$JOB_UID" -x jobdir_test; }
t_wait_until 30 child || t_fail "no report child of the user's"
t_as "$U" kill -STOP $(child) || t_fail "the user cannot stop the report child"
t_wait_until 60 eval '! kill -0 '"$rpid"' 2>/dev/null' ||
	t_fail "report-to did not return 60 s after its child was stopped"
wait "$rpid"
t_eq "$(cat "$T/report.out")" "rc=-1" "report-to with its child stopped"
grep -q "cannot append its report to $T/hang/out (as uid $JOB_UID): timed out" "$T/report.err" ||
	t_fail "report-to does not say it timed out: $(cat "$T/report.err")"
kill -CONT "$hang_pid"
umount -l "$T/hang"
echo "report child stopped: $(cat "$T/report.out"), $(grep -o 'timed out' "$T/report.err")"

# ------------------------------------------------- a dead tierfs: the node's
job_dir 6
kill -9 "$T_PID"
wait "$T_PID" 2>/dev/null
T_PID=
rm_job 6
# a dead FUSE connection answers ENOTCONN, or ECONNABORTED when the
# kernel aborted it with requests in flight
case $OUT in
"rc=-107 "*" node=ENOTCONN" | "rc=-103 "*" node=ECONNABORTED") ;;
*) t_fail "removal on a dead tierfs: got '$OUT', expected rc<0 and ENOTCONN or ECONNABORTED" ;;
esac
echo "dead tierfs: $OUT"
umount -l "$MNT"
t_pass
