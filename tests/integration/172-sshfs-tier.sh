#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: services
# TIMEOUT: 120
#
# A capacity tier on sshfs (issue 19, item 4).  Each unmount used to
# leave an empty tierfs-NAME-XXXXXX directory in the remote directory:
# the lock file was unlinked while still open, which sshfs (libfuse's
# high-level API) turns into a rename to .fuse_hiddenN, so the rmdir
# that followed failed; the next mount did not remove empty directories.
#
# Setup: an sshd of this test's own on a free loopback port (host key,
# client key and authorized_keys generated in $T, root login by key
# only, no PAM), and sshfs of a directory in $T mounted over it.  The
# test stops sshd and unmounts sshfs at exit, whatever happens, and
# removes /run/sshd if it made it.  It skips (exit 77) where sshd, sshfs
# or ssh-keygen is missing or sshd or sshfs do not start.
#
# With a RAM tier of 8M over a 64M file tier on sshfs, 1M extents:
#  - a 24M file spills (layout 8M/16M) and reads back byte-exact, direct
#    and buffered after dropping the cache; on the remote side the
#    private directory holds "lock" and the unlinked slab as sshfs's
#    .fuse_hiddenN (its apparent size 64M * 256, a slot per 4K unit; du
#    shows the data only);
#  - two rounds of unmount and mount: after each clean unmount no
#    tierfs-* directory is left in the remote directory;
#  - an empty tierfs-* directory (what older versions left) is swept by
#    the next mount;
#  - a daemon killed with kill -9 leaves its directory with "lock"; the
#    next mount sweeps it and logs it; its clean unmount leaves nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"

SSH=$T/ssh        # keys, sshd_config, logs
REMOTE=$T/remote  # the directory sshfs serves
SMNT=$T/sshfs     # where sshfs mounts it
SSHD_PID=
SSHD_RUNDIR=      # set when this test made /run/sshd
mkdir -p "$SSH" "$REMOTE/tier" "$SMNT" || t_fail mkdir
chmod 700 "$SSH"

ssh_teardown() {
	t_unmount # tierfs first: it holds the slab open on sshfs
	if t_is_mounted "$SMNT"; then
		fusermount3 -u "$SMNT" 2>/dev/null || umount -l "$SMNT" 2>/dev/null
	fi
	if [ -n "$SSHD_PID" ]; then
		kill "$SSHD_PID" 2>/dev/null
		wait "$SSHD_PID" 2>/dev/null
		SSHD_PID=
	fi
	if [ -n "$SSHD_RUNDIR" ]; then
		rmdir "$SSHD_RUNDIR" 2>/dev/null
		SSHD_RUNDIR=
	fi
}

ssh_exit() {
	local rc=$?
	trap - EXIT
	ssh_teardown
	(exit $rc)
	t_cleanup
}
trap ssh_exit EXIT

port_free() { ! ss -ltnH "sport = :$1" 2>/dev/null | grep -q .; }
sshd_listens() { ss -ltnH "sport = :$PORT" 2>/dev/null | grep -q .; }

ssh_start() {
	local c sshd i
	[ "$(id -u)" = 0 ] || t_skip "the test logs in as root over ssh"
	sshd=$(command -v sshd || echo /usr/sbin/sshd)
	[ -x "$sshd" ] || t_skip "sshd missing: install openssh-server"
	for c in sshfs ssh ssh-keygen ss fusermount3; do
		command -v "$c" >/dev/null || t_skip "$c missing: install sshfs, openssh-client, iproute2"
	done
	[ -c /dev/fuse ] || t_skip "no /dev/fuse"
	ssh-keygen -q -t ed25519 -N '' -f "$SSH/host_key" >/dev/null 2>&1 &&
		ssh-keygen -q -t ed25519 -N '' -f "$SSH/id" >/dev/null 2>&1 ||
		t_skip "ssh-keygen cannot make keys"
	cp "$SSH/id.pub" "$SSH/authorized_keys" && chmod 600 "$SSH/authorized_keys" ||
		t_fail "authorized_keys"
	# sshd's privilege separation directory
	if [ ! -d /run/sshd ]; then
		mkdir -m 755 /run/sshd || t_skip "cannot make /run/sshd"
		SSHD_RUNDIR=/run/sshd
	fi
	for ((i = 0; i < 20; i++)); do
		PORT=$((20000 + RANDOM % 40000))
		port_free "$PORT" && break
	done
	cat >"$SSH/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $SSH/host_key
AuthorizedKeysFile $SSH/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
Subsystem sftp internal-sftp
EOF
	"$sshd" -D -e -f "$SSH/sshd_config" -p "$PORT" >"$SSH/sshd.log" 2>&1 &
	SSHD_PID=$!
	t_wait_until 10 sshd_listens ||
		t_skip "sshd does not start: $(head -n 3 "$SSH/sshd.log" | tr '\n' ' ')"
	timeout 60 sshfs -p "$PORT" \
		-o "IdentityFile=$SSH/id,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes" \
		"root@127.0.0.1:$REMOTE" "$SMNT" >"$SSH/sshfs.log" 2>&1 &&
		t_is_mounted "$SMNT" ||
		t_skip "sshfs does not mount: $(tr '\n' ' ' <"$SSH/sshfs.log") $(tail -n 3 "$SSH/sshd.log" | tr '\n' ' ')"
	echo "sshd on 127.0.0.1:$PORT, sshfs of $REMOTE on $SMNT"
}

