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
# A daemon that crashes (dies by a signal) or hangs when it is unmounted
# at the end fails the test even if every check passed.
#
# Environment: TIERFS_BIN (path of the tierfs binary; meson sets it),
# PROGS (directory of the helper programs built from progs/; meson sets it),
# TIERFS_TEST_TRANSPORT (uring or dev: every daemon gets --transport;
# TIERFS_BIN then names a wrapper, TIERFS_BIN_REAL the binary).
#
# Helpers (all fail the test through t_fail on a mismatch):
#   t_mount ARGS... / t_remount ARGS... / t_unmount
#   t_check CMD...            CMD must exit 0
#   t_errno WANT CMD...       CMD (usually "$PROGS/sc ...") prints OK or an
#                             errno name first; it must be WANT
#   t_ok CMD...               same as t_errno OK CMD...
#   t_eq GOT WANT MSG         string equality
#   t_like GOT GLOB MSG       GOT matches the shell pattern GLOB
#   t_stat FIELD PATH         print one field of `sc stat` (ino, nlink, mode,
#                             type, uid, gid, size, blocks, atime, mtime,
#                             ctime, ...); t_lstat likewise without following
#   t_statfs FIELD PATH       one field of `sc statfs`
#   t_as UID:GID[:G1,G2] CMD...  run CMD as another user (setpriv)
#   t_tmpfs DIR [SIZE]        mount a tmpfs on DIR (unmounted at exit), for
#                             reference data or to compare errno values
#   t_wait_until SECS CMD...  poll CMD until it succeeds; 1 on timeout
#   t_skip MSG                exit 77
# A test of what only tiered files do says "# IO: tiered REASON" in its
# header, and the native leg skips it (below).
# Use `wait PID`, never a bare `wait`: the daemon is a child of the shell.

set -u

: "${TIERFS_BIN:?TIERFS_BIN must point at the tierfs binary}"
: "${PROGS:=}"

if [ ! -c /dev/fuse ]; then
	echo "SKIP: /dev/fuse missing"
	exit 77
fi
# The native leg (TIERFS_TEST_IO=native) runs every test but those that
# check what only tiered files do -- extents, spill, checksums, the
# writeback cache, the migrator's extent moves -- which say so in a
# line "# IO: tiered REASON" near their top; they run in the other legs.
if [ "${TIERFS_TEST_IO:-}" = native ] && grep -q '^# IO: tiered' "$0"; then
	echo "SKIP: $(sed -n 's/^# IO: tiered *//p' "$0" | head -n 1) (tiered files only)"
	exit 77
fi
if ! command -v fusermount3 >/dev/null; then
	echo "SKIP: fusermount3 missing"
	exit 77
fi
if [ ! -x "$TIERFS_BIN" ]; then
	echo "FAIL: tierfs binary '$TIERFS_BIN' missing" >&2
	exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/tierfs-test.XXXXXX")
MNT=$T/mnt
mkdir -p "$MNT"

# TIERFS_TEST_TRANSPORT=uring|dev (tests/run-all.sh's io_uring leg) and
# TIERFS_TEST_IO=native|tiered (its native leg): every tierfs this test
# starts gets --transport and --io first, through a wrapper that execs it
# (so $! is still the daemon).  A test of what only one of them does
# sets its own option after these (the last one given wins).
TIERFS_BIN_REAL=$TIERFS_BIN
T_WRAP_ARGS=
[ -z "${TIERFS_TEST_TRANSPORT:-}" ] ||
	T_WRAP_ARGS="--transport $TIERFS_TEST_TRANSPORT"
[ -z "${TIERFS_TEST_IO:-}" ] || T_WRAP_ARGS="$T_WRAP_ARGS --io $TIERFS_TEST_IO"
if [ -n "$T_WRAP_ARGS" ]; then
	printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$TIERFS_BIN" \
		"$T_WRAP_ARGS" >"$T/tierfs-wrap"
	chmod 755 "$T/tierfs-wrap"
	TIERFS_BIN=$T/tierfs-wrap
