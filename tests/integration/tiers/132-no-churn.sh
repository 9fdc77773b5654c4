#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 90
# IO: tiered extent heat and exchanges
#
# Promotion must not churn.  RAM 16M (empty, so promotion has room) over a
# file tier holding three 8M files, default heat settings (3 passes make
# an extent hot), watermarks 100/90 so that filling RAM for the setup does
# not start demotions.  Time is the mount's test clock (--test-clock,
# fs/options.h): the heat and the migrator's schedule stand still until
# the test moves them on (clock_step, clock_pass in tlib.sh), so every
# access lands on the tick the test chose and every migrator pass is the
# one the test asked for -- no sleep, and the same outcome on a loaded or
# sanitized run (the wall-clock version needed four flake fixes):
#  - W, written once and never read again, stays where it is;
#  - R, read once with O_DIRECT in 4K requests, slowly: each extent over
#    0.3 s of test time in four pieces, with migrator passes in between
#    (hundreds of requests per extent, one pass), stays where it is;
#  - B, read once through the page cache after dropping it, stays;
#  - A, the same as B but written in two appends a second apart that
#    split an extent (as the kernel's writeback splits a file into
#    bursts), stays: new bytes are one pass however they arrive;
#    no promotions and no moves at all over six migrator passes.
#  Then, as a control that the migrator is awake: R read in one more pass
#  (its third, with the write) is promoted by the next migrator pass,
#  while W and B still stay; and the first quarter of W, rewritten in two
#  more passes, is promoted too (writes are passes).
# With --no-migrate nothing moves at all: a full RAM tier above its high
# watermark is not drained, data read in many passes is not promoted, and
# the counters stay at zero.  The clock is root's only, and a mount
# without --test-clock knows no such control.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/disk" || t_fail mkdir

t_mount --test-clock --no-memory-follow -o allow_other \
	--tier ram=ram:16M --tier disk=file:"$T/disk":64M \
	--promote-passes 3 --high-watermark 100 --low-watermark 90
# root's only: the daemon refuses another user whom the kernel lets by
chmod 1777 "$MNT" || t_fail chmod
t_errno EPERM t_as 65534:65534 "$SC" setxattr "$MNT" user.tierfs.ctl.clock 500 0
chmod 755 "$MNT" || t_fail chmod
t_errno EINVAL "$SC" setxattr "$MNT" user.tierfs.ctl.clock -5 0
t_errno EINVAL "$SC" setxattr "$MNT" user.tierfs.ctl.clock 86400001 0
pat_w -s 9 "$MNT/filler" 0 16M
for f in W R B; do
	pat_w -s 1 "$MNT/$f" 0 8M
	t_eq "$(layout "$MNT/$f")" "ram=0 disk=$((8 * M))" "layout of $f"
done
pat_w -f -s 1 "$MNT/A" 0 $((4 * M + 512 * K))
# a second, more than HEAT_PASS_GAP: the second append is a new burst
clock_pass
clock_pass
pat_w -f -s 1 "$MNT/A" $((4 * M + 512 * K)) $((3 * M + 512 * K))
t_eq "$(layout "$MNT/A")" "ram=0 disk=$((8 * M))" "layout of A"
sync -f "$MNT" || t_fail "sync -f"
rm "$MNT/filler" || t_fail rm
wait_for 5 'RAM not empty after rm: $(tstat ram used)' eval '[ "$(tstat ram used)" = 0 ]'
# the reads: a pass of their own, after the writes
clock_pass
# R slowly: each 1M extent in four 256K pieces 100 ms (one tick, less
# than HEAT_PASS_GAP) apart, so a pass over it lasts 0.3 s, and the
# migrator runs a pass every 500 ms meanwhile
for ((i = 0; i < 32; i++)); do
	pat_v -d -b 4K -s 1 "$MNT/R" $((i * 256 * K)) $((256 * K))
	clock_step 100
done
drop_caches
cat "$MNT/B" >/dev/null || t_fail "cat B"
cat "$MNT/A" >/dev/null || t_fail "cat A"
moved0=$(mstat moved)
for ((i = 0; i < 6; i++)); do
	clock_pass
done
for f in W R B A; do
	t_eq "$(layout "$MNT/$f")" "ram=0 disk=$((8 * M))" "layout of $f after six passes"
done
t_eq "$(tstat ram promotions)" 0 "promotions of data written or read once"
t_eq "$(mstat moved)" "$moved0" "extents moved by the migrator"

# control: one more pass over R makes it hot, and the next migrator pass
# promotes it
pat_v -d -s 1 "$MNT/R" 0 8M
clock_pass
t_eq "$(on_tier ram "$MNT/R")" $((8 * M)) "RAM bytes of R after its third pass"
t_eq "$(layout "$MNT/W")" "ram=0 disk=$((8 * M))" "layout of W after R's promotion"
t_eq "$(layout "$MNT/B")" "ram=0 disk=$((8 * M))" "layout of B after R's promotion"
t_eq "$(tstat ram promotions)" 8 "promotions"
pat_v -d -s 1 "$MNT/R" 0 8M
# rewriting counts like reading: W's first quarter rewritten in two more
# passes moves up, the rest of W stays
for ((i = 0; i < 2; i++)); do
	clock_pass
	pat_w -d -s 1 "$MNT/W" 0 2M
done
t_eq "$(on_tier ram "$MNT/W")" 0 "RAM bytes of W before a pass saw it hot"
clock_pass
t_eq "$(extents "$MNT/W" | head -n 1)" "0 $((2 * M)) ram" "W's first quarter after two rewrite passes"
t_eq "$(on_tier ram "$MNT/W")" $((2 * M)) "RAM bytes of W"
t_eq "$(layout "$MNT/B")" "ram=0 disk=$((8 * M))" "layout of B after W's promotion"
t_eq "$(tstat ram promotions)" 10 "promotions"
pat_v -d -s 1 "$MNT/W" 0 8M
# A's bytes, checked last: the read is a third pass over A (write, cat,
# this) wherever the page cache does not serve it, and may promote it
pat_v -s 1 "$MNT/A" 0 8M

# --no-migrate: nothing moves
t_remount --test-clock --tier ram=ram:4M --tier disk=file:"$T/disk":64M --no-migrate --promote-passes 1
pat_w -s 2 "$MNT/H" 0 8M
ext0=$(extents "$MNT/H")
# bytes per tier: writebacks of neighbouring extents may swap at the boundary
t_eq "$(layout "$MNT/H")" "ram=$((4 * M)) disk=$((4 * M))" "layout with --no-migrate"
for ((i = 0; i < 5; i++)); do
	clock_step 500
	pat_v -d -s 2 "$MNT/H" 0 8M
done
t_eq "$(extents "$MNT/H")" "$ext0" "extents after five passes with --no-migrate"
t_eq "$(mstat enabled) $(mstat passes) $(mstat moved)" "0 0 0" "migrator with --no-migrate"
for t in ram disk; do
	t_eq "$(tstat $t promotions) $(tstat $t demotions)" "0 0" "promotions and demotions of $t with --no-migrate"
done

# without --test-clock the control is unknown, for root too
t_remount --tier ram=ram:4M --tier disk=file:"$T/disk":64M
t_errno EINVAL "$SC" setxattr "$MNT" user.tierfs.ctl.clock 500 0

t_pass
