#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 120
# IO: tiered extents spilling and migrating under stress
#
# Stress: data integrity while the migrator moves extents all the time.
# Tiny tiers (RAM 4M over a 32M file tier), 64K extents, no bandwidth
# limit, heat half-life 1 s and one pass enough to be hot, so that almost
# every extent touched is a promotion candidate and RAM is always full:
# promotions, exchanges and watermark demotions run constantly under the
# writers.  Two processes of three threads (tierstress) do thousands of
# random writes (a fresh pattern seed per write), reads checked against a
# model, hole punches and fsyncs over four 6M files -- two used with
# O_DIRECT, two through the page cache -- with 24K stripes so that
# workers share extents.  No read may ever mismatch.  At the end every
# worker re-reads all it owns with O_DIRECT three times, 0.5 s apart (the
# migrator goes on moving in between), and the counters add up: stats
# used of each tier equals the layouts of the files, the migrator
# promoted and demoted, and nothing failed (no migration failures,
# checksum or I/O errors, verify errors).
# Meanwhile a shell loop writes, truncates and regrows a fifth file,
# checking it each time, so that truncation races with migration too.
# The whole run is repeated, with half the operations, on RAM 2M over
# PMem 8M over file 32M.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

STRESS=$TIERS_PROGS/tierstress
[ -x "$STRESS" ] || t_fail "tierstress not found (TIERS_PROGS='$TIERS_PROGS')"
mkdir -p "$T/disk" "$T/pm" || t_fail mkdir
OPS=${TIERSTRESS_OPS:-6000}

# churn FILE -- until $T/stop exists (at most 400 rounds): write a fresh
# pattern of random length, truncate to a shorter 4K-aligned length,
# check the rest, grow again and check that the grown part reads as zeros
# (O_DIRECT: the daemon answers); truncation races with migration
churn() {
	local f=$1 i l1 l2 out
	RANDOM=42
	for ((i = 1; i <= 400; i++)); do
		[ -e "$T/stop" ] && break
		l1=$(((RANDOM % 48 + 1) * 64 * K + RANDOM % 4096))
		l2=$(((RANDOM % (l1 / 4096)) * 4096))
		out=$("$P" -s "$i" w "$f" 0 "$l1") || { echo "round $i: write: $out"; return 1; }
		"$SC" truncate "$f" "$l2" >/dev/null || { echo "round $i: truncate to $l2"; return 1; }
		if [ "$l2" -gt 0 ]; then
			out=$("$P" -d -s "$i" v "$f" 0 "$l2") || { echo "round $i: verify 0+$l2: $out"; return 1; }
		fi
		"$SC" truncate "$f" $((l2 + 256 * K)) >/dev/null || { echo "round $i: grow"; return 1; }
		out=$("$P" -d z "$f" "$l2" $((256 * K))) || { echo "round $i: zeros after $l2: $out"; return 1; }
	done
	echo "OK $((i - 1)) rounds"
}


# stress TIER... -- run two tierstress processes (and the churn) over four
# 6M files, then check that the counters of TIER... add up
stress() {
	local files=() pids=() i p t sum start
	rm -f "$T/stop"
	for i in 0 1 2 3; do
		files+=("$MNT/f$i")
		t_ok "$SC" open "$MNT/f$i" creat,w
		t_ok "$SC" truncate "$MNT/f$i" 6M
	done
	start=$(date +%s)
	churn "$MNT/churn" >"$T/churn" 2>&1 &
	local cpid=$!
	for p in 0 1; do
		"$STRESS" -j 3 -P $p/2 -n "$OPS" -S 24K -s $((p + 7)) -V 3 "${files[@]}" >"$T/stress$p" 2>&1 &
		pids+=($!)
	done
	for p in 0 1; do
		wait "${pids[p]}" || { touch "$T/stop"; wait $cpid; t_fail "tierstress $p: $(cat "$T/stress$p")"; }
		echo "tierstress $p: $(cat "$T/stress$p")"
	done
	touch "$T/stop"
	wait $cpid || t_fail "truncate churn: $(cat "$T/churn")"
	echo "truncate churn: $(cat "$T/churn")"
	echo "stress ran $(($(date +%s) - start)) s"
	stats
	echo

	# the counters add up once the migrator is idle: a move holds a slot
	# on both tiers until it switches, so a busy mount is never exact
	wait_idle
	for t in "$@"; do
		sum=0
		for f in "${files[@]}" "$MNT/churn"; do
			sum=$((sum + $(on_tier "$t" "$f")))
		done
		t_eq "$(tstat "$t" used)" "$sum" "stats used of $t vs the layouts of the files"
		t_eq "$(on_tier "$t" "$MNT")" "$sum" "root directory layout of $t vs the files"
		# an extent holds 4 KiB to 64 KiB here (units, tiers/tier.h)
		n=$(tstat "$t" extents)
		[ $((n * 65536)) -ge "$sum" ] && [ $((n * 4096)) -le "$sum" ] ||
			t_fail "$n extents on $t for $sum bytes"
		t_eq "$(tstat "$t" csum_errors) $(tstat "$t" io_errors)" "0 0" "checksum and I/O errors on $t"
	done
	[ "$(tstat "$1" promotions)" -gt 0 ] || t_fail "no promotions into $1 under stress"
	[ "$(tstat "$1" demotions)" -gt 0 ] || t_fail "no demotions from $1 under stress"
	t_eq "$(mstat failures)" 0 "migration failures"
	echo "migrator: moved $(mstat moved), retries $(mstat retries) (writers racing moves)"
	for f in "${files[@]}" "$MNT/churn"; do
		t_like "$(t_xattr "$f" user.tierfs.verify)" "extents=* checked=* errors=0" "verify of $f"
	done
	for f in "${files[@]}"; do
		t_eq "$(t_stat size "$f")" $((6 * M)) "size of $f"
	done
}

t_mount --tier ram=ram:4M --tier disk=file:"$T/disk":32M --extent-size 64K \
	--migrate-bw 0 --heat-half-life 1 --promote-passes 1
stress ram disk

# again with a PMem tier in the middle, half the operations
OPS=$((OPS / 2))
t_remount --tier ram=ram:2M --tier pm=pmem:"$T/pm":8M --tier disk=file:"$T/disk":32M \
	--extent-size 64K --migrate-bw 0 --heat-half-life 1 --promote-passes 1
stress ram pm disk
[ "$(tstat pm promotions)" -gt 0 ] || [ "$(tstat pm demotions)" -gt 0 ] ||
	t_fail "nothing moved in or out of the pmem tier"

t_pass
