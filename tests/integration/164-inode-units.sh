#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: limits
# TIMEOUT: 300
#
# Issue 16, items 8, 9 and 11: what metadata costs is counted in inode
# units (fs/inode.h), and a quota may cap them.
# - item 8: each hard link takes a unit of --max-inodes, so a link loop
#   stops with ENOSPC at the limit and `df -i` counts the links; removing
#   one name of many gives its unit back at once;
# - item 9: a symlink takes one more unit per whole 256 bytes of its
#   target (4095 bytes: 16), so a long-symlink loop stops with ENOSPC;
# - item 11: trusted.tierfs.quota=inodes:N caps the names below a
#   directory: alice's creates of every kind fail with EDQUOT past it
#   while bob (his own quota, or none) still creates; names already there
#   are counted when the quota is set; bad values fail with EINVAL;
#   `df -i DIR`, user.tierfs.quota and `tierctl quota` (text and JSON)
#   show the use; no name of any type moves across quota trees (EXDEV);
# - in a 300M memory cgroup (v2 with the memory controller, else v1; that
#   part is skipped otherwise, and under ThreadSanitizer) the default limit
#   follows the cgroup, and a link loop and a long-symlink loop by one
#   user, with and without a quota, end with ENOSPC/EDQUOT and the daemon
#   alive -- where the issue saw it OOM-killed.
. "$(dirname "$0")/lib.sh"
t_need_progs
command -v setpriv >/dev/null || t_skip "setpriv missing"
command -v setfattr >/dev/null || t_skip "setfattr missing"
: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$TIERCTL" ] || t_fail "tierctl binary '$TIERCTL' missing (set TIERCTL)"

A=1001:1001 # alice
B=1002:1002 # bob
Q=trusted.tierfs.quota
M=$((1024 * 1024))
mkdir "$T/bin" && cp "$PROGS/sc" "$T/bin/" && cp "$TIERCTL" "$T/bin/tierctl" ||
	t_fail "copy programs"
chmod 0755 "$T/bin"
SC=$T/bin/sc
TC=$T/bin/tierctl

# stat KEY of the mount record (user.tierfs.stats on the root)
mount_stat() {
	local line kv
	line=$(getfattr --absolute-names --only-values -n user.tierfs.stats "$MNT" | grep '^mount ') ||
		t_fail "no mount record in the stats"
	for kv in $line; do
		if [ "${kv%%=*}" = "$1" ]; then
			echo "${kv#*=}"
			return 0
		fi
	done
	t_fail "no key $1 in '$line'"
}
alive() {
	kill -0 "$T_PID" 2>/dev/null || t_fail "daemon died ($1)"
	stat "$MNT" >/dev/null 2>&1 || t_fail "mount gone after $1"
}
# "itotal:iused:iavail" of df -i PATH
dfi() { df --output=itotal,iused,iavail "$1" | tail -1 | awk '{ print $1 ":" $2 ":" $3 }'; }
iused() { df --output=iused "$1" | tail -1 | tr -d ' '; }
# the use against the limits, without the figures of the job report
# (KEY=N, no "/"; 165-quota-report.sh)
usage() { getfattr --absolute-names --only-values -n user.tierfs.quota "$1" |
	sed -E ':a; s/ [a-z_]+=[0-9]+( |$)/\1/; ta'; }
no_quota() { ! getfattr --absolute-names -n "$Q" -- "$1" >/dev/null 2>&1; }

# --- item 8: links take inode units ---
t_mount -o allow_other --tier ram=ram:64M --max-inodes 100
chmod 0777 "$MNT" || t_fail chmod
mkdir "$MNT/d" && chmod 0777 "$MNT/d" || t_fail "mkdir d"
t_eq "$(dfi "$MNT")" "100:2:98" "df -i of a fresh mount with one directory"
t_ok t_as $A "$SC" open "$MNT/d/f" creat,w 0644
t_eq "$(t_as $A "$SC" links "$MNT/d/f" "$MNT/d/l" 1000)" "ENOSPC 97" "links up to --max-inodes"
t_eq "$(dfi "$MNT")" "100:100:0" "df -i counts the links"
t_eq "$(mount_stat inodes)" 100 "inodes in the stats"
t_eq "$(stat -c %h "$MNT/d/f")" 98 "link count"
t_errno ENOSPC t_as $A "$SC" open "$MNT/d/g" creat,w 0644
t_errno ENOSPC t_as $A "$SC" link "$MNT/d/f" "$MNT/d/one-more"
# a name of many goes: its unit is back at once
for i in $(seq 0 9); do rm "$MNT/d/l$i" || t_fail "rm l$i"; done
t_eq "$(dfi "$MNT")" "100:90:10" "df -i after 10 of the names went"
t_eq "$(t_as $A "$SC" links "$MNT/d/f" "$MNT/d/m" 1000)" "ENOSPC 10" "links again"
alive "link loop"
rm -r "$MNT/d" || t_fail "rm -r d"
t_wait_until 20 sh -c "[ \$(df --output=iused '$MNT' | tail -1) -eq 1 ]" ||
	t_fail "units not given back after rm: $(dfi "$MNT")"

