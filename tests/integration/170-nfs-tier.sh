#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: nfs
# TIMEOUT: 150
#
# A capacity tier on a network filesystem (issue 12): the last tier is a
# file tier in a directory on an NFS mount of this machine's own kernel
# NFS server (Debian's nfs-kernel-server), exported over loopback.
#
# Setup, without systemd: the nfsd module and its filesystem on
# /proc/fs/nfsd, rpcbind, nfsdcld (client tracking with a private
# database, so that the kernel skips the NFSv4 grace period), rpc.mountd,
# rpc.nfsd listening on 127.0.0.1 only; a tmpfs in the work directory
# exported to 127.0.0.1 (fsid= a fresh UUID: a tmpfs has none) and
# mounted with NFS at 127.0.0.1.  A server that already runs is reused
# (only our export is added, and removed again); what this test starts,
# mounts or exports it stops, unmounts and unexports at exit, whatever
# happens.  Where NFS cannot start (no nfsd in the kernel, no rights in a
# container, packages missing) the test exits 77 with one line saying why.
#
# Everything below runs once over NFSv4.2 (fallocate reaches the server
# as ALLOCATE and DEALLOCATE, flock() is a lock on the server) and once
# over NFSv3 mounted nolock (no fallocate: tierfs carries on with
# unreserved slots and zeroes freed slots by writing; flock() is local),
# each with a RAM tier of 4M over a 24M file tier on NFS, 1M extents:
#  - spill: a 20M file fills RAM and goes on to NFS (layout exactly
#    4M/16M); random data copied in with cp lands on NFS; both read back
#    byte-exact (pattern, cmp, sha256) with O_DIRECT and, after dropping
#    the page cache, buffered; the data really is on the server (the slab
#    in the export holds it); NFS has no O_TMPFILE, so the slab is the
#    named fallback, unlinked while open, which the NFS client keeps as
#    a silly-renamed .nfsXXXX file until the daemon closes it;
#  - a clean unmount leaves nothing in the export, a kill -9 leaves only
#    the lock file's directory, and the next mount sweeps it (flock()
#    through NFS);
#  - checksums: one byte flipped in the slab on the server side (the
#    export's own file, not through the NFS client): reading that extent
#    through tierfs fails with EIO, csum_errors and user.tierfs.verify
#    count it, the log names the inode, another file reads fine, the
#    mount lives on, and rewriting the file heals it;
#  - migration: a hot region of a file on NFS, read in passes, is
#    promoted to RAM by the migrator; tierctl migrate moves a file down
#    to NFS and another one up to RAM; all data still compares;
#  - ENOSPC: only when both tiers are full (after exactly the 8M that
#    still fit), df says 28M total and 0 free then (and the NFS server
#    itself still has room: full means the tier's configured size),
#    stored data intact, the mount usable, space back after rm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"
: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$TIERCTL" ] || t_fail "tierctl binary '$TIERCTL' missing (set TIERCTL)"

# ---------------------------------------------------------------- NFS server
NFS_EXP=$T/export    # the exported directory (a tmpfs)
NFS_MNT=$T/nfs       # where the test mounts it with NFS
NFS_PIPEFS=          # an rpc_pipefs this test mounted
NFS_NFSDFS=          # set when this test mounted /proc/fs/nfsd
NFS_STARTED=         # set when this test started the kernel server
NFS_EXPORTED=        # set while our export exists
NFS_PIDS=()          # daemons this test started, in start order
NFS_OLD_GRACE=
NFS_OLD_LEASE=
mkdir -p "$NFS_MNT" || t_fail mkdir

# nfs_mounted -- is the NFS mount point mounted?
nfs_mounted() { t_is_mounted "$NFS_MNT"; }

nfs_umount() {
	nfs_mounted || return 0
	timeout 30 umount "$NFS_MNT" 2>/dev/null ||
		timeout 30 umount -f "$NFS_MNT" 2>/dev/null ||
		umount -l "$NFS_MNT" 2>/dev/null
}