fi
T_PID=
T_LOG=$T/daemon.log
# Sanitizer reports (the -Db_sanitize=thread and address,undefined builds
# of tests/run-all.sh): every process this test starts -- the daemon, also
# one started by hand, in the background (detached, stderr gone) or
# through mount.fuse3, tierctl and the helper programs -- writes them to
# $T_SAN/{tsan,asan,ubsan}.PID, not to stderr, where a test that checks
# the daemon's output would see noise and a report from a daemon would be
# lost (a daemon that exits 1 after an ASan report, or 23 after a leak,
# looked like a clean exit).  t_unmount and t_cleanup fail the test on
# any such file and print it.  Uninstrumented binaries ignore these
# options.  The directory is world-writable for the t_as processes.
T_SAN=$T/san
mkdir -m 1777 "$T_SAN"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}log_path=$T_SAN/tsan"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T_SAN/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T_SAN/ubsan"
T_EXTRA_MOUNTS=()
T_DAEMON_PROBLEM=
T_ENV_DEFSIG=
if env --default-signal=INT true 2>/dev/null; then
	T_ENV_DEFSIG="env --default-signal=INT"
fi

# t_is_mounted DIR -- true while DIR is a mount point, even a dead FUSE
# mount whose daemon is gone (stat on it fails with ENOTCONN)
t_is_mounted() {
	awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/self/mounts
}

t_unmount() {
	if t_is_mounted "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$T_PID" ]; then
		local rc= pid=$T_PID
		# give the daemon time to finish its clean shutdown: freeing
		# 100k extents under a sanitizer on a loaded 2-core machine
		# took over 5 s; this only catches a daemon that hangs
		for _ in $(seq 300); do
			kill -0 "$T_PID" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$T_PID" 2>/dev/null; then
			T_DAEMON_PROBLEM="daemon still running 30s after unmount"
			kill -9 "$T_PID" 2>/dev/null
			wait "$T_PID" 2>/dev/null
		else
			wait "$T_PID" 2>/dev/null
			rc=$?
			if [ "$rc" -gt 128 ] && [ "$rc" -ne 137 ]; then
				T_DAEMON_PROBLEM="daemon died by signal $((rc - 128)) at unmount"
			fi
		fi
		T_PID=
		if [ -z "$T_DAEMON_PROBLEM" ] && t_san_reports "$pid"; then
			T_DAEMON_PROBLEM="sanitizer report from the daemon (pid $pid)"
		fi
	fi
	if t_is_mounted "$MNT"; then
		umount -l "$MNT" 2>/dev/null
	fi
}

# t_san_reports [PID] -- print the sanitizer reports of PID (default: of
# every process of the test) that were not printed yet; true if any
t_san_reports() {
	local f found=1
	for f in "$T_SAN"/{tsan,asan,ubsan}."${1:-*}"; do
		[ -f "$f" ] || continue
		echo "--- sanitizer report ${f##*/} ---" >&2
		cat "$f" >&2
		mv "$f" "$T_SAN/seen-${f##*/}"
		found=0
	done
	return $found
}

t_cleanup() {
	local rc=$?
	trap - EXIT
	t_unmount
	if [ $rc -eq 0 ] && [ -n "$T_DAEMON_PROBLEM" ]; then
		echo "FAIL: $T_DAEMON_PROBLEM" >&2
		rc=1
	fi
	# a report from any process fails the test, a skipped one too
	if t_san_reports; then
		echo "FAIL: sanitizer report (see above)" >&2
		[ $rc -ne 0 ] && [ $rc -ne 77 ] || rc=1
	fi
	if ls "$T_SAN"/seen-* >/dev/null 2>&1; then
		[ $rc -ne 0 ] && [ $rc -ne 77 ] || rc=1
	fi
	local m
	for m in "${T_EXTRA_MOUNTS[@]}"; do
		umount -l "$m" 2>/dev/null
	done
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -s "$T_LOG" ]; then
		echo "--- daemon log ---"
		tail -n 50 "$T_LOG"
	fi
	rm -rf --one-file-system "$T" 2>/dev/null
	exit $rc
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

