#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 180
# IO: tiered promotion of extents by heat
#
# What an admin moves down stays down until it is read again (issue 18:
# right after `tierctl migrate big disk` the migrator promoted part of it
# back, on the heat it had from before the move).  A file made hot by
# reads in passes (--promote-passes 2) on RAM 16M over a file tier is
# moved to the file tier with user.tierfs.ctl.migrate: it stays there
# over many migrator passes, its bytes intact; read again in passes, it
# comes back up, so promotion itself still works.  Waiting is counted in
# migrator passes, not seconds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"

mkdir -p "$T/disk" || t_fail mkdir
t_mount --tier ram=ram:16M --tier disk=file:"$T/disk":64M --promote-passes 2

pat_w -s 3 "$MNT/big" 0 4M
# hot: read in passes, O_DIRECT (each read reaches the daemon), 0.5 s
# apart (accesses closer than HEAT_PASS_GAP are one pass)
for ((i = 0; i < 4; i++)); do
	pat_v -d -s 3 "$MNT/big" 0 4M
	sleep 0.5
done
t_eq "$(layout "$MNT/big")" "ram=$((4 * M)) disk=0" "layout of the hot file"

setfattr -n user.tierfs.ctl.migrate -v disk "$MNT/big" ||
	t_fail "user.tierfs.ctl.migrate disk"
t_eq "$(layout "$MNT/big")" "ram=0 disk=$((4 * M))" "layout after the move"
# RAM has room and the extents were hot: before the fix the next passes
# brought them back
wait_passes 6
t_eq "$(layout "$MNT/big")" "ram=0 disk=$((4 * M))" "layout 6 migrator passes after the move"
pat_v -s 3 "$MNT/big" 0 4M

# new reads in passes make it hot again, and it comes up
up() { [ "$(on_tier ram "$MNT/big")" -gt 0 ]; }
for ((i = 0; i < 30; i++)); do
	pat_v -d -s 3 "$MNT/big" 0 4M
	up && break
	sleep 0.5
done
t_wait_until 3 up || t_fail "never promoted again after new reads: $(layout "$MNT/big")"
pat_v -d -s 3 "$MNT/big" 0 4M
t_eq "$(mstat failures)" 0 "migration failures"
t_done
