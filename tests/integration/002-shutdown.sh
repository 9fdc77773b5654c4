#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: options
# TIMEOUT: 60
#
# Clean shutdown: SIGTERM and SIGINT to the daemon unmount and exit 0, also
# with a file held open; fusermount3 -u ends the daemon with exit 0.  A
# fresh mount starts empty (scratch semantics).
. "$(dirname "$0")/lib.sh"
t_need_progs

# wait_exit WHAT -- the daemon must exit 0 within 5s and leave no mount
wait_exit() {
	local what=$1 rc i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$T_PID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$T_PID" 2>/dev/null; then
		t_fail "$what: daemon still running after 5s"
	fi
	wait "$T_PID"
	rc=$?
	T_PID=
	t_eq "$rc" 0 "$what: daemon exit status"
	if t_is_mounted "$MNT"; then
		t_fail "$what: $MNT still mounted after the daemon exited"
	fi
	echo "ok: $what"
}

for sig in TERM INT; do
	t_mount --tier ram=ram:32M
	t_check "$PROGS/pattern" w "$MNT/f" 0 3M >/dev/null
	kill -"$sig" "$T_PID"
	wait_exit "SIG$sig"
done

# unmount from outside
t_mount --tier ram=ram:32M
t_check "$PROGS/pattern" w "$MNT/f" 0 1M >/dev/null
fusermount3 -u "$MNT" || t_fail "fusermount3 -u failed"
wait_exit "fusermount3 -u"

# SIGTERM while a file is open and a process sits in the mount
t_mount --tier ram=ram:32M
exec 3>"$MNT/busy" || t_fail "cannot open $MNT/busy"
echo data >&3
(cd "$MNT" && exec sleep 30) &
sleeper=$!
sleep 0.2
kill -TERM "$T_PID"
wait_exit "SIGTERM with a busy mount"
exec 3>&-
kill "$sleeper" 2>/dev/null
wait "$sleeper" 2>/dev/null

# scratch semantics: a fresh mount starts empty
t_mount --tier ram=ram:32M
mkdir "$MNT/dir" && echo hi >"$MNT/dir/file" || t_fail "cannot create files"
t_remount --tier ram=ram:32M
left=$(ls -A "$MNT")
t_eq "$left" "" "contents of a fresh mount"

t_pass
