#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 120
# IO: tiered --page-cache only (lending RAM-tier extents)
#
# --page-cache only (fs/migrate.c): the page cache is the only copy in
# memory.  RAM 16M over a 64M file tier, 1M extents, watermarks at their
# defaults (so with keep an 8M file stays in RAM):
#  - an 8M file written through the page cache leaves the RAM tier once
#    it has been idle for 1 s: RAM used 0, the file on the file tier, the
#    migrator's lent counters at 8 extents and 8M; it reads back exact
#    from the page cache and, with the caches dropped, from the file tier;
#  - read hot (O_DIRECT passes, which reach the daemon) it is not
#    promoted back into RAM;
#  - a rewrite in place and an extension read back exact, and the new
#    extents are handed down too;
#  - a file in a directory pinned to ram stays in RAM;
#  - file a moved into RAM with user.tierfs.ctl.migrate (tierctl migrate)
#    stays there (lent unchanged), through a write, and reads back exact;
#    moved down again, it stays on the file tier;
#  - the RAM tier is a write buffer of 64M (TIERFS_LEND_CAP): with the
#    migrator off, a 160M file puts 64M (and the extents of the
#    writebacks in flight, far less than 64M more) in RAM 256M and the
#    rest on the
#    file tier, and the file tier's share goes direct, around the
#    slab's page cache (fincore of the slab); with keep it is cached
#    there;
#  - a non-root owner's `tierctl migrate` of a 160M file into that RAM
#    tier (256M, the migrator on) stops at the 64M cap with a clear
#    error, and RAM holds at most 64M then and passes later;
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
: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
if [ -x "$TIERCTL" ]; then
	prom=$("$TIERCTL" stats --prometheus "$MNT") || t_fail "tierctl stats --prometheus"
	t_like "$prom" "*tierfs_migrator_lent_extents_total{mount=\"$MNT\"} 8*" "lent extents in tierctl's Prometheus text"
fi
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
# 1 s of age is 2 passes; give it 8
wait_passes 8
t_eq "$(on_tier ram "$MNT/pinned/p")" $((2 * M)) "RAM bytes of the pinned file"
t_eq "$(mstat lent)" "$l0" "extents lent from a pinned directory"
pat_v -s 4 "$MNT/pinned/p" 0 2M

# moved into RAM by an admin: stays there (an admin's placement holds
# against lending, ctl_action.c), and a write moves nothing of it; RAM
# is 12M of 16M then, under the high watermark
rm -f "$MNT/pinned/p" || t_fail "rm pinned/p"
a_on_disk() { [ "$(on_tier disk "$MNT/a")" = $((12 * M)) ]; }
wait_for 20 'file a not all on the file tier: $(on_tier disk "$MNT/a")' a_on_disk
setfattr -n user.tierfs.ctl.migrate -v ram "$MNT/a" ||
	t_fail "user.tierfs.ctl.migrate ram"
t_eq "$(on_tier ram "$MNT/a")" $((12 * M)) "RAM bytes of file a right after the move"
l0=$(mstat lent)
wait_passes 8
t_eq "$(on_tier ram "$MNT/a")" $((12 * M)) "RAM bytes of file a 8 passes after the move"
t_eq "$(mstat lent)" "$l0" "extents lent after an admin's move into RAM"
pat_w -b 64K -s 8 "$MNT/a" 5M 64K
sync -f "$MNT" || t_fail "sync -f"
wait_passes 8
t_eq "$(on_tier ram "$MNT/a")" $((12 * M)) "RAM bytes of file a after a write"
drop_caches
pat_v -s 1 "$MNT/a" 0 3M
pat_v -s 2 "$MNT/a" 3M 1M
pat_v -s 1 "$MNT/a" 4M 1M
pat_v -s 8 "$MNT/a" 5M 64K
pat_v -s 1 "$MNT/a" $((5 * M + 64 * K)) $((3 * M - 64 * K))
pat_v -s 3 "$MNT/a" 8M 4M
# moved down again by an admin: nothing brings it back up
setfattr -n user.tierfs.ctl.migrate -v disk "$MNT/a" ||
	t_fail "user.tierfs.ctl.migrate disk"
t_eq "$(on_tier disk "$MNT/a")" $((12 * M)) "file a on the file tier after the move down"
wait_passes 4
t_eq "$(on_tier disk "$MNT/a")" $((12 * M)) "file a on the file tier 4 passes after the move down"
drop_caches
pat_v -s 8 "$MNT/a" 5M 64K
pat_v -s 3 "$MNT/a" 8M 4M
rm -f "$MNT/a" || t_fail "rm a"

