#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 60
#
# Attributes as root: chmod, chown/lchown, utimensat (exact nanoseconds,
# UTIME_NOW, UTIME_OMIT, times before 1970 and after 2038), mtime/ctime on
# write and truncate, ctime on chmod/chown/link/rename, directory mtime and
# ctime on create/unlink/mkdir/rmdir/rename, atime on read (relatime: a
# read updates atime when atime <= mtime), reads not touching mtime/ctime.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc

t_mount --tier ram=ram:64M
cd "$MNT" || t_fail cd
umask 022

tick() { sleep 0.05; }
# newer A B WHAT -- timestamp A must be later than B
newer() {
	[[ "$1" > "$2" ]] || t_fail "$3: $2 -> $1, expected a later time"
}
same() {
	[ "$1" = "$2" ] || t_fail "$3: changed from $2 to $1"
}

echo data >f || t_fail create

# --- chmod ---
c0=$(t_stat ctime f)
m0=$(t_stat mtime f)
tick
t_ok "$SC" chmod f 0640
t_eq "$(t_stat mode f)" 0640 "chmod 0640"
newer "$(t_stat ctime f)" "$c0" "ctime after chmod"
same "$(t_stat mtime f)" "$m0" "mtime after chmod"
for m in 0000 0777 4755 2755 1755 6711 7777 0400; do
	t_ok "$SC" chmod f "$m"
	t_eq "$(t_stat mode f)" "$m" "chmod $m"
done
mkdir dd && t_ok "$SC" chmod dd 1777
t_eq "$(t_stat mode dd)" 1777 "chmod on a directory"
t_ok "$SC" symlink f sl
t_ok "$SC" chmod sl 0604
t_eq "$(t_stat mode f)" 0604 "chmod through a symlink changes the target"

# --- chown (root) ---
c0=$(t_stat ctime f)
tick
t_ok "$SC" chown f 1234 5678
t_eq "$(t_stat uid f):$(t_stat gid f)" 1234:5678 "chown"
newer "$(t_stat ctime f)" "$c0" "ctime after chown"
t_ok "$SC" chown f -1 42
t_eq "$(t_stat uid f):$(t_stat gid f)" 1234:42 "chown -1 keeps the uid"
t_ok "$SC" chown f 7 -1
t_eq "$(t_stat uid f):$(t_stat gid f)" 7:42 "chown gid -1 keeps the gid"
t_ok "$SC" lchown sl 99 98
t_eq "$(t_lstat uid sl):$(t_lstat gid sl)" 99:98 "lchown changes the symlink"
t_eq "$(t_stat uid f):$(t_stat gid f)" 7:42 "lchown leaves the target"
t_ok "$SC" chown f 0 0

# --- utimensat ---
t_ok "$SC" utimens f 1000000000.123456789 1100000000.987654321
t_eq "$(t_stat atime f)" 1000000000.123456789 "atime set exactly"
t_eq "$(t_stat mtime f)" 1100000000.987654321 "mtime set exactly"
c0=$(t_stat ctime f)
tick
t_ok "$SC" utimens f omit 1200000000.5
t_eq "$(t_stat atime f)" 1000000000.123456789 "UTIME_OMIT keeps atime"
t_eq "$(t_stat mtime f)" 1200000000.500000000 "mtime set with atime omitted"
newer "$(t_stat ctime f)" "$c0" "ctime after utimens"
t_ok "$SC" utimens f 1300000000 omit
t_eq "$(t_stat atime f)" 1300000000.000000000 "atime set with mtime omitted"
t_eq "$(t_stat mtime f)" 1200000000.500000000 "UTIME_OMIT keeps mtime"
c0=$(t_stat ctime f)
tick
t_ok "$SC" utimens f omit omit
same "$(t_stat atime f):$(t_stat mtime f)" 1300000000.000000000:1200000000.500000000 "times after omit/omit"
now=$(date +%s)
t_ok "$SC" utimens f now now
for what in atime mtime; do
	v=$(t_stat $what f)
	v=${v%.*}
	if [ $((v - now)) -lt -2 ] || [ $((v - now)) -gt 2 ]; then
		t_fail "UTIME_NOW $what $v, now $now"
	fi
