#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: capacity
# TIMEOUT: 120
# IO: tiered allocation units within extents, extent relocation
#
# Issue 12: space follows the data.  With 1 MiB extents and 4 KiB
# allocation units (tiers/tier.h):
#  - 3,000 small files (4 KiB and 10 KiB) fit on an 8M RAM tier over a
#    64M file tier although they are far more files than either tier has
#    extents, and df, st_blocks and the tiers' used bytes count exactly
#    the units they hold; every file reads back;
#  - a 1 TiB sparse file with 1,000 random 4 KiB writes holds exactly
#    those units; every write reads back, the rest reads as zeros;
#  - an extent that grows on a full tier moves to the next one, data
#    intact (extent_relocate());
#  - punching and truncating inside an extent give its units back;
#  - a fallocate larger than the free room fails with ENOSPC and takes
#    nothing, not even the units a present extent lacks.
. "$(dirname "$0")/lib.sh"
t_need_progs
command -v python3 >/dev/null || t_skip "python3 missing"
P=$PROGS/pattern
SC=$PROGS/sc
K=1024
M=$((1024 * 1024))

used_bytes() {
	echo $((($(t_statfs blocks "$MNT") - $(t_statfs bfree "$MNT")) * $(t_statfs frsize "$MNT")))
}
# the used= bytes of tier $1 in the mount's counters (ctl_proto.h)
tier_used() {
	getfattr --only-values -n user.tierfs.stats "$MNT" |
		awk -v t="$1" '$1 == "tier" && $2 == t {
			for (i = 3; i <= NF; i++) if ($i ~ /^used=/) { sub("used=", "", $i); print $i } }'
}
blocks_bytes() { echo $(($(t_stat blocks "$1") * 512)); }

mkdir -p "$T/disk"
# (--no-migrate: the checks of what RAM holds want no demotions)
t_mount --no-migrate --tier ram=ram:8M --tier disk=file:"$T/disk":64M
cd "$MNT" || t_fail cd

