#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: native
# TIMEOUT: 180
#
# Native files (issue 33): with --io native a new file keeps its bytes in
# a backing file of its own on one tier, and the kernel moves them
# itself (FUSE passthrough).  Checked here, on a RAM tier and a file
# tier, with the daemon's CPU time read from /proc:
#  - a file written and read through the kernel: its bytes, size,
#    blocks, layout and extents; the daemon saw none of it (no READ or
#    WRITE request counted);
#  - a native file that fills its tier: ENOSPC at write(2), and every
#    byte write(2) took reads back;
#  - opened twice at once (two descriptors, mmap through one, read
#    through the other), truncated, punched (fallocate), SEEK_DATA and
#    SEEK_HOLE, copy_file_range into a native and into a tiered file,
#    all while open;
#  - fio's verify (buffered and O_DIRECT) on both tiers;
#  - migrated between opens (tierctl migrate; the bytes follow), and a
#    migrate of an open one says it waits for the close (EBUSY) and the
#    move happens at the close;
#  - a writer other than root clears set-user-ID and set-group-ID;
#  - user.tierfs.io=tiered in a directory, and a quota above one, keep
#    new files tiered (so that EDQUOT reaches write(2));
#  - kill -9 of the daemon with native files open leaves nothing in the
#    file tier's directory;
#  - where passthrough cannot be had (here: --no-kernel-features), one
#    line in the log and every file goes through the daemon;
#  - a RAM tier above its high watermark: the migrator hands closed
#    native files down whole, the one opened longest ago first, and
#    leaves an open one where it is.
# Skips (77) where the kernel offers no passthrough.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
SC=$PROGS/sc
M=1048576
A=1001:1001
mkdir -p "$T/disk" || t_fail mkdir

mstat() { "$TIERCTL" stats "$MNT" | awk -v k="$1.$2" '$1 == k { print $2 }'; }
tstat() { "$TIERCTL" stats "$MNT" | awk -v k="tier.$1.$2" '$1 == k { print $2 }'; }
reqs() { "$TIERCTL" stats "$MNT" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }
t_xattr() { getfattr --absolute-names --only-values -n "$2" -- "$1"; }
layout() { t_xattr "$1" user.tierfs.layout; }

# no migrator until part 9: the fill below would have it move files
t_mount -o allow_other --io native --no-migrate --tier ram=ram:32M \
	--tier disk=file:"$T/disk":64M
if [ "$(mstat native passthrough)" != 1 ]; then
	grep 'io=native' "$T_LOG" >&2
	t_skip "the kernel offers no FUSE passthrough here"
fi
chmod 0777 "$MNT" || t_fail chmod

# ------------------------------------------------------------------
# 1. bytes through the kernel only
files0=$(mstat native files)
r0=$(reqs READ); w0=$(reqs WRITE)
t_check "$P" w -s 1 "$MNT/a" 0 $((4 * M)) >/dev/null
t_eq "$(mstat native files)" $((files0 + 1)) "native files after a create"
t_eq "$(t_stat size "$MNT/a")" $((4 * M)) "size"
t_eq "$(($(t_stat blocks "$MNT/a") * 512))" $((4 * M)) "blocks"
t_eq "$(layout "$MNT/a")" "ram=$((4 * M)) disk=0" "layout"
t_eq "$(t_xattr "$MNT/a" user.tierfs.extents)" "0 $((4 * M)) ram" "extents"
echo 3 >/proc/sys/vm/drop_caches
t_check "$P" v -s 1 "$MNT/a" 0 $((4 * M)) >/dev/null
t_eq "$(reqs READ)" "$r0" "READ requests the daemon saw"
t_eq "$(reqs WRITE)" "$w0" "WRITE requests the daemon saw"
[ "$(tstat ram native_bytes)" -ge $((4 * M)) ] ||
	t_fail "the RAM tier counts $(tstat ram native_bytes) native bytes"

# ------------------------------------------------------------------
# 2. a native file fills its tier: ENOSPC at write(2), nothing lost
python3 - "$MNT/fill" <<'EOF' || t_fail "fill"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o644)
block = bytes((i * 7) & 0xff for i in range(65536))
done = 0
try:
    while done < 64 << 20:
        done += os.write(fd, block)
    sys.exit("64 MiB went into a 32 MiB tier")
except OSError as e:
    if e.errno != errno.ENOSPC:
        sys.exit("write: %s, not ENOSPC" % e)
os.close(fd)
fd = os.open(sys.argv[1], os.O_RDONLY)
got = 0
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    if b != block[:len(b)]:
        sys.exit("byte mismatch at %d" % got)
    got += len(b)
if got != done or got < 16 << 20:
    sys.exit("read %d bytes back, write(2) took %d" % (got, done))
EOF
t_check rm "$MNT/fill"
t_wait_until 10 sh -c "[ \$($TIERCTL stats $MNT | awk '\$1 == \"tier.ram.native_bytes\" { print \$2 }') -le $((4 * M + M)) ]" ||
	t_fail "the RAM tier still counts the removed file's bytes"

