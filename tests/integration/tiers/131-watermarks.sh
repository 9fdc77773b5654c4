#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 90
# IO: tiered extent demotion by the watermarks (210-native checks native files')
#
# Watermarks (--high-watermark 75 --low-watermark 50, 1M extents):
#  - RAM 8M (high = 6 extents, low = 4): filling it to exactly the high
#    watermark moves nothing; one extent more and the migrator, in the
#    background, demotes the coldest extents until RAM is at the low
#    watermark -- 4M, not less, and it stays there;
#  - RAM 4M over PMem 8M over file: a 12M file overfills both upper
#    tiers; they settle at or below their high watermarks, RAM exactly at
#    its low one (2M), and nothing is lost.
# Waiting is counted in migrator passes (stats "passes"), not seconds.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/disk" "$T/pm" || t_fail mkdir

used_is() { [ "$(tstat "$1" used)" = "$2" ]; }

t_mount --tier ram=ram:8M --tier disk=file:"$T/disk":64M \
	--high-watermark 75 --low-watermark 50
t_eq "$(mstat high_watermark) $(mstat low_watermark)" "75 50" "watermarks in stats"

pat_w -s 1 "$MNT/a" 0 6M
wait_passes 3
t_eq "$(tstat ram used)" $((6 * M)) "RAM used at exactly the high watermark"
t_eq "$(tstat ram demotions)" 0 "demotions at exactly the high watermark"

pat_w -s 2 "$MNT/b" 0 1M
t_eq "$(layout "$MNT/b")" "ram=$M disk=0" "layout of the extent that crosses the watermark"
wait_for 10 'RAM not brought down to the low watermark: used $(tstat ram used)' used_is ram $((4 * M))
wait_passes 3
t_eq "$(tstat ram used)" $((4 * M)) "RAM used a few passes after reaching the low watermark"
t_eq "$(tstat ram demotions)" 3 "demotions from RAM"
t_eq "$(tstat disk used)" $((3 * M)) "file tier used after demotion"
t_eq "$(($(on_tier ram "$MNT/a") + $(on_tier ram "$MNT/b")))" $((4 * M)) "RAM bytes in the layouts"
pat_v -d -s 1 "$MNT/a" 0 6M
pat_v -d -s 2 "$MNT/b" 0 1M

# three tiers, both upper ones overfilled
t_remount --tier ram=ram:4M --tier pm=pmem:"$T/pm":8M --tier disk=file:"$T/disk":64M \
	--high-watermark 75 --low-watermark 50
pat_w -s 3 "$MNT/c" 0 12M
settled() {
	[ "$(tstat ram used)" -eq $((2 * M)) ] && [ "$(tstat pm used)" -le $((6 * M)) ]
}
wait_for 15 'tiers did not settle: ram $(tstat ram used) pm $(tstat pm used) disk $(tstat disk used)' settled
# PMem may still be on its way down to its low watermark (an extent per
# move) when the condition first holds: compare only once nothing moves
wait_idle
settled || t_fail "tiers left their watermarks: ram $(tstat ram used) pm $(tstat pm used)"
snap="$(tstat ram used) $(tstat pm used) $(tstat disk used)"
wait_passes 3
t_eq "$(tstat ram used) $(tstat pm used) $(tstat disk used)" "$snap" "used per tier three passes after settling"
[ "$(tstat ram demotions)" -gt 0 ] && [ "$(tstat pm demotions)" -gt 0 ] ||
	t_fail "demotions: ram $(tstat ram demotions) pm $(tstat pm demotions)"
t_eq "$(layout "$MNT/c")" "ram=$(tstat ram used) pm=$(tstat pm used) disk=$(tstat disk used)" "layout vs used"
t_eq "$(($(tstat ram used) + $(tstat pm used) + $(tstat disk used)))" $((12 * M)) "total used"
pat_v -d -s 3 "$MNT/c" 0 12M
drop_caches
pat_v -s 3 "$MNT/c" 0 12M

t_pass