# ---- many small files ----
mkdir small || t_fail mkdir
python3 - small <<'EOF' || t_fail "writing small files"
import os, sys
d = sys.argv[1]
for i in range(3000):
    n = 4096 if i % 3 else 10 * 1024
    data = bytes(((i * 7 + j) % 251) for j in range(256)) * (n // 256)
    with open(f"{d}/f{i}", "wb") as f:
        f.write(data)
EOF
# 2,000 of 4 KiB and 1,000 of 10 KiB (three units each)
want=$((2000 * 4 * K + 1000 * 12 * K))
t_eq "$(used_bytes)" "$want" "df used by 3,000 small files"
# (a move by the migrator holds both copies for a moment)
tiers_used() { echo $(($(tier_used ram) + $(tier_used disk))); }
tiers_used_is() { [ "$(tiers_used)" = "$1" ]; }
t_wait_until 10 tiers_used_is "$want" ||
	t_fail "tiers' used bytes: $(tiers_used), expected $want"
# far more files in RAM than it has extents of capacity (8): each takes
# its units, not an extent (the migrator may demote some to the watermark)
ram_extents=$(getfattr --only-values -n user.tierfs.stats "$MNT" |
	awk '$1 == "tier" && $2 == "ram" { for (i = 3; i <= NF; i++) if ($i ~ /^extents=/) { sub("extents=", "", $i); print $i } }')
[ "$ram_extents" -gt 500 ] ||
	t_fail "the RAM tier holds only $ram_extents small files"
t_eq "$(blocks_bytes small/f1)" $((4 * K)) "st_blocks of a 4 KiB file"
t_eq "$(blocks_bytes small/f0)" $((12 * K)) "st_blocks of a 10 KiB file"
python3 - small <<'EOF' || t_fail "small files read back wrong"
import os, sys
d = sys.argv[1]
for i in range(3000):
    n = 4096 if i % 3 else 10 * 1024
    data = bytes(((i * 7 + j) % 251) for j in range(256)) * (n // 256)
    with open(f"{d}/f{i}", "rb") as f:
        if f.read() != data:
            sys.exit(f"f{i} differs")
EOF
rm -r small || t_fail "rm small"
used_is() { [ "$(used_bytes)" = "$1" ]; }
t_wait_until 5 used_is 0 || t_fail "used $(used_bytes) after rm"

# ---- a sparse file ----
t_ok "$SC" open sparse creat,w
t_ok "$SC" truncate sparse $((1024 * 1024 * M))
T=$T python3 - sparse <<'EOF' || t_fail "sparse writes"
import os, random, sys
r = random.Random(12)
fd = os.open(sys.argv[1], os.O_RDWR)
offs = set()
while len(offs) < 1000:
    offs.add(r.randrange(0, (1 << 40) // 4096) * 4096)
for o in sorted(offs):
    os.pwrite(fd, (o // 4096 % 251 + 1).to_bytes(1, "little") * 4096, o)
os.close(fd)
with open(os.environ["T"] + "/offs", "w") as f:
    f.write("\n".join(map(str, sorted(offs))))
EOF
t_eq "$(blocks_bytes sparse)" $((1000 * 4 * K)) "st_blocks of the sparse file"
t_eq "$(used_bytes)" $((1000 * 4 * K)) "df used by the sparse file"
T=$T python3 - sparse <<'EOF' || t_fail "sparse file reads back wrong"
import os, sys
offs = [int(x) for x in open(os.environ["T"] + "/offs")]
fd = os.open(sys.argv[1], os.O_RDONLY)
for o in offs:
    want = (o // 4096 % 251 + 1).to_bytes(1, "little") * 4096
    if os.pread(fd, 4096, o) != want:
        sys.exit(f"block at {o} differs")
    # the neighbours in the same extent read as zeros unless written
    for n in (o - 4096, o + 4096):
        if n >= 0 and n not in offs and os.pread(fd, 4096, n) != bytes(4096):
            sys.exit(f"hole at {n} is not zeros")
EOF
rm sparse || t_fail "rm sparse"
t_wait_until 5 used_is 0 || t_fail "used $(used_bytes) after rm sparse"

# ---- growth on a full tier moves the extent ----
t_check "$P" -s 3 w g 0 4K >/dev/null
t_eq "$(tier_used ram)" $((4 * K)) "g's first unit is in RAM"
# fill the RAM tier to the last unit (its last extent a unit short)
t_check "$P" -s 4 w fill 0 $((8 * M - 4 * K)) >/dev/null
t_eq "$(tier_used ram)" $((8 * M)) "RAM full"
# g's extent grows: RAM has no unit left, so the extent moves to disk
t_check "$P" -s 3 w g 4K $((M - 4 * K)) >/dev/null
t_check "$P" -s 3 v g 0 $M >/dev/null
t_check "$P" -s 4 v fill 0 $((8 * M - 4 * K)) >/dev/null
t_eq "$(blocks_bytes g)" $M "st_blocks of g after the move"
rm fill || t_fail "rm fill"

# ---- punch and truncate give units back ----
t_ok "$SC" fallocate g punch $((256 * K)) $((512 * K))
t_eq "$(blocks_bytes g)" $((512 * K)) "st_blocks after punching half of g"
t_check "$P" z g $((256 * K)) $((512 * K)) >/dev/null
t_check "$P" -s 3 v g 0 $((256 * K)) >/dev/null
t_check "$P" -s 3 v g $((768 * K)) $((256 * K)) >/dev/null
t_ok "$SC" truncate g 10000
t_eq "$(blocks_bytes g)" $((12 * K)) "st_blocks after truncate to 10000"
t_check "$P" -s 3 v g 0 10000 >/dev/null
t_ok "$SC" truncate g $M
t_check "$P" z g 10000 $((M - 10000)) >/dev/null

# ---- a fallocate larger than the room changes nothing ----
# (as tmpfs: ENOSPC up front; the units g's extent lacks are not taken)
u0=$(used_bytes)
t_errno ENOSPC "$SC" fallocate g 0 0 $((100 * M))
t_eq "$(blocks_bytes g)" $((12 * K)) "st_blocks of g after a fallocate refused for room"
t_eq "$(used_bytes)" "$u0" "df used after a fallocate refused for room"
t_check "$P" -s 3 v g 0 10000 >/dev/null
rm g || t_fail "rm g"
t_wait_until 5 used_is 0 || t_fail "used $(used_bytes) at the end"
cd / || t_fail "cd /"
t_pass
