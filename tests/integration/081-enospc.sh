#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: capacity
# TIMEOUT: 60
# IO: tiered ENOSPC only once every tier is full (spill)
#
# ENOSPC at capacity on a 16M RAM tier with 1M extents (16 extents):
# writing 20M reports ENOSPC from write(2) after the 16M that fit (a short
# write for a request that partly fits), the data that fit is intact, the
# file size matches what was accepted, overwrites inside allocated extents
# still work, a failing write damages nothing, other files stay intact,
# and after deleting files the space is usable again.  Also with two tiers
# (ENOSPC only when every tier is full).
#
# Every open here is write-through: --dirty-max 16M is a free-space
# reserve as large as the tiers, and a file opened for writing with less
# free space than twice the reserve bypasses the writeback cache, so
# write(2) itself reports ENOSPC.  083-enospc-writeback.sh covers files
# opened with the cache.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
SC=$PROGS/sc
M=1048576
free_bytes() { echo $(($(t_statfs bfree "$MNT") * $(t_statfs frsize "$MNT"))); }
free_is() { [ "$(free_bytes)" = "$1" ]; }

# expect_enospc OUT -- OUT is pattern's "ERR write ENOSPC at X done N";
# prints N
done_of() {
	local out=$1
	case $out in
	"ERR write ENOSPC at "*" done "*) echo "${out##* done }" ;;
	*) t_fail "expected ENOSPC from write(2), got '$out'" ;;
	esac
}

t_mount --tier ram=ram:16M --dirty-max 16M
cd "$MNT" || t_fail cd

out=$("$P" -s 51 w f 0 20M)
done=$(done_of "$out")
echo "20M write: $out"
[ "$done" -ge $((15 * M)) ] && [ "$done" -le $((16 * M)) ] ||
	t_fail "ENOSPC after $done bytes, expected about 16M"
t_eq "$(t_stat size f)" "$done" "size after ENOSPC"
t_check "$P" -s 51 v f 0 "$done" >/dev/null
t_eq "$(free_bytes)" 0 "statfs free when full"
# further appends fail and change nothing
t_like "$("$P" -s 51 w f "$done" 4096)" "ERR write ENOSPC *" "append to a full fs"
t_errno ENOSPC "$SC" write newfile 0 x
t_eq "$(t_stat size f)" "$done" "size after failed appends"
# overwriting allocated space works when full
t_check "$P" -s 52 w f 1000 2M >/dev/null
t_check "$P" -s 52 v f 1000 2M >/dev/null
t_check "$P" -s 51 v f 0 1000 >/dev/null
t_check "$P" -s 51 v f $((2 * M + 1000)) $((done - 2 * M - 1000)) >/dev/null
t_check "$P" -s 51 w f 1000 2M >/dev/null
# a write that starts in allocated space and runs past it: short write
out=$("$P" -b 2M -s 51 w f $((done - M)) 2M)
case $out in
OK*) t_fail "a 2M write crossing into a full tier succeeded" ;;
"ERR write ENOSPC"*) ;;
*) t_fail "unexpected result of a crossing write: $out" ;;
esac
t_eq "$(t_stat size f)" "$done" "size after a crossing write"
t_check "$P" -s 51 v f 0 "$done" >/dev/null
# a hole inside the file needs a new extent too
t_ok "$SC" truncate f $((done + 4 * M))
t_like "$("$P" -s 53 w f $((done + 2 * M)) 100)" "ERR write ENOSPC *" "write into a hole when full"
t_check "$P" z f "$done" $((4 * M)) >/dev/null
t_check "$P" -s 51 v f 0 "$done" >/dev/null

# delete: the space is usable again
rm f || t_fail rm
t_wait_until 5 free_is $((16 * M)) || t_fail "free $(free_bytes) after delete, expected 16M"
t_check "$P" -s 54 w g 0 10M >/dev/null
out=$("$P" -s 55 w h 0 10M)
hdone=$(done_of "$out")
[ "$hdone" -ge $((5 * M)) ] && [ "$hdone" -le $((6 * M)) ] ||
	t_fail "second file got $hdone bytes, expected about 6M"
t_check "$P" -s 54 v g 0 10M >/dev/null
t_check "$P" -s 55 v h 0 "$hdone" >/dev/null
rm h || t_fail rm
t_wait_until 5 free_is $((6 * M)) || t_fail "free $(free_bytes) after deleting h, expected 6M"
t_check "$P" -s 56 w h2 0 6M >/dev/null
t_check "$P" -s 54 v g 0 10M >/dev/null
t_check "$P" -s 56 v h2 0 6M >/dev/null
# truncating frees extents for others
t_ok "$SC" truncate g $((4 * M))
t_wait_until 5 free_is $((6 * M)) || t_fail "free $(free_bytes) after truncating g to 4M, expected 6M"
t_check "$P" -s 57 w h3 0 6M >/dev/null
t_check "$P" -s 54 v g 0 4M >/dev/null
cd /

# many small files: each costs one allocation unit (4 KiB: tiers/tier.h),
# so 16M holds 4096 of them and the next one finds no room
t_remount --tier ram=ram:16M --dirty-max 16M
python3 - "$MNT" <<'EOF2' || t_fail "writing 4096 small files"
import sys
for i in range(1, 4097):
    with open(f"{sys.argv[1]}/s{i}", "w") as f:
        f.write(f"file {i}")
EOF2
t_eq "$(free_bytes)" 0 "statfs free with 4096 small files"
t_errno ENOSPC "$SC" write "$MNT/s4097" 0 x
t_ok "$SC" open "$MNT/empty" creat,w
t_ok "$SC" mkdir "$MNT/dir" 0755
python3 - "$MNT" <<'EOF2' || t_fail "small files read back wrong"
import sys
for i in range(1, 4097):
    if open(f"{sys.argv[1]}/s{i}").read() != f"file {i}":
        sys.exit(f"s{i} differs")
EOF2
rm "$MNT/s1" || t_fail rm
t_wait_until 5 "$SC" write "$MNT/s4097" 0 x || t_fail "write after deleting a small file"

# two tiers: spill, then ENOSPC when both are full
# (--no-migrate: the migrator would demote from the full tier a to b and
# change the layouts checked here while the test runs)
t_remount --no-migrate --tier a=ram:8M --tier b=ram:8M --dirty-max 16M
out=$("$P" -s 58 w "$MNT/f" 0 20M)
done=$(done_of "$out")
[ "$done" -ge $((15 * M)) ] && [ "$done" -le $((16 * M)) ] ||
	t_fail "two tiers: ENOSPC after $done bytes, expected about 16M"
t_check "$P" -s 58 v "$MNT/f" 0 "$done" >/dev/null
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$MNT/f" 2>&1)" "a=$((8 * M)) b=$((8 * M))" "layout of a file filling both tiers"

t_pass
