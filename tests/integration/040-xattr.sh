#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 60
#
# Extended attributes (user.*): set/get/list/remove with setfattr/getfattr
# and through the sc helper: XATTR_CREATE on an existing name (EEXIST),
# XATTR_REPLACE on a missing one (ENODATA), empty values, binary and 64 KiB
# values, ERANGE for small buffers (get and list), size queries, removing a
# missing name (ENODATA), xattrs on directories, across hard links and
# rename, after dropping caches, permission checks, and the read-only
# user.tierfs.layout.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc

t_mount -o allow_other --tier ram=ram:64M
cd "$MNT" || t_fail cd
echo data >f || t_fail create

# --- CLI round trip ---
setfattr -n user.color -v blue f || t_fail "setfattr"
t_eq "$(getfattr --only-values -n user.color f)" blue "getfattr value"
setfattr -n user.color -v green f || t_fail "setfattr overwrite"
t_eq "$(getfattr --only-values -n user.color f)" green "value after overwrite"
setfattr -n user.shape -v round f || t_fail "setfattr second"
names=$(getfattr -d -m '^user\.' --absolute-names f | grep -o '^user\.[a-z]*' | sort | tr '\n' ' ')
t_eq "$names" "user.color user.shape " "listed names"
setfattr -x user.color f || t_fail "setfattr -x"
getfattr -n user.color f >/dev/null 2>&1 && t_fail "removed xattr still readable"
names=$(getfattr -d -m '^user\.' --absolute-names f | grep -o '^user\.[a-z]*' | tr '\n' ' ')
t_eq "$names" "user.shape " "listed names after remove"

# --- flags ---
t_errno EEXIST "$SC" setxattr f user.shape square create
t_eq "$(getfattr --only-values -n user.shape f)" round "value after failed XATTR_CREATE"
t_errno ENODATA "$SC" setxattr f user.nothere x replace
t_errno ENODATA "$SC" getxattr f user.nothere 100
t_ok "$SC" setxattr f user.new v1 create
t_ok "$SC" setxattr f user.new v2 replace
t_eq "$(getfattr --only-values -n user.new f)" v2 "value after XATTR_REPLACE"
t_errno ENODATA "$SC" removexattr f user.nothere
t_ok "$SC" removexattr f user.new
t_errno ENODATA "$SC" removexattr f user.new
t_errno ENODATA "$SC" getxattr f user.new 100

# --- empty and binary values ---
t_ok "$SC" setxattr f user.empty - create
t_eq "$("$SC" getxattr f user.empty 100)" "OK 0" "empty value length"
t_eq "$("$SC" getxattr f user.empty 0)" "OK 0" "empty value size query"
"$SC" listxattr f 1000 | grep -qw user.empty || t_fail "empty-valued xattr not listed"
t_errno EEXIST "$SC" setxattr f user.empty - create
printf 'a\0b\nc\377' >"$T/bin"
t_ok "$SC" setxattr f user.bin "@$T/bin" 0
t_eq "$("$SC" getxattr f user.bin 100 "$T/bin.out")" "OK 6" "binary value length"
cmp "$T/bin" "$T/bin.out" || t_fail "binary value differs"

# --- large values ---
head -c 65536 /dev/urandom >"$T/big"
t_ok "$SC" setxattr f user.big "@$T/big" 0
t_eq "$("$SC" getxattr f user.big 0)" "OK 65536" "size query of a 64 KiB value"
t_eq "$("$SC" getxattr f user.big 65536 "$T/big.out")" "OK 65536" "get of a 64 KiB value"
cmp "$T/big" "$T/big.out" || t_fail "64 KiB value differs"
head -c 65537 /dev/urandom >"$T/toobig"
t_errno E2BIG "$SC" setxattr f user.toobig "@$T/toobig" 0
head -c 20000 /dev/urandom >"$T/mid"
t_ok "$SC" setxattr f user.big "@$T/mid" replace
t_eq "$("$SC" getxattr f user.big 65536 "$T/mid.out")" "OK 20000" "value shrunk by replace"
cmp "$T/mid" "$T/mid.out" || t_fail "replaced value differs"

# --- ERANGE ---
t_ok "$SC" setxattr f user.five 12345 0
t_errno ERANGE "$SC" getxattr f user.five 4
t_eq "$("$SC" getxattr f user.five 5)" "OK 5" "exact buffer"
listsize=$("$SC" listxattr f 0)
listsize=${listsize#OK }
[ "$listsize" -gt 0 ] || t_fail "listxattr size query returned $listsize"
t_errno ERANGE "$SC" listxattr f $((listsize - 1))
t_eq "$("$SC" listxattr f "$listsize" | cut -d' ' -f2)" "$listsize" "listxattr with the exact size"
# many names
for i in $(seq 50); do
	setfattr -n "user.n$i" -v "value $i" f || t_fail "setfattr n$i"
done
t_eq "$(getfattr -d -m '^user\.n' f | grep -c '^user\.n')" 50 "50 names listed"
t_eq "$(getfattr --only-values -n user.n37 f)" "value 37" "value among many"

# --- directories, links, rename, cache ---
mkdir d || t_fail mkdir
setfattr -n user.dirattr -v dv d || t_fail "setfattr on a directory"
t_eq "$(getfattr --only-values -n user.dirattr d)" dv "xattr on a directory"
ln f f2 || t_fail link
t_eq "$(getfattr --only-values -n user.shape f2)" round "xattr through a hard link"
mv f2 d/f3 || t_fail mv
t_eq "$(getfattr --only-values -n user.shape d/f3)" round "xattr after rename"
sync
echo 2 >/proc/sys/vm/drop_caches 2>/dev/null
t_eq "$(getfattr --only-values -n user.n50 f)" "value 50" "xattr after dropping caches"
# user.* is not allowed on FIFOs (Linux)
mkfifo fifo || t_fail setup
t_errno EPERM "$SC" setxattr "$MNT/fifo" user.x v 0
c0=$(t_stat ctime f)
sleep 0.05
t_ok "$SC" setxattr f user.ct v 0
[[ "$(t_stat ctime f)" > "$c0" ]] || t_fail "ctime not updated by setxattr"

# --- permissions: other users need write permission to set ---
chmod 0644 f && chmod 0755 "$MNT" || t_fail chmod
t_ok t_as 65534:65534 "$SC" getxattr "$MNT/f" user.shape 100
t_errno EACCES t_as 65534:65534 "$SC" setxattr "$MNT/f" user.x v 0
t_errno EACCES t_as 65534:65534 "$SC" removexattr "$MNT/f" user.shape
chmod 0600 f || t_fail chmod
t_errno EACCES t_as 65534:65534 "$SC" getxattr "$MNT/f" user.shape 100

# --- user.tierfs.layout is read-only ---
t_check "$PROGS/pattern" -f w lay 0 3M >/dev/null
t_eq "$(getfattr --only-values -n user.tierfs.layout lay)" "ram=3145728" "user.tierfs.layout"
out=$("$SC" setxattr lay user.tierfs.layout ram=0 0)
[ "${out%% *}" != OK ] || t_fail "setting user.tierfs.layout succeeded"
out=$("$SC" removexattr lay user.tierfs.layout)
[ "${out%% *}" != OK ] || t_fail "removing user.tierfs.layout succeeded"
t_eq "$(getfattr --only-values -n user.tierfs.layout lay)" "ram=3145728" "layout after failed changes"

cd /
t_pass
