#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 60
#
# rename(2) and renameat2(2): plain, over a file, across directories, dir
# over empty dir, the error cases (ENOTEMPTY, EISDIR, ENOTDIR, EINVAL,
# ENOENT), RENAME_NOREPLACE, RENAME_EXCHANGE (files, file<->dir across
# parents with the parents' link counts, missing target), timestamps, open
# files and "..".  Expected errno values are those of tmpfs/ext4.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc

t_mount --tier ram=ram:64M
cd "$MNT" || t_fail cd

# --- plain ---
echo one >a || t_fail create
ino_a=$(t_stat ino a)
mkdir d1 d2 || t_fail mkdir
ctime0=$(t_stat ctime a)
d1m0=$(t_stat mtime d1)
sleep 0.05
t_ok "$SC" rename2 none a b
t_errno ENOENT "$SC" stat a
t_eq "$(cat b)" one "content after rename"
t_eq "$(t_stat ino b)" "$ino_a" "st_ino kept by rename"
[[ "$(t_stat ctime b)" > "$ctime0" ]] || t_fail "ctime of the renamed file not updated"
t_ok "$SC" rename b d1/b
t_eq "$(cat d1/b)" one "content after rename across directories"
[[ "$(t_stat mtime d1)" > "$d1m0" ]] || t_fail "mtime of the target directory not updated"
t_eq "$(ls d1)" b "listing after rename"
t_ok "$SC" rename d1/b d1/b
t_eq "$(cat d1/b)" one "rename onto itself is a no-op"
t_errno ENOENT "$SC" rename missing x
t_errno ENOENT "$SC" rename d1/b missingdir/x

# --- over an existing file ---
echo two >c || t_fail create
ln c c2 || t_fail link
ino_c=$(t_stat ino c)
t_ok "$SC" rename d1/b c
t_eq "$(cat c)" one "target replaced"
t_eq "$(t_stat ino c)" "$ino_a" "target name now has the source inode"
t_eq "$(t_stat nlink c2)" 1 "nlink of the replaced file's other name"
t_eq "$(cat c2)" two "replaced file's other name keeps its data"
t_eq "$(t_stat ino c2)" "$ino_c" "replaced file's other name keeps its inode"
# over a file that is open
exec 3<c2
t_ok "$SC" rename c c2
t_eq "$(cat <&3)" two "replaced file still readable through an open fd"
exec 3<&-
t_eq "$(cat c2)" one "content after rename over an open file"
# two names of one inode: rename does nothing
ln c2 c3 || t_fail link
t_ok "$SC" rename c2 c3
t_ok "$SC" stat c2
t_ok "$SC" stat c3
t_eq "$(t_stat nlink c3)" 2 "rename between links of one inode"

# --- directories ---
mkdir -p src/inner empty full/x || t_fail mkdir
echo in >src/inner/f || t_fail create
root_nlink=$(t_stat nlink .)
t_ok "$SC" rename src empty
t_eq "$(cat empty/inner/f)" in "dir over an empty dir"
t_errno ENOENT "$SC" stat src
t_eq "$(t_stat nlink .)" $((root_nlink - 1)) "parent nlink after dir over empty dir"
t_errno ENOTEMPTY "$SC" rename empty full
t_eq "$(cat empty/inner/f)" in "source intact after ENOTEMPTY"
t_ok "$SC" stat full/x
t_errno EISDIR "$SC" rename c3 full
t_errno ENOTDIR "$SC" rename full c3
t_errno EINVAL "$SC" rename empty empty/inner/sub
t_errno EINVAL "$SC" rename empty empty/inner
t_errno ENOTDIR "$SC" rename c3 c3/x
t_eq "$(cat c3)" one "file intact after failed renames"
# ".." follows a moved directory
mkdir -p p1/mv p2 || t_fail mkdir
t_ok "$SC" rename p1/mv p2/mv
t_eq "$(t_stat ino p2/mv/..)" "$(t_stat ino p2)" "'..' of a moved directory"
t_eq "$(t_stat nlink p1):$(t_stat nlink p2)" 2:3 "parents' nlink after moving a dir"

# --- open file survives rename ---
exec 4>>c3
t_ok "$SC" rename c3 moved
echo appended >&4
exec 4>&-
t_eq "$(cat moved)" "one
appended" "write through an fd opened before rename"

# --- RENAME_NOREPLACE ---
echo n1 >n1 && echo n2 >n2 || t_fail create
t_errno EEXIST "$SC" rename2 noreplace n1 n2
t_eq "$(cat n1):$(cat n2)" n1:n2 "nothing changed by NOREPLACE EEXIST"
t_errno EEXIST "$SC" rename2 noreplace n1 full
t_ok "$SC" rename2 noreplace n1 n3
t_eq "$(cat n3)" n1 "NOREPLACE to a free name"
t_errno ENOENT "$SC" stat n1

# --- RENAME_EXCHANGE: two files ---
echo X >x && echo Y >y || t_fail create
ino_x=$(t_stat ino x)
ino_y=$(t_stat ino y)
t_ok "$SC" rename2 exchange x y
t_eq "$(cat x):$(cat y)" Y:X "contents exchanged"
t_eq "$(t_stat ino x):$(t_stat ino y)" "$ino_y:$ino_x" "inodes exchanged"
t_eq "$(ls -1 | grep -cx '[xy]')" 2 "both names listed after exchange"
t_errno ENOENT "$SC" rename2 exchange x nothere
t_errno ENOENT "$SC" rename2 exchange nothere x
t_eq "$(cat x)" Y "file intact after failed exchange"

# --- RENAME_EXCHANGE: a file in one dir with a dir in another ---
mkdir -p ex1 ex2/dir/sub || t_fail mkdir
echo F >ex1/obj || t_fail create
echo inside >ex2/dir/sub/g || t_fail create
t_eq "$(t_stat nlink ex1):$(t_stat nlink ex2)" 2:3 "nlink before exchange"
t_ok "$SC" rename2 exchange ex1/obj ex2/dir
t_eq "$(t_stat type ex1/obj):$(t_stat type ex2/dir)" dir:reg "types exchanged"
t_eq "$(cat ex1/obj/sub/g)" inside "directory content under its new name"
t_eq "$(cat ex2/dir)" F "file content under its new name"
t_eq "$(t_stat nlink ex1):$(t_stat nlink ex2)" 3:2 "parents' nlink after file<->dir exchange"
t_eq "$(t_stat ino ex1/obj/..)" "$(t_stat ino ex1)" "'..' of an exchanged directory"
sync
echo 2 >/proc/sys/vm/drop_caches 2>/dev/null
t_eq "$(t_stat nlink ex1):$(t_stat nlink ex2)" 3:2 "parents' nlink after dropping caches"
t_eq "$(cat ex1/obj/sub/g):$(cat ex2/dir)" inside:F "contents after dropping caches"

cd /
t_pass