# --- item 9: long symlink targets take units ---
mkdir "$MNT/d" && chmod 0777 "$MNT/d" || t_fail "mkdir d"
# 2 used; 4095 bytes take 16 units: 6 fit (98), the 7th would pass 100
t_eq "$(t_as $A "$SC" symlinks 4095 "$MNT/d/s" 1000)" "ENOSPC 6" "long symlinks up to --max-inodes"
t_eq "$(dfi "$MNT")" "100:98:2" "df -i counts the targets"
t_eq "$(t_lstat size "$MNT/d/s5")" 4095 "size of a long symlink"
t_eq "$(readlink "$MNT/d/s5" | wc -c)" 4096 "target read back"
# a 512-byte target takes 3, a 255-byte one 1
t_errno ENOSPC t_as $A "$SC" symlink "$(head -c 512 /dev/zero | tr '\0' t)" "$MNT/d/t512"
t_eq "$(t_as $A "$SC" symlinks 255 "$MNT/d/t" 10)" "ENOSPC 2" "short symlinks in the rest"
t_eq "$(dfi "$MNT")" "100:100:0" "df -i at the limit"
alive "symlink loop"
rm -r "$MNT/d" || t_fail "rm -r d"
t_wait_until 20 sh -c "[ \$(df --output=iused '$MNT' | tail -1) -eq 1 ]" ||
	t_fail "units not given back after rm: $(dfi "$MNT")"

# --- item 11: inode quotas ---
t_remount -o allow_other --tier ram=ram:64M --max-inodes 1000
chmod 0755 "$MNT" || t_fail chmod
mkdir "$MNT/job1" "$MNT/job2" "$MNT/open" && chown 1001:1001 "$MNT/job1" &&
	chown 1002:1002 "$MNT/job2" && chmod 0777 "$MNT/open" || t_fail "job dirs"
for bad in inodes:abc inodes: inodes:1X inodes:1.5K inodes:-1 INODES:5 \
	inodes:1M,inodes:2M inodes:5, inodes; do
	t_errno EINVAL "$SC" setxattr "$MNT/job1" "$Q" "$bad" none
