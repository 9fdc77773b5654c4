#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: services
# TIMEOUT: 150
#
# A capacity tier on GlusterFS (issue 19, item 4).  The GlusterFS FUSE
# client has no O_TMPFILE, and it answers a setattr (fchmod) on a file
# unlinked while open with ESTALE, so tierfs used to fail to mount there
# ("Stale file handle").  Now the slab stays named, tierfs-g-XXXXXX/slab,
# in the flock'd private directory (tiers/tier_backing.c, tier_backing_open()).
#
# Setup, without systemd: a glusterd of this test's own (-N, a volfile
# with its working directory in $T, its own log and pid file; the test
# skips when one already runs here or port 24007 is taken), a volume of
# one brick in $T (created with force: the brick is on the root
# filesystem), the performance translators that cache reads off (the
# test damages the brick behind the client's back), mounted with the
# glusterfs FUSE client.  Everything it started, mounted or created goes
# at exit, whatever happens: the volume, the daemons, and the files they
# made in /var/run/gluster, /var/log/glusterfs and /var/lib/glusterd
# (only paths that did not exist before the test).  Where glusterd does
# not start or the volume does not mount, the test exits 77.
#
# With a RAM tier of 8M over a 64M file tier on the volume, 1M extents:
#  - mount works, a 24M file spills (layout exactly 8M/16M) and reads
#    back byte-exact, direct and buffered after dropping the cache; the
#    brick holds the named slab with the data (du), its apparent size
#    is the slot address space (64M * 256), and ls of the tier
#    directory shows one private directory with "lock" and "slab";
#  - a clean unmount leaves nothing in the tier directory (brick side);
#    a kill -9 leaves the directory with lock and slab (the data of a
#    dead mount), and the next mount sweeps it and logs the bytes;
#  - checksums: one byte flipped in the slab on the brick: a read of
#    that extent fails with EIO, csum_errors counts it, the log names
#    the inode, tierctl scrub fails and names the file; another file
#    reads fine;
#  - migration: tierctl migrate moves a file from the volume to RAM and
#    another one down to the volume, data intact;
#  - ENOSPC only when both tiers are full (after exactly the 8M that
#    still fit), data intact, the mount usable;
#  - the volume stopped mid-run (gluster volume stop): reading the data
#    on the volume gives EIO, the RAM tier's data reads back, the mount
#    lives on, the log names tier 'g'; unmount is clean; after the
#    volume is started again, the next mount sweeps what the unmount
#    could not remove.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"
: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$TIERCTL" ] || t_fail "tierctl binary '$TIERCTL' missing (set TIERCTL)"

GL=$T/gl               # glusterd's working directory, volfile, logs
BRICK=$T/brick         # the volume's one brick
GMNT=$T/gluster        # where the test mounts the volume
VOL=tierfs$$           # the volume's name
GL_PID=                # our glusterd
GL_VOL_CREATED=        # set while our volume exists
GL_STATE_DIRS=(/var/run/gluster /run/gluster /var/log/glusterfs /var/lib/glusterd)
mkdir -p "$GL/wd" "$BRICK" "$GMNT" || t_fail mkdir

# the paths under GL_STATE_DIRS now, to tell ours from others' at exit
gl_snapshot() { find "${GL_STATE_DIRS[@]}" 2>/dev/null | sort; }

gcli() { timeout 60 gluster --mode=script --log-file="$GL/cli.log" "$@"; }

gl_umount() {
	t_is_mounted "$GMNT" || return 0
	timeout 30 umount "$GMNT" 2>/dev/null || umount -l "$GMNT" 2>/dev/null
}

# the brick processes (glusterfsd) of our volume
gl_brick_pids() { pgrep -f -- "--volfile-id $VOL\\." 2>/dev/null; }

gl_kill() {
	local pid=$1
	kill "$pid" 2>/dev/null || return 0
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
}

# Undo whatever gl_start() did; safe at any point and more than once.
gl_teardown() {
	local pid
	t_unmount # tierfs first: it holds the slab open on the volume
	gl_umount
	if [ -n "$GL_VOL_CREATED" ] && [ -n "$GL_PID" ]; then
		gcli volume stop "$VOL" force >/dev/null 2>&1
		gcli volume delete "$VOL" >/dev/null 2>&1
	fi
	GL_VOL_CREATED=
	for pid in $(gl_brick_pids); do
		gl_kill "$pid"
	done
	if [ -n "$GL_PID" ]; then
		gl_kill "$GL_PID"
		wait "$GL_PID" 2>/dev/null
		GL_PID=
	fi
	# what glusterd, its bricks and the client created outside $T
	if [ -f "$GL/before" ]; then
		gl_snapshot >"$GL/after"
		comm -13 "$GL/before" "$GL/after" | sort -r |
			while read -r p; do
				if [ -d "$p" ]; then rmdir "$p"; else rm -f "$p"; fi
			done 2>/dev/null
	fi
}

