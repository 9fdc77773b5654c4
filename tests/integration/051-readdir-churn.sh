#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: readdir
# TIMEOUT: 120
#
# readdir while the directory changes: a child process keeps creating and
# removing entries and the lister removes and adds entries between
# getdents64 calls (small buffer, so many calls per listing).  Every entry
# that exists for the whole listing appears exactly once, no name appears
# twice, and a final quiet listing matches the directory exactly.  rm -rf
# of a tree (readdir interleaved with unlink) removes everything.
. "$(dirname "$0")/lib.sh"
t_need_progs

t_mount --tier ram=ram:64M
mkdir "$MNT/churn" || t_fail mkdir
t_check "$PROGS/dirtest" churn "$MNT/churn" 2000 20

# a second run with 64K extents and fewer entries (other offsets)
t_remount --tier ram=ram:16M --extent-size 64K
mkdir "$MNT/c2" || t_fail mkdir
t_check "$PROGS/dirtest" churn "$MNT/c2" 300 20

# rm -rf of a large tree while it is listed (readdir + unlink interleaved)
mkdir -p "$MNT/tree" || t_fail mkdir
for d in $(seq 20); do
	mkdir "$MNT/tree/d$d" || t_fail mkdir
	"$PROGS/dirtest" mk "$MNT/tree/d$d" 200 f >/dev/null || t_fail "mk d$d"
done
rm -rf "$MNT/tree" || t_fail "rm -rf of a tree"
[ ! -e "$MNT/tree" ] || t_fail "tree still there after rm -rf"

t_pass