done
no_quota "$MNT/job1" || t_fail "a bad value set a quota"
t_errno EPERM t_as $A "$SC" setxattr "$MNT/job1" "$Q" inodes:10 none
# names there before the quota count
mkdir "$MNT/job1/sub" && chown 1001:1001 "$MNT/job1/sub" || t_fail "job1/sub"
t_ok t_as $A "$SC" open "$MNT/job1/sub/a" creat,w 0644
t_ok t_as $A "$SC" link "$MNT/job1/sub/a" "$MNT/job1/a2"
t_ok "$SC" setxattr "$MNT/job1" "$Q" inodes:10 none
t_ok "$SC" setxattr "$MNT/job2" "$Q" total:10M,inodes:20 none
t_eq "$(usage "$MNT/job1")" "total=0/- ram=0/- inodes=3/10 dir=/job1" "usage counted when set"
t_eq "$(getfattr --absolute-names --only-values -n "$Q" "$MNT/job1")" inodes:10 "the value as set"
# alice fills hers
t_eq "$(t_as $A "$SC" symlinks 10 "$MNT/job1/s" 100)" "EDQUOT 7" "alice's symlinks to the quota"
t_errno EDQUOT t_as $A "$SC" open "$MNT/job1/f" creat,w 0644
t_errno EDQUOT t_as $A "$SC" mkdir "$MNT/job1/dir" 0755
t_errno EDQUOT t_as $A "$SC" mknod "$MNT/job1/fifo" fifo 0644
t_errno EDQUOT t_as $A "$SC" link "$MNT/job1/a2" "$MNT/job1/a3"
t_errno EDQUOT t_as $A "$SC" symlink x "$MNT/job1/sub/s"
# bob, under his own quota and under none, still creates
t_ok t_as $B "$SC" open "$MNT/job2/g" creat,w 0644
t_ok t_as $B "$SC" mkdir "$MNT/job2/d" 0755
t_ok t_as $B "$SC" open "$MNT/open/b" creat,w 0644
# df -i DIR: the quota's limit and use; the mount elsewhere
t_eq "$(dfi "$MNT/job1")" "10:10:0" "df -i of alice's quota"
t_eq "$(dfi "$MNT/job1/sub")" "10:10:0" "df -i below alice's quota"
t_eq "$(dfi "$MNT/job2")" "20:2:18" "df -i of bob's quota"
t_eq "$(dfi "$MNT")" "1000:17:983" "df -i of the mount"
t_eq "$(usage "$MNT/job1")" "total=0/- ram=0/- inodes=10/10 dir=/job1" "alice's usage"
t_eq "$(usage "$MNT/job2")" "total=0/$((10 * M)) ram=0/- inodes=2/20 dir=/job2" "bob's usage"
out=$(t_as $A "$TC" quota "$MNT/job1") || t_fail "tierctl quota: $out"
t_like "$out" "*quota on /job1*inodes *10 of 10 *100.0%*" "tierctl quota"
out=$(t_as $B "$TC" quota "$MNT/job2") || t_fail "tierctl quota: $out"
t_like "$out" "*inodes *2 of 20 *10.0%*" "tierctl quota of bob's"
out=$("$TC" quota --json --compact "$MNT/job1") || t_fail "tierctl quota --json: $out"
t_like "$out" '*"dir":"/job1",*"inodes":{"used":10,"limit":10}*' "tierctl quota --json"
# names of any type stay in their tree
t_errno EXDEV "$SC" rename "$MNT/job1/s0" "$MNT/job2/s0"
t_errno EXDEV "$SC" rename "$MNT/job1/s0" "$MNT/open/s0"
t_errno EXDEV "$SC" link "$MNT/job1/s0" "$MNT/job2/s0"
t_ok "$SC" rename "$MNT/job1/s0" "$MNT/job1/sub/s0"
# removing gives room back at once; a removed directory too
t_as $A rm "$MNT/job1/s1" "$MNT/job1/s2" || t_fail "rm s1 s2"
t_eq "$(dfi "$MNT/job1")" "10:8:2" "df -i of alice's after rm"
t_ok t_as $A "$SC" mkdir "$MNT/job1/dir" 0755
t_ok t_as $A "$SC" mknod "$MNT/job1/fifo" fifo 0644
t_errno EDQUOT t_as $A "$SC" open "$MNT/job1/f" creat,w 0644
t_as $A rmdir "$MNT/job1/dir" || t_fail rmdir
t_ok t_as $A "$SC" open "$MNT/job1/f" creat,w 0644
# a long target takes its units from the quota too (1 + 300 / 256)
t_as $A rm "$MNT/job1/f" || t_fail "rm f"
t_errno EDQUOT t_as $A "$SC" symlink "$(head -c 300 /dev/zero | tr '\0' t)" "$MNT/job1/long"
# lifted: counted, not binding
setfattr -x "$Q" "$MNT/job1" || t_fail "remove the quota"
t_ok t_as $A "$SC" symlink "$(head -c 300 /dev/zero | tr '\0' t)" "$MNT/job1/long"
t_eq "$(usage "$MNT/job1" 2>/dev/null)" "" "no quota shown once removed"
t_ok "$SC" setxattr "$MNT/job1" "$Q" ram:1M,total:2M,inodes:100 none
t_eq "$(usage "$MNT/job1")" "total=0/$((2 * M)) ram=0/$M inodes=11/100 dir=/job1" "set again"
alive "quotas"

