#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: options
# TIMEOUT: 120
# IO: tiered a checksum error in a file-tier slab
#
# systemd (issue 19), through sockets of the test's own:
#  - sd_notify: with $NOTIFY_SOCKET, READY=1 arrives once the mount is
#    live (listed in /proc/self/mounts the moment it arrives, and
#    mountpoint(1) true), with STATUS= naming the mount; STOPPING=1 at
#    unmount, after it.  A detached daemon adds MAINPID= (its own pid).
#  - the journal in the foreground: with $JOURNAL_STREAM naming the
#    daemon's stderr (device:inode, as systemd sets it), messages go to
#    the journal socket ($TIERFS_JOURNAL_SOCKET) in the native protocol,
#    with PRIORITY= and, for a checksum error on a damaged file-tier
#    slab, TIERFS_TIER, TIERFS_INODE and TIERFS_OFFSET; stderr stays
#    quiet.  A $JOURNAL_STREAM naming another file changes nothing:
#    stderr, no datagram.
#  - detached with neither journal nor syslog: one line on the original
#    stderr says where the messages go; a deleted file as stderr is not
#    kept (the daemon's fd 2 is /dev/null) and the line says so.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || t_skip "python3 missing"

# The listener: binds a unix datagram socket and appends each datagram
# to OUT as KEY=VALUE lines (the journal's binary MESSAGE decoded), then
# a blank line.  On READY=1, with MNT given, it adds X_LISTED (MNT in
# /proc/self/mounts at that moment) and X_MOUNTPOINT (mountpoint -q).
cat >"$T/listen.py" <<'EOF'
import socket, subprocess, sys

sock, out = sys.argv[1], sys.argv[2]
mnt = sys.argv[3] if len(sys.argv) > 3 else ""

def fields(d):
    res, i = [], 0
    while i < len(d):
        nl = d.find(b"\n", i)
        if nl < 0:
            nl = len(d)
        line = d[i:nl]
        if b"=" in line or nl == len(d):
            res.append(line.decode(errors="replace"))
            i = nl + 1
        else:  # KEY \n little-endian 64-bit length, bytes, \n
            n = int.from_bytes(d[nl + 1:nl + 9], "little")
            val = d[nl + 9:nl + 9 + n]
            res.append(line.decode() + "=" + val.decode(errors="replace"))
            i = nl + 9 + n + 1
    return res

s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock)
open(out + ".ready", "w").close()
s.settimeout(100)
with open(out, "a") as f:
    while True:
        try:
            d = s.recv(1 << 16)
        except socket.timeout:
            break
        got = fields(d)
        if mnt and "READY=1" in got:
            with open("/proc/self/mounts") as m:
                listed = any(l.split()[1] == mnt for l in m)
            up = subprocess.run(["mountpoint", "-q", mnt], timeout=30).returncode == 0
            got += ["X_LISTED=%d" % listed, "X_MOUNTPOINT=%d" % up]
        f.write("\n".join(got) + "\n\n")
        f.flush()
EOF
LISTEN_PIDS=()
# listen SOCK OUT [MNT] -- start a listener; its pid in LISTEN_PID
listen() {
	python3 "$T/listen.py" "$@" >>"$T/listen.log" 2>&1 &
	LISTEN_PID=$!
	LISTEN_PIDS+=("$LISTEN_PID")
	t_wait_until 10 test -e "$2.ready" || t_fail "listener on $1 did not start"
}
stop_listeners() {
	local p
	for p in "${LISTEN_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	LISTEN_PIDS=()
}
# a failing check must not leave a listener waiting for its timeout
cleanup_all() {
	local rc=$?
	stop_listeners
	(exit $rc)
	t_cleanup
}
trap cleanup_all EXIT
# record OUT KEY=VALUE -- the number of the first datagram in OUT that
# holds that line (1, 2, ...), or nothing
record() {
	awk -v want="$2" 'BEGIN { RS = ""; FS = "\n" }
		{ for (i = 1; i <= NF; i++) if ($i == want) { print NR; exit } }' "$1"
}
# field OUT SELECT KEY -- KEY's value in the first datagram with SELECT
field() {
	awk -v sel="$2" -v key="$3=" 'BEGIN { RS = ""; FS = "\n" }
		{ hit = 0; v = ""
		  for (i = 1; i <= NF; i++) {
			if (index($i, sel)) hit = 1
			if (index($i, key) == 1) v = substr($i, length(key) + 1)
		  }
		  if (hit) { print v; exit } }' "$1"
}

