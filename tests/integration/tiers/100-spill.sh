#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: tiers
# TIMEOUT: 120
# IO: tiered spill of extents between tiers
#
# Spill across three tiny tiers (RAM 4M, PMem 8M, file 64M; 1M extents;
# --no-migrate so that nothing moves behind the checks):
#  - a 60 MiB file fills RAM, then PMem, then the file tier: the layout
#    is exactly 4M/8M/48M and the extent runs say where; it reads back
#    right with O_DIRECT and through the page cache;
#  - unaligned overwrites inside spilled regions and across the tier
#    boundaries land in place (no new space) and read back right;
#  - truncates free space on each tier in turn (stats used);
#  - fallocate across tiers, punch-hole across all three, a refill of the
#    hole, zero-range across all three, and a fallocate that cannot fit
#    changing nothing;
#  - ENOSPC only when every tier is full, data intact, recovery after rm;
#  - small files take one extent each, RAM first, then PMem, then file;
#  - several processes writing at once while the tiers fill up.
# All of it runs twice: the second time with PMEM_IS_PMEM_FORCE=1 in the
# daemon's environment (libpmem's non-temporal store path instead of the
# msync fallback).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/pm" "$T/disk" || t_fail mkdir
# write-through (--no-writeback-cache): the checks below name the tier of
# every extent, and with the writeback cache the kernel sends several
# writebacks of one file at once, so neighbouring extents may swap at a
# tier boundary (083-enospc-writeback.sh, fsdiff and 140-stress cover
# spilling with the cache)
TIERS=(--tier ram=ram:4M --tier pm=pmem:"$T/pm":8M --tier disk=file:"$T/disk":64M --no-migrate
	--no-writeback-cache)

used_is() { [ "$(tstat "$1" used)" = "$2" ]; }
used3() { used_is ram "$1" && used_is pm "$2" && used_is disk "$3"; }
# expect_used RAM PM DISK WHAT -- stats used of each tier, in bytes (frees
# after unlink wait for the kernel's FORGET: poll)
expect_used() {
	t_wait_until 5 used3 "$1" "$2" "$3" ||
		t_fail "$4: used ram=$(tstat ram used) pm=$(tstat pm used) disk=$(tstat disk used), expected ram=$1 pm=$2 disk=$3"
}

