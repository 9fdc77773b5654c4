#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lib.sh -- shared helpers for mounted integration tests.  Source it first:
#
#     . "$(dirname "$0")/lib.sh"
#     t_mount --tier ram=ram:64M        # mounts on $MNT, work dir in $T
#     ...checks...; t_fail "message" on error
#     t_pass
#
# Every test gets a private work directory $T (removed at exit) and a mount
# point $MNT inside it.  An EXIT trap always unmounts and kills the daemon,
# whether the test passes, fails or is interrupted.  Exit 77 means skip.
#
# Environment: TIERFS_BIN (path of the tierfs binary; meson sets it).

set -u

: "${TIERFS_BIN:?TIERFS_BIN must point at the tierfs binary}"

if [ ! -c /dev/fuse ]; then
	echo "SKIP: /dev/fuse missing"
	exit 77
fi
if ! command -v fusermount3 >/dev/null; then
	echo "SKIP: fusermount3 missing"
	exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-test.XXXXXX")
MNT=$T/mnt
mkdir -p "$MNT"
T_PID=
T_LOG=$T/daemon.log

t_unmount() {
	if mountpoint -q "$MNT" 2>/dev/null; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$T_PID" ]; then
		# give the daemon a moment to finish its clean shutdown
		for _ in $(seq 50); do
			kill -0 "$T_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$T_PID" 2>/dev/null
		wait "$T_PID" 2>/dev/null
		T_PID=
	fi
}

t_cleanup() {
	local rc=$?
	t_unmount
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -s "$T_LOG" ]; then
		echo "--- daemon log ---"
		tail -n 50 "$T_LOG"
	fi
	rm -rf "$T"
	exit $rc
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

# t_mount ARGS... -- start tierfs in the foreground on $MNT and wait until
# the mount is live.  Fails the test if it does not come up.
t_mount() {
	"$TIERFS_BIN" -f "$@" "$MNT" >"$T_LOG" 2>&1 &
	T_PID=$!
	for _ in $(seq 100); do
		if mountpoint -q "$MNT"; then
			return 0
		fi
		if ! kill -0 "$T_PID" 2>/dev/null; then
			wait "$T_PID"
			T_PID=
			cat "$T_LOG"
			t_fail "tierfs exited before mounting"
		fi
		sleep 0.05
	done
	t_fail "mount did not appear"
}

# t_remount ARGS... -- unmount and mount again (a fresh, empty fs).
t_remount() {
	t_unmount
	t_mount "$@"
}

t_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

t_pass() {
	echo "PASS"
	exit 0
}

# t_expect_errno ERRNO-NAME CMD... -- run a command (usually
# tests/integration progs) that prints the errno name of its failure.
t_check() {
	"$@" || t_fail "command failed: $*"
}