# --- sd_notify, in the foreground as tierfs@.service runs it
listen "$T/notify" "$T/notify.got" "$MNT"
NOTIFY_SOCKET=$T/notify t_mount --tier ram=ram:16M
t_wait_until 30 grep -q '^X_MOUNTPOINT=' "$T/notify.got" ||
	t_fail "no READY=1 on NOTIFY_SOCKET: '$(cat "$T/notify.got")'"
t_eq "$(record "$T/notify.got" READY=1)" 1 "READY=1 is the first notification"
t_eq "$(record "$T/notify.got" X_LISTED=1)" 1 "the mount is listed when READY=1 arrives"
t_eq "$(record "$T/notify.got" X_MOUNTPOINT=1)" 1 "mountpoint -q when READY=1 arrives"
t_eq "$(field "$T/notify.got" READY=1 STATUS)" "serving $MNT (source tierfs:ram)" "STATUS with READY=1"
t_eq "$(field "$T/notify.got" READY=1 MAINPID)" "" "MAINPID from a foreground daemon"
[ -z "$(record "$T/notify.got" STOPPING=1)" ] || t_fail "STOPPING=1 while mounted"
echo data >"$MNT/f" || t_fail "write on the notified mount"
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"
t_wait_until 10 grep -q '^STOPPING=1$' "$T/notify.got" ||
	t_fail "no STOPPING=1 at unmount: '$(cat "$T/notify.got")'"
t_eq "$(record "$T/notify.got" STOPPING=1)" 2 "STOPPING=1 after READY=1"
t_like "$(field "$T/notify.got" STOPPING=1 STATUS)" "unmounting $MNT*" "STATUS with STOPPING=1"
[ -s "$T_LOG" ] && t_fail "stderr of the notified mount: '$(cat "$T_LOG")'"

# --- sd_notify from a detached daemon: MAINPID is the daemon
mkdir -p "$T/det"
listen "$T/notify2" "$T/notify2.got" "$T/det"
NOTIFY_SOCKET=$T/notify2 "$TIERFS_BIN" --tier ram=ram:16M "$T/det" 2>"$T/det.err" ||
	t_fail "a detached mount failed: $(cat "$T/det.err")"
T_EXTRA_MOUNTS+=("$T/det")
t_wait_until 30 grep -q '^X_MOUNTPOINT=' "$T/notify2.got" ||
	t_fail "no READY=1 from a detached daemon: '$(cat "$T/notify2.got")'"
t_eq "$(record "$T/notify2.got" X_MOUNTPOINT=1)" 1 "detached: mounted when READY=1 arrives"
mainpid=$(field "$T/notify2.got" READY=1 MAINPID)
[ -n "$mainpid" ] && [ "$(cat "/proc/$mainpid/comm" 2>/dev/null)" = tierfs ] &&
	grep -qa -- "$T/det" "/proc/$mainpid/cmdline" ||
	t_fail "MAINPID '$mainpid' is not the detached daemon"
t_wait_until 5 fusermount3 -u "$T/det" || t_fail "unmount of the detached mount"
t_wait_until 10 grep -q '^STOPPING=1$' "$T/notify2.got" ||
	t_fail "no STOPPING=1 from the detached daemon"
stop_listeners

# --- the journal in the foreground: $JOURNAL_STREAM names our stderr
mkdir -p "$T/disk"
listen "$T/journal" "$T/journal.got"
: >"$T_LOG"
stream=$(stat -c %d:%i "$T_LOG")
JOURNAL_STREAM=$stream TIERFS_JOURNAL_SOCKET=$T/journal \
	t_mount tierfs:default --tier slow=file:"$T/disk":16M --no-migrate --page-cache drop
t_wait_until 10 grep -q "^MESSAGE=mounted on '$MNT' (source tierfs:slow)$" "$T/journal.got" ||
	t_fail "no 'mounted on' in the journal: '$(cat "$T/journal.got")'"
t_eq "$(field "$T/journal.got" "MESSAGE=mounted on" PRIORITY)" 6 "PRIORITY of 'mounted on'"
t_eq "$(field "$T/journal.got" "MESSAGE=mounted on" SYSLOG_IDENTIFIER)" tierfs "SYSLOG_IDENTIFIER"
# the fstab source that names other tiers: a warning, priority 4
t_eq "$(field "$T/journal.got" "MESSAGE=the source 'tierfs:default'" PRIORITY)" 4 \
	"PRIORITY of the source warning"