# ------------------------------------------------------------------
# 3. while open: a second descriptor, mmap, truncate, punch, seek,
# copy_file_range into a native and into a tiered file
mkdir "$MNT/tiered" || t_fail mkdir
t_check setfattr -n user.tierfs.io -v tiered "$MNT/tiered"
python3 - "$MNT" <<'EOF' || t_fail "open-file operations"
import mmap, os, subprocess, sys
m = sys.argv[1]
p = m + "/b"
fd1 = os.open(p, os.O_CREAT | os.O_RDWR, 0o644)
fd2 = os.open(p, os.O_RDWR)
data = bytes((i * 13 + 5) & 0xff for i in range(3 << 20))
os.pwrite(fd1, data, 0)
if os.pread(fd2, len(data), 0) != data:
    sys.exit("second descriptor reads other bytes")
mm = mmap.mmap(fd1, len(data))
mm[4096:8192] = b"\xaa" * 4096
mm.flush()
mm.close()
if os.pread(fd2, 4096, 4096) != b"\xaa" * 4096:
    sys.exit("mmap write not seen by read")
data = data[:4096] + b"\xaa" * 4096 + data[8192:]
os.ftruncate(fd2, 2 << 20)
if os.fstat(fd1).st_size != 2 << 20 or os.stat(p).st_size != 2 << 20:
    sys.exit("size after ftruncate")
data = data[:2 << 20]
subprocess.run(["fallocate", "-p", "-o", str(1 << 20), "-l", str(256 << 10), p],
               check=True)
data = data[:1 << 20] + bytes(256 << 10) + data[(1 << 20) + (256 << 10):]
if os.pread(fd1, len(data) + 10, 0) != data:
    sys.exit("bytes after the punch")
if os.lseek(fd1, 0, os.SEEK_HOLE) != 1 << 20:
    sys.exit("SEEK_HOLE: %d" % os.lseek(fd1, 0, os.SEEK_HOLE))
if os.lseek(fd1, 1 << 20, os.SEEK_DATA) != (1 << 20) + (256 << 10):
    sys.exit("SEEK_DATA: %d" % os.lseek(fd1, 1 << 20, os.SEEK_DATA))
for dst in (m + "/c", m + "/tiered/c"):
    out = os.open(dst, os.O_CREAT | os.O_RDWR, 0o644)
    n, off = 0, 0
    while off < len(data):
        n = os.copy_file_range(fd1, out, len(data) - off, off, off)
        if n <= 0:
            break
        off += n
    if off != len(data) or os.pread(out, len(data) + 1, 0) != data:
        sys.exit("copy_file_range into %s: %d bytes" % (dst, off))
    os.close(out)
os.close(fd1)
os.close(fd2)
with open(p, "rb") as f:
    if f.read() != data:
        sys.exit("bytes after the close")
EOF
t_like "$(t_xattr "$MNT/tiered/c" user.tierfs.effective)" "*io=tiered*" \
	"the copy's effective policy"
t_eq "$(layout "$MNT/tiered/c")" "ram=$((2 * M)) disk=0" "tiered copy's layout"
# a native file's extents are its data ranges: the punched one has two
t_like "$(t_xattr "$MNT/b" user.tierfs.extents)" "0 1048576 ram*1310720 786432 ram*" \
	"extents of the punched file"

# ------------------------------------------------------------------
# 4. migrate between opens, and of an open file
t_check "$TIERCTL" migrate "$MNT/a" disk >/dev/null
t_eq "$(layout "$MNT/a")" "ram=0 disk=$((4 * M))" "layout after migrate to disk"
moves=$(mstat native moves)
t_eq "$moves" 1 "native moves"
t_check "$P" v -s 1 "$MNT/a" 0 $((4 * M)) >/dev/null
# the file tier's backing file is nameless: nothing in its directory
t_eq "$(find "$T/disk" -type f -size +0 | wc -l)" 0 "named files in the file tier"
exec 7<"$MNT/a"
out=$(setfattr -n user.tierfs.ctl.migrate -v ram "$MNT/a" 2>&1) &&
	t_fail "a migrate of an open native file succeeded at once"
t_like "$out" "*busy*" "migrate of an open native file"
t_eq "$(layout "$MNT/a")" "ram=0 disk=$((4 * M))" "layout while open"
exec 7<&-
t_wait_until 10 sh -c "[ \"\$(getfattr --absolute-names --only-values -n user.tierfs.layout '$MNT/a')\" = 'ram=$((4 * M)) disk=0' ]" ||
	t_fail "the move after the close did not happen: $(layout "$MNT/a")"
