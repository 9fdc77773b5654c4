#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# run.sh -- differential test: tierfs (tree A) against tmpfs (tree B).
#
#     TIERFS_BIN=build/fs/tierfs bash tests/fsdiff/run.sh build/tests/fsdiff/fsdiff
#
# Mounts a tmpfs as the reference and a fresh tierfs for every run, then
# runs fsdiff with fixed seeds: three with 64 KiB extents (many extent
# boundaries inside the I/O sizes fsdiff uses), one with the default 1 MiB
# extents, and one with a 1 MiB RAM tier over a file tier, so that most
# data spills and files span tiers (also with --page-cache=drop); in the
# native leg (TIERFS_TEST_IO=native) native files on a file tier and on a
# RAM tier over one instead.  Every run is reported; the test fails
# if any run fails.  Both mounts are always unmounted, also on failure or
# interrupt.
#
# Environment knobs (for soaks by hand; meson uses the defaults):
#   FSDIFF_SEEDS="1 2 3"   seeds of the 64 KiB runs
#   FSDIFF_OPS=5000        ops per run
#   FSDIFF_MINIMIZE=1      on a failure, also print a minimized reproducer
#   FSDIFF_ARGS="..."      extra fsdiff options, e.g. "--disable mmap_write"
#
# Then every tests/fsdiff/cases/*.log is replayed (fsdiff --replay): short,
# minimized reproducers of what fsdiff found, kept as regression tests.
# Add one by saving the "minimized to N ops" list of a --minimize run with
# a "#" comment on top saying what it checks.
#
# A failure prints the op, both results, and the command that reproduces
# it by hand (see the top of fsdiff.c).  Exit 77 (skip) without root or
# /dev/fuse.

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FSDIFF=${1:?usage: run.sh FSDIFF_BINARY (with TIERFS_BIN set)}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (tmpfs mount; fsdiff switches fsuid)"
	exit 77
fi

# lib.sh: $T (work dir), $MNT, t_mount/t_remount/t_fail, and an EXIT trap
# that unmounts tierfs and removes $T
. "$SRCDIR/../integration/lib.sh"

[ -x "$FSDIFF" ] || t_fail "fsdiff binary '$FSDIFF' missing"

REF=$T/ref
mkdir -p "$REF"

FSD_PID=

# Chain in front of lib.sh's trap: fsdiff must be stopped and the tmpfs
# gone before it unmounts tierfs and removes $T.  t_cleanup reads the exit
# status from $?, so restore it.
fsd_cleanup() {
	local rc=$?
	if [ -n "$FSD_PID" ]; then
		# SIGKILL: a FUSE request waits killably, so this ends even a
		# hung op
		kill -KILL "$FSD_PID" 2>/dev/null
		wait "$FSD_PID" 2>/dev/null
		FSD_PID=
	fi
	if mountpoint -q "$REF" 2>/dev/null; then
		umount "$REF" 2>/dev/null || umount -l "$REF" 2>/dev/null
	fi
	(exit $rc)
	t_cleanup
}
trap fsd_cleanup EXIT

# nodev,nosuid as on the FUSE mount, so device nodes behave the same
mount -t tmpfs -o size=256M,mode=0755,nodev,nosuid fsdiff-ref "$REF" ||
	t_fail "cannot mount a tmpfs on $REF"

SEEDS=${FSDIFF_SEEDS:-1 2 3}
OPS=${FSDIFF_OPS:-5000}
# shellcheck disable=SC2206
EXTRA=(${FSDIFF_ARGS:-})
FAILED=()

# run_one LABEL SEED TIERFS-ARGS...
run_one() {
	local label=$1 seed=$2 rc
	shift 2
	echo "=== fsdiff $label: seed $seed, $OPS ops, tierfs $*"
	t_remount "$@"
	# in the background: bash runs a trap (INT, TERM) only between
	# commands, but at once during "wait"
	"$FSDIFF" --clean --seed "$seed" --ops "$OPS" "${EXTRA[@]}" "$MNT" "$REF" &
	FSD_PID=$!
	wait "$FSD_PID"
	rc=$?
	FSD_PID=
	if [ $rc -ne 0 ]; then
		FAILED+=("$label seed $seed (exit $rc)")
		echo "--- reproduce: mount tierfs $* on A and a tmpfs on B, then"
		echo "---   $FSDIFF --clean --seed $seed --ops $OPS ${EXTRA[*]} A B"
		if ! t_is_mounted_alive; then
			echo "--- tierfs is gone; daemon log:"
			tail -n 30 "$T_LOG"
		elif [ "${FSDIFF_MINIMIZE:-0}" = 1 ]; then
			echo "--- minimizing (runs the seed again first):"
			(cd "$T" && "$FSDIFF" --clean --seed "$seed" --ops "$OPS" \
				"${EXTRA[@]}" --minimize "$MNT" "$REF")
		fi
	fi
}

# the mount answers (a crashed daemon leaves ENOTCONN behind)
t_is_mounted_alive() {
	mountpoint -q "$MNT" 2>/dev/null && stat "$MNT" >/dev/null 2>&1
}

for seed in $SEEDS; do
	run_one "64K-extents" "$seed" --tier ram=ram:64M --extent-size 64K
done
run_one "1M-extents" 4 --tier ram=ram:64M
# as on a kernel without killpriv_v2, and write-through: the paths where
# the kernel clears suid/sgid itself and every write reaches the daemon
run_one "old-kernel-path" 6 --tier ram=ram:64M --extent-size 64K \
	--no-kernel-features --no-writeback-cache
mkdir -p "$T/disk" "$T/disk2"
if [ "${TIERFS_TEST_IO:-}" = native ]; then
	# the native leg: native files do not spill (a 1 MiB RAM tier
	# would give ENOSPC where the tmpfs has room), so their backing
	# files on a file tier, and on a RAM tier over one
	# files on a file tier: its directory on a tmpfs, since a native
	# file has the rules of the filesystem under its tier (O_DIRECT
	# alignment, the largest file), and the reference is a tmpfs
	t_tmpfs "$T/disk" 128M
	run_one "native-file-tier" 5 --tier "disk=file:$T/disk:64M"
	run_one "native-ram-over-file" 7 --tier ram=ram:64M \
		--tier "disk=file:$T/disk2:64M"
else
	run_one "spill-to-file-tier" 5 --tier ram=ram:1M \
		--tier "disk=file:$T/disk:64M" --extent-size 64K
	# --page-cache=drop: every open direct, mmap through the page
	# cache of that file only; the same spilling stack
	run_one "page-cache-drop" 7 --tier ram=ram:1M \
		--tier "disk=file:$T/disk2:64M" --extent-size 64K --page-cache drop
fi

# the regression corpus: minimized reproducers of what fsdiff found
CASES=("$SRCDIR"/cases/*.log)
if [ -e "${CASES[0]}" ]; then
	t_remount --tier ram=ram:64M --extent-size 64K
	for c in "${CASES[@]}"; do
		echo "=== fsdiff case ${c##*/}"
		"$FSDIFF" --clean --replay "$c" "$MNT" "$REF" &
		FSD_PID=$!
		wait "$FSD_PID"
		rc=$?
		FSD_PID=
		if [ $rc -ne 0 ]; then
			FAILED+=("case ${c##*/} (exit $rc)")
			echo "--- reproduce: $FSDIFF --clean -vv --replay $c A B"
		fi
	done
fi

if [ ${#FAILED[@]} -ne 0 ]; then
	printf 'FAIL: %s\n' "${FAILED[@]}" >&2
	exit 1
fi
echo "PASS"
exit 0