# a checksum error: one flipped byte in the slab (the first extent of
# the first file is at offset 0 of it); its slab is the daemon's open,
# unlinked file in the tier's private directory
head -c 100K /dev/urandom >"$MNT/bad" || t_fail "write of the file to damage"
ino=$(stat -c %i "$MNT/bad")
slab=
for fd in /proc/"$T_PID"/fd/*; do
	case $(readlink "$fd") in
	"$(realpath "$T/disk")"/tierfs-*" (deleted)") slab=$fd ;;
	esac
done
[ -n "$slab" ] || t_fail "no slab of tier slow open in the daemon"
b=$(dd if="$slab" bs=1 skip=1000 count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
printf "\\$(printf '%03o' $((b ^ 0xff)))" | dd of="$slab" bs=1 seek=1000 count=1 conv=notrunc 2>/dev/null ||
	t_fail "cannot damage the slab"
if dd if="$MNT/bad" of=/dev/null bs=4K count=1 2>/dev/null; then
	t_fail "a read of the damaged extent succeeded"
fi
t_wait_until 10 grep -q "^MESSAGE=checksum mismatch on tier 'slow'" "$T/journal.got" ||
	t_fail "no checksum line in the journal: '$(cat "$T/journal.got")'"
sel="MESSAGE=checksum mismatch"
t_eq "$(field "$T/journal.got" "$sel" PRIORITY)" 3 "PRIORITY of the checksum line"
t_eq "$(field "$T/journal.got" "$sel" TIERFS_TIER)" slow "TIERFS_TIER"
t_eq "$(field "$T/journal.got" "$sel" TIERFS_INODE)" "$ino" "TIERFS_INODE"
t_eq "$(field "$T/journal.got" "$sel" TIERFS_OFFSET)" 0 "TIERFS_OFFSET"
t_like "$(field "$T/journal.got" "$sel" MESSAGE)" "*inode $ino at offset 0 *" "the checksum line"
[ -s "$T_LOG" ] && t_fail "stderr with the journal as the stream: '$(cat "$T_LOG")'"
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"

# --- $JOURNAL_STREAM naming another file (stderr was redirected since):
# plain stderr, nothing for the journal
: >"$T/other"
n_before=$(grep -c '^MESSAGE=' "$T/journal.got")
JOURNAL_STREAM=$(stat -c %d:%i "$T/other") TIERFS_JOURNAL_SOCKET=$T/journal \
	t_mount tierfs:default --tier ram=ram:16M
grep -q "^tierfs: the source 'tierfs:default' does not name this mount's tiers: it shows as 'tierfs:ram'" "$T_LOG" ||
	t_fail "the warning is not on stderr: '$(cat "$T_LOG")'"
t_unmount
sleep 0.5
t_eq "$(grep -c '^MESSAGE=' "$T/journal.got")" "$n_before" "datagrams with JOURNAL_STREAM naming another file"
stop_listeners

# --- detached, no journal, no syslog: it says where messages go, and a
# deleted file is not kept as the daemon's stderr
if [ ! -S /dev/log ]; then
	mkdir -p "$T/det2"
	TIERFS_JOURNAL_SOCKET=$T/no-journal "$TIERFS_BIN" --tier ram=ram:16M "$T/det" \
		2>"$T/det.err" || t_fail "a detached mount failed: $(cat "$T/det.err")"
	t_eq "$(head -n 1 "$T/det.err")" "tierfs: no journal and no syslog socket (/dev/log): logging to stderr ($T/det.err)" \
		"detached, stderr a file"
	t_wait_until 5 fusermount3 -u "$T/det" || t_fail "unmount of the detached mount"

	exec 7>"$T/gone.err"
	rm "$T/gone.err"
	TIERFS_JOURNAL_SOCKET=$T/no-journal "$TIERFS_BIN" --tier ram=ram:16M "$T/det2" 2>&7 ||
		t_fail "a detached mount with a deleted stderr failed: $(cat /proc/$$/fd/7)"
	T_EXTRA_MOUNTS+=("$T/det2")
	t_like "$(cat /proc/$$/fd/7)" "tierfs: no journal (*) and no syslog socket (/dev/log), and stderr is a deleted file (*): the daemon's messages are lost once it detaches;*" \
		"detached, stderr a deleted file"
	exec 7>&-
	pid=
	for p in /proc/[0-9]*; do
		if [ "$(cat "$p/comm" 2>/dev/null)" = tierfs ] &&
			grep -qa -- "$T/det2" "$p/cmdline" 2>/dev/null; then
			pid=${p#/proc/}
		fi
	done
	[ -n "$pid" ] || t_fail "no daemon for $T/det2"
	t_eq "$(readlink "/proc/$pid/fd/2")" /dev/null "stderr of the daemon with a deleted stderr"
	t_wait_until 5 fusermount3 -u "$T/det2" || t_fail "unmount of the second detached mount"
fi
t_pass
