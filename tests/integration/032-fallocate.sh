#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: data
# TIMEOUT: 60
#
# fallocate(2): mode 0 grows the size and reads zeros, keeps existing data,
# reserves space (st_blocks, statfs, and later writes into the range cannot
# fail with ENOSPC); KEEP_SIZE leaves the size; PUNCH_HOLE|KEEP_SIZE zeroes
# exactly the range (whole extents, partial extents, past EOF), keeps the
# size and frees space; a request larger than the tier fails with ENOSPC;
# a ZERO_RANGE that cannot get its space changes nothing (issue 10).
# Uses the util-linux fallocate(1) CLI and the sc helper.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc
P=$PROGS/pattern
M=1048576
free_bytes() { echo $(($(t_statfs bfree "$MNT") * $(t_statfs frsize "$MNT"))); }
free_is() { [ "$(free_bytes)" = "$1" ]; }
expect_free() {
	t_wait_until 5 free_is "$1" ||
		t_fail "$2: statfs free $(free_bytes), expected $1"
}
blocks_bytes() { echo $(($(t_stat blocks "$1") * 512)); }

t_mount --tier ram=ram:64M
cd "$MNT" || t_fail cd

# --- mode 0 ---
fallocate -l 3M a || t_fail "fallocate -l 3M"
t_eq "$(t_stat size a)" $((3 * M)) "size after fallocate"
t_check "$P" z a 0 3M >/dev/null
[ "$(blocks_bytes a)" -ge $((3 * M)) ] || t_fail "st_blocks $(t_stat blocks a) after fallocate 3M"
expect_free $((61 * M)) "after fallocate 3M"
# over existing data: data kept, size grows, tail zero
t_check "$P" w b 0 2500000 >/dev/null
t_ok "$SC" fallocate b 0 0 4M
t_eq "$(t_stat size b)" $((4 * M)) "size after fallocate over data"
t_check "$P" v b 0 2500000 >/dev/null
t_check "$P" z b 2500000 $((4 * M - 2500000)) >/dev/null
# inside the file: nothing changes
t_ok "$SC" fallocate b 0 1M 1M
t_eq "$(t_stat size b)" $((4 * M)) "size after fallocate inside the file"
t_check "$P" v b 0 2500000 >/dev/null

# --- KEEP_SIZE ---
t_check "$P" w k 0 1M >/dev/null
fallocate -n -o 1M -l 5M k || t_fail "fallocate -n"
t_eq "$(t_stat size k)" $((1 * M)) "size after KEEP_SIZE"
[ "$(blocks_bytes k)" -ge $((6 * M)) ] || t_fail "st_blocks $(t_stat blocks k) after KEEP_SIZE 5M past EOF"
t_errno SHORT "$P" z k 1M 1
t_ok "$SC" write k 3M x
t_eq "$(t_stat size k)" $((3 * M + 1)) "size after a write into the KEEP_SIZE range"
t_check "$P" z k 1M 2M >/dev/null
t_check "$P" v k 0 1M >/dev/null

# --- PUNCH_HOLE ---
rm a b k || t_fail rm
expect_free $((64 * M)) "after rm"
t_check "$P" -s 3 -f w p 0 4M >/dev/null
expect_free $((60 * M)) "after writing 4M"
blk0=$(blocks_bytes p)
fallocate -p -o 1M -l 1M p || t_fail "fallocate -p"
t_eq "$(t_stat size p)" $((4 * M)) "size after punch"
t_check "$P" -s 3 v p 0 1M >/dev/null
t_check "$P" z p 1M 1M >/dev/null
t_check "$P" -s 3 v p 2M 2M >/dev/null
blk1=$(blocks_bytes p)
[ "$blk1" -le $((blk0 - M)) ] || t_fail "st_blocks did not drop by 1M on punch: $blk0 -> $blk1"
expect_free $((61 * M)) "after punching a whole extent"
# unaligned punch inside one extent: only that range zeroed
t_ok "$SC" fallocate p punch 2621440 102400
t_check "$P" -s 3 v p 2M 524288 >/dev/null
t_check "$P" z p 2621440 102400 >/dev/null
t_check "$P" -s 3 v p $((2621440 + 102400)) $((4 * M - 2621440 - 102400)) >/dev/null
# unaligned punch across an extent boundary
t_ok "$SC" fallocate p punch $((3 * M - 5)) 10
t_check "$P" z p $((3 * M - 5)) 10 >/dev/null
t_check "$P" -s 3 v p $((3 * M + 5)) $((M - 5)) >/dev/null
t_check "$P" -s 3 v p $((2621440 + 102400)) $((3 * M - 5 - 2621440 - 102400)) >/dev/null
# punch reaching past EOF: size unchanged
t_ok "$SC" fallocate p punch $((4 * M - 100)) 1M
t_eq "$(t_stat size p)" $((4 * M)) "size after a punch past EOF"
t_check "$P" z p $((4 * M - 100)) 100 >/dev/null
# punch everything
t_ok "$SC" fallocate p punch 0 4M
t_check "$P" z p 0 4M >/dev/null
t_eq "$(t_stat blocks p)" 0 "st_blocks after punching the whole file"
expect_free $((64 * M)) "after punching the whole file"
# the hole can be written again
t_check "$P" -s 4 w p 1500000 10000 >/dev/null
t_check "$P" -s 4 v p 1500000 10000 >/dev/null
t_check "$P" z p 0 1500000 >/dev/null

# --- ENOSPC and reservations ---
rm p || t_fail rm
expect_free $((64 * M)) "after rm"
t_ok "$SC" open big creat,w
t_errno ENOSPC "$SC" fallocate big 0 0 100M
t_ok "$SC" open big creat,w
rm big || t_fail rm
expect_free $((64 * M)) "after a failed fallocate and rm"
fallocate -l 60M res || t_fail "fallocate 60M"
expect_free $((4 * M)) "after reserving 60M"
t_check "$P" -f w other 0 4M >/dev/null
t_like "$("$P" w other 4M 1M)" "ERR write ENOSPC *" "writing past the free space"
# the reserved range can still be written in full
t_check "$P" -s 5 -f w res 0 60M >/dev/null
t_check "$P" -s 5 v res 0 60M >/dev/null
t_check "$P" v other 0 4M >/dev/null
# a zero-range that cannot get its space fails and changes nothing: the
# tier is full, and [3M, 5M) of other needs one more extent
t_errno ENOSPC "$SC" fallocate other zero 3M 2M
t_check "$P" -d v other 0 4M >/dev/null # the daemon's copy, not the cache
t_eq "$(t_stat size other)" $((4 * M)) "size after a failed zero-range"
# one that needs no new space zeroes in place, and keeps the space
t_ok "$SC" fallocate other zerokeep $((M + 5)) $((2 * M))
t_check "$P" v other 0 $((M + 5)) >/dev/null
t_check "$P" z other $((M + 5)) $((2 * M)) >/dev/null
t_check "$P" v other $((3 * M + 5)) $((M - 5)) >/dev/null
expect_free 0 "after an in-place zero-range on a full tier"

cd /
t_pass