# the private directories tierfs made, as the remote side sees them
remote_dirs() { tier_dirs "$REMOTE/tier"; }
no_remote_dirs() { [ -z "$(remote_dirs)" ]; }
only_lock_in() { [ "$(ls -A "$1")" = lock ]; }

ssh_start
cd / || t_fail cd
ST=$SMNT/tier
TIERS=(--tier ram=ram:8M --tier s=file:"$ST":64M)

# --- spill and read back
t_mount "${TIERS[@]}" --no-migrate --no-writeback-cache
grep -q . "$T_LOG" && t_fail "log not empty after the mount: $(cat "$T_LOG")"
pat_w -s 1 "$MNT/big" 0 24M
t_eq "$(layout "$MNT/big")" "ram=$((8 * M)) s=$((16 * M))" "layout of a 24M file"
pat_v -d -s 1 "$MNT/big" 0 24M
drop_caches
pat_v -s 1 "$MNT/big" 0 24M
d=$(remote_dirs)
[ -n "$d" ] && [ "$(printf '%s\n' "$d" | wc -l)" = 1 ] ||
	t_fail "expected one private directory on the remote side, found '$d'"
hidden=$(find "$d" -maxdepth 1 -name '.fuse_hidden*' -print -quit)
if [ -n "$hidden" ]; then
	t_eq "$(stat -c %s "$hidden")" $((64 * M * 256)) "apparent size of the slab (a slot per 4K unit)"
	echo "remote side: $(ls -A "$d" | tr '\n' ' ')(slab: apparent $(($(stat -c %s "$hidden") >> 30))G, du $(du -k "$hidden" | cut -f1)K)"
else
	echo "NOTE: no .fuse_hidden slab on the remote side: $(ls -A "$d" | tr '\n' ' ')"
fi

# --- clean unmounts leave no private directory behind
for round in 1 2; do
	t_unmount
	[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
	no_remote_dirs ||
		t_fail "round $round: left on the remote side after a clean unmount: $(find "$REMOTE/tier" | tr '\n' ' ')"
	t_mount "${TIERS[@]}" --no-migrate
	pat_w -s $((10 + round)) "$MNT/f" 0 16M
	drop_caches
	pat_v -s $((10 + round)) "$MNT/f" 0 16M
done
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
no_remote_dirs || t_fail "left after the third clean unmount: $(find "$REMOTE/tier" | tr '\n' ' ')"
echo "three clean unmounts left nothing on the remote side"

# --- an empty directory of an older tierfs is swept
mkdir -m 700 "$REMOTE/tier/tierfs-s-Empty1" || t_fail mkdir
t_mount "${TIERS[@]}" --no-migrate
grep -q "tier 's': removed 1 directory left by dead mounts in $ST (0 bytes of data)" "$T_LOG" ||
	t_fail "no log line for the sweep of an empty directory: $(cat "$T_LOG")"
[ -d "$REMOTE/tier/tierfs-s-Empty1" ] && t_fail "the empty directory was not swept"

# --- kill -9: the directory with its lock stays, the next mount sweeps it
pat_w -s 2 "$MNT/big" 0 16M
d=$(remote_dirs)
kill -9 "$T_PID"
wait "$T_PID" 2>/dev/null
T_PID=
fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" || t_fail "cannot unmount the dead mount"
# sshfs removes the hidden slab once it sees the release of the dead
# daemon's fd: asynchronously
t_wait_until 10 only_lock_in "$d" ||
	echo "NOTE: after kill -9 the private directory holds: $(ls -A "$d" | tr '\n' ' ')"
t_mount "${TIERS[@]}" --no-migrate
grep -q "tier 's': removed 1 directory left by dead mounts in $ST (" "$T_LOG" ||
	t_fail "no log line for the sweep of the killed daemon's directory: $(cat "$T_LOG"); in $d: $(ls -A "$d" 2>&1 | tr "\n" " ")"
[ -d "$d" ] && t_fail "the killed daemon's directory $d is still there"
pat_w -s 3 "$MNT/big" 0 24M
drop_caches
pat_v -s 3 "$MNT/big" 0 24M
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
no_remote_dirs || t_fail "left after the last clean unmount: $(find "$REMOTE/tier" | tr '\n' ' ')"
t_done
