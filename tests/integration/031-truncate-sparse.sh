#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: data
# TIMEOUT: 120
#
# File data: truncate and ftruncate up and down, truncating into the middle
# of an extent and growing again (the cut part must read as zeros), writes
# past EOF leaving holes, sparse files (large size, few blocks, offsets past
# 4G and 1T), unaligned writes and reads across extent boundaries with 1M,
# 64K and 4K extents, overwrites inside extents, and a random-operation
# exerciser (fsx) compared against a tmpfs reference file.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc
P=$PROGS/pattern
M=1048576

t_tmpfs "$T/ref" 64M
t_mount --tier ram=ram:256M
cd "$MNT" || t_fail cd

# --- truncate into the middle of an extent, then grow ---
t_check "$P" w f 0 3M >/dev/null
t_eq "$(t_stat size f)" $((3 * M)) "size after writing 3M"
t_ok "$SC" truncate f 1500000
t_eq "$(t_stat size f)" 1500000 "size after truncate down"
t_check "$P" v f 0 1500000 >/dev/null
t_errno SHORT "$P" v f 1499000 2000
t_ok "$SC" truncate f $((3 * M))
t_eq "$(t_stat size f)" $((3 * M)) "size after truncate up"
t_check "$P" v f 0 1500000 >/dev/null
t_check "$P" z f 1500000 $((3 * M - 1500000)) >/dev/null
# the same with ftruncate and a write after the cut
t_check "$P" -s 2 w g 0 3M >/dev/null
t_ok "$SC" ftruncate g 1048577
t_ok "$SC" ftruncate g 2500000
t_check "$P" -s 2 w g 2400000 1000 >/dev/null
t_check "$P" -s 2 v g 0 1048577 >/dev/null
t_check "$P" z g 1048577 $((2400000 - 1048577)) >/dev/null
t_check "$P" -s 2 v g 2400000 1000 >/dev/null
t_check "$P" z g 2401000 $((2500000 - 2401000)) >/dev/null
# to zero and back
t_ok "$SC" truncate g 0
t_eq "$(t_stat size g)" 0 "size after truncate to 0"
t_ok "$SC" truncate g 5000
t_check "$P" z g 0 5000 >/dev/null
# truncate while another fd has the file open and cached
t_check "$P" -s 3 w h 0 2M >/dev/null
exec 3<h
head -c 100 <&3 >/dev/null
t_ok "$SC" truncate h 1000
t_ok "$SC" truncate h $((2 * M))
t_check "$P" z /dev/fd/3 1000 $((2 * M - 1000)) >/dev/null
exec 3<&-

# --- writes past EOF leave holes ---
t_ok "$SC" write hole 0 a
t_ok "$SC" write hole $((5 * M + 7)) b
t_eq "$(t_stat size hole)" $((5 * M + 8)) "size after a write past EOF"
t_check "$P" z hole 1 $((5 * M + 6)) >/dev/null
t_eq "$("$SC" read hole $((5 * M + 7)) 10)" "OK b" "byte written past EOF"

# --- sparse files ---
t_ok "$SC" open sparse creat,w
t_ok "$SC" truncate sparse 10G
t_eq "$(t_stat size sparse)" 10737418240 "sparse size"
t_eq "$(t_stat blocks sparse)" 0 "st_blocks of an all-hole file"
t_check "$P" z sparse 9G 1M >/dev/null
t_check "$P" -s 4 w sparse $((5 * 1073741824 + 3)) 4096 >/dev/null
b=$(t_stat blocks sparse)
if [ "$b" -le 0 ] || [ $((b * 512)) -gt $((2 * M)) ]; then
	t_fail "st_blocks $b after one 4K write into a 10G sparse file"
fi
t_check "$P" -s 4 v sparse $((5 * 1073741824 + 3)) 4096 >/dev/null
t_check "$P" z sparse $((5 * 1073741824 - 4096)) 4099 >/dev/null
t_check "$P" z sparse $((5 * 1073741824 + 4099)) $((M - 4099)) >/dev/null
t_eq "$(t_stat size sparse)" 10737418240 "sparse size after a write inside"
# across the 4G boundary (32-bit offset overflow) and far out at 1T
t_check "$P" -s 5 w far $((4 * 1073741824 - 2)) 4 >/dev/null
t_check "$P" -s 5 v far $((4 * 1073741824 - 2)) 4 >/dev/null
t_check "$P" -s 5 w far $((1099511627776 + 12345)) 100 >/dev/null
t_eq "$(t_stat size far)" $((1099511627776 + 12445)) "size after a write at 1T"
t_check "$P" -s 5 v far $((1099511627776 + 12345)) 100 >/dev/null
t_check "$P" -s 5 v far $((4 * 1073741824 - 2)) 4 >/dev/null
t_check "$P" z far 0 1M >/dev/null
t_check "$P" z far $((4 * 1073741824 + 2)) 1M >/dev/null
b=$(t_stat blocks far)
[ $((b * 512)) -le $((4 * M)) ] || t_fail "st_blocks $b of a file with 3 small extents"
# a full file has its blocks counted
t_check "$P" w full 0 3M >/dev/null
b=$(t_stat blocks full)
[ $((b * 512)) -ge $((3 * M)) ] || t_fail "st_blocks $b of a 3M file with no holes"
# du agrees
du=$(du -B1 sparse | cut -f1)
[ "$du" -le $((2 * M)) ] && [ "$du" -gt 0 ] || t_fail "du of the sparse file: $du"

