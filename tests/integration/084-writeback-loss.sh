#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: capacity
# TIMEOUT: 300
# IO: tiered the writeback cache
#
# Nothing acknowledged is lost at the edges of the writeback cache
# (issue 16, items 1, 2, 4 and 13).  A small mount, RAM 32M over a file
# tier of 64M, so that every part fills it:
#  1. fsync-acknowledged bytes survive a later writeback that fails for
#     room: the minimal case (100 bytes acknowledged, then a 4K write
#     across the page boundary on a full mount); a log writer that appends
#     1000-byte records with an fsync every 10 next to a filler, 20
#     rounds, every acknowledged record read back after drop_caches (a
#     record of a batch whose fsync failed may read as EIO or zeros, but
#     never as other bytes, even when a later fsync succeeded); a
#     sparse overwrite of 1024 acknowledged blocks on a full mount.
#  2. A lost append the program was told of is not in the file: growing
#     the file again (ftruncate, or a write past the end) makes a hole
#     there that reads as zeros, not EIO.
#  4. An asynchronous O_DIRECT write leaves no stale cached page for
#     buffered readers (xfstests generic/451's case).
# 13. A writer on a full mount is told at write(2): one that never calls
#     fsync gets ENOSPC from write(2) a bounded number of bytes past full
#     (it was never told before: 1 GiB went into a 96M mount); the count
#     is printed for README.
. "$(dirname "$0")/lib.sh"
t_need_progs
command -v python3 >/dev/null || t_skip "python3 missing"
M=1048576
mkdir -p "$T/ft"
t_mount --tier ram=ram:32M --tier f=file:"$T/ft":64M
mstat() {
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v k="$1" '$1 == "mount" { for (i = 2; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
[ "$(mstat writeback_cache)" = 1 ] || t_skip "the kernel has no writeback cache for FUSE"
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
used() { df -B1 --output=used "$MNT" | tail -n 1 | tr -d ' '; }
avail() { df -B1 --output=avail "$MNT" | tail -n 1 | tr -d ' '; }
empty() { [ "$(used)" = 0 ]; }
# fill NAME: O_DIRECT writes (each gets its own ENOSPC) until no unit is
# left: 1M, then 4K, in NAME.1, NAME.2, ... (an extent that cannot grow
# on its tier moves whole, so the last units may only fit a new file).
# FILL is the same for the python helper's "sh".
# Each dd is bounded, and the loop stops when $MNT is no longer a FUSE
# mount: should the daemon die, the writes would otherwise fill the disk
# under the mount point.
fillcmd() {
	echo "for i in \$(seq 64); do" \
		"[ \"\$(stat -f -c %t '$MNT')\" = 65735546 ] || exit 2;" \
		"dd if=/dev/zero of='$MNT/$1.'\$i bs=1M count=256 oflag=direct status=none 2>/dev/null;" \
		"dd if=/dev/zero of='$MNT/$1.'\$i bs=4K count=65536 oflag=direct,append conv=notrunc status=none 2>/dev/null;" \
		"[ \"\$(df -B1 --output=avail '$MNT' | tail -n 1 | tr -d ' ')\" = 0 ] && exit 0;" \
		"done; exit 1"
}
fill() {
	bash -c "$(fillcmd "$1")" || t_fail "fill: $(avail) bytes still free"
}
unfill() {
	rm -f "$MNT/$1".*
	t_wait_until 10 empty_but "$2" || t_fail "space of $1 not freed"
}
empty_but() { [ "$(used)" -le "$1" ]; }

# The python helper: one syscall per word, results printed, errno names
# for failures.  Commands: open NAME, pwrite OFF LEN BYTE, fsync, close,
# pread OFF LEN (prints the distinct bytes read, or the errno),
# ftruncate LEN, sh CMD (runs CMD with bash; "sh=OK" or its status).
py() {
	python3 - "$MNT" "$@" <<'PY'
import errno, os, subprocess, sys
mnt, cmds = sys.argv[1], sys.argv[2:]
fd = None
out = []
i = 0
def run(f, *a):
    try:
        r = f(*a)
        return "OK" if r is None else r
    except OSError as e:
        return errno.errorcode[e.errno]
while i < len(cmds):
    c = cmds[i]
    if c == "open":
        fd = os.open(mnt + "/" + cmds[i + 1], os.O_RDWR | os.O_CREAT, 0o644); i += 2
    elif c == "pwrite":
        off, n, b = int(cmds[i + 1]), int(cmds[i + 2]), cmds[i + 3]
        r = run(os.pwrite, fd, b.encode() * n, off)
        out.append("pwrite=%s" % r); i += 4
    elif c == "fsync":
        out.append("fsync=%s" % run(os.fsync, fd)); i += 1
    elif c == "close":
        out.append("close=%s" % run(os.close, fd)); fd = None; i += 1
    elif c == "sh":
        r = subprocess.run(["bash", "-c", cmds[i + 1]]).returncode
        out.append("sh=%s" % ("OK" if r == 0 else r)); i += 2
    elif c == "ftruncate":
        out.append("ftruncate=%s" % run(os.ftruncate, fd, int(cmds[i + 1]))); i += 2
    elif c == "pread":
        r = run(os.pread, fd, int(cmds[i + 2]), int(cmds[i + 1]))
        if isinstance(r, bytes):
            r = "".join(sorted(set(chr(x) if x else "0" for x in r))) + ":%d" % len(r)
        out.append("pread=%s" % r); i += 3
    else:
        sys.exit("bad command " + c)
print(" ".join(out))
PY
}

# --- 1a: the minimal case
out=$(py open a pwrite 0 100 A fsync sh "$(fillcmd fill)" pwrite 100 4096 B fsync close)
t_eq "$out" "pwrite=100 fsync=OK sh=OK pwrite=4096 fsync=ENOSPC close=OK" \
	"1a: the writeback that finds no room"
drop
out=$(py open a pread 0 100 pread 100 3996 close)
t_eq "$out" "pread=A:100 pread=B:3996 close=OK" \
	"1a: the acknowledged 100 bytes (and the in-place rest of the page) after a failed writeback"
grep -q "writeback of '/a' failed: No space left on device" "$T_LOG" ||
	t_fail "1a: the failed writeback of /a is not logged"

# --- 2: the lost append is a hole once the file grows again
# /a holds 4096 bytes; its append of 100 bytes was lost and reported
t_eq "$(t_stat size "$MNT/a")" 4096 "2: the size ends where the stored data ends"
unfill fill 4096
t_eq "$(py open a ftruncate 12288 pread 4096 4096 close)" \
	"ftruncate=OK pread=0:4096 close=OK" "2: ftruncate past a lost append: zeros"
rm -f "$MNT/a"
t_wait_until 10 empty || t_fail "2: space not freed"
t_eq "$(py open b pwrite 0 4096 A fsync sh "$(fillcmd fill)" pwrite 4096 4096 B fsync close)" \
	"pwrite=4096 fsync=OK sh=OK pwrite=4096 fsync=ENOSPC close=OK" "2: b's append fails"
drop
unfill fill 4096
t_eq "$(py open b pwrite 8192 4096 C close)" "pwrite=4096 close=OK" \
	"2: a write past the lost append"
drop
t_eq "$(py open b pread 0 4096 pread 4096 4096 pread 8192 4096 close)" \
	"pread=A:4096 pread=0:4096 pread=C:4096 close=OK" \
	"2: the gap left by the lost append reads as zeros"
rm -f "$MNT/b"
t_wait_until 10 empty || t_fail "2: space not freed"

# --- 1b: the log writer next to a filler, 20 rounds
for round in $(seq 1 20); do
	out=$(python3 - "$MNT" "$round" <<'PY'
import errno, os, sys
mnt, rnd = sys.argv[1], int(sys.argv[2])
log = os.open(mnt + "/log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
fill = os.open(mnt + "/filler", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
rec = lambda k: (("%d:%07d:" % (rnd, k)) * 100)[:999].encode() + b"\n"
# batches of 10 records, each followed by fsync: the records of a batch
# whose fsync succeeded are acknowledged; those of a batch whose fsync
# failed are not, even when a later fsync succeeds (the error is
# reported once, as the kernel's errseq does)
k, failed, chunk = 0, 0, b"f" * (256 * 1024)
good, bad = [], []
while failed < 3 and k < 200000:
    first = k
    try:
        for _ in range(10):
            os.write(log, rec(k)); k += 1
        os.fsync(log)
        good.append((first, k))
    except OSError as e:
        failed += 1
        bad.append((first, k))
        if e.errno not in (errno.ENOSPC,):
            sys.exit("unexpected errno %s" % errno.errorcode[e.errno])
    for _ in range(4):
        try:
            os.write(fill, chunk)
        except OSError:
            pass
for f in (log, fill):
    try:
        os.close(f)
    except OSError:
        pass
print(" ".join("%s%d-%d" % (t, a, b) for t, l in (("g", good), ("b", bad))
               for a, b in l) or "none")
PY
) || t_fail "1b round $round: $out"
	drop
	python3 - "$MNT" "$round" "$out" <<'PY' || t_fail "1b round $round: a record does not read back as it should"
import errno, os, sys
mnt, rnd, batches = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
rec = lambda k: (("%d:%07d:" % (rnd, k)) * 100)[:999].encode() + b"\n"
fd = os.open(mnt + "/log", os.O_RDONLY)
kinds = "".join(bt[0] for bt in batches if bt != "none")
print("round %d: %d batches acknowledged, %d failed%s" % (
    rnd, kinds.count("g"), kinds.count("b"),
    ", a failed one before an acknowledged one" if "bg" in kinds else ""))
for bt in batches:
    if bt == "none":
        continue
    a, b = map(int, bt[1:].split("-"))
    for k in range(a, b):
        try:
            got = os.pread(fd, 1000, k * 1000)
        except OSError as e:
            if bt[0] == "g" or e.errno != errno.EIO:
                sys.exit("record %d (%s batch): %s" % (k, "acknowledged" if bt[0] == "g" else "failed",
                                                       errno.errorcode[e.errno]))
            continue
        # acknowledged: exactly the record.  Not acknowledged: EIO, or
        # each byte the record's or a zero (a reported lost append is a
        # hole once the file grows past it), up to where the file ends
        want = rec(k)
        if bt[0] == "g":
            ok = got == want
        else:
            ok = all(g == w or g == 0 for g, w in zip(got, want))
        if not ok:
            sys.exit("record %d (%s batch) reads back wrong: %r" % (k, bt[0], got[:40]))
PY
	case " $out" in
	*" g"*) ;;
	*) t_fail "1b round $round: nothing acknowledged ($out)" ;;
	esac
	rm -f "$MNT/log" "$MNT/filler"
	t_wait_until 10 empty || t_fail "1b: space not freed"
done

# --- 1c: a sparse overwrite of 1024 acknowledged blocks on a full mount
# (the file open from before the mount filled, so it keeps the cache)
out=$(python3 - "$MNT" "$(fillcmd fill)" <<'PY'
import errno, os, subprocess, sys
fd = os.open(sys.argv[1] + "/sparse", os.O_RDWR | os.O_CREAT, 0o644)
for k in range(1024):
    os.pwrite(fd, b"o" * 4096, k * 8192)
os.fsync(fd)
if subprocess.run(["bash", "-c", sys.argv[2]]).returncode:
    sys.exit("fill failed")
# one long run: the acknowledged blocks and the holes between them
os.pwrite(fd, b"n" * (2048 * 4096), 0)
try:
    os.fsync(fd); print("fsync=OK")
except OSError as e:
    print("fsync=" + errno.errorcode[e.errno])
try:
    os.close(fd)
except OSError:
    pass
PY
)
t_eq "$out" "fsync=ENOSPC" "1c: the overwrite finds no room for the holes"
drop
python3 - "$MNT" <<'PY' || t_fail "1c: an acknowledged block was lost"
import errno, os, sys
fd = os.open(sys.argv[1] + "/sparse", os.O_RDONLY)
for k in range(1024):
    b = os.pread(fd, 4096, k * 8192)
    if b not in (b"o" * 4096, b"n" * 4096):
        sys.exit("block %d reads %r..." % (k, b[:8]))
    try:
        h = os.pread(fd, 4096, k * 8192 + 4096)
        if h != b"n" * 4096 and h != b"":
            sys.exit("hole %d reads %r..., not EIO or the new data" % (k, h[:8]))
    except OSError as e:
        if e.errno != errno.EIO:
            raise
PY
rm -f "$MNT/sparse"
unfill fill 0

# --- 4: an asynchronous O_DIRECT write and buffered readers
t_check "$PROGS/pattern" -s 0 w "$MNT/dio" 0 "$M" >/dev/null
t_eq "$("$PROGS/dioaio" "$MNT/dio" 20)" "OK 20" "4: no stale page after a direct write"
rm -f "$MNT/dio"
t_wait_until 10 empty || t_fail "4: space not freed"

# --- 13: a writer that never calls fsync, on a mount that fills: told at
# write(2), a bounded number of bytes past full
cap=$(avail)
dl=$(mstat dirty_limit)
out=$("$PROGS/fillopen" -s 3 "$MNT/w" $((4 * cap)))
echo "13: $out (capacity $cap, dirty limit $dl)"
t_like "$out" "ERR write ENOSPC at *" "13: write(2) reports the full mount"
written=$(sed -n 's/.*written \([0-9]*\).*/\1/p' <<<"$out")
echo "13: write(2) acknowledged $((written - cap)) bytes past full"
[ "$written" -le $((cap + 2 * dl + 2 * M)) ] ||
	t_fail "13: $((written - cap)) bytes acknowledged past full, more than twice the dirty limit"
drop
# writebacks run in parallel, so the one that lost may lie before one
# that was stored: each 1M chunk is intact or EIO, never other data
size=$(t_stat size "$MNT/w")
nok=0
for ((o = 0; o < size; o += M)); do
	r=$("$PROGS/pattern" -s 3 v "$MNT/w" "$o" $((size - o < M ? size - o : M)))
	case $r in
	OK*) nok=$((nok + 1)) ;;
	"ERR read EIO"*) ;;
	*) t_fail "13: chunk at $o: $r" ;;
	esac
done
[ $((nok * M)) -ge $((cap - 2 * dl - 2 * M)) ] ||
	t_fail "13: only $nok MiB of the $cap bytes stored read back"
t_pass
