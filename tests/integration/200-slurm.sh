#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: services
# TIMEOUT: 300
#
# The SPANK plugin (contrib/slurm/tierfs_spank.so, issue 19) under real
# Slurm 22.05: this test starts munged, slurmctld and slurmd on this
# machine itself, without systemd, each in the foreground (in the
# background of this shell), with everything private to the work
# directory: config, munge key and socket, state and spool directories,
# logs, ports.  One node "tnode" (127.0.0.1), one partition, proctrack/pgid,
# task/none, select/linear; plugstack.conf loads the plugin with mount=
# the test's tierfs mount (RAM 16M over a file tier), default_quota=32M,
# max_quota=1G.  Jobs run as nobody.  Checks:
#  - a job sees TMPDIR=MNT/job$ID, mode 0700, its own, on tierfs, with the
#    --scratch-quota as its df size and the --scratch-policy set;
#  - the job report (issue 19): that job writes 24M with O_DIRECT (8M of
#    it spills below the 16M RAM tier) and reads it back; at its end one
#    line "tierfs: job ID on tnode: scratch peak 24M of 64M quota; ..."
#    with those figures is the last line of its output file and is in
#    slurmd's log; a job in an array with -o %x-%A_%a.out (patterns the
#    epilog cannot expand) gets it too, and so does a job scancel'ed;
#  - a bad --scratch-quota (malformed, over max_quota) or --scratch-policy
#    (unknown key, bad value) is refused by sbatch: non-zero exit, a
#    "tierfs:" line on stderr, no job queued;
#  - a job without options gets default_quota;
#  - the directory is gone after the job completes and after scancel of a
#    running job;
#  - root acting on what the job's user controls (issue 32): a process of
#    the user's exchanging a directory of the job and a symlink to decoy
#    files while the epilog runs (3 rounds): every decoy survives, the
#    directory goes, the node stays up; three FUSE mounts left (a dead
#    one, a deep one, one on $TMPDIR): detached, the report written, the
#    directory gone, the node not drained; the report child, stopped by
#    the user while it waits on a stopped FUSE daemon: the epilog ends
#    (the child killed after 10 s);
#  - with tierfs unmounted, the prolog fails: the node is drained (DRAIN)
#    and the job does not run; slurmd's log says why.
# Every daemon this test starts is stopped at exit, also on failure.  Exit
# 77 where munge or Slurm is not installed, the plugin was not built, or
# the daemons do not start.
. "$(dirname "$0")/lib.sh"

: "${TIERFS_SPANK:=$(dirname "$TIERFS_BIN")/../contrib/slurm/tierfs_spank.so}"
[ "$(id -u)" = 0 ] || t_skip "Slurm daemons need root"
for c in munged slurmctld slurmd sbatch squeue scontrol scancel getfattr; do
	command -v "$c" >/dev/null ||
		t_skip "$c missing: install munge, slurmctld, slurmd, slurm-client, attr"
done
[ -f "$TIERFS_SPANK" ] ||
	t_skip "SPANK plugin '$TIERFS_SPANK' not built (no slurm/spank.h: install libslurm-dev)"

S=$T/slurm
OUT=$T/out
NODE=tnode
JOB_USER=nobody
JOB_UID=$(id -u "$JOB_USER") || t_skip "no user $JOB_USER"
JOB_GID=$(id -g "$JOB_USER")
SL_PIDS=()
mkdir -p "$S"/{state,spool,log,munge} "$OUT" || t_fail mkdir
chmod 755 "$S" "$S/munge" "$S/log"
chmod 1777 "$OUT"
export SLURM_CONF=$S/slurm.conf