# Undo whatever nfs_start() did, in reverse order; safe to call at any
# point (also after a partial start) and more than once.
nfs_teardown() {
	local i pid
	# tierfs first: its daemon holds the slab open on the NFS mount
	t_unmount
	nfs_umount
	if [ -n "$NFS_EXPORTED" ]; then
		timeout 30 exportfs -u "127.0.0.1:$NFS_EXP" 2>/dev/null
		NFS_EXPORTED=
	fi
	if [ -n "$NFS_STARTED" ]; then
		timeout 30 rpc.nfsd 0 2>/dev/null
		NFS_STARTED=
	fi
	# (the times can only be set while no server runs)
	[ -n "$NFS_OLD_GRACE" ] && echo "$NFS_OLD_GRACE" >/proc/fs/nfsd/nfsv4gracetime 2>/dev/null
	[ -n "$NFS_OLD_LEASE" ] && echo "$NFS_OLD_LEASE" >/proc/fs/nfsd/nfsv4leasetime 2>/dev/null
	NFS_OLD_GRACE=''
	NFS_OLD_LEASE=''
	for ((i = ${#NFS_PIDS[@]} - 1; i >= 0; i--)); do
		pid=${NFS_PIDS[i]}
		kill "$pid" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	NFS_PIDS=()
	if [ -n "$NFS_PIPEFS" ]; then
		umount "$NFS_PIPEFS" 2>/dev/null || umount -l "$NFS_PIPEFS" 2>/dev/null
		NFS_PIPEFS=
	fi
	if [ -n "$NFS_NFSDFS" ]; then
		umount /proc/fs/nfsd 2>/dev/null
		NFS_NFSDFS=
	fi
}

nfs_exit() {
	local rc=$?
	trap - EXIT
	nfs_teardown
	# lib.sh's cleanup (sanitizer reports, daemon problems, extra mounts,
	# the work directory) with the test's exit status
	(exit $rc)
	t_cleanup
}
trap nfs_exit EXIT

# start_daemon LOG CMD... -- start a daemon of ours in the foreground,
# in the background; its pid goes to NFS_PIDS
start_daemon() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	NFS_PIDS+=($!)
}

rpcbind_up() { timeout 5 rpcinfo -p 127.0.0.1 >/dev/null 2>&1; }
nfsd_threads() { cat /proc/fs/nfsd/threads 2>/dev/null || echo 0; }

nfs_start() {
	local c pipefs uuid
	[ "$(id -u)" = 0 ] || t_skip "NFS needs root"
	for c in rpc.nfsd rpc.mountd exportfs rpcbind rpcinfo mount.nfs; do
		command -v "$c" >/dev/null ||
			t_skip "$c missing: install nfs-kernel-server (and nfs-common, rpcbind)"
	done
	if command -v modprobe >/dev/null; then
		for c in nfsd nfs nfsv3 nfsv4; do
			modprobe -q "$c" 2>/dev/null
		done
	fi
	grep -qw nfsd /proc/filesystems ||
		t_skip "no NFS server in this kernel (nfsd neither built in nor loadable)"
	grep -qwE 'nfs|nfs4' /proc/filesystems ||
		t_skip "no NFS client in this kernel (nfs neither built in nor loadable)"
	if ! awk '$2 == "/proc/fs/nfsd" { f = 1 } END { exit !f }' /proc/mounts; then
		mount -t nfsd nfsd /proc/fs/nfsd 2>"$T/nfsdfs.err" ||
			t_skip "cannot mount the nfsd filesystem on /proc/fs/nfsd: $(head -n 1 "$T/nfsdfs.err")"
		NFS_NFSDFS=1
	fi

	if [ "$(nfsd_threads)" -gt 0 ]; then
		# somebody else's server: add our export to it, touch nothing else
		pgrep -x rpc.mountd >/dev/null ||
			t_skip "an NFS server runs here without rpc.mountd: leaving it alone"
		echo "reusing the NFS server already running ($(nfsd_threads) threads)"
	else
		if ! rpcbind_up; then
			start_daemon "$T/rpcbind.log" rpcbind -f
			t_wait_until 5 rpcbind_up ||
				t_skip "rpcbind does not start: $(head -n 1 "$T/rpcbind.log")"
		fi
		# nfsdcld with a database of its own: no clients to reclaim, so
		# the kernel skips the NFSv4 grace period (90 s by default, in
		# which every open would wait)
		if command -v nfsdcld >/dev/null && ! pgrep -x nfsdcld >/dev/null; then
			pipefs=$(awk '$3 == "rpc_pipefs" { print $2; exit }' /proc/mounts)
			if [ -z "$pipefs" ]; then
				mkdir -p "$T/pipefs"
				if mount -t rpc_pipefs rpc_pipefs "$T/pipefs" 2>/dev/null; then
					NFS_PIPEFS=$T/pipefs
					pipefs=$NFS_PIPEFS
				fi
			fi
			if [ -n "$pipefs" ]; then
				mkdir -p "$T/nfsdcld"
				start_daemon "$T/nfsdcld.log" nfsdcld -F -p "$pipefs" -s "$T/nfsdcld"
			fi
		fi
		# and if the grace period does run: the shortest the kernel takes
		NFS_OLD_GRACE=$(cat /proc/fs/nfsd/nfsv4gracetime 2>/dev/null)
		NFS_OLD_LEASE=$(cat /proc/fs/nfsd/nfsv4leasetime 2>/dev/null)
		echo 10 >/proc/fs/nfsd/nfsv4gracetime 2>/dev/null
		echo 10 >/proc/fs/nfsd/nfsv4leasetime 2>/dev/null
		if ! pgrep -x rpc.mountd >/dev/null; then
			start_daemon "$T/mountd.log" rpc.mountd -F
		fi
		NFS_STARTED=1
		timeout 30 rpc.nfsd -H 127.0.0.1 4 >"$T/nfsd.log" 2>&1
		[ "$(nfsd_threads)" -gt 0 ] ||
			t_skip "rpc.nfsd does not start the kernel server: $(head -n 1 "$T/nfsd.log")"
		echo "started an NFS server on 127.0.0.1: versions $(cat /proc/fs/nfsd/versions 2>/dev/null)"
	fi

	t_tmpfs "$NFS_EXP" 64M
	uuid=$(cat /proc/sys/kernel/random/uuid)
	NFS_EXPORTED=1
	timeout 30 exportfs -o "rw,sync,no_root_squash,no_subtree_check,fsid=$uuid" \
		"127.0.0.1:$NFS_EXP" >"$T/exportfs.log" 2>&1 ||
		t_skip "exportfs refuses the export: $(head -n 1 "$T/exportfs.log")"
}

# nfs_mount OPTIONS -- mount the export; soft (a test must end even if the
# server goes away; a real capacity tier wants hard, see README)
nfs_mount() {
	timeout 60 mount -t nfs -o "$1,soft,timeo=100,retrans=3" \
		"127.0.0.1:$NFS_EXP" "$NFS_MNT" >"$T/mount.log" 2>&1 ||
		t_fail "mount -t nfs -o $1 127.0.0.1:$NFS_EXP: $(cat "$T/mount.log")"
	echo "NFS mount: $(awk -v m="$NFS_MNT" '$2 == m { print $3, $4 }' /proc/mounts)"
	mkdir -p "$NFS_MNT/tier" || t_fail "mkdir on the NFS mount"
}

# --------------------------------------------------------------- helpers
bytes_of() { echo $(($(t_statfs "$1" "$MNT") * $(t_statfs frsize "$MNT"))); }
avail_is() { [ "$(bytes_of bavail)" = "$1" ]; }
used_is() { [ "$(tstat "$1" used)" = "$2" ]; }
export_empty() { [ -z "$(ls -A "$NFS_EXP/tier")" ]; }

# The private directory of the NFS tier, seen on the server side (in the
# export itself): exactly one while a mount runs.
server_dir() {
	local d
	d=$(tier_dirs "$NFS_EXP/tier")
	[ -n "$d" ] && [ "$(printf '%s\n' "$d" | wc -l)" = 1 ] ||
		t_fail "expected one private directory in the export, found: '$d'"
	echo "$d"
}

# The slab of the NFS tier as a file of the export (server side).  The
# daemon's fd for it is found through /proc/PID/fd (the link names the
# file under the NFS mount: a silly-renamed .nfsXXXX, or "(deleted)"),
# and the server's file with the same inode number (NFS passes the
# server's inode numbers through).
server_slab() {
	local real fd link ino=
	real=$(realpath "$NFS_MNT/tier") || t_fail realpath
	for fd in /proc/"$T_PID"/fd/*; do
		link=$(readlink "$fd") || continue
		case $link in
		"$real"/tierfs-*/lock) ;;
		"$real"/tierfs-*)
			[ -f "$fd" ] || continue
			! t_fd_direct "$fd" || continue
			[ -z "$ino" ] || t_fail "two slabs on NFS open in the daemon"
			ino=$(stat -L -c %i "$fd") || t_fail "stat $fd" ;;
		esac
	done
	[ -n "$ino" ] || t_fail "no slab on NFS open in the daemon (pid $T_PID)"
	find "$NFS_EXP/tier" -xdev -inum "$ino" -print -quit
}