# the cap, without the migrator: 64M in RAM, the rest direct to disk
slab_cached() { fincore -rbn -o RES "$(slab_of "$T/disk")" | awk '{ s += $1 } END { print s + 0 }'; }
t_remount --page-cache only --no-migrate --tier ram=ram:256M --tier disk=file:"$T/disk":256M
pat_w -b 1M -s 6 "$MNT/c" 0 160M
sync -f "$MNT" || t_fail "sync -f"
# each writeback in flight when RAM reached the cap took one extent more
# (10-30 of them, as many as the daemon's threads): not a second 64M
u=$(tstat ram used)
[ "$u" -ge $((64 * M)) ] && [ "$u" -le $((128 * M)) ] ||
	t_fail "RAM used by a lending tier with a 64M cap: $u"
t_eq "$(on_tier disk "$MNT/c")" $((160 * M - u)) "bytes beyond the cap on the file tier"
t_eq "$(tstat ram spills)" 0 "spills counted for data beyond the cap"
c=$(slab_cached)
[ "$c" -le $((4 * M)) ] || t_fail "the slab's page cache holds $c bytes with --page-cache only"
drop_caches
pat_v -s 6 "$MNT/c" 0 160M
c=$(slab_cached)
[ "$c" -le $((4 * M)) ] || t_fail "the slab's page cache holds $c bytes after reading back"
# the cap holds against an owner's migrate (issue 32): a user who
# moves a 160M file into the lending RAM tier gets its first 64M there
# and a clear error for the rest, and passes later RAM still holds no
# more than the cap (before, all 160M stayed there, held twice)
TC=${TIERCTL:-$(dirname "$TIERFS_BIN")/../tools/tierctl}
if [ -x "$TC" ]; then
	t_remount -o allow_other --page-cache only --tier ram=ram:256M --tier disk=file:"$T/disk":256M
	mkdir "$MNT/u" && chown 4242:4242 "$MNT/u" || t_fail "mkdir u"
	out=$(t_as 4242:4242 "$P" w -b 1M -s 9 "$MNT/u/e" 0 160M 2>&1) || t_fail "write u/e as 4242: $out"
	sync -f "$MNT" || t_fail "sync -f"
	wait_for 30 'RAM not emptied: used $(tstat ram used), lent $(mstat lent)' ram_empty
	out=$(t_as 4242:4242 "$TC" migrate -q "$MNT/u/e" ram 2>&1) &&
		t_fail "tierctl migrate of 160M into a lending RAM tier with a 64M cap succeeded"
	t_like "$out" "tierctl: tier 'ram' lends its memory (--page-cache only) and holds at most 64M: moved 64M of 160M; '$MNT/u/e' not finished" "tierctl migrate past the cap"
	u=$(tstat ram used)
	[ "$u" -le $((64 * M)) ] || t_fail "RAM used after an owner's migrate into a lending tier with a 64M cap: $u"
	wait_passes 8
	u=$(tstat ram used)
	[ "$u" -le $((64 * M)) ] || t_fail "RAM used 8 passes after an owner's migrate: $u"
	t_eq "$(on_tier ram "$MNT/u/e")" "$u" "RAM bytes of u/e"
	drop_caches
	pat_v -s 9 "$MNT/u/e" 0 160M
fi

# keep, same tiers: RAM takes 100M, the page cache of the slab is the
# control (a file tier-only mount caches what it writes)
t_remount --no-migrate --tier disk=file:"$T/disk":256M
pat_w -b 1M -s 7 "$MNT/d" 0 32M
sync -f "$MNT" || t_fail "sync -f"
c=$(slab_cached)
[ "$c" -ge $((16 * M)) ] || t_fail "with keep, the slab's page cache holds only $c bytes of 32M written"
pat_v -s 7 "$MNT/d" 0 32M

# keep: the same file stays in RAM
t_remount --tier ram=ram:16M --tier disk=file:"$T/disk":64M
t_eq "$(_rec_key mount "" page_cache)" keep "page_cache in the stats by default"
pat_w -b 1M -s 5 "$MNT/b" 0 8M
wait_passes 8
t_eq "$(mstat lent)" 0 "extents lent with keep"
t_eq "$(tstat ram used)" $((8 * M)) "RAM used with keep"
pat_v -s 5 "$MNT/b" 0 8M
t_done