# Stop what this test started, newest first: jobs first (their
# slurmstepd processes are not our children), then the daemons.
sl_teardown() {
	local i pid
	if [ ${#SL_PIDS[@]} -gt 1 ]; then
		timeout 10 scancel --quiet -u "$JOB_USER" 2>/dev/null
		t_wait_until 20 eval '[ -z "$(squeue -h -o %i 2>/dev/null)" ]'
	fi
	for ((i = ${#SL_PIDS[@]} - 1; i >= 0; i--)); do
		pid=${SL_PIDS[i]}
		kill "$pid" 2>/dev/null
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	SL_PIDS=()
}

# Processes of the job's user this test starts outside Slurm (the swapper,
# passfs daemons): woken, killed and reaped at exit; then every mount
# left below $T, deepest first.
USER_PIDS=()
user_teardown() {
	local pid m
	for pid in "${USER_PIDS[@]}"; do
		kill -CONT "$pid" 2>/dev/null
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	USER_PIDS=()
	for m in $(awk -v t="$T/" 'index($2, t) == 1 && $2 != t "mnt" { print $2 }' /proc/self/mounts | tac); do
		umount -l "$m" 2>/dev/null
	done
}

sl_exit() {
	local rc=$?
	trap - EXIT
	if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
		for f in slurmctld slurmd; do
			echo "--- $f log ---"
			tail -n 30 "$S/log/$f.log" 2>/dev/null
		done
	fi
	user_teardown
	sl_teardown
	(exit $rc)
	t_cleanup
}
trap sl_exit EXIT

# a free TCP port on 127.0.0.1 (above the ephemeral range's usual start)
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 12000))
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	t_skip "no free TCP port found"
}

mkdir -p "$T/disk" || t_fail mkdir
# --no-migrate: the job's 24M must find the 16M RAM tier full for 8M of
# them; a migrator demoting while the job writes makes room and leaves
# the spill figure to timing (it fell to 5M once demotion got faster)
t_mount -o allow_other --no-migrate --tier ram=ram:16M --tier disk=file:"$T/disk":512M
chmod 755 "$MNT"
t_as "$JOB_UID:$JOB_GID" true  # opens $T for traversal

# ------------------------------------------------------------ munge
head -c 1024 /dev/urandom >"$S/munge/munge.key"
chmod 400 "$S/munge/munge.key"
SOCK=$S/munge/munge.socket
munged --foreground --force --key-file="$S/munge/munge.key" \
	--socket="$SOCK" --pid-file="$S/munge/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge/seed" \
	>"$S/log/munged.out" 2>&1 &
SL_PIDS+=($!)
t_wait_until 10 test -S "$SOCK" ||
	t_skip "munged does not start: $(tail -n 1 "$S/log/munged.out" "$S/log/munged.log" 2>/dev/null | tr '\n' ' ')"

# ------------------------------------------------------------ slurm
HOST=$(hostname -s)
cat >"$S/slurm.conf" <<EOF
ClusterName=tierfstest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
PlugStackConfig=$S/plugstack.conf
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
MinJobAge=600
InactiveLimit=0
NodeName=$NODE NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=t Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$S/plugstack.conf" <<EOF
required $TIERFS_SPANK mount=$MNT default_quota=32M max_quota=1G
EOF
chmod 644 "$S/slurm.conf" "$S/plugstack.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
SL_PIDS+=($!)
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$S/log/slurmd.out" 2>&1 &
SL_PIDS+=($!)

node_state() { scontrol -o show node "$NODE" 2>/dev/null | sed -n 's/.* State=\([^ ]*\).*/\1/p'; }
node_idle() { [ "$(node_state)" = IDLE ]; }
if ! t_wait_until 40 node_idle; then
	for p in "${SL_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null && continue
		t_skip "a Slurm daemon does not start: $(tail -n 2 "$S"/log/slurm*.out "$S"/log/slurm*.log 2>/dev/null | tr '\n' ' ')"
	done
	t_fail "node $NODE not idle after 40 s: state '$(node_state)'"
fi
echo "slurmctld and slurmd up: node $NODE $(node_state)"

# job_state ID -- JobState of a job ("" when unknown)
job_state() { scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([^ ]*\).*/\1/p'; }
# job_done ID -- the job has ended and its epilog has run
job_done() {
	case $(job_state "$1") in
	COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)
		! squeue -h -j "$1" -t CG -o %i 2>/dev/null | grep -q . ;;
	*) return 1 ;;
	esac
}
# submit ARGS... -- sbatch as the job user; prints the job id
submit() {
	t_as "$JOB_UID:$JOB_GID" sbatch --parsable -o "$OUT/%j.out" "$@"
}

# ------------------------------------------------- a job with its options
JOB_SCRIPT='echo "TMPDIR=$TMPDIR"
stat -c "mode=%a uid=%u gid=%g" "$TMPDIR"
df -B1 --output=size "$TMPDIR" | tail -n 1 | tr -d " " | sed "s/^/size=/"
echo hello >"$TMPDIR/f" && echo "write=ok"
getfattr --absolute-names --only-values -n user.tierfs.promote "$TMPDIR" | sed "s/^/promote=/"; echo
dd if=/dev/zero of="$TMPDIR/big" bs=1M count=24 oflag=direct status=none &&
	dd if="$TMPDIR/big" of=/dev/null bs=1M iflag=direct status=none && echo "io=ok"'
id=$(submit --scratch-quota=64M --scratch-policy=promote=0 --wrap "$JOB_SCRIPT") ||
	t_fail "sbatch with --scratch-quota=64M --scratch-policy=promote=0 failed"
t_wait_until 60 job_done "$id" || t_fail "job $id did not end: state $(job_state "$id")"
t_eq "$(job_state "$id")" COMPLETED "state of job $id ($(cat "$OUT/$id.out" 2>/dev/null))"
out=$(cat "$OUT/$id.out")
echo "job $id: $(tr '\n' ' ' <<<"$out")"
grep -qx "TMPDIR=$MNT/job$id" <<<"$out" || t_fail "job $id: TMPDIR is not $MNT/job$id: $out"
grep -qx "mode=700 uid=$JOB_UID gid=$JOB_GID" <<<"$out" ||
	t_fail "job $id: directory not 0700 and the job's: $out"
grep -qx "size=$((64 << 20))" <<<"$out" || t_fail "job $id: df size is not the 64M quota: $out"
grep -qx "write=ok" <<<"$out" || t_fail "job $id: cannot write in TMPDIR: $out"
grep -qx "promote=0" <<<"$out" || t_fail "job $id: user.tierfs.promote not 0: $out"
grep -qx "io=ok" <<<"$out" || t_fail "job $id: O_DIRECT I/O in TMPDIR failed: $out"
[ -e "$MNT/job$id" ] && t_fail "job $id: $MNT/job$id still there after the job"
# the report: 24M written, 8M of it (at least) below the 16M RAM tier,
# and as much read from there; "hello" and the policy change nothing
REPORT_GLOB="tierfs: job $id on $NODE: scratch peak 24M of 64M quota; written 24M, [0-9]*M spilled below ram; read 24M, [0-9]*.[0-9]% from ram (reads that reached tierfs: page cache hits are not seen); writeback errors 0"
last=$(tail -n 1 "$OUT/$id.out")
t_like "$last" "$REPORT_GLOB" "job $id: the report, last line of its output"
spill=$(sed -n 's/.*24M, \([0-9]*\)M spilled.*/\1/p' <<<"$last")
[ "$spill" -ge 8 ] || t_fail "job $id: less than 8M spilled below a 16M RAM tier: $last"
grep -qF "${last#tierfs: }" "$S/log/slurmd.log" ||
	t_fail "job $id: the report is not in slurmd's log: $(grep "tierfs: job $id" "$S/log/slurmd.log")"
echo "report: $last"

# --------------------------------------- default_quota when none is asked
id=$(submit --wrap 'df -B1 --output=size "$TMPDIR" | tail -n 1 | tr -d " "') ||
	t_fail "sbatch without options failed"
t_wait_until 60 job_done "$id" || t_fail "job $id did not end"
t_eq "$(head -n 1 "$OUT/$id.out")" $((32 << 20)) "df size with default_quota=32M"
t_like "$(tail -n 1 "$OUT/$id.out")" "tierfs: job $id on $NODE: scratch peak 0 of 32M quota; written 0, 0 spilled below ram; read 0, - from ram *" \
	"job $id: the report of a job that wrote nothing"
[ -e "$MNT/job$id" ] && t_fail "job $id: $MNT/job$id still there after the job"

# ------------------------ the report in a file named with %x, %A and %a
id=$(t_as "$JOB_UID:$JOB_GID" sbatch --parsable -J named -a 3 -o "$OUT/%x-%A_%a.out" \
	--wrap 'echo x >"$TMPDIR/x"') || t_fail "sbatch of an array job failed"
t_wait_until 60 job_done "$id" || t_fail "array job $id did not end"
f=$(ls "$OUT"/named-*_3.out 2>/dev/null | head -n 1)
[ -n "$f" ] || t_fail "array job $id: no output file named-*_3.out in $OUT: $(ls "$OUT")"
t_like "$(tail -n 1 "$f")" "tierfs: job * on $NODE: scratch peak 4K of 32M quota; written 2, 0 spilled below ram; *" \
	"array job $id: the report in $f"

# ------------------------------------------ bad requests: refused by sbatch
refused() {
	local err rc
	err=$(submit "$@" --wrap true 2>&1 >/dev/null)
	rc=$?
	[ $rc -ne 0 ] || t_fail "sbatch $* was accepted"
	grep -q '^sbatch: error: tierfs: ' <<<"$err" ||
		t_fail "sbatch $*: no tierfs message on stderr: $err"
	echo "refused: sbatch $* -> $(grep -m1 tierfs: <<<"$err")"
}
refused --scratch-quota=12Q
refused --scratch-quota=2G
refused --scratch-quota=ram:4G,total:2T
refused --scratch-policy=colour=red
refused --scratch-policy=promote=2
refused --scratch-policy=split=ram,nvme:1G
[ -z "$(squeue -h -o %i)" ] || t_fail "a refused job was queued: $(squeue)"

# ------------------------------------------------------- scancel
id=$(submit --scratch-quota=16M --wrap 'touch "$TMPDIR/running"; exec sleep 300') ||
	t_fail "sbatch of the long job failed"
t_wait_until 60 test -e "$MNT/job$id/running" ||
	t_fail "job $id did not start: state $(job_state "$id")"
scancel "$id" || t_fail "scancel $id"
t_wait_until 60 job_done "$id" || t_fail "job $id not ended after scancel: $(job_state "$id")"
t_eq "$(job_state "$id")" CANCELLED "state of job $id after scancel"
[ -e "$MNT/job$id" ] && t_fail "job $id: $MNT/job$id still there after scancel"
t_like "$(tail -n 1 "$OUT/$id.out")" "tierfs: job $id on $NODE: scratch peak 0 of 16M quota; *" \
	"job $id: the report after scancel"

# ------------------------------------------ processes of the job's user
# What follows plays a user who has a process on the node outside the job
# (another job, an ssh session Slurm adopted): the test starts it as the
# job's user, and it outlives the job.  Such a job waits for the file
# $OUT/go.ID before it ends, so that the test can set things up while it
# runs.
WAIT_GO='while [ ! -e "'"$OUT"'/go.$SLURM_JOB_ID" ]; do sleep 0.1; done'
[ -x "$PROGS/passfs" ] || t_fail "passfs missing (PROGS='$PROGS')"
# user_fuse DIR MOUNTPOINT -- passfs of DIR on MOUNTPOINT as the job's
# user (fusermount3 mounts it, as any user may on a directory of their
# own; root cannot enter it: no allow_other); its pid in FUSE_PID.  Where
# /dev/fuse is root's alone (mode 0600: users cannot mount FUSE), root
# makes the same mount, with allow_other so that the user reaches it.
# (setpriv, not t_as: in the background $! must be the command's pid,
# not that of a subshell running the function)
AS_USER=(setpriv --reuid="$JOB_UID" --regid="$JOB_GID" --clear-groups --)
if t_as "$JOB_UID:$JOB_GID" test -r /dev/fuse -a -w /dev/fuse; then
	FUSE_AS=("${AS_USER[@]}") FUSE_OPT=()
else
	FUSE_AS=() FUSE_OPT=(-o allow_other)
	echo "note: $JOB_USER cannot open /dev/fuse here: root makes the user's FUSE mounts"
fi
user_fuse() {
	"${FUSE_AS[@]}" "$PROGS/passfs" "$1" "$2" -f "${FUSE_OPT[@]}" >>"$T/passfs.log" 2>&1 &
	FUSE_PID=$!
	USER_PIDS+=("$FUSE_PID")
	t_wait_until 10 t_is_mounted "$2" ||
		t_fail "passfs did not mount on $2: $(tail -n 3 "$T/passfs.log")"
}
# user_dir DIR... -- make directories of the job's user below $T
user_dir() {
	mkdir -p "$@" && chown "$JOB_UID:$JOB_GID" "$@" || t_fail "mkdir $*"
}

# ----------------- root's removal never follows a symlink the user swaps in
# The job leaves a/sub with NSWAP files f1..fNSWAP; $DECOY, outside the
# job directory and root's, holds files of the same names.  While the
# epilog removes the job directory, a process of the job's user
# exchanges a/sub and a symlink a/lnk to $DECOY (renameat2
# RENAME_EXCHANGE, so that each name is the directory or the link in
# turn), again and again, making a new link when the removal took one,
# until the real directory is gone.  A removal by path (the nftw() walk
# of 0.3's first plugin) goes through the link as root and deleted 1,000
# decoys and more in each try; every decoy must survive every round, and
# the epilog must end without draining the node.
NSWAP=2000
DECOY=$T/decoy
mkdir "$DECOY" && (cd "$DECOY" && touch $(seq -f f%g $NSWAP)) || t_fail "cannot make the decoys"
# the swapper: one line to "$2" per exchange
SWAPPER='cd "$1/a" || exit 1
ln -s "$3" lnk
while [ -d sub -a ! -L sub ] || [ -d lnk -a ! -L lnk ]; do
	"$4" rename2 exchange sub lnk >/dev/null
	for l in sub lnk; do
		[ -e $l ] || [ -L $l ] || ln -s "$3" $l 2>/dev/null
	done
	echo >>"$2"
done'
for round in 1 2 3; do
	id=$(submit --wrap 'mkdir -p "$TMPDIR/a/sub" && cd "$TMPDIR/a/sub" &&
		touch $(seq -f f%g '"$NSWAP"') && touch "$TMPDIR/ready"
		'"$WAIT_GO") || t_fail "sbatch of swap round $round failed"
	t_wait_until 60 test -e "$MNT/job$id/ready" ||
		t_fail "swap round $round: job $id did not start: $(job_state "$id")"
	"${AS_USER[@]}" bash -c "$SWAPPER" swapper "$MNT/job$id" \
		"$OUT/swaps.$id" "$DECOY" "$PROGS/sc" &
	spid=$!
	USER_PIDS+=("$spid")
	t_wait_until 20 test -s "$OUT/swaps.$id" ||
		t_fail "swap round $round: the swapper does not swap"
	before=$(wc -l <"$OUT/swaps.$id")
	touch "$OUT/go.$id"
	t_wait_until 60 job_done "$id" ||
		t_fail "swap round $round: job $id did not end: $(job_state "$id")"
	# it stops once the directory it swaps is gone
	stopped=yes
	t_wait_until 20 eval '! kill -0 '"$spid"' 2>/dev/null' || stopped=no
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	n=$(find "$DECOY" -type f | wc -l)
	[ "$n" -eq $NSWAP ] ||
		t_fail "swap round $round: root's removal of job $id deleted $((NSWAP - n)) of the $NSWAP decoys behind the symlink the job's user swapped in"
	[ $stopped = yes ] ||
		t_fail "swap round $round: the swapper still ran 20 s after job $id: $(ls -la "$MNT/job$id/a" 2>&1)"
	during=$(($(wc -l <"$OUT/swaps.$id") - before))
	[ "$during" -gt 0 ] || t_fail "swap round $round: no swap after the job was let go"
	t_eq "$(job_state "$id")" COMPLETED "swap round $round: state of job $id"
	t_eq "$(node_state)" IDLE "swap round $round: node state after job $id"
	[ -e "$MNT/job$id" ] && t_fail "swap round $round: $MNT/job$id still there: $(ls -la "$MNT/job$id")"
	echo "swap round $round: job $id ended and removed during $during swaps, decoys intact"
done

# ------------------ mounts the job's user leaves: detached, node not drained
# Three FUSE mounts of the job's user, made from outside the job so that
# they outlive it: a dead one (its daemon killed: every request ENOTCONN)
# on $TMPDIR/dead, a live one deeper, on $TMPDIR/d1/d2/live, and a live
# one on $TMPDIR itself, over both.  The epilog detaches them, reports
# and removes the directory; the node stays up.
id=$(submit --wrap 'mkdir -p "$TMPDIR/dead" "$TMPDIR/d1/d2/live" &&
	echo data >"$TMPDIR/d1/f" && touch "$TMPDIR/ready"
	'"$WAIT_GO") || t_fail "sbatch of the mount job failed"
t_wait_until 60 test -e "$MNT/job$id/ready" || t_fail "job $id did not start: $(job_state "$id")"
user_dir "$T/ub1" "$T/ub2" "$T/ub3"
user_fuse "$T/ub1" "$MNT/job$id/dead"
kill -9 "$FUSE_PID"
wait "$FUSE_PID" 2>/dev/null
user_fuse "$T/ub2" "$MNT/job$id/d1/d2/live"
live1=$FUSE_PID
user_fuse "$T/ub3" "$MNT/job$id"
live2=$FUSE_PID
touch "$OUT/go.$id"
t_wait_until 60 job_done "$id" || t_fail "job $id with mounts left did not end: $(job_state "$id")"
t_eq "$(job_state "$id")" COMPLETED "state of job $id that left mounts"
t_eq "$(node_state)" IDLE "node state after job $id left mounts"
left=$(awk -v d="$MNT/job$id" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts)
[ -z "$left" ] || t_fail "job $id: mounts still there after its epilog: $left"
[ -e "$MNT/job$id" ] && t_fail "job $id: $MNT/job$id still there after its epilog"
t_like "$(tail -n 1 "$OUT/$id.out")" "tierfs: job $id on $NODE: scratch peak 4K of 32M quota; written 5, *" \
	"job $id: the report, with its mounts detached first"
grep -q "tierfs: job $id: detached 3 mounts" "$S/log/slurmd.log" ||
	t_fail "slurmd's log does not say what job $id left: $(grep "tierfs: job $id" "$S/log/slurmd.log")"
# detached and no longer used, the live mounts end: their daemons exit
t_wait_until 20 eval '! kill -0 '"$live1"' 2>/dev/null && ! kill -0 '"$live2"' 2>/dev/null' ||
	t_fail "the user's passfs daemons still run after their mounts were detached"
echo "job $id: 3 mounts left (one dead, one on the directory) detached, directory removed, node $(node_state)"

# ------------------ a report child the user stops: the epilog still ends
# The epilog appends the report as the job's user, in a child process.
# The job points it (user.slurm.tierfs_report_to, which is the job's to
# set) at a file on a FUSE mount of its user whose daemon the user has
# stopped, so the child's open() waits, and the user stops the child too
# (SIGSTOP, as the child is theirs).  The epilog must end anyway (the
# plugin kills the child after 10 s), and the node stays up.
user_dir "$T/ub4" "$T/hang"
user_fuse "$T/ub4" "$T/hang"
hang_pid=$FUSE_PID
t_as "$JOB_UID:$JOB_GID" sh -c ': >>"$1"' sh "$T/hang/out" ||
	t_fail "cannot make a file on the user's passfs"
id=$(submit --wrap 'setfattr -n user.slurm.tierfs_report_to -v "'"$T/hang/out"'" "$TMPDIR" &&
	touch "$TMPDIR/ready"
	'"$WAIT_GO") || t_fail "sbatch of the hang job failed"
t_wait_until 60 test -e "$MNT/job$id/ready" || t_fail "job $id did not start: $(job_state "$id")"
kill -STOP "$hang_pid"
touch "$OUT/go.$id"
# the child: the only process of the job's user that is Slurm's
child() { pgrep -u "$JOB_UID" -x 'slurmstepd|slurmd'; }
t_wait_until 60 child || t_fail "job $id: no report child of the user's: $(ps -o pid,user,stat,comm -u "$JOB_UID")"
cpid=$(child)
t_as "$JOB_UID:$JOB_GID" kill -STOP $cpid || t_fail "the job's user cannot stop the report child $cpid"
echo "job $id: report child $cpid stopped by the job's user; its open() waits on a stopped FUSE daemon"
t_wait_until 90 job_done "$id" ||
	t_fail "job $id: the epilog did not end 90 s after its report child was stopped: $(job_state "$id")"
t_eq "$(node_state)" IDLE "node state after job $id"
[ -e "$MNT/job$id" ] && t_fail "job $id: $MNT/job$id still there after its epilog"
grep -q "tierfs: job $id: cannot append its report to $T/hang/out (as uid $JOB_UID): timed out" "$S/log/slurmd.log" ||
	t_fail "slurmd's log does not say the report timed out: $(grep "tierfs: job $id" "$S/log/slurmd.log")"
kill -CONT "$hang_pid"
umount -l "$T/hang"
echo "job $id: epilog ended with its report child stopped: $(grep -o "tierfs: job $id: cannot append.*" "$S/log/slurmd.log")"

# --------------------------------------- no tierfs: the node is drained
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
id=$(submit --wrap "touch $OUT/ran") || t_fail "sbatch with tierfs unmounted failed"
node_drained() { [[ $(node_state) == *DRAIN* ]]; }
t_wait_until 60 node_drained || t_fail "node not drained with no tierfs on $MNT: $(node_state)"
echo "no tierfs: node $(node_state), $(scontrol -o show node "$NODE" | grep -o 'Reason=.*')"
echo "job $id: $(job_state "$id")"
[ -e "$OUT/ran" ] && t_fail "job $id ran on a node without tierfs"
[ -e "$MNT/job$id" ] && t_fail "the prolog made $MNT/job$id on the plain directory"
grep -q "tierfs: job $id: $MNT is not a mount point" "$S/log/slurmd.log" ||
	t_fail "slurmd's log does not say why: $(grep tierfs "$S/log/slurmd.log" | tail -n 3)"
t_pass