gl_exit() {
	local rc=$?
	trap - EXIT
	gl_teardown
	(exit $rc)
	t_cleanup
}
trap gl_exit EXIT

gl_up() { gcli volume list >/dev/null 2>&1; }
brick_online() {
	gcli volume status "$VOL" detail 2>/dev/null | grep -q '^Online.*: Y'
}

gl_start() {
	local c host addr
	[ "$(id -u)" = 0 ] || t_skip "glusterd needs root"
	for c in glusterd gluster glusterfs mount.glusterfs; do
		command -v "$c" >/dev/null || [ -x "/sbin/$c" ] ||
			t_skip "$c missing: install glusterfs-server and glusterfs-client"
	done
	[ -c /dev/fuse ] || t_skip "no /dev/fuse"
	pgrep -x glusterd >/dev/null &&
		t_skip "a glusterd already runs here: leaving it alone"
	pgrep -x glusterfsd >/dev/null &&
		t_skip "gluster bricks already run here: leaving them alone"
	if command -v ss >/dev/null && ss -ltnH 'sport = :24007' | grep -q .; then
		t_skip "port 24007 (glusterd) is taken"
	fi
	# gluster refuses localhost and 127.0.0.1 as a brick's host; this
	# machine's own name does, if it resolves to an address of this
	# machine
	host=$(hostname)
	addr=$(getent ahostsv4 "$host" | awk '{ print $1; exit }')
	[ -n "$addr" ] || t_skip "host name '$host' does not resolve"
	case $addr in
	127.*) ;;
	*) ip -o addr show 2>/dev/null | grep -qF " $addr/" ||
		t_skip "host name '$host' resolves to $addr, not an address of this machine" ;;
	esac
	GL_HOST=$host
	gl_snapshot >"$GL/before"
	cat >"$GL/glusterd.vol" <<EOF
volume management
    type mgmt/glusterd
    option working-directory $GL/wd
    option transport-type socket
    option transport.socket.listen-port 24007
    option ping-timeout 0
    option event-threads 1
end-volume
EOF
	glusterd -N -f "$GL/glusterd.vol" -p "$GL/glusterd.pid" \
		-l "$GL/glusterd.log" >"$GL/glusterd.out" 2>&1 &
	GL_PID=$!
	t_wait_until 15 gl_up ||
		t_skip "glusterd does not start: $(tail -n 3 "$GL/glusterd.log" "$GL/glusterd.out" 2>/dev/null | tr '\n' ' ')"
	GL_VOL_CREATED=1
	gcli volume create "$VOL" "$GL_HOST:$BRICK" force >"$GL/create.log" 2>&1 ||
		t_skip "gluster volume create: $(cat "$GL/create.log")"
	# the test damages the brick behind the client's back: no client
	# translator may answer a read from its own cache
	for c in io-cache read-ahead quick-read open-behind stat-prefetch \
		readdir-ahead write-behind; do
		gcli volume set "$VOL" "performance.$c" off >/dev/null 2>&1
	done
	gl_vol_start
	echo "glusterd on $GL_HOST, volume $VOL on brick $BRICK"
}

gl_vol_start() {
	gcli volume start "$VOL" >"$GL/start.log" 2>&1 ||
		t_skip "gluster volume start: $(cat "$GL/start.log")"
	t_wait_until 15 brick_online ||
		t_skip "the brick of $VOL does not come online"
}

# gl_mount -- mount the volume; skip if that fails the first time, fail
# after (GL_MOUNTED_ONCE set)
gl_mount() {
	local fail=t_skip
	[ -n "${GL_MOUNTED_ONCE:-}" ] && fail=t_fail
	timeout 60 mount -t glusterfs -o "log-file=$GL/client.log" \
		"$GL_HOST:/$VOL" "$GMNT" >"$GL/mount.log" 2>&1 &&
		t_is_mounted "$GMNT" ||
		$fail "mount -t glusterfs $GL_HOST:/$VOL: $(cat "$GL/mount.log") $(tail -n 3 "$GL/client.log" 2>/dev/null)"
	mkdir -p "$GMNT/tier" || t_fail "mkdir on the gluster mount"
}

