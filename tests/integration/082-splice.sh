#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: data
# TIMEOUT: 300
# IO: tiered WRITEs spliced into tier memory, spilling
#
# Splice on /dev/fuse (fs/kernel.c): a WRITE's data stays in a pipe and
# is read from it straight into the RAM tier, or through a bounce buffer
# into the file tier.  Every way a WRITE is made -- writeback of cached
# pages, O_DIRECT, write-through of unaligned buffered writes (up to 255
# pieces of pages per request), a write by a user without CAP_FSETID that
# must clear suid/sgid -- on a 8M RAM tier over a file tier, so that most
# of it spills; all read back by the daemon (O_DIRECT) and compared, the
# same writes with --no-splice give the same bytes.  Over io_uring there
# is no splice; the writes are checked all the same.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
mkdir -p "$T/ft"
mstat() {
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v k="$1" '$1 == "mount" { for (i = 2; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
spliced_if_dev() {
	local n
	n=$(mstat spliced_writes)
	if [ "$(mstat transport)" = dev ]; then
		[ "${n:-0}" -gt 0 ] || t_fail "$1: no WRITE came through the splice pipe on /dev/fuse"
	else
		t_eq "$n" 0 "$1: spliced writes over io_uring"
	fi
}

t_mount -o allow_other --transport dev --tier ram=ram:8M --tier f=file:"$T/ft":256M
# writeback of cached pages, two writers, 1M chunks round robin
t_check "$P" -j 2 -b 1M -s 5 -f w "$MNT/a" 0 64M >/dev/null
# O_DIRECT: each write(2) one WRITE
t_check "$P" -d -b 1M -s 6 w "$MNT/b" 0 16M >/dev/null
t_check "$P" -d -s 5 v "$MNT/a" 0 64M >/dev/null
t_check "$P" -d -s 6 v "$MNT/b" 0 16M >/dev/null
spliced_if_dev "writeback and O_DIRECT"
# overwrite in place across both tiers, unaligned
t_check "$P" -b 777777 -s 7 -f w "$MNT/a" 5000 20M >/dev/null
t_check "$P" -s 7 v "$MNT/a" 5000 20M >/dev/null
t_check "$P" -d -s 5 v "$MNT/a" 24M 40M >/dev/null

# a write by a user without CAP_FSETID clears suid and sgid: the kernel
# says so in the WRITE's flags, which the pipe must not hide
chmod 0755 "$MNT" || t_fail "chmod root"
: >"$MNT/s"
chmod 6777 "$MNT/s"
head -c 3M /dev/urandom >"$T/rand"
chmod o+r "$T/rand"
t_as 65534:65534 dd if="$T/rand" of="$MNT/s" bs=1M conv=notrunc status=none ||
	t_fail "write as nobody"
t_eq "$(stat -c %a "$MNT/s")" 777 "mode after a write by a user without CAP_FSETID"
cmp -s "$T/rand" "$MNT/s" || t_fail "the suid file's bytes differ"
a_sum=$(md5sum <"$MNT/a")

# write-through: every write(2) becomes WRITEs as large as the kernel
# makes them, unaligned, so that each fills the most pages a pipe holds
t_remount --transport dev --no-writeback-cache --tier ram=ram:8M --tier f=file:"$T/ft":256M
t_check "$P" -b 1100000 -s 8 w "$MNT/c" 3 40M >/dev/null
t_check "$P" -s 8 v "$MNT/c" 3 40M >/dev/null
spliced_if_dev "write-through"

# the old way: the same writes, the same bytes, nothing spliced
t_remount --transport dev --no-splice --tier ram=ram:8M --tier f=file:"$T/ft":256M
t_check "$P" -j 2 -b 1M -s 5 -f w "$MNT/a" 0 64M >/dev/null
t_check "$P" -b 777777 -s 7 -f w "$MNT/a" 5000 20M >/dev/null
t_eq "$(md5sum <"$MNT/a")" "$a_sum" "the same writes with --no-splice"
t_eq "$(mstat spliced_writes)" 0 "spliced writes with --no-splice"
t_pass