t_check "$P" v -s 1 "$MNT/a" 0 $((4 * M)) >/dev/null
# a file written on the file tier (pinned there), read back cold
mkdir "$MNT/slow" || t_fail mkdir
t_check setfattr -n user.tierfs.pin -v disk "$MNT/slow"
t_check "$P" w -s 2 "$MNT/slow/f" 0 $((3 * M)) >/dev/null
t_eq "$(layout "$MNT/slow/f")" "ram=0 disk=$((3 * M))" "pinned native file"
echo 3 >/proc/sys/vm/drop_caches
t_check "$P" v -s 2 "$MNT/slow/f" 0 $((3 * M)) >/dev/null
# fio's own verify, buffered and O_DIRECT, on both tiers
if command -v fio >/dev/null; then
	for d in "$MNT" "$MNT/slow"; do
		for direct in 0 1; do
			out=$(fio --name=v --filename="$d/fio.$direct" --size=8M \
				--rw=randwrite --bs=4k --direct=$direct \
				--ioengine=psync --verify=crc32c --do_verify=1 \
				--verify_fatal=1 --output-format=terse 2>&1) ||
				t_fail "fio verify in $d (direct=$direct): $out"
			rm -f "$d/fio.$direct"
		done
	done
else
	echo "fio not installed: its verify runs are left out"
fi

# ------------------------------------------------------------------
# 5. set-user-ID and set-group-ID cleared by another writer
t_check "$P" w -s 3 "$MNT/s" 0 4096 >/dev/null
t_check chown 1001:1001 "$MNT/s"
t_check chmod 6775 "$MNT/s"
t_check t_as $A sh -c "echo x >> '$MNT/s'"
t_eq "$(stat -c %a "$MNT/s")" 775 "mode after a write by its owner"

# ------------------------------------------------------------------
# 6. a quota keeps new files tiered: EDQUOT at write(2)
mkdir "$MNT/q" || t_fail mkdir
t_ok "$SC" setxattr "$MNT/q" trusted.tierfs.quota 2M none
files0=$(mstat native files)
out=$(dd if=/dev/zero of="$MNT/q/f" bs=1M count=4 2>&1) &&
	t_fail "4 MiB under a 2 MiB quota: $out"
t_like "$out" "*Disk quota exceeded*" "dd past the quota"
t_eq "$(mstat native files)" "$files0" "native files after a create under a quota"

# ------------------------------------------------------------------
# 7. kill -9 with native files open: nothing left in the tier directory
exec 7<"$MNT/slow/f"
exec 8>"$MNT/slow/g"
kill -9 "$T_PID"
wait "$T_PID" 2>/dev/null
exec 7<&- 8>&-
umount -l "$MNT" 2>/dev/null
T_PID=
# the backing files were nameless: only the dead mount's lock is left,
# which the next mount on the tier removes with its directory
t_eq "$(find "$T/disk" -type f -size +0 | wc -l)" 0 "files with data left in the file tier"
dead=$(find "$T/disk" -mindepth 1 -maxdepth 1)

# ------------------------------------------------------------------
# 8. no passthrough: one line, and files through the daemon
t_mount --io native --no-kernel-features --tier ram=ram:32M \
	--tier disk=file:"$T/disk":64M
[ ! -e "$dead" ] || t_fail "the dead mount's directory $dead is still there"
t_eq "$(mstat native passthrough)" 0 "passthrough with --no-kernel-features"
t_eq "$(grep -c 'io=native: --no-kernel-features; files go through the daemon' "$T_LOG")" 1 \
	"the fallback's log line"
t_check "$P" w -s 4 "$MNT/f" 0 $M >/dev/null
t_check "$P" v -s 4 "$MNT/f" 0 $M >/dev/null
t_eq "$(mstat native files)" 0 "native files without passthrough"

# ------------------------------------------------------------------
# 9. the watermarks: closed native files go down whole, oldest first
t_remount --io native --tier ram=ram:32M --tier disk=file:"$T/disk":64M \
	--high-watermark 60 --low-watermark 40
exec 7>"$MNT/open"
t_check "$P" w -s 10 "$MNT/open" 0 $((6 * M)) >/dev/null
for i in 1 2 3; do
	t_check "$P" w -s $((10 + i)) "$MNT/f$i" 0 $((5 * M)) >/dev/null
	cat "$MNT/f$i" >/dev/null # opened again: f3 last
done
# 21 MiB on a 32 MiB tier (66%): down to 40% (12.8 MiB) takes f1 and
# f2; the open file stays
t_wait_until 30 sh -c "[ \"\$(getfattr --absolute-names --only-values -n user.tierfs.layout '$MNT/f2')\" = 'ram=0 disk=$((5 * M))' ]" ||
	t_fail "f2 not demoted: $(layout "$MNT/f2"); stats: $("$TIERCTL" stats "$MNT" | grep -E '^native|tier.ram.(used|native)')"
t_eq "$(layout "$MNT/f1")" "ram=0 disk=$((5 * M))" "f1 (opened first) demoted"
t_eq "$(layout "$MNT/f3")" "ram=$((5 * M)) disk=0" "f3 (opened last) stays"
t_eq "$(layout "$MNT/open")" "ram=$((6 * M)) disk=0" "the open file stays"
exec 7>&-
for i in 1 2 3; do
	t_check "$P" v -s $((10 + i)) "$MNT/f$i" 0 $((5 * M)) >/dev/null
done
t_check "$P" v -s 10 "$MNT/open" 0 $((6 * M)) >/dev/null
t_pass
