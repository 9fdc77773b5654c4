#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 60
#
# Namespace basics: files, directories, symlinks (readlink, dangling,
# O_NOFOLLOW), FIFOs through mkfifo and mknod, stable and unique inode
# numbers, NAME_MAX and PATH_MAX, error codes of create/open/mkdir.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc
umask 022

t_mount --tier ram=ram:64M

# --- files and directories ---
t_eq "$(t_stat type "$MNT")" dir "root type"
t_ok "$SC" mkdir "$MNT/d" 0755
t_eq "$(t_stat type "$MNT/d")" dir "mkdir type"
t_eq "$(t_stat mode "$MNT/d")" 0755 "mkdir mode"
t_eq "$(t_stat nlink "$MNT/d")" 2 "nlink of an empty directory"
t_ok "$SC" mkdir "$MNT/d/sub" 0700
t_eq "$(t_stat mode "$MNT/d/sub")" 0700 "mkdir 0700 mode"
t_eq "$(t_stat nlink "$MNT/d")" 3 "nlink of a directory with one subdirectory"
echo "hello tierfs" >"$MNT/d/file" || t_fail "cannot create a file"
t_eq "$(cat "$MNT/d/file")" "hello tierfs" "file content"
t_eq "$(t_stat type "$MNT/d/file")" reg "file type"
t_eq "$(t_stat mode "$MNT/d/file")" 0644 "file mode under umask 022"
t_eq "$(t_stat size "$MNT/d/file")" 13 "file size"
t_eq "$(t_stat uid "$MNT/d/file"):$(t_stat gid "$MNT/d/file")" 0:0 "owner"
t_ok "$SC" open "$MNT/empty" creat,w 0600
t_eq "$(t_stat size "$MNT/empty")" 0 "empty file size"
t_eq "$(t_stat mode "$MNT/empty")" 0600 "open O_CREAT mode"
t_eq "$(cat "$MNT/empty")" "" "empty file content"
mkdir -p "$MNT/a/b/c/d/e" || t_fail "mkdir -p"
echo deep >"$MNT/a/b/c/d/e/f" || t_fail "deep create"
t_eq "$(cat "$MNT/a/b/c/d/e/f")" deep "deep file"
t_eq "$(ls "$MNT/d" | tr '\n' ' ')" "file sub " "listing of d"

# errors
t_errno EEXIST "$SC" mkdir "$MNT/d" 0755
t_errno EEXIST "$SC" mkdir "$MNT/d/file" 0755
t_errno EEXIST "$SC" open "$MNT/d/file" creat,excl,w
t_errno ENOENT "$SC" open "$MNT/missing" r
t_errno ENOENT "$SC" stat "$MNT/missing"
t_errno ENOENT "$SC" mkdir "$MNT/missing/x" 0755
t_errno ENOENT "$SC" open "$MNT/missing/x" creat,w
t_errno ENOTDIR "$SC" stat "$MNT/d/file/x"
t_errno ENOTDIR "$SC" open "$MNT/d/file/x" creat,w
t_errno ENOTDIR "$SC" open "$MNT/d/file" r,dir
t_errno EISDIR "$SC" open "$MNT/d" w
t_errno EISDIR "$SC" open "$MNT/d" rw
t_ok "$SC" open "$MNT/d" r,dir

# --- bulk data through cp ---
head -c $((5 * 1048576 + 13)) /dev/urandom >"$T/rand" || t_fail "urandom"
cp "$T/rand" "$MNT/d/rand" || t_fail "cp into the mount"
cmp "$T/rand" "$MNT/d/rand" || t_fail "copied data differs"
t_eq "$(t_stat size "$MNT/d/rand")" $((5 * 1048576 + 13)) "copied size"

# --- symlinks ---
t_ok "$SC" symlink file "$MNT/d/link"
t_eq "$("$SC" readlink "$MNT/d/link")" "OK file" "readlink"
t_eq "$(t_lstat type "$MNT/d/link")" lnk "lstat type"
t_eq "$(t_lstat size "$MNT/d/link")" 4 "symlink size is the target length"
t_eq "$(t_stat type "$MNT/d/link")" reg "stat follows the link"
t_eq "$(cat "$MNT/d/link")" "hello tierfs" "read through a symlink"
t_errno ELOOP "$SC" open "$MNT/d/link" r,nofollow
t_ok "$SC" symlink ../a/b "$MNT/d/dirlink"
t_eq "$(cat "$MNT/d/dirlink/c/d/e/f")" deep "path through a directory symlink"
t_ok "$SC" symlink /nonexistent/target "$MNT/dangling"
t_errno ENOENT "$SC" stat "$MNT/dangling"
t_ok "$SC" lstat "$MNT/dangling"
t_eq "$("$SC" readlink "$MNT/dangling")" "OK /nonexistent/target" "dangling readlink"
t_errno EEXIST "$SC" symlink x "$MNT/d/link"
t_errno EINVAL "$SC" readlink "$MNT/d/file"
long=$(printf 'x%.0s' $(seq 4095))
t_ok "$SC" symlink "$long" "$MNT/longlink"
t_eq "$("$SC" readlink "$MNT/longlink")" "OK $long" "readlink of a 4095-byte target"
t_ok "$SC" symlink "$MNT/loop2" "$MNT/loop1"
t_ok "$SC" symlink "$MNT/loop1" "$MNT/loop2"
t_errno ELOOP "$SC" stat "$MNT/loop1"