# --- overwrite inside extents ---
t_check "$P" -s 6 w ow 0 3M >/dev/null
t_check "$P" -s 7 w ow 1000000 100 >/dev/null
t_check "$P" -s 7 w ow $((M - 50)) 100 >/dev/null
t_check "$P" -s 6 v ow 0 1000000 >/dev/null
t_check "$P" -s 7 v ow 1000000 100 >/dev/null
t_check "$P" -s 6 v ow 1000100 $((M - 50 - 1000100)) >/dev/null
t_check "$P" -s 7 v ow $((M - 50)) 100 >/dev/null
t_check "$P" -s 6 v ow $((M + 50)) $((2 * M - 50)) >/dev/null

# --- SEEK_DATA/SEEK_HOLE while written data is still in the kernel's
# cache: never ENXIO inside the file, never written data called a hole
# (holes may be reported as data: POSIX allows it)
if command -v python3 >/dev/null; then
	out=$(python3 - "$MNT/seek" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
M = 1 << 20
os.pwrite(fd, b"x" * 4096, 5 * M)
d = os.lseek(fd, 0, os.SEEK_DATA)
h = os.lseek(fd, d, os.SEEK_HOLE)
ok = d <= 5 * M and h >= 5 * M + 4096
try:
    os.lseek(fd, 5 * M + 4096, os.SEEK_DATA)
    ok = False
except OSError as e:
    ok = ok and e.errno == 6  # ENXIO at EOF
os.close(fd)
print("OK" if ok else "BAD data=%d hole=%d" % (d, h))
PY
)
	t_eq "$out" OK "SEEK_DATA/SEEK_HOLE over data not yet written back"
fi

# --- copy_file_range of a sparse region copies its holes as holes ---
if command -v python3 >/dev/null; then
	t_check "$P" -s 21 w cs 0 4096 >/dev/null
	t_check "$P" -s 22 w cs $((100 * M)) 4096 >/dev/null
	t_check "$P" -s 23 w cd 0 $((8 * M)) >/dev/null # data the holes replace
	out=$(python3 - "$MNT/cs" "$MNT/cd" <<'PY'
import os, sys
src = os.open(sys.argv[1], os.O_RDONLY)
dst = os.open(sys.argv[2], os.O_WRONLY)
n = os.fstat(src).st_size
done = 0
while done < n:
    k = os.copy_file_range(src, dst, n - done, done, done)
    if k <= 0:
        break
    done += k
print(done)
PY
)
	t_eq "$out" $((100 * M + 4096)) "bytes copied"
	t_check cmp "$MNT/cs" "$MNT/cd"
	sync; echo 3 >/proc/sys/vm/drop_caches
	t_check cmp "$MNT/cs" "$MNT/cd"
	t_check "$P" -d z cd 4096 $((8 * M)) >/dev/null
	b=$(($(t_stat blocks cd) * 512))
	[ "$b" -le $((2 * M)) ] ||
		t_fail "copy of a 100M sparse file holds $b bytes, expected at most two extents"
	rm -f cs cd
fi

# --- random operations against a tmpfs reference, 1M extents ---
t_check "$PROGS/fsx" -n 1500 -s 11 -m 6M -l 1500K "$MNT/fsx" "$T/ref/fsx"
cd /

# --- 64K and 4K extents: unaligned I/O across many boundaries ---
for xs in 64K 4K; do
	t_remount --tier ram=ram:64M --extent-size $xs
	cd "$MNT" || t_fail cd
	# odd chunk sizes, odd start: every write straddles extent edges
	t_check "$P" -b 65537 -s 8 w u 12345 3M >/dev/null
	t_check "$P" -b 4097 -s 8 v u 12345 3M >/dev/null
	t_check "$P" z u 0 12345 >/dev/null
	t_check "$P" -b 333333 -s 8 v u 12345 3M >/dev/null
	t_check "$P" -b 1 -s 9 w u 65535 3 >/dev/null
	t_check "$P" -s 9 v u 65535 3 >/dev/null
	t_check "$P" -s 8 v u 12345 $((65535 - 12345)) >/dev/null
	t_check "$P" -s 8 v u 65538 100000 >/dev/null
	t_ok "$SC" truncate u 65536
	t_ok "$SC" truncate u 65537
	t_check "$P" z u 65536 1 >/dev/null
	t_ok "$SC" truncate u 70000
	t_check "$P" -s 8 v u 12345 $((65535 - 12345)) >/dev/null
	t_check "$P" z u 65536 $((70000 - 65536)) >/dev/null
	t_check "$PROGS/fsx" -n 1500 -s 12 -m 2M -l 200K "$MNT/fsx" "$T/ref/fsx"
	cd /
done

t_pass
