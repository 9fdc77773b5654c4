#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 120
#
# --page-cache only (fs/migrate.c): the page cache is the only copy in
# memory.  RAM 16M over a 64M file tier, 1M extents, watermarks at their
# defaults (so with keep an 8M file stays in RAM):
#  - an 8M file written through the page cache leaves the RAM tier once
#    it has been idle for 2 s: RAM used 0, the file on the file tier, the
#    migrator's lent counters at 8 extents and 8M; it reads back exact
#    from the page cache and, with the caches dropped, from the file tier;
#  - read hot (O_DIRECT passes, which reach the daemon) it is not
#    promoted back into RAM;
#  - a rewrite in place and an extension read back exact, and the new
#    extents are handed down too;
#  - a file in a directory pinned to ram stays in RAM;
#  - the same 8M with --page-cache keep stays in RAM (lent 0): the checks
#    above can tell the modes apart.
# Waiting is on conditions (RAM used, lent) with hang limits, and on
# migrator passes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/disk" || t_fail mkdir
ram_empty() { [ "$(tstat ram used)" = 0 ]; }
lent_at_least() { [ "$(mstat lent)" -ge "$1" ]; }

t_mount --page-cache only --tier ram=ram:16M --tier disk=file:"$T/disk":64M
t_eq "$(_rec_key mount "" page_cache)" only "page_cache in the stats"

pat_w -b 1M -s 1 "$MNT/a" 0 8M
wait_for 20 'RAM not emptied: used $(tstat ram used), lent $(mstat lent)' ram_empty
t_eq "$(mstat lent)" 8 "extents lent"
t_eq "$(mstat lent_bytes)" $((8 * M)) "bytes lent"
t_eq "$(on_tier disk "$MNT/a")" $((8 * M)) "file a on the file tier"
t_eq "$(mstat failures)" 0 "migration failures"
pat_v -s 1 "$MNT/a" 0 8M
drop_caches
pat_v -s 1 "$MNT/a" 0 8M
pat_v -d -s 1 "$MNT/a" 0 8M

# hot: several O_DIRECT passes over it, each one the daemon sees
for ((i = 0; i < 6; i++)); do
	pat_v -d -s 1 "$MNT/a" 0 2M
	wait_passes 1
done
wait_idle
t_eq "$(tstat ram promotions)" 0 "promotions into a lending RAM tier"
t_eq "$(tstat ram used)" 0 "RAM used after hot reads"

# a rewrite in place (on the file tier) and an extension (new extents,
# in RAM first, then handed down)
pat_w -b 64K -s 2 "$MNT/a" 3M 1M
pat_w -b 1M -s 3 "$MNT/a" 8M 4M
lent_all() { ram_empty && lent_at_least 12; }
wait_for 20 'the extension not handed down: RAM used $(tstat ram used), lent $(mstat lent)' lent_all
drop_caches
pat_v -s 1 "$MNT/a" 0 3M
pat_v -s 2 "$MNT/a" 3M 1M
pat_v -s 1 "$MNT/a" 4M 4M
pat_v -s 3 "$MNT/a" 8M 4M

# pinned to ram: stays
mkdir "$MNT/pinned" || t_fail mkdir
setfattr -n user.tierfs.pin -v ram "$MNT/pinned" || t_fail "setfattr pin"
pat_w -b 1M -s 4 "$MNT/pinned/p" 0 2M
l0=$(mstat lent)
# 2 s of age is 4 passes; give it 8
wait_passes 8
t_eq "$(on_tier ram "$MNT/pinned/p")" $((2 * M)) "RAM bytes of the pinned file"
t_eq "$(mstat lent)" "$l0" "extents lent from a pinned directory"
pat_v -s 4 "$MNT/pinned/p" 0 2M

# keep: the same file stays in RAM
t_remount --tier ram=ram:16M --tier disk=file:"$T/disk":64M
t_eq "$(_rec_key mount "" page_cache)" keep "page_cache in the stats by default"
pat_w -b 1M -s 5 "$MNT/b" 0 8M
wait_passes 8
t_eq "$(mstat lent)" 0 "extents lent with keep"
t_eq "$(tstat ram used)" $((8 * M)) "RAM used with keep"
pat_v -s 5 "$MNT/b" 0 8M
t_done