# nfs_note WHAT -- a check of how this NFS client and server treat
# unlinked open files (silly rename) and their removal, which the test
# has not seen on every kernel: a difference is reported, not failed.
# Data, checksums, migration and ENOSPC are checked hard.
nfs_note() {
	echo "NOTE: NFS behaviour differs from what the test expects: $*"
}

# --------------------------------------------------------------- the tests
run_pass() {
	local name=$1 opts=$2 NT out acc ino before after d slab i passes
	echo "=== $name ($opts)"
	nfs_mount "$opts"
	NT=$NFS_MNT/tier
	local TIERS=(--tier ram=ram:4M --tier nfs=file:"$NT":24M)

	# --- spill
	t_mount "${TIERS[@]}" --no-migrate --no-writeback-cache
	pat_w -s 1 "$MNT/big" 0 20M
	t_eq "$(layout "$MNT/big")" "ram=$((4 * M)) nfs=$((16 * M))" "$name: layout of a 20M file"
	t_eq "$(extents "$MNT/big")" "0 $((4 * M)) ram
$((4 * M)) $((16 * M)) nfs" "$name: extent runs of a 20M file"
	[ "$(tstat ram spills)" -gt 0 ] || t_fail "$name: no spill counted on the RAM tier"
	head -c $((3 * M + 12345)) /dev/urandom >"$T/ref" || t_fail "random data"
	cp "$T/ref" "$MNT/ref" || t_fail "$name: cp onto the mount"
	t_eq "$(on_tier ram "$MNT/ref")" 0 "$name: RAM bytes of a file copied in with RAM full"
	[ "$(on_tier nfs "$MNT/ref")" -gt $((3 * M)) ] ||
		t_fail "$name: a file copied in with RAM full is not on NFS: $(layout "$MNT/ref")"
	pat_v -d -s 1 "$MNT/big" 0 20M
	cmp "$T/ref" "$MNT/ref" || t_fail "$name: copied file differs (page cache)"
	drop_caches
	pat_v -s 1 "$MNT/big" 0 20M
	cmp "$T/ref" "$MNT/ref" || t_fail "$name: copied file differs after dropping caches"
	t_eq "$(sha256sum <"$MNT/ref")" "$(sha256sum <"$T/ref")" "$name: sha256 of the copied file"
	# the data is on the server: the slab in the export holds 20M
	d=$(server_dir)
	slab=$(server_slab)
	[ -n "$slab" ] || t_fail "$name: the slab is not a file of the export"
	echo "$name: in the export: $(ls -A "$d" | tr '\n' ' ')(slab ${slab##*/}, $(du -k "$slab" | cut -f1)K)"
	[ "$(du -k "$slab" | cut -f1)" -ge $((19 * 1024)) ] ||
		t_fail "$name: the slab in the export holds $(du -k "$slab" | cut -f1)K, expected at least 19M"
	# no O_TMPFILE on NFS: the named fallback, unlinked while open, is
	# kept by the client under a silly-rename name until it is closed
	case ${slab##*/} in
	.nfs*) ;;
	*) nfs_note "$name: the slab in the export is named ${slab##*/}, not .nfs*" ;;
	esac
	[ "$(ls -A "$d" | grep -v '^\.nfs' | tr '\n' ' ')" = "lock " ] ||
		nfs_note "$name: files of the private directory besides the slab: $(ls -A "$d" | tr '\n' ' ')"
	t_unmount
	[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
	# a clean unmount leaves nothing on the server (the client removes a
	# silly-renamed file when it is closed: asynchronously, so poll)
	t_wait_until 10 export_empty ||
		nfs_note "$name: left in the export after a clean unmount: $(find "$NFS_EXP/tier" | tr '\n' ' ')"

	# --- kill -9 leaves the lock's directory, the next mount sweeps it
	t_mount "${TIERS[@]}" --no-migrate
	pat_w -s 2 "$MNT/f" 0 8M
	d=$(server_dir)
	kill -9 "$T_PID"
	wait "$T_PID" 2>/dev/null
	T_PID=
	fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" || t_fail "cannot unmount the dead mount"
	# the kernel closed the daemon's files: the slab goes (silly delete)
	t_wait_until 10 eval '[ "$(ls -A "$d")" = lock ]' ||
		nfs_note "$name: after kill -9 the private directory holds: $(ls -A "$d" | tr '\n' ' ')"
	t_mount "${TIERS[@]}" --no-migrate
	# (a .nfsXXXX slab the client did not remove is swept with it)
	grep -q "tier 'nfs': removed 1 directory left by dead mounts in $NT (" "$T_LOG" ||
		t_fail "$name: no log line for the sweep of the dead mount's directory: $(cat "$T_LOG")"
	[ -d "$d" ] && t_fail "$name: the dead mount's directory $d is still there"
	server_dir >/dev/null

	# --- checksums: a byte flipped in the export's file
	t_ok "$SC" setxattr "$MNT" user.tierfs.tiers nfs 0
	# (a fresh tier: the first extent of the first file is slot 0)
	pat_w -s 21 "$MNT/bad" 0 100K
	pat_w -s 22 "$MNT/good" 0 100K
	t_eq "$(on_tier ram "$MNT/bad")" 0 "$name: RAM bytes with tiers=nfs"
	[ "$(on_tier nfs "$MNT/bad")" -gt 0 ] || t_fail "$name: not on NFS with tiers=nfs: $(layout "$MNT/bad")"
	t_eq "$(t_xattr "$MNT/bad" user.tierfs.verify)" "extents=1 checked=1 errors=0" "$name: verify before corruption"
	before=$(tstat nfs csum_errors)
	# the data must be on the server before it is damaged there
	drop_caches
	slab=$(server_slab)
	[ -n "$slab" ] || t_fail "$name: the slab is not a file of the export"
	flip "$slab" 1000
	drop_caches
	t_eq "$(read_err "$MNT/bad" 0 4096)" EIO "$name: buffered read of an extent corrupted on the server"
	out=$("$P" -d v -s 21 "$MNT/bad" 0 100K)
	t_like "$out" "ERR read EIO *" "$name: direct read of an extent corrupted on the server"
	if cat "$MNT/bad" >/dev/null 2>&1; then
		t_fail "$name: cat of a file corrupted on the server succeeded"
	fi
	after=$(tstat nfs csum_errors)
	[ "$after" -gt "$before" ] || t_fail "$name: csum_errors did not grow ($before -> $after)"
	ino=$(stat -c %i "$MNT/bad")
	grep -q "checksum mismatch on tier 'nfs': read of inode $ino at offset 0 " "$T_LOG" ||
		t_fail "$name: no checksum line naming inode $ino, offset 0 in the log: $(cat "$T_LOG")"
	t_eq "$(t_xattr "$MNT/bad" user.tierfs.verify)" "extents=1 checked=1 errors=1" "$name: verify after corruption"
	pat_v -d -s 22 "$MNT/good" 0 100K
	alive csum
	"$SC" truncate "$MNT/bad" 0 >/dev/null
	pat_w -s 23 "$MNT/bad" 0 100K
	drop_caches
	pat_v -d -s 23 "$MNT/bad" 0 100K
	t_eq "$(t_xattr "$MNT/bad" user.tierfs.verify)" "extents=1 checked=1 errors=0" "$name: verify after rewriting"

	# --- migration: the migrator promotes a hot region from NFS to RAM;
	# tierctl migrate moves whole files down and up
	t_remount "${TIERS[@]}" --promote-passes 3 --heat-half-life 30 \
		--high-watermark 100 --low-watermark 90
	pat_w -s 31 "$MNT/cold" 0 8M
	pat_w -s 32 "$MNT/hot" 0 8M
	pat_w -s 33 "$MNT/up" 0 2M
	t_eq "$(on_tier ram "$MNT/cold")" $((4 * M)) "$name: RAM bytes of the cold file at the start"
	t_eq "$(layout "$MNT/hot")" "ram=0 nfs=$((8 * M))" "$name: layout of the hot file at the start"
	t_eq "$(layout "$MNT/up")" "ram=0 nfs=$((2 * M))" "$name: layout of the third file at the start"
	hot_up() { [ "$(extents "$MNT/hot" | head -n 1)" = "0 $((2 * M)) ram" ]; }
	passes=0
	for ((i = 0; i < 30; i++)); do
		pat_v -d -s 32 "$MNT/hot" 0 2M
		passes=$((passes + 1))
		hot_up && break
		sleep 0.5
	done
	t_wait_until 3 hot_up ||
		t_fail "$name: hot region not promoted from NFS after $passes passes: $(extents "$MNT/hot" | tr '\n' ';')"
	wait_idle
	echo "$name: hot region in RAM after $passes passes; cold $(layout "$MNT/cold"), hot $(layout "$MNT/hot")"
	t_eq "$(on_tier ram "$MNT/hot")" $((2 * M)) "$name: RAM bytes of the hot file"
	[ "$(tstat ram promotions)" -ge 2 ] || t_fail "$name: promotions into RAM: $(tstat ram promotions)"
	t_eq "$(mstat failures)" 0 "$name: migration failures"
	drop_caches
	pat_v -s 31 "$MNT/cold" 0 8M
	pat_v -d -s 32 "$MNT/hot" 0 8M
	"$TIERCTL" migrate -q "$MNT/cold" nfs || t_fail "$name: tierctl migrate cold nfs"
	t_eq "$(layout "$MNT/cold")" "ram=0 nfs=$((8 * M))" "$name: layout of the cold file after tierctl migrate to nfs"
	"$TIERCTL" migrate -q "$MNT/up" ram || t_fail "$name: tierctl migrate up ram"
	t_eq "$(layout "$MNT/up")" "ram=$((2 * M)) nfs=0" "$name: layout after tierctl migrate to ram"
	t_eq "$(mstat failures)" 0 "$name: migration failures after tierctl"
	drop_caches
	pat_v -d -s 31 "$MNT/cold" 0 8M
	pat_v -d -s 32 "$MNT/hot" 0 8M
	pat_v -d -s 33 "$MNT/up" 0 2M
	pat_v -s 33 "$MNT/up" 0 2M

	# --- ENOSPC only when both tiers are full
	t_remount "${TIERS[@]}" --no-migrate --no-writeback-cache
	t_eq "$(bytes_of blocks)" $((28 * M)) "$name: df size of RAM 4M + NFS 24M"
	t_eq "$(bytes_of bavail)" $((28 * M)) "$name: df avail of the empty mount"
	pat_w -s 41 "$MNT/a" 0 20M
	t_eq "$(layout "$MNT/a")" "ram=$((4 * M)) nfs=$((16 * M))" "$name: layout of the first 20M"
	t_eq "$(bytes_of bavail)" $((8 * M)) "$name: df avail after 20M"
	out=$("$P" -s 42 w "$MNT/b" 0 12M)
	case $out in
	"ERR write ENOSPC at "*" done "*) acc=${out##* done } ;;
	*) t_fail "$name: writing 32M into 28M of tiers: expected ENOSPC, got '$out'" ;;
	esac
	t_eq "$acc" $((8 * M)) "$name: bytes accepted before ENOSPC"
	t_eq "$(layout "$MNT/b")" "ram=0 nfs=$((8 * M))" "$name: layout of the file that hit ENOSPC"
	t_eq "$(tstat ram used) $(tstat nfs used)" "$((4 * M)) $((24 * M))" "$name: used when full"
	t_eq "$(bytes_of bavail)" 0 "$name: df avail when full"
	t_eq "$(bytes_of bfree)" 0 "$name: df free when full"
	t_eq "$(bytes_of blocks)" $((28 * M)) "$name: df size when full"
	t_errno ENOSPC "$SC" write "$MNT/c" 0 x
	# full is the tier's size: the server still has room
	[ "$(df --output=avail -B1 "$NFS_MNT" | tail -n 1 | tr -d ' ')" -gt $((8 * M)) ] ||
		t_fail "$name: the NFS export itself is full: $(df -h "$NFS_MNT" | tail -n 1)"
	alive enospc
	pat_v -d -s 41 "$MNT/a" 0 20M
	pat_v -d -s 42 "$MNT/b" 0 8M
	t_eq "$(t_stat size "$MNT/b")" $((8 * M)) "$name: size of the file that hit ENOSPC"
	rm "$MNT/b" || t_fail rm
	t_wait_until 5 avail_is $((8 * M)) || t_fail "$name: df avail $(bytes_of bavail) after rm, expected 8M"
	t_wait_until 5 used_is nfs $((16 * M)) || t_fail "$name: nfs used $(tstat nfs used) after rm, expected 16M"
	pat_w -s 43 "$MNT/c" 0 8M
	drop_caches
	pat_v -s 41 "$MNT/a" 0 20M
	pat_v -s 43 "$MNT/c" 0 8M
	t_eq "$(tstat nfs io_errors)" 0 "$name: I/O errors of the NFS tier"
	t_unmount
	[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
	if ! t_wait_until 10 export_empty; then
		nfs_note "$name: left in the export after a clean unmount: $(find "$NFS_EXP/tier" | tr '\n' ' ')"
		rm -rf "${NFS_EXP:?}/tier/"* "$NFS_EXP/tier/".nfs* 2>/dev/null
	fi
	rmdir "$NFS_MNT/tier" || t_fail "rmdir on the NFS mount"
	nfs_umount
	nfs_mounted && t_fail "$name: cannot unmount NFS"
	return 0
}

nfs_start
cd / || t_fail cd
run_pass "NFSv4.2" vers=4.2
if grep -qw '+3' /proc/fs/nfsd/versions 2>/dev/null; then
	run_pass "NFSv3 nolock" vers=3,nolock
else
	echo "NFSv3 is off in this server ($(cat /proc/fs/nfsd/versions 2>/dev/null)): no v3 pass"
fi
t_done