# --- in a memory cgroup: the loops end in errors, not in the OOM killer ---
CG=
cg_cleanup() {
	local rc=$?
	[ -n "$CG" ] && rmdir "$CG" 2>/dev/null
	return $rc
}
trap 'cg_cleanup; t_cleanup' EXIT
# as 160-limits.sh: cgroup v2 memory.max, else v1 memory.limit_in_bytes
cg_try_v2() {
	local self
	grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null || return 1
	self=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	# a sibling of ours (no internal processes in a cgroup with children)
	CG=/sys/fs/cgroup${self%/*}/tierfs-164.$$
	mkdir "$CG" 2>/dev/null || { CG=; return 1; }
	if ! echo $((300 * M)) >"$CG/memory.max" 2>/dev/null; then
		rmdir "$CG"
		CG=
		return 1
	fi
}
cg_try_v1() {
	local self mnt
	mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	[ -n "$mnt" ] || return 1
	self=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
	CG=$mnt${self%/}/tierfs-164.$$
	mkdir "$CG" 2>/dev/null || { CG=; return 1; }
	if ! echo $((300 * M)) >"$CG/memory.limit_in_bytes" 2>/dev/null; then
		rmdir "$CG"
		CG=
		return 1
	fi
}
if ldd "$TIERFS_BIN" 2>/dev/null | grep -q libtsan; then
	echo "note: ThreadSanitizer build: the memory cgroup part is skipped"
elif ! cg_try_v2 && ! cg_try_v1; then
	echo "note: no memory cgroup could be made here; cgroup part skipped"
else
	cat >"$T/incg" <<-EOF
		#!/bin/sh
		echo \$\$ >"$CG/cgroup.procs" || exit 99
		exec "$TIERFS_BIN" "\$@"
	EOF
	chmod 0755 "$T/incg"
	t_unmount
	TIERFS_BIN=$T/incg t_mount -o allow_other --tier ram=ram:16M
	grep -q "tierfs-164.$$" "/proc/$T_PID/cgroup" || t_fail "daemon not in the cgroup"
	# the default: one unit per 8 KiB of the cgroup's 300M
	max=$(mount_stat max_inodes)
	t_eq "$max" $((300 * M / 8192)) "default max_inodes in the cgroup"
	chmod 0777 "$MNT"
	mkdir "$MNT/d" && chmod 0777 "$MNT/d" || t_fail "mkdir d"
	t_ok t_as $A "$SC" open "$MNT/d/f" creat,w 0644
	name=$(head -c 200 /dev/zero | tr '\0' n) # long names, as the issue's
	out=$(t_as $A "$SC" links "$MNT/d/f" "$MNT/d/$name" 1000000)
	t_eq "$out" "ENOSPC $((max - 3))" "link loop in the cgroup"
	alive "link loop in a memory cgroup"
	t_eq "$(dfi "$MNT")" "$max:$max:0" "df -i after the link loop"
	echo "daemon RSS after $((max - 3)) links: $(mount_stat rss)"
	rm -r "$MNT/d" || t_fail "rm -r d"
	t_wait_until 30 sh -c "[ \$(df --output=iused '$MNT' | tail -1) -eq 1 ]" ||
		t_fail "units not given back: $(dfi "$MNT")"
	mkdir "$MNT/d" && chmod 0777 "$MNT/d" || t_fail "mkdir d"
	out=$(t_as $A "$SC" symlinks 4095 "$MNT/d/s" 1000000)
	t_eq "$out" "ENOSPC $(((max - 2) / 16))" "long-symlink loop in the cgroup"
	alive "long-symlink loop in a memory cgroup"
	echo "daemon RSS after $(((max - 2) / 16)) long symlinks: $(mount_stat rss)"
	rm -r "$MNT/d" || t_fail "rm -r d"
	t_wait_until 30 sh -c "[ \$(df --output=iused '$MNT' | tail -1) -eq 1 ]" ||
		t_fail "units not given back: $(dfi "$MNT")"
	# alice under a quota: EDQUOT, and bob still has room
	mkdir "$MNT/job" && chown 1001:1001 "$MNT/job" || t_fail "mkdir job"
	t_ok "$SC" setxattr "$MNT/job" "$Q" inodes:2000 none
	t_ok t_as $A "$SC" open "$MNT/job/f" creat,w 0644
	t_eq "$(t_as $A "$SC" links "$MNT/job/f" "$MNT/job/l" 1000000)" "EDQUOT 1999" \
		"alice's link loop under her quota"
	t_eq "$(t_as $A "$SC" symlinks 4095 "$MNT/job/s" 1000000)" "EDQUOT 0" \
		"alice's symlink loop under her quota"
	t_ok t_as $B "$SC" open "$MNT/bob" creat,w 0644
	alive "loops under a quota in a memory cgroup"
	t_unmount
	rmdir "$CG" || t_fail "cgroup busy after unmount"
	CG=
fi
t_pass
