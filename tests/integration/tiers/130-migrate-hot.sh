#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 90
# IO: tiered promotion of hot extents
#
# Hot data moves up, cold data moves down.  RAM 4M over a 64M file tier,
# 1M extents, the default heat settings spelled out (3 passes make an
# extent hot, half-life 30 s), high watermark 100% so that no demotion
# for room runs before the hot file is written (the cold file fills RAM).  Two files each twice the RAM tier: the
# cold one, written first, starts with its first half in RAM; the hot one
# lies entirely on the file tier.  Reading the first quarter of the hot
# file in passes (O_DIRECT, so the daemon sees every pass; 0.5 s apart, so
# each is a pass of its own) brings those two extents up to RAM within
# about 15 s and pushes the cold file's extents down to make room; the
# rest of the hot file, written once and never read, stays where it is.
# Every pass and the end verify the data.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/disk" || t_fail mkdir
t_mount --tier ram=ram:4M --tier disk=file:"$T/disk":64M \
	--promote-passes 3 --heat-half-life 30 --high-watermark 100 --low-watermark 90

pat_w -s 1 "$MNT/cold" 0 8M
pat_w -s 2 "$MNT/hot" 0 8M
echo "start: cold $(layout "$MNT/cold"), hot $(layout "$MNT/hot")"
[ "$(on_tier ram "$MNT/cold")" -gt $((2 * M)) ] ||
	t_fail "the cold file should start with most of RAM: $(layout "$MNT/cold")"
t_eq "$(on_tier ram "$MNT/hot")" 0 "RAM bytes of the hot file at the start"

hot_up() {
	[ "$(extents "$MNT/hot" | head -n 1)" = "0 $((2 * M)) ram" ]
}
passes=0
for ((i = 0; i < 30; i++)); do
	pat_v -d -s 2 "$MNT/hot" 0 2M
	passes=$((passes + 1))
	hot_up && break
	sleep 0.5
done
# the move may follow the last pass by one migrator period
t_wait_until 3 hot_up ||
	t_fail "first quarter of the hot file not in RAM after $passes passes: $(extents "$MNT/hot" | tr '\n' ';')"
echo "hot quarter in RAM after $passes passes"
wait_idle
[ "$passes" -ge 2 ] || t_fail "promoted after $passes pass(es): promote-passes 3 is not honoured"
echo "end: cold $(layout "$MNT/cold"), hot $(layout "$MNT/hot")"
echo "hot extents: $(extents "$MNT/hot" | tr '\n' ';')"

# the rest of the hot file, written once and never read, did not move up
t_eq "$(on_tier ram "$MNT/hot")" $((2 * M)) "RAM bytes of the hot file"
# the cold file made room
[ "$(on_tier ram "$MNT/cold")" -le $((2 * M)) ] ||
	t_fail "the cold file did not go down: $(layout "$MNT/cold")"
[ "$(tstat ram promotions)" -ge 2 ] || t_fail "promotions into RAM: $(tstat ram promotions)"
[ "$(tstat ram demotions)" -ge 2 ] || t_fail "demotions from RAM: $(tstat ram demotions)"
t_eq "$(mstat failures)" 0 "migration failures"
t_eq "$(tstat ram used)" "$(($(on_tier ram "$MNT/cold") + $(on_tier ram "$MNT/hot")))" "RAM used vs layouts"

drop_caches
pat_v -s 1 "$MNT/cold" 0 8M
pat_v -s 2 "$MNT/hot" 0 8M
pat_v -d -s 1 "$MNT/cold" 0 8M
pat_v -d -s 2 "$MNT/hot" 0 8M

t_pass