done
t_ok "$SC" utimens f -1000.25 4102444800.000000001
t_eq "$(t_stat mtime f)" 4102444800.000000001 "mtime after 2038"
t_eq "$(t_stat atime f)" -1000.250000000 "atime before 1970"
sync
echo 2 >/proc/sys/vm/drop_caches 2>/dev/null
t_eq "$(t_stat mtime f)" 4102444800.000000001 "mtime kept by the daemon"
t_ok "$SC" utimens f 1000000000 1000000000
t_ok "$SC" utimens sl 1000000001 1000000002
t_eq "$(t_stat mtime f)" 1000000002.000000000 "utimens follows a symlink"
touch -h -d @1000000003 sl || t_fail "touch -h"
t_eq "$(t_lstat mtime sl)" 1000000003.000000000 "utimens on the symlink itself"

# --- write and truncate move mtime and ctime ---
m0=$(t_stat mtime f)
c0=$(t_stat ctime f)
tick
echo more >>f || t_fail append
m1=$(t_stat mtime f)
c1=$(t_stat ctime f)
newer "$m1" "$m0" "mtime after write"
newer "$c1" "$c0" "ctime after write"
tick
t_ok "$SC" truncate f 2
m2=$(t_stat mtime f)
c2=$(t_stat ctime f)
newer "$m2" "$m1" "mtime after truncate down"
newer "$c2" "$c1" "ctime after truncate down"
tick
t_ok "$SC" ftruncate f 100000
newer "$(t_stat mtime f)" "$m2" "mtime after ftruncate up"
newer "$(t_stat ctime f)" "$c2" "ctime after ftruncate up"
tick
m3=$(t_stat mtime f)
: >f || t_fail "O_TRUNC"
newer "$(t_stat mtime f)" "$m3" "mtime after O_TRUNC"
t_eq "$(t_stat size f)" 0 "size after O_TRUNC"

# --- ctime on link and rename ---
c0=$(t_stat ctime f)
tick
ln f f2 || t_fail link
c1=$(t_stat ctime f)
newer "$c1" "$c0" "ctime after link"
tick
mv f2 f3 || t_fail rename
newer "$(t_stat ctime f)" "$c1" "ctime after rename"

# --- directory times ---
mkdir d || t_fail mkdir
step() { # step WHAT CMD... : CMD must move d's mtime and ctime
	local what=$1 dm dc
	shift
	dm=$(t_stat mtime d)
	dc=$(t_stat ctime d)
	tick
	"$@" >/dev/null || t_fail "$what failed"
	newer "$(t_stat mtime d)" "$dm" "dir mtime after $what"
	newer "$(t_stat ctime d)" "$dc" "dir ctime after $what"
}
step create touch d/a
step mkdir mkdir d/sub
step symlink ln -s a d/s
step mkfifo mkfifo d/p
step link ln d/a d/b
step "rename within" mv d/b d/c
step "rename out" mv d/c ./c-out
step "rename in" mv c-out d/c
step unlink rm d/c
step rmdir rmdir d/sub
dm=$(t_stat mtime d)
tick
echo x >d/a || t_fail write
t_stat ino d/a >/dev/null
same "$(t_stat mtime d)" "$dm" "dir mtime after writing a file in it"

# --- atime on read ---
printf 'some data to read\n' >r || t_fail create
t_ok "$SC" utimens r 1000000000 2000000000
m0=$(t_stat mtime r)
c0=$(t_stat ctime r)
tick
# a read that reaches the daemon (the written page is in the kernel's
# cache, and reads served there do not touch atime: README)
dd if=r of=/dev/null bs=4096 iflag=direct status=none || t_fail read
a1=$(t_stat atime r)
now=$(date +%s)
if [ "$a1" = 1000000000.000000000 ] || [ $((now - ${a1%.*})) -gt 5 ]; then
	t_fail "atime not updated by a read with atime <= mtime: $a1 (now $now)"
fi
same "$(t_stat mtime r)" "$m0" "mtime after read"
same "$(t_stat ctime r)" "$c0" "ctime after read"

cd /
t_pass
