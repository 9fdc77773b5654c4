#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: readdir
# TIMEOUT: 400
#
# A directory of 100,000 entries: created, listed with getdents64 (every
# name exactly once, no strays), listed by ls, looked up, thinned out by
# removing every 10th entry and listed again.  Each phase must finish in
# reasonable time (a limit per phase, generous for a 2-core machine).
. "$(dirname "$0")/lib.sh"
t_need_progs
D=$PROGS/dirtest
N=100000

# phase LIMIT WHAT CMD... -- run CMD, fail when it fails or takes > LIMIT s
phase() {
	local limit=$1 what=$2 start ms out
	shift 2
	start=$(date +%s%N)
	out=$("$@") || t_fail "$what: $out"
	ms=$((($(date +%s%N) - start) / 1000000))
	echo "$what: $out (${ms} ms)"
	[ "$ms" -le $((limit * 1000)) ] || t_fail "$what took more than ${limit}s"
}

t_mount --tier ram=ram:64M
mkdir "$MNT/big" || t_fail mkdir

phase 150 "create $N" "$D" mk "$MNT/big" $N e
phase 30 "getdents64 listing" "$D" ls "$MNT/big" $N e
t_eq "$(ls -f "$MNT/big" | wc -l)" $((N + 2)) "ls -f line count"
t_eq "$(ls "$MNT/big" | sort -u | wc -l)" $N "distinct names from ls"
# lookups of entries spread over the directory
for i in 0 1 4999 50000 77777 99999; do
	t_ok "$PROGS/sc" stat "$MNT/big/e$(printf %07d $i)"
done
t_errno ENOENT "$PROGS/sc" stat "$MNT/big/e$(printf %07d $N)"
# listing again after the kernel forgot the inodes
sync
echo 2 >/proc/sys/vm/drop_caches 2>/dev/null
phase 30 "listing after dropping caches" "$D" ls "$MNT/big" $N e
phase 60 "remove every 10th" "$D" rm "$MNT/big" $N e 10
phase 30 "listing after removal" "$D" ls "$MNT/big" $N e 10
t_eq "$(t_stat nlink "$MNT/big")" 2 "nlink of a dir with only files"

t_pass