# --------------------------------------------------------------- helpers
BT=$BRICK/tier # the tier directory, as the brick holds it
used_is() { [ "$(tstat "$1" used)" = "$2" ]; }
tier_empty() { [ -z "$(ls -A "$BT")" ]; }
# the private directory of the tier on the brick: exactly one
brick_dir() {
	local d
	d=$(tier_dirs "$BT")
	[ -n "$d" ] && [ "$(printf '%s\n' "$d" | wc -l)" = 1 ] ||
		t_fail "expected one private directory on the brick, found: '$d'"
	echo "$d"
}
# slot_written FILE -- the first 4K of FILE hold something (the data
# reached the brick)
slot_written() { [ -n "$(head -c 4096 "$1" | tr -d '\0')" ]; }

gl_start
gl_mount
cd / || t_fail cd
GT=$GMNT/tier
TIERS=(--tier ram=ram:8M --tier g=file:"$GT":64M)

# --- mount, spill, read back; the named slab on the brick
t_mount "${TIERS[@]}" --no-migrate --no-writeback-cache
grep -q . "$T_LOG" && t_fail "log not empty after the mount: $(cat "$T_LOG")"
pat_w -s 1 "$MNT/big" 0 24M
t_eq "$(layout "$MNT/big")" "ram=$((8 * M)) g=$((16 * M))" "layout of a 24M file"
pat_v -d -s 1 "$MNT/big" 0 24M
drop_caches
pat_v -s 1 "$MNT/big" 0 24M
d=$(brick_dir)
t_eq "$(ls -A "$d" | tr '\n' ' ')" "lock slab " "files of the private directory on the brick"
kb=$(du -k "$d/slab" | cut -f1)
[ "$kb" -ge $((15 * 1024)) ] && [ "$kb" -le $((64 * 1024 + 1024)) ] ||
	t_fail "the slab on the brick holds ${kb}K, expected 16M to 64M"
t_eq "$(stat -c %s "$d/slab")" $((64 * M * 256)) "apparent size of the slab (a slot per 4K unit)"
echo "on the brick: $(ls -A "$d" | tr '\n' ' ')(slab ${kb}K, apparent $(($(stat -c %s "$d/slab") >> 30))G)"
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
t_wait_until 10 tier_empty ||
	t_fail "left on the brick after a clean unmount: $(find "$BT" | tr '\n' ' ')"

# --- kill -9 keeps the named slab; the next mount sweeps it
t_mount "${TIERS[@]}" --no-migrate
pat_w -s 2 "$MNT/big" 0 16M
sync
d=$(brick_dir)
kill -9 "$T_PID"
wait "$T_PID" 2>/dev/null
T_PID=
fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" || t_fail "cannot unmount the dead mount"
t_eq "$(ls -A "$d" | tr '\n' ' ')" "lock slab " "what a killed daemon leaves on the brick"
t_mount "${TIERS[@]}" --no-migrate --no-writeback-cache
grep -q "tier 'g': removed 1 directory left by dead mounts in $GT ([1-9][0-9]* bytes of data)" "$T_LOG" ||
	t_fail "no log line for the sweep of the dead mount's named slab: $(cat "$T_LOG")"
[ -d "$d" ] && t_fail "the dead mount's directory $d is still there"
d=$(brick_dir)

# --- checksums: a byte flipped in the slab on the brick
mkdir "$MNT/g" && t_ok "$SC" setxattr "$MNT/g" user.tierfs.tiers g 0
# (a fresh tier: the first extent of the first file is slot 0)
pat_w -s 21 "$MNT/g/bad" 0 100K
pat_w -s 22 "$MNT/g/good" 0 100K
t_eq "$(layout "$MNT/g/bad")" "ram=0 g=$((100 * K))" "layout with tiers=g"
drop_caches
wait_for 10 'the data of slot 0 did not reach the brick' slot_written "$d/slab"
before=$(tstat g csum_errors)
flip "$d/slab" 1000
drop_caches
t_eq "$(read_err "$MNT/g/bad" 0 4096)" EIO "read of an extent damaged on the brick"
after=$(tstat g csum_errors)
[ "$after" -gt "$before" ] || t_fail "csum_errors did not grow ($before -> $after)"
ino=$(stat -c %i "$MNT/g/bad")
grep -q "checksum mismatch on tier 'g': read of inode $ino at offset 0 " "$T_LOG" ||
	t_fail "no checksum line naming inode $ino in the log: $(cat "$T_LOG")"
"$TIERCTL" scrub -q "$MNT" >"$T/scrub.out" 2>"$T/scrub.err" &&
	t_fail "tierctl scrub succeeded with a damaged extent: $(cat "$T/scrub.out")"
