#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: capacity
# TIMEOUT: 120
# IO: tiered the writeback cache
#
# Where ENOSPC comes out with the kernel's writeback cache, and that
# nothing acknowledged is lost.  One 64M RAM tier, so the dirty limit
# (the free-space reserve) is 8M and a file opened for writing with less
# than 16M free is write-through.
#  A. One file open from an empty mount to past full, fsync every 4M:
#     write(2) returns at once (the cache takes it), the writeback that
#     finds the tier full fails, and the next fsync(2) reports ENOSPC.
#     Every byte an fsync acknowledged reads back; the failure is logged
#     with the file name and counted; what was never stored reads as EIO
#     (not zeros) once the kernel's cached copy is gone, until it is cut
#     off or written again.
#  B. The same without fsync: write(2) itself reports ENOSPC soon after
#     the tier fills (the failed writeback invalidated the file's
#     attributes, and the kernel asks for them before the next write), a
#     few MiB past full at most; close(2) reports the lost writeback too.
#  C. A file opened when free space is under the reserve is write-through:
#     write(2) itself reports ENOSPC at the byte where the tier is full,
#     and close succeeds.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
F=$PROGS/fillopen
M=1048576

mstat() {
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v k="$1" '$1 == "mount" { for (i = 2; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
field() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" <<<"$2" | tail -n 1; }

t_mount --tier ram=ram:64M
[ "$(mstat writeback_cache)" = 1 ] || t_skip "the kernel has no writeback cache for FUSE"
# the kernel keeps the limit as a fraction: it reads back a little off
dl=$(mstat dirty_limit)
[ "$dl" -gt $((7 * M)) ] && [ "$dl" -le $((9 * M)) ] ||
	t_fail "dirty limit of a 64M mount: $dl, expected about 8M"

# --- A: fsync every 4M through one open file
# (the file is 100M from the start: what fails lies inside it)
out=$("$F" -s 7 -S 4M -T 100M "$MNT/a" 100M)
echo "A: $out"
t_like "$out" "ERR fsync ENOSPC at *" "A: the error of a full tier comes from fsync"
acked=$(field acked "$out")
[ "$acked" -ge $((56 * M)) ] && [ "$acked" -le $((64 * M)) ] ||
	t_fail "A: $acked bytes acknowledged, expected 56M..64M (the tier holds 64M)"
t_check "$P" -s 7 v "$MNT/a" 0 "$acked" >/dev/null
t_check "$P" -d -s 7 v "$MNT/a" 0 "$acked" >/dev/null
[ "$(mstat writeback_errors)" -gt 0 ] || t_fail "A: no writeback error counted"
grep -q "writeback of '/a' failed: No space left on device" "$T_LOG" ||
	t_fail "A: the failed writeback of /a is not in the daemon's log"
# what was never stored reads as EIO once the kernel's copy is gone, never
# as zeros: every 1M chunk past the acknowledged part is intact or EIO
written=$(field written "$out")
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
drop
neio=0
for ((o = acked; o < written; o += M)); do
	for d in "" -d; do
		# shellcheck disable=SC2086
		r=$("$P" $d -s 7 v "$MNT/a" "$o" $((written - o < M ? written - o : M)))
		case $r in
		OK*) ;;
		"ERR read EIO"*) neio=$((neio + 1)) ;;
		*) t_fail "A: chunk at $o of the unacknowledged part ($d): $r" ;;
		esac
	done
done
[ "$neio" -gt 0 ] || t_fail "A: no read of the unstored part failed"
t_check "$P" -s 7 v "$MNT/a" 0 "$acked" >/dev/null
# punching frees room; writing 1M in the middle of what was lost makes
# that part readable and leaves the rest as it was (intact or EIO)
t_ok "$PROGS/sc" fallocate "$MNT/a" punch 0 $((8 * M))
t_check "$P" z "$MNT/a" 0 $((8 * M)) >/dev/null
mid=$(((acked + written) / 2 / M * M))
t_check "$P" -d -s 7 w "$MNT/a" "$mid" "$M" >/dev/null
t_check "$P" -d -s 7 v "$MNT/a" "$mid" "$M" >/dev/null
for ((o = acked; o < written; o += M)); do
	r=$("$P" -d -s 7 v "$MNT/a" "$o" "$M")
	case $r in
	OK* | "ERR read EIO"*) ;;
	*) t_fail "A: chunk at $o after rewriting $mid: $r" ;;
	esac
done
# cutting the file forgets what was lost past the cut; writing it again
# makes it readable
t_ok "$PROGS/sc" truncate "$MNT/a" $((32 * M))
t_check "$P" -s 7 w "$MNT/a" $((32 * M)) $((8 * M)) >/dev/null
drop
t_check "$P" z "$MNT/a" 0 $((8 * M)) >/dev/null
t_check "$P" -s 7 v "$MNT/a" $((8 * M)) $((32 * M)) >/dev/null
t_check "$P" -d -s 7 v "$MNT/a" $((8 * M)) $((32 * M)) >/dev/null
rm "$MNT/a" || t_fail rm

# --- B: no fsync; close reports it
wait_empty() { [ "$(df -B1 --output=used "$MNT" | tail -n 1 | tr -d ' ')" = 0 ]; }
t_wait_until 5 wait_empty || t_fail "space not freed after rm"
out=$("$F" -s 8 "$MNT/b" 100M)
echo "B: $out"
t_like "$out" "ERR write ENOSPC at *" "B: the error comes from write(2)"
t_eq "$(field acked "$out")" 0 "B: nothing acknowledged"
[ "$(field written "$out")" -le $((64 * M + 2 * dl)) ] ||
	t_fail "B: write(2) took more than twice the dirty limit past full"
# appended data that was never stored is not in the file: once the
# kernel has nothing dirty left it takes the daemon's size, which ends
# where the stored data ends; what is there is intact
sync; echo 3 >/proc/sys/vm/drop_caches
bsize=$(t_stat size "$MNT/b")
[ "$bsize" -le $((64 * M)) ] || bsize=$((56 * M))
t_check "$P" -s 8 v "$MNT/b" 0 "$bsize" >/dev/null
rm "$MNT/b" || t_fail rm
t_wait_until 5 wait_empty || t_fail "space not freed after rm"

# --- C: opened under the reserve: write-through, ENOSPC from write(2)
t_check "$P" -s 9 w "$MNT/full" 0 52M >/dev/null
out=$("$F" -s 10 -b 64K "$MNT/c" 100M)
echo "C: $out"
t_eq "$out" "ERR write ENOSPC at $((12 * M))
written $((12 * M)) acked $((12 * M))" "C: write(2) reports ENOSPC where the tier is full"
t_check "$P" -s 10 v "$MNT/c" 0 $((12 * M)) >/dev/null
t_check "$P" -s 9 v "$MNT/full" 0 52M >/dev/null
t_check "$P" -d -s 10 v "$MNT/c" 0 $((12 * M)) >/dev/null
t_pass
