#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 90
# IO: tiered extent exchanges
#
# A promotion that swaps a hot extent with a cold one sends the cold one
# only where its own policy allows (issue 10, bug 5).  RAM 4M, mid 8M,
# slow 64M; no demotion for room (watermarks 100/90).  R/cold (policy
# tiers=ram,mid) fills RAM; H/hot is written to slow and then read in
# passes until it is promoted.  RAM being full, the promotion exchanges
# it with R/cold's coldest extents: they must go to mid, never to slow,
# and nothing may move again afterwards.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/mid" "$T/slow" || t_fail mkdir
t_mount --tier ram=ram:4M --tier mid=file:"$T/mid":8M \
	--tier slow=file:"$T/slow":64M --promote-passes 3 \
	--high-watermark 100 --low-watermark 90
mkdir "$MNT/R" "$MNT/H" || t_fail mkdir
setfattr -n user.tierfs.tiers -v ram,mid "$MNT/R" || t_fail "policy on R"
setfattr -n user.tierfs.tiers -v slow "$MNT/H" || t_fail "policy on H"
pat_w -s 1 "$MNT/R/cold" 0 4M
pat_w -s 2 "$MNT/H/hot" 0 2M
t_eq "$(layout "$MNT/R/cold")" "ram=$((4 * M)) mid=0 slow=0" "R/cold at the start"
t_eq "$(layout "$MNT/H/hot")" "ram=0 mid=0 slow=$((2 * M))" "H/hot at the start"
setfattr -x user.tierfs.tiers "$MNT/H" || t_fail "policy off H"

hot_up() { [ "$(on_tier ram "$MNT/H/hot")" -gt 0 ]; }
for ((i = 0; i < 30; i++)); do
	pat_v -d -s 2 "$MNT/H/hot" 0 2M
	t_eq "$(on_tier slow "$MNT/R/cold")" 0 "R/cold bytes on slow (pass $i)"
	hot_up && break
	sleep 0.5
done
t_wait_until 3 hot_up || t_fail "H/hot never promoted: $(layout "$MNT/H/hot")"
wait_idle
t_eq "$(on_tier slow "$MNT/R/cold")" 0 "R/cold bytes on slow after the exchange"
[ "$(on_tier mid "$MNT/R/cold")" -gt 0 ] ||
	t_fail "R/cold made no room: $(layout "$MNT/R/cold")"
moved=$(mstat moved)
wait_passes 4
t_eq "$(mstat moved)" "$moved" "moves after the exchange settled"
pat_v -d -s 1 "$MNT/R/cold" 0 4M
pat_v -d -s 2 "$MNT/H/hot" 0 2M
t_pass