# --- FIFOs ---
t_ok "$SC" mkfifo "$MNT/fifo" 0644
t_eq "$(t_stat type "$MNT/fifo")" fifo "mkfifo type"
t_ok "$SC" mknod "$MNT/fifo2" fifo 0600
t_eq "$(t_stat type "$MNT/fifo2")" fifo "mknod S_IFIFO type"
t_eq "$(t_stat mode "$MNT/fifo2")" 0600 "mknod mode"
t_ok "$SC" mknod "$MNT/regnod" reg 0644
t_eq "$(t_stat type "$MNT/regnod")" reg "mknod S_IFREG type"
(echo "through the fifo" >"$MNT/fifo") &
writer=$!
line=$(timeout 10 cat "$MNT/fifo")
wait "$writer" || t_fail "fifo writer failed"
t_eq "$line" "through the fifo" "data through a FIFO"

# --- inode numbers: stable across lookups, unique per file ---
ino1=$(t_stat ino "$MNT/d/file")
ino2=$(t_stat ino "$MNT/d/file")
t_eq "$ino2" "$ino1" "st_ino across lookups"
dino=$(t_stat ino "$MNT/d")
# push the dentries and inodes out of the kernel caches: the daemon sees
# FORGET and new LOOKUPs; the numbers must not change
sync
echo 2 >/proc/sys/vm/drop_caches 2>/dev/null
t_eq "$(t_stat ino "$MNT/d/file")" "$ino1" "st_ino after dropping caches"
t_eq "$(t_stat ino "$MNT/d")" "$dino" "directory st_ino after dropping caches"
t_eq "$(cat "$MNT/d/file")" "hello tierfs" "content after dropping caches"
# st_ino from stat and d_ino from readdir agree
t_eq "$(ls -i "$MNT/d" | awk '$2 == "file" { print $1 }')" "$ino1" "d_ino in readdir"
dups=$(find "$MNT" -xdev -printf '%i\n' | sort | uniq -d | head -3)
t_eq "$dups" "" "duplicate inode numbers among distinct files"

# --- NAME_MAX ---
n255=$(printf 'n%.0s' $(seq 255))
n256=$(printf 'n%.0s' $(seq 256))
t_eq "$(t_statfs namemax "$MNT")" 255 "statfs f_namelen"
t_ok "$SC" open "$MNT/$n255" creat,w
t_ok "$SC" stat "$MNT/$n255"
ls "$MNT" | grep -qx "$n255" || t_fail "255-byte name not listed"
t_ok "$SC" mkdir "$MNT/d/$n255" 0755
t_errno ENAMETOOLONG "$SC" open "$MNT/$n256" creat,w
t_errno ENAMETOOLONG "$SC" stat "$MNT/$n256"
t_errno ENAMETOOLONG "$SC" mkdir "$MNT/$n256" 0755
t_errno ENAMETOOLONG "$SC" symlink x "$MNT/$n256"
t_errno ENAMETOOLONG "$SC" mkfifo "$MNT/$n256" 0644
t_errno ENAMETOOLONG "$SC" link "$MNT/d/file" "$MNT/$n256"
t_errno ENAMETOOLONG "$SC" rename "$MNT/d/file" "$MNT/$n256"
t_ok "$SC" stat "$MNT/d/file"

# --- PATH_MAX: a deep tree, a path just under 4096 bytes, one over ---
comp=$(printf 'p%.0s' $(seq 200))
rel=
cd "$MNT" || t_fail "cd"
while [ $((4095 - ${#rel})) -gt 255 ]; do
	rel="$rel$comp/"
	mkdir "$rel" || t_fail "mkdir at depth, path length ${#rel}"
done
fill=$((4095 - ${#rel}))
leaf=$(printf 'q%.0s' $(seq "$fill"))
t_eq "$((${#rel} + ${#leaf}))" 4095 "path length"
t_ok "$SC" open "$rel$leaf" creat,w
t_ok "$SC" stat "$rel$leaf"
t_errno ENAMETOOLONG "$SC" stat "${rel}x$leaf"
cd /
find "$MNT" -name "$leaf" | grep -q . || t_fail "deep file not found by find"

t_pass
