#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: data
# TIMEOUT: 120
#
# I/O paths beyond read/write: shared writable mmap (stores, msync, then
# read(2) and O_DIRECT reads from another process; two processes sharing a
# mapping), O_DIRECT aligned writes and reads mixed with buffered I/O,
# O_APPEND from several processes at once (no record lost or torn),
# copy_file_range (whole file, offsets, across extents), fsync/fdatasync.
. "$(dirname "$0")/lib.sh"
t_need_progs
IO=$PROGS/iomodes
P=$PROGS/pattern
SC=$PROGS/sc
M=1048576

t_mount --tier ram=ram:256M
cd "$MNT" || t_fail cd

# --- mmap ---
size=$((5 * M + 4096 * 3))
t_check "$IO" mmap-write m $size 21 >/dev/null
t_eq "$(t_stat size m)" $size "size after mmap writes"
t_check "$P" -s 21 v m 0 $size >/dev/null
t_check "$P" -s 21 -d v m 0 $size >/dev/null
t_check "$IO" mmap-verify m $size 21 >/dev/null
# data written with write(2) is seen through a mapping
t_check "$P" -s 22 w w2m 0 3M >/dev/null
t_check "$IO" mmap-verify w2m 3M 22 >/dev/null
t_check "$IO" mmap-share shared >/dev/null
# mmap after dropping the page cache: data comes back from the daemon
sync
echo 1 >/proc/sys/vm/drop_caches 2>/dev/null
t_check "$IO" mmap-verify m $size 21 >/dev/null

# --- O_DIRECT ---
t_check "$IO" direct d >/dev/null
t_check "$P" -d -s 23 w dd 0 8M >/dev/null
t_check "$P" -s 23 v dd 0 8M >/dev/null
t_check "$P" -d -b 4K -s 23 v dd 0 8M >/dev/null
t_check "$P" -d -j 4 -b 64K -s 24 w dd 1M 2M >/dev/null
t_check "$P" -s 24 v dd 1M 2M >/dev/null
t_check "$P" -s 23 v dd 3M 5M >/dev/null

# --- O_APPEND from several processes ---
t_check "$IO" append app 4 2000 1000 >/dev/null
t_check "$IO" append app2 6 300 65536 >/dev/null
t_check "$IO" append app3 3 2000 4096 >/dev/null
# a shell appending with >> keeps earlier content
printf 'line1\n' >lines && printf 'line2\n' >>lines || t_fail append
t_eq "$(cat lines | tr '\n' ' ')" "line1 line2 " ">> appends"

# --- copy_file_range ---
t_check "$P" -s 25 w src 0 $((5 * M + 12345)) >/dev/null
t_check "$IO" cfr src dst >/dev/null
cmp src dst || t_fail "copy_file_range copy differs"
t_eq "$(t_stat size dst)" $((5 * M + 12345)) "size of the copy"
# ranges at odd offsets into an existing file
t_check "$P" -s 26 w dst2 0 4M >/dev/null
t_check "$IO" cfr src dst2 1000 $((2 * M - 7)) 1500000 >/dev/null
t_check "$P" -s 26 v dst2 0 $((2 * M - 7)) >/dev/null
cmp -i 1000:$((2 * M - 7)) -n 1500000 src dst2 || t_fail "copy_file_range range differs"
t_check "$P" -s 26 v dst2 $((2 * M - 7 + 1500000)) $((4 * M - 2 * M + 7 - 1500000)) >/dev/null
# cp from a tmpfs file into the mount and back (across file systems
# copy_file_range gives EXDEV and cp falls back to read/write)
t_tmpfs "$T/tmp" 32M
t_check "$P" -s 27 w "$T/tmp/x" 0 3M >/dev/null
cp "$T/tmp/x" xin || t_fail "cp into the mount"
t_check "$P" -s 27 v xin 0 3M >/dev/null
cp xin "$T/tmp/xout" || t_fail "cp out of the mount"
cmp "$T/tmp/x" "$T/tmp/xout" || t_fail "copy out of the mount differs"
# cp uses copy_file_range/reflink attempts too
cp src cpdst || t_fail cp
cmp src cpdst || t_fail "cp copy differs"

# --- fsync and fdatasync ---
t_check "$P" w s 0 2M >/dev/null
t_ok "$SC" fsync s
t_ok "$SC" fdatasync s
t_ok "$SC" fsync "$MNT"
t_check "$P" -f w s 2M 1M >/dev/null
dd if=/dev/zero of=sd bs=64k count=16 conv=fsync status=none || t_fail "dd conv=fsync"
dd if=/dev/zero of=sd bs=64k count=16 oflag=dsync status=none || t_fail "dd oflag=dsync"
sync -f s || t_fail "syncfs"

cd /
t_pass