# verify_model FILE SIZE SEED [OFF LEN SEED]... -- the file holds the
# pattern of SEED everywhere except in the listed (sorted, disjoint)
# ranges, which hold their own seeds; checked through the page cache
verify_model() {
	local f=$1 size=$2 base=$3 pos=0 off len s
	shift 3
	while [ $# -gt 0 ]; do
		off=$1 len=$2 s=$3
		shift 3
		[ "$off" -gt "$pos" ] && pat_v -s "$base" "$f" "$pos" $((off - pos))
		pat_v -s "$s" "$f" "$off" "$len"
		pos=$((off + len))
	done
	[ "$size" -gt "$pos" ] && pat_v -s "$base" "$f" "$pos" $((size - pos))
	t_eq "$(t_stat size "$f")" "$size" "size of $f"
}

run_all() {
	local mode=$1
	echo "== $mode"
	cd / || t_fail cd

	# --- one file over all three tiers
	pat_w -s 11 "$MNT/big" 0 60M
	t_eq "$(layout "$MNT/big")" "ram=$((4 * M)) pm=$((8 * M)) disk=$((48 * M))" "layout of a 60M file"
	t_eq "$(extents "$MNT/big")" "0 $((4 * M)) ram
$((4 * M)) $((8 * M)) pm
$((12 * M)) $((48 * M)) disk" "extent runs of a 60M file"
	expect_used $((4 * M)) $((8 * M)) $((48 * M)) "after writing 60M"
	[ "$(tstat ram spills)" -gt 0 ] && [ "$(tstat pm spills)" -gt 0 ] ||
		t_fail "spills not counted: ram $(tstat ram spills) pm $(tstat pm spills)"
	t_eq "$(tstat disk spills)" 0 "spills of the last tier"
	pat_v -d -s 11 "$MNT/big" 0 60M
	drop_caches
	pat_v -s 11 "$MNT/big" 0 60M

	# --- unaligned overwrites inside spilled regions and across boundaries
	local ow=(
		$((4 * M - 1000)) 3000 21       # ram | pm
		$((6 * M + 17)) $((M + 5)) 22   # inside pm, two extents
		$((12 * M - 7)) 14 23           # pm | disk
		$((20 * M + 4095)) 70000 24     # inside disk
		$((33 * M)) $((2 * M)) 25       # disk, whole extents
		$((60 * M - 3)) 3 26            # the last bytes
	)
	local i
	for ((i = 0; i < ${#ow[@]}; i += 3)); do
		pat_w -s "${ow[i + 2]}" "$MNT/big" "${ow[i]}" "${ow[i + 1]}"
	done
	t_eq "$(layout "$MNT/big")" "ram=$((4 * M)) pm=$((8 * M)) disk=$((48 * M))" "layout after overwrites"
	verify_model "$MNT/big" $((60 * M)) 11 "${ow[@]}"
	drop_caches
	verify_model "$MNT/big" $((60 * M)) 11 "${ow[@]}"
	pat_v -d -s 25 "$MNT/big" $((33 * M)) $((2 * M))

	# --- truncates free space on each tier in turn
	t_ok "$SC" truncate "$MNT/big" $((50 * M + 123))
	# (space is held to the 4 KiB unit: tiers/tier.h)
	expect_used $((4 * M)) $((8 * M)) $((38 * M + U)) "truncate to 50M+123"
	t_ok "$SC" truncate "$MNT/big" $((10 * M))
	expect_used $((4 * M)) $((6 * M)) 0 "truncate to 10M"
	t_eq "$(layout "$MNT/big")" "ram=$((4 * M)) pm=$((6 * M)) disk=0" "layout at 10M"
	t_ok "$SC" truncate "$MNT/big" $((2 * M + 5))
	expect_used $((2 * M + U)) 0 0 "truncate to 2M+5"
	verify_model "$MNT/big" $((2 * M + 5)) 11
	# growing again exposes zeros, not the old bytes
	t_ok "$SC" truncate "$MNT/big" $((20 * M))
	"$P" z "$MNT/big" $((2 * M + 5)) $((18 * M - 5)) >/dev/null ||
		t_fail "grown file does not read as zeros past the old size"
	expect_used $((2 * M + U)) 0 0 "after growing by truncate"
	t_ok "$SC" truncate "$MNT/big" 0
	expect_used 0 0 0 "truncate to 0"
	rm "$MNT/big" || t_fail rm

	# --- fallocate and punch-hole across tiers
	touch "$MNT/fa" "$MNT/fa2" || t_fail touch
	t_ok "$SC" fallocate "$MNT/fa" 0 0 $((20 * M))
	t_eq "$(layout "$MNT/fa")" "ram=$((4 * M)) pm=$((8 * M)) disk=$((8 * M))" "layout after fallocate 20M"
	t_eq "$(t_stat size "$MNT/fa")" $((20 * M)) "size after fallocate"
	"$P" z "$MNT/fa" 0 20M >/dev/null || t_fail "fallocated range does not read as zeros"
	pat_w -s 31 "$MNT/fa" 0 20M
	# a fallocate that cannot fit fails and allocates nothing
	t_errno ENOSPC "$SC" fallocate "$MNT/fa2" 0 0 $((60 * M))
	t_eq "$(layout "$MNT/fa2")" "ram=0 pm=0 disk=0" "layout after a failed fallocate"
	expect_used $((4 * M)) $((8 * M)) $((8 * M)) "after a failed fallocate"
	rm -f "$MNT/fa2"
	# punch 2M+100 .. 14M-100: extents 3..12 go, 2 and 13 give back all
	# but the unit that keeps their unpunched bytes
	t_ok "$SC" fallocate "$MNT/fa" punch $((2 * M + 100)) $((12 * M - 200))
	t_eq "$(layout "$MNT/fa")" "ram=$((2 * M + U)) pm=0 disk=$((6 * M + U))" "layout after punching across all tiers"
	expect_used $((2 * M + U)) 0 $((6 * M + U)) "after punch"
	pat_v -s 31 "$MNT/fa" 0 $((2 * M + 100))
	"$P" z "$MNT/fa" $((2 * M + 100)) $((12 * M - 200)) >/dev/null ||
		t_fail "punched range does not read as zeros"
	pat_v -s 31 "$MNT/fa" $((14 * M - 100)) $((6 * M + 100))
	t_eq "$(t_stat size "$MNT/fa")" $((20 * M)) "size after punch"
	# refill the hole: RAM has room for one extent (and a unit short of
	# a second), PMem eight, then file
	pat_w -s 32 "$MNT/fa" $((3 * M)) $((10 * M))
	t_eq "$(extents "$MNT/fa")" "0 $((4 * M)) ram
$((4 * M)) $((8 * M)) pm
$((12 * M)) $((8 * M)) disk" "extent runs after refilling the hole"
	pat_v -s 31 "$MNT/fa" 0 $((2 * M + 100))
	"$P" z "$MNT/fa" $((2 * M + 100)) $((M - 100)) >/dev/null || t_fail "zeros before the refill"
	pat_v -s 32 "$MNT/fa" $((3 * M)) $((10 * M))
	"$P" z "$MNT/fa" $((13 * M)) $((M - 100)) >/dev/null || t_fail "zeros after the refill"
	pat_v -s 31 "$MNT/fa" $((14 * M - 100)) $((6 * M + 100))
	# zero a range across all three tiers: zeros, same space, same size
	t_ok "$SC" fallocate "$MNT/fa" zerokeep $((3 * M + 5)) $((10 * M - 10))
	t_eq "$(extents "$MNT/fa")" "0 $((4 * M)) ram
$((4 * M)) $((8 * M)) pm
$((12 * M)) $((8 * M)) disk" "extent runs after zeroing a range"
	drop_caches
	pat_v -s 32 "$MNT/fa" $((3 * M)) 5
	"$P" -d z "$MNT/fa" $((4 * M)) $((8 * M)) >/dev/null || t_fail "zeroed range (pm part)"
	"$P" z "$MNT/fa" $((3 * M + 5)) $((10 * M - 10)) >/dev/null || t_fail "zeroed range does not read as zeros"
	pat_v -s 32 "$MNT/fa" $((13 * M - 5)) 5
	pat_v -s 31 "$MNT/fa" $((14 * M - 100)) $((6 * M + 100))
	t_eq "$(t_stat size "$MNT/fa")" $((20 * M)) "size after zeroing a range"
	rm "$MNT/fa" || t_fail rm
	expect_used 0 0 0 "after removing the fallocated file"

	# --- ENOSPC only when every tier is full; recovery after rm
	pat_w -s 41 "$MNT/a" 0 60M
	local out done
	out=$("$P" -s 42 w "$MNT/b" 0 20M)
	case $out in
	"ERR write ENOSPC at "*" done "*) done=${out##* done } ;;
	*) t_fail "writing 80M into 76M of tiers: expected ENOSPC, got '$out'" ;;
	esac
	t_eq "$done" $((16 * M)) "bytes accepted before ENOSPC"
	expect_used $((4 * M)) $((8 * M)) $((64 * M)) "when full"
	t_errno ENOSPC "$SC" write "$MNT/c" 0 x
	t_eq "$(t_stat size "$MNT/b")" $((16 * M)) "size of the file that hit ENOSPC"
	pat_v -d -s 41 "$MNT/a" 0 60M
	pat_v -d -s 42 "$MNT/b" 0 16M
	# overwriting allocated space still works when full
	pat_w -s 43 "$MNT/b" 1000 $((2 * M))
	pat_v -s 43 "$MNT/b" 1000 $((2 * M))
	rm "$MNT/b" || t_fail rm
	expect_used $((4 * M)) $((8 * M)) $((48 * M)) "after rm of the 16M file"
	pat_w -s 44 "$MNT/c" 0 16M
	pat_v -d -s 44 "$MNT/c" 0 16M
	pat_v -d -s 41 "$MNT/a" 0 60M
	rm -f "$MNT/a" "$MNT/c" || t_fail rm
	expect_used 0 0 0 "after removing everything"

	# --- small files: a few units each, all in RAM
	local sum=0
	for i in $(seq 1 14); do
		pat_w -s $((100 + i)) "$MNT/s$i" $((i * 7)) $((i * 1000))
	done
	for i in $(seq 1 14); do
		local held=$(((i * 1007 + U - 1) / U * U))
		sum=$((sum + held))
		t_eq "$(layout "$MNT/s$i")" "ram=$held pm=0 disk=0" "layout of small file $i"
		pat_v -s $((100 + i)) "$MNT/s$i" $((i * 7)) $((i * 1000))
		"$P" z "$MNT/s$i" 0 $((i * 7)) >/dev/null || t_fail "head of small file $i is not zero"
	done
	t_eq "$sum" $((32 * U)) "units of the small files"
	expect_used "$sum" 0 0 "after 14 small files"
	t_eq "$(layout "$MNT")" "ram=$sum pm=0 disk=0" "layout of the root directory"
	rm -f "$MNT"/s* || t_fail rm
	expect_used 0 0 0 "after removing the small files"

	# --- concurrent writers while spilling: four processes on one shared
	# file (interleaved 256K chunks) and two on files of their own
	local pids=() n
	for n in 0 1 2 3; do
		"$P" -b 256K -P $n/4 -s 51 w "$MNT/shared" 0 40M >"$T/cw$n" 2>&1 &
		pids+=($!)
	done
	"$P" -j 2 -b 128K -s 52 w "$MNT/own1" 0 16M >"$T/cw4" 2>&1 &
	pids+=($!)
	"$P" -b 1M -s 53 w "$MNT/own2" 0 16M >"$T/cw5" 2>&1 &
	pids+=($!)
	for n in "${!pids[@]}"; do
		wait "${pids[n]}" || t_fail "concurrent writer $n: $(cat "$T/cw$n")"
	done
	expect_used $((4 * M)) $((8 * M)) $((60 * M)) "after concurrent writers"
	local sum=0 f b
	for f in shared own1 own2; do
		for b in $(layout "$MNT/$f" | tr ' ' '\n' | cut -d= -f2); do
			sum=$((sum + b))
		done
	done
	t_eq "$sum" $((72 * M)) "sum of the layouts of the concurrently written files"
	drop_caches
	pat_v -j 2 -s 51 "$MNT/shared" 0 40M
	pat_v -s 52 "$MNT/own1" 0 16M
	pat_v -d -s 53 "$MNT/own2" 0 16M
	rm -f "$MNT/shared" "$MNT/own1" "$MNT/own2"
	expect_used 0 0 0 "after removing the concurrently written files"
}

t_mount "${TIERS[@]}"
t_eq "$(tstat pm kind)" pmem "kind of the pmem tier"
run_all "pmem msync fallback"
t_unmount
[ -z "$T_DAEMON_PROBLEM" ] || t_fail "$T_DAEMON_PROBLEM"

PMEM_IS_PMEM_FORCE=1 t_mount "${TIERS[@]}"
pid=$T_PID
tr '\0' '\n' <"/proc/$pid/environ" | grep -qx PMEM_IS_PMEM_FORCE=1 ||
	t_fail "PMEM_IS_PMEM_FORCE=1 did not reach the daemon"
run_all "PMEM_IS_PMEM_FORCE=1"

t_pass
