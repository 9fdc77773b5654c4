#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: data
# TIMEOUT: 300
# IO: tiered --page-cache drop (the daemon's reads)
#
# --page-cache=drop (README "Memory"): every open is direct I/O, so the
# kernel keeps no second copy of the data the tiers hold.  On a 8M RAM
# tier over a file tier (most of it spills): buffered and O_DIRECT
# writes by two writers read back exact, the files have no page in the
# page cache after writing and reading them (with keep, the default,
# they do), a shared mmap writes and reads through (the kernel's page
# cache of that file only), a full mount fails the write(2) itself with
# ENOSPC and the bytes before it stay, the mode shows in the stats, and
# a bad mode is one line and no mount.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
command -v fincore >/dev/null || t_skip "no fincore (util-linux)"
command -v python3 >/dev/null || t_skip "no python3"
mkdir -p "$T/ft"
mstat() {
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v k="$1" '$1 == "mount" { for (i = 2; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
# resident page-cache bytes of FILE
cached() { fincore -rbn -o RES "$1" | awk '{ s += $1 } END { print s + 0 }'; }

# the default keeps the cache: the check below can tell the difference
t_mount --tier ram=ram:8M --tier f=file:"$T/ft":256M
t_eq "$(mstat page_cache)" keep "page_cache in the stats by default"
t_check "$P" -b 1M -s 3 w "$MNT/k" 0 16M >/dev/null
t_check "$P" -s 3 v "$MNT/k" 0 16M >/dev/null
[ "$(cached "$MNT/k")" -gt 0 ] || t_fail "with keep, a file just read has no cached page"

t_remount --page-cache drop --tier ram=ram:8M --tier f=file:"$T/ft":256M
t_eq "$(mstat page_cache)" drop "page_cache in the stats with --page-cache drop"
t_check "$P" -b 1M -s 3 w "$MNT/k" 0 16M >/dev/null
t_check "$P" -s 3 v "$MNT/k" 0 16M >/dev/null
t_check "$P" -j 2 -b 1M -s 5 -f w "$MNT/a" 0 48M >/dev/null
t_check "$P" -d -b 1M -s 6 w "$MNT/b" 0 16M >/dev/null
# unaligned, across the RAM/file boundary
t_check "$P" -b 777777 -s 7 w "$MNT/a" 5000 20M >/dev/null
t_check "$P" -j 2 -s 7 v "$MNT/a" 5000 20M >/dev/null
t_check "$P" -d -s 5 v "$MNT/a" 24M 24M >/dev/null
t_check "$P" -s 6 v "$MNT/b" 0 16M >/dev/null
for f in k a b; do
	t_eq "$(cached "$MNT/$f")" 0 "page-cache bytes of $f with --page-cache drop"
done
l=$(getfattr --only-values -n user.tierfs.layout "$MNT/a" 2>/dev/null)
t_like "$l" "*f=[1-9]*" "file a on the file tier"

# a shared mmap: stores reach the file, and a read(2) sees them
python3 - "$MNT/m" <<'PY' || t_fail "shared mmap on a --page-cache drop mount"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 1 << 20)
m = mmap.mmap(fd, 1 << 20)
m[4096:4096 + 5] = b"hello"
m.flush()
m.close()
assert os.pread(fd, 5, 4096) == b"hello", "read(2) after msync"
os.pwrite(fd, b"world", 8192)
m = mmap.mmap(fd, 1 << 20)
assert m[8192:8197] == b"world", "mmap after write(2)"
m.close()
os.close(fd)
PY
rm -f "$MNT/k" "$MNT/a" "$MNT/b" "$MNT/m"

# full: the write(2) itself gets ENOSPC, and what came before stays
t_remount --page-cache drop --tier ram=ram:8M
out=$("$P" -b 1M -s 9 w "$MNT/full" 0 64M)
t_like "$out" "ERR write ENOSPC*" "writing 64M into 8M"
done_b=$(sed -n 's/.* done \([0-9]*\).*/\1/p' <<<"$out")
[ "${done_b:-0}" -gt 0 ] || t_fail "nothing written before ENOSPC: $out"
t_check "$P" -s 9 v "$MNT/full" 0 "$done_b" >/dev/null
t_unmount

# a bad mode: one line, no mount
out=$("$TIERFS_BIN" --page-cache sometimes --tier ram=ram:8M "$MNT" 2>&1)
rc=$?
[ $rc -ne 0 ] || t_fail "--page-cache sometimes was accepted"
t_eq "$(wc -l <<<"$out")" 1 "lines for a bad --page-cache: $out"
t_like "$out" "*use keep, drop or only" "the message for a bad --page-cache"
mountpoint -q "$MNT" && t_fail "mounted with a bad --page-cache"
t_pass