# t_mount ARGS... -- start tierfs in the foreground on $MNT and wait until
# the mount is live.  Fails the test if it does not come up.
t_mount() {
	T_DAEMON_PROBLEM=
	# a background job of a non-interactive shell starts with SIGINT
	# ignored, and libfuse then leaves it ignored; restore the default
	# so that the daemon sees SIGINT as it would from a terminal
	$T_ENV_DEFSIG "$TIERFS_BIN" -f "$@" "$MNT" >"$T_LOG" 2>&1 &
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
	if [ -n "$T_DAEMON_PROBLEM" ]; then
		t_fail "$T_DAEMON_PROBLEM"
	fi
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

t_skip() {
	echo "SKIP: $*"
	exit 77
}

t_check() {
	"$@" || t_fail "command failed: $*"
}

# t_errno WANT CMD... -- CMD prints "OK ..." or an errno name first
t_errno() {
	local want=$1 out got
	shift
	out=$("$@" 2>&1)
	got=${out%% *}
	got=${got%%$'\n'*}
	if [ "$got" != "$want" ]; then
		t_fail "$* -> '$out', expected $want"
	fi
}

t_ok() {
	t_errno OK "$@"
}

t_eq() {
	if [ "$1" != "$2" ]; then
		t_fail "${3:-value}: got '$1', expected '$2'"
	fi
}

# t_like GOT GLOB MSG -- GOT must match the shell pattern GLOB
t_like() {
	# shellcheck disable=SC2053
	if [[ "$1" != $2 ]]; then
		t_fail "${3:-value}: got '$1', expected '$2'"
	fi
}

t_need_progs() {
	if [ -z "$PROGS" ] || [ ! -x "$PROGS/sc" ]; then
		t_fail "helper programs not found (PROGS='$PROGS')"
	fi
}

# _t_field FIELD "OK k=v k=v..." -> v
_t_field() {
	local want=$1 kv
	shift
	for kv in $*; do
		if [ "${kv%%=*}" = "$want" ]; then
			echo "${kv#*=}"
			return 0
		fi
	done
	return 1
}

t_stat() {
	local out
	out=$("$PROGS/sc" stat "$2") || t_fail "stat $2: $out"
	_t_field "$1" "$out" || t_fail "no field $1 in '$out'"
}

t_lstat() {
	local out
	out=$("$PROGS/sc" lstat "$2") || t_fail "lstat $2: $out"
	_t_field "$1" "$out" || t_fail "no field $1 in '$out'"
}

t_statfs() {
	local out
	out=$("$PROGS/sc" statfs "$2") || t_fail "statfs $2: $out"
	_t_field "$1" "$out" || t_fail "no field $1 in '$out'"
}

# t_as UID:GID[:G1,G2,...] CMD... -- run CMD with those credentials.  The
# work directory is opened for traversal so that the user reaches $MNT.
t_as() {
	local spec=$1 uid gid groups
	shift
	IFS=: read -r uid gid groups <<<"$spec"
	chmod o+x "$T"
	if [ -n "$groups" ]; then
		setpriv --reuid="$uid" --regid="$gid" --groups="$groups" -- "$@"
	else
		setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"
	fi
}

# t_fd_direct /proc/PID/fd/N -- true when that fd was opened O_DIRECT:
# a file tier holds its slab open twice, the second time O_DIRECT for
# the migrator's copies (tiers/tier_file.c); tests that look for "the"
# slab fd skip that one.  The flags in fdinfo are octal; O_DIRECT is
# 040000 on x86 and most others.
t_fd_direct() {
	local flags
	flags=$(awk '/^flags:/ {print $2}' "${1%/fd/*}/fdinfo/${1##*/}" 2>/dev/null) || return 1
	[ -n "$flags" ] && (( (8#$flags & 8#040000) != 0 ))
}

t_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=${2:-256M},mode=0755" tmpfs "$1" ||
		t_fail "cannot mount a tmpfs on $1"
	T_EXTRA_MOUNTS+=("$1")
}

t_wait_until() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 20; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}
