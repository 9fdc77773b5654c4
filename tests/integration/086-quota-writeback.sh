#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: capacity
# TIMEOUT: 180
# IO: tiered the writeback cache
#
# A quota reached through the writeback cache reads as a quota, never as
# a disk fault (issue 16, items 5 and 6).  RAM 64M over a file tier of
# 256M, --dirty-max 4M (so a file is opened write-through when less than
# 8M is left under its quota):
#  - quota 20M, above the reserve: the file keeps the cache; a writer of
#    30 x 1M gets EDQUOT from write(2) soon after the quota is used up
#    (never EIO), and close(2) returns EDQUOT, as does fsync(2) for a
#    writer that calls it; what was acknowledged reads back;
#  - quota 6M, below the reserve: write-through, write(2) gets EDQUOT at
#    the byte where the quota ends; fsync and close succeed;
#  - four files failing under one quota: the log names each file once,
#    with the quota's directory, and the end of each episode with its
#    count; nothing says EIO.
. "$(dirname "$0")/lib.sh"
t_need_progs
command -v python3 >/dev/null || t_skip "python3 missing"
command -v setfattr >/dev/null || t_skip "setfattr missing"
M=1048576
Q=trusted.tierfs.quota
mkdir -p "$T/ft"
t_mount --tier ram=ram:64M --tier f=file:"$T/ft":256M --dirty-max 4M
mstat() {
	getfattr --only-values -n user.tierfs.stats "$MNT" 2>/dev/null |
		awk -v k="$1" '$1 == "mount" { for (i = 2; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
[ "$(mstat writeback_cache)" = 1 ] || t_skip "the kernel has no writeback cache for FUSE"

# writer DIR/FILE MIB SYNC: MIB x 1M write(2)s, then fsync if SYNC=1,
# then close; prints "written N write=E fsync=E close=E"
writer() {
	python3 - "$MNT/$1" "$2" "$3" <<'PY'
import errno, os, sys
path, n, sync = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
name = lambda e: errno.errorcode[e.errno]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
written, res = 0, {"write": "OK", "fsync": "-", "close": "OK"}
chunk = b"q" * (1 << 20)
for _ in range(n):
    try:
        w = os.write(fd, chunk)
        written += w
        if w < len(chunk):
            continue
    except OSError as e:
        res["write"] = name(e)
        break
if sync:
    try:
        os.fsync(fd); res["fsync"] = "OK"
    except OSError as e:
        res["fsync"] = name(e)
try:
    os.close(fd)
except OSError as e:
    res["close"] = name(e)
print("written %d write=%s fsync=%s close=%s" % (written, res["write"], res["fsync"], res["close"]))
PY
}
field() { sed -n "s/.*$1=\([A-Z-]*\).*/\1/p" <<<"$2"; }

# --- above the reserve: the cache, EDQUOT from write(2) and close(2)
mkdir "$MNT/q1" && setfattr -n "$Q" -v 20M "$MNT/q1" || t_fail "quota q1"
out=$(writer q1/f 30 0)
echo "q1, no fsync: $out"
t_eq "$(field write "$out")" EDQUOT "above the reserve: write(2) gets EDQUOT"
t_eq "$(field close "$out")" EDQUOT "above the reserve: close gets EDQUOT, not EIO"
n=$(sed -n 's/written \([0-9]*\).*/\1/p' <<<"$out")
[ "$n" -le $((20 * M + 8 * M + 2 * M)) ] ||
	t_fail "write(2) took $n bytes into a 20M quota"
rm -f "$MNT/q1/f"
out=$(writer q1/f 30 1)
echo "q1, fsync: $out"
t_eq "$(field write "$out")" EDQUOT "above the reserve, fsync: write(2) gets EDQUOT"
t_eq "$(field fsync "$out")" EDQUOT "above the reserve: fsync gets EDQUOT"
rm -f "$MNT/q1/f"
out=$(writer q1/g 18 1)
echo "q1, within the quota, fsync: $out"
t_eq "$out" "written $((18 * M)) write=OK fsync=OK close=OK" "within the quota"
sync; echo 3 >/proc/sys/vm/drop_caches
t_eq "$(tr -d q <"$MNT/q1/g" | wc -c)" 0 "the acknowledged data reads back"
t_eq "$(stat -c %s "$MNT/q1/g")" $((18 * M)) "its size"
# 2M left: below the reserve, so this open is write-through, and the
# quota's end comes back from write(2) itself
out=$(python3 - "$MNT/q1/g" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
res = []
for _ in range(2):
    try:
        res.append("w=%d" % os.write(fd, b"r" * (4 << 20)))
    except OSError as e:
        res.append("w=" + errno.errorcode[e.errno])
for f in (os.fsync, os.close):
    try:
        f(fd); res.append("OK")
    except OSError as e:
        res.append(errno.errorcode[e.errno])
print(" ".join(res))
PY
)
t_eq "$out" "w=$((2 * M)) w=EDQUOT OK OK" "an append past the quota"
sync; echo 3 >/proc/sys/vm/drop_caches
t_eq "$(head -c $((18 * M)) "$MNT/q1/g" | tr -d q | wc -c)" 0 \
	"the data acknowledged before still reads back"
rm -f "$MNT/q1/g"

# --- below the reserve: write-through, EDQUOT at the byte
mkdir "$MNT/q2" && setfattr -n "$Q" -v 6M "$MNT/q2" || t_fail "quota q2"
out=$(writer q2/f 10 1)
echo "q2: $out"
t_eq "$out" "written $((6 * M)) write=EDQUOT fsync=OK close=OK" \
	"below the reserve: write(2) gets EDQUOT where the quota ends"

# --- four files over one quota: each logged once, with the quota
mkdir "$MNT/q3" && setfattr -n "$Q" -v 24M "$MNT/q3" || t_fail "quota q3"
python3 - "$MNT/q3" <<'PY'
import os, sys
fds = [os.open("%s/f%d" % (sys.argv[1], i), os.O_WRONLY | os.O_CREAT, 0o644) for i in range(4)]
chunk = b"x" * (1 << 20)
for _ in range(12):
    for fd in fds:
        try:
            os.write(fd, chunk)
        except OSError:
            pass
for fd in fds:
    try:
        os.close(fd)
    except OSError:
        pass
PY
n=0
for i in 0 1 2 3; do
	if grep -q "writeback of '/q3/f$i' failed: Disk quota exceeded (the quota of '/q3' is used up)" "$T_LOG"; then
		n=$((n + 1))
	fi
done
echo "files logged: $n"
[ "$n" -ge 2 ] || t_fail "fewer than two of the four failing files are logged"
for i in 0 1 2 3; do
	c=$(grep -c "writeback of '/q3/f$i' failed" "$T_LOG")
	[ "$c" -le 1 ] || t_fail "/q3/f$i logged $c times in one episode"
done
grep -q "Input/output error" "$T_LOG" && t_fail "a quota overrun logged as EIO"
t_pass