grep -q "^tierctl: '$MNT/g/bad': 1 of 1 extents failed their checksum$" "$T/scrub.err" ||
	t_fail "tierctl scrub does not name the damaged file: $(cat "$T/scrub.out" "$T/scrub.err")"
pat_v -d -s 22 "$MNT/g/good" 0 100K
alive csum
rm "$MNT/g/bad" || t_fail rm

# --- migration both ways with tierctl
pat_w -s 31 "$MNT/g/up" 0 3M
pat_w -s 32 "$MNT/down" 0 3M
t_eq "$(layout "$MNT/g/up")" "ram=0 g=$((3 * M))" "layout of the file to move up"
t_eq "$(on_tier ram "$MNT/down")" $((3 * M)) "RAM bytes of the file to move down"
"$TIERCTL" migrate -q "$MNT/g/up" ram || t_fail "tierctl migrate up ram"
"$TIERCTL" migrate -q "$MNT/down" g || t_fail "tierctl migrate down g"
t_eq "$(layout "$MNT/g/up")" "ram=$((3 * M)) g=0" "layout after tierctl migrate to ram"
t_eq "$(layout "$MNT/down")" "ram=0 g=$((3 * M))" "layout after tierctl migrate to g"
t_eq "$(mstat failures)" 0 "migration failures"
drop_caches
pat_v -d -s 31 "$MNT/g/up" 0 3M
pat_v -s 32 "$MNT/down" 0 3M

# --- ENOSPC only when both tiers are full
t_remount "${TIERS[@]}" --no-migrate --no-writeback-cache
pat_w -s 41 "$MNT/a" 0 64M
t_eq "$(layout "$MNT/a")" "ram=$((8 * M)) g=$((56 * M))" "layout of the first 64M"
out=$("$P" -s 42 w "$MNT/b" 0 12M)
case $out in
"ERR write ENOSPC at "*" done "*) acc=${out##* done } ;;
*) t_fail "writing 76M into 72M of tiers: expected ENOSPC, got '$out'" ;;
esac
t_eq "$acc" $((8 * M)) "bytes accepted before ENOSPC"
t_eq "$(tstat ram used) $(tstat g used)" "$((8 * M)) $((64 * M))" "used when full"
t_errno ENOSPC "$SC" write "$MNT/c" 0 x
alive enospc
pat_v -d -s 41 "$MNT/a" 0 64M
pat_v -d -s 42 "$MNT/b" 0 8M
t_eq "$(tstat g io_errors)" 0 "I/O errors of the gluster tier"

# --- the volume stopped under a running mount
sync
gcli volume stop "$VOL" >"$GL/stop.log" 2>&1 || t_fail "gluster volume stop: $(cat "$GL/stop.log")"
echo "volume $VOL stopped"
drop_caches
t_eq "$(read_err "$MNT/a" $((16 * M)) 4096)" EIO "read of data on the stopped volume"
t_eq "$(read_err "$MNT/b" 0 4096)" EIO "read of a second file on the stopped volume"
pat_v -d -s 41 "$MNT/a" 0 8M # the RAM tier's part
alive "the volume stopped"
grep -q "read error on tier 'g': inode [0-9]* at offset [0-9]*: .*(the program gets EIO)" "$T_LOG" ||
	t_fail "no log line naming tier 'g' after the volume stopped: $(cat "$T_LOG")"
[ "$(tstat g io_errors)" -gt 0 ] || t_fail "io_errors of g did not grow with the volume stopped"
# both tiers are full: removing a file on both frees its RAM part
rm "$MNT/a" || t_fail "rm of a file partly on the stopped volume"
pat_w -s 51 "$MNT/new" 0 100K
t_eq "$(layout "$MNT/new")" "ram=$((100 * K)) g=0" "layout of a new file with the volume stopped"
pat_v -d -s 51 "$MNT/new" 0 100K
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
# the unmount could not remove the named slab from a stopped volume: the
# next mount, with the volume back, sweeps it
gl_umount
gl_vol_start
GL_MOUNTED_ONCE=1 gl_mount
t_mount "${TIERS[@]}" --no-migrate
t_eq "$(tier_dirs "$BT" | wc -l)" 1 "private directories after the volume came back"
grep "removed" "$T_LOG" || echo "(the unmount with the volume stopped left nothing to sweep)"
pat_w -s 61 "$MNT/after" 0 24M
drop_caches
pat_v -s 61 "$MNT/after" 0 24M
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
t_wait_until 10 tier_empty ||
	t_fail "left on the brick after the last clean unmount: $(find "$BT" | tr '\n' ' ')"
t_done
