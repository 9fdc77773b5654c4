#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 60
#
# Hard links: link counts on every name right after link and unlink (the
# kernel caches attributes, so stat each name before and after), shared
# inode number and data, ctime on link/unlink, links to symlinks and FIFOs,
# error cases, and directory link counts across mkdir/rmdir/rename.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc

t_mount --tier ram=ram:64M

nlinks() { # print "n1 n2 ..." for the given paths
	local p out=
	for p in "$@"; do
		out="$out $(t_lstat nlink "$p")"
	done
	echo "${out# }"
}

mkdir "$MNT/d" || t_fail mkdir
echo "shared data" >"$MNT/d/a" || t_fail create
t_eq "$(nlinks "$MNT/d/a")" 1 "nlink of a new file"
ino=$(t_stat ino "$MNT/d/a")
ctime0=$(t_stat ctime "$MNT/d/a")
dmtime0=$(t_stat mtime "$MNT/d")
sleep 0.05

t_ok "$SC" link "$MNT/d/a" "$MNT/d/b"
t_eq "$(nlinks "$MNT/d/a" "$MNT/d/b")" "2 2" "nlink after link (a b)"
t_eq "$(nlinks "$MNT/d/b" "$MNT/d/a")" "2 2" "nlink after link (b a)"
t_eq "$(t_stat ino "$MNT/d/b")" "$ino" "st_ino of the new link"
ctime1=$(t_stat ctime "$MNT/d/a")
[[ "$ctime1" > "$ctime0" ]] || t_fail "ctime not updated by link ($ctime0 -> $ctime1)"
dmtime1=$(t_stat mtime "$MNT/d")
[[ "$dmtime1" > "$dmtime0" ]] || t_fail "directory mtime not updated by link"

mkdir "$MNT/e" || t_fail mkdir
t_ok "$SC" link "$MNT/d/b" "$MNT/e/c"
t_eq "$(nlinks "$MNT/d/a" "$MNT/d/b" "$MNT/e/c")" "3 3 3" "nlink after second link"
t_eq "$(t_stat ino "$MNT/e/c")" "$ino" "st_ino across directories"

# data and size are shared
printf 'via c, longer than before\n' >"$MNT/e/c" || t_fail "write via c"
t_eq "$(cat "$MNT/d/a")" "via c, longer than before" "read via a after write via c"
t_eq "$(t_stat size "$MNT/d/b")" 26 "size via b"
t_ok "$SC" chmod "$MNT/d/a" 0600
t_eq "$(t_stat mode "$MNT/e/c")" 0600 "mode via another name"

# unlink one name: the others drop to 2 at once
sleep 0.05
ctime2=$(t_stat ctime "$MNT/d/a")
t_ok "$SC" unlink "$MNT/d/b"
t_errno ENOENT "$SC" stat "$MNT/d/b"
t_eq "$(nlinks "$MNT/d/a" "$MNT/e/c")" "2 2" "nlink after unlink"
ctime3=$(t_stat ctime "$MNT/d/a")
[[ "$ctime3" > "$ctime2" ]] || t_fail "ctime not updated by unlink of another name"
t_eq "$(cat "$MNT/e/c")" "via c, longer than before" "data after unlink of one name"

# the daemon, not only the kernel cache, has the right count
sync
echo 2 >/proc/sys/vm/drop_caches 2>/dev/null
t_eq "$(nlinks "$MNT/e/c" "$MNT/d/a")" "2 2" "nlink after dropping caches"
t_eq "$(t_stat ino "$MNT/e/c")" "$ino" "st_ino after dropping caches"

t_ok "$SC" unlink "$MNT/d/a"
t_eq "$(nlinks "$MNT/e/c")" 1 "nlink of the last name"
t_eq "$(cat "$MNT/e/c")" "via c, longer than before" "data of the last name"

# many links
for i in $(seq 100); do
	ln "$MNT/e/c" "$MNT/e/l$i" || t_fail "link $i"
done
t_eq "$(nlinks "$MNT/e/c" "$MNT/e/l50" "$MNT/e/l100")" "101 101 101" "nlink with 100 links"
for i in $(seq 2 2 100); do
	rm "$MNT/e/l$i" || t_fail "unlink $i"
done
t_eq "$(nlinks "$MNT/e/l1" "$MNT/e/c" "$MNT/e/l99")" "51 51 51" "nlink after removing 50"

# errors
t_errno EEXIST "$SC" link "$MNT/e/c" "$MNT/e/l1"
t_errno ENOENT "$SC" link "$MNT/e/missing" "$MNT/e/x"
t_errno EPERM "$SC" link "$MNT/d" "$MNT/dlink"
t_errno ENOENT "$SC" link "$MNT/e/c" "$MNT/missing/x"

# links to a symlink (link does not follow) and to a FIFO
t_ok "$SC" symlink c "$MNT/e/sym"
t_ok "$SC" link "$MNT/e/sym" "$MNT/e/sym2"
t_eq "$(t_lstat type "$MNT/e/sym2")" lnk "link to a symlink is a symlink"
t_eq "$(nlinks "$MNT/e/sym" "$MNT/e/sym2")" "2 2" "nlink of a linked symlink"
t_eq "$("$SC" readlink "$MNT/e/sym2")" "OK c" "readlink of a linked symlink"
t_ok "$SC" mkfifo "$MNT/e/fifo" 0644
t_ok "$SC" link "$MNT/e/fifo" "$MNT/e/fifo2"
t_eq "$(t_stat type "$MNT/e/fifo2")" fifo "link to a FIFO"
t_eq "$(nlinks "$MNT/e/fifo" "$MNT/e/fifo2")" "2 2" "nlink of a linked FIFO"

# directory link counts: 2 + number of subdirectories
mkdir "$MNT/p" "$MNT/q" || t_fail mkdir
t_eq "$(nlinks "$MNT/p")" 2 "nlink of an empty dir"
mkdir "$MNT/p/s1" "$MNT/p/s2" || t_fail mkdir
t_eq "$(nlinks "$MNT/p" "$MNT/p/s1")" "4 2" "nlink with two subdirs"
touch "$MNT/p/file" || t_fail touch
t_eq "$(nlinks "$MNT/p")" 4 "files do not count in a dir's nlink"
mv "$MNT/p/s1" "$MNT/q/" || t_fail "rename dir across parents"
t_eq "$(nlinks "$MNT/p" "$MNT/q")" "3 3" "nlink after moving a subdir"
rmdir "$MNT/p/s2" || t_fail rmdir
t_eq "$(nlinks "$MNT/p")" 2 "nlink after rmdir"
root_before=$(nlinks "$MNT")
mkdir "$MNT/r" || t_fail mkdir
t_eq "$(nlinks "$MNT")" $((root_before + 1)) "root nlink after mkdir"

t_pass
