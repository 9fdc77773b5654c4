#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: tools
# TIMEOUT: 300
# IO: tiered paged lists of extent runs
#
# The control channel past the kernel's 64 KiB limit for one attribute
# value (issue 10 bug 3), and FROM paths with a newline:
# - a sparse file with every other 4 KiB extent written (100,001 runs,
#   about 2.8 MB of extent list): the unpaged user.tierfs.extents fails
#   with E2BIG (at the size probe already); the pages user.tierfs.extents@OFFSET
#   are each at most 64 KiB, end with "next N" while the list goes on,
#   and together list every run exactly once; a size probe agrees with
#   the read that follows it;
# - `tierctl layout` shows every run and the right totals, and
#   `tierctl migrate` moves all of the file to the other tier (it read
#   the same list to find what to move);
# - user.tierfs.effective of a file below a directory whose name holds a
#   newline: the daemon escapes it ("\012"), so each key is one line,
#   and `tierctl policy get` prints it escaped as ls -b does ("\n").
#
# Environment: TIERCTL (path of tierctl; meson sets it).
. "$(dirname "$0")/lib.sh"
t_need_progs

: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$TIERCTL" ] || t_fail "tierctl binary '$TIERCTL' missing (set TIERCTL)"
command -v getfattr >/dev/null || t_skip "getfattr (attr package) missing"
command -v python3 >/dev/null || t_skip "python3 missing"
SC=$PROGS/sc
K=4096
N=100001 # runs: one 4 KiB extent, then a hole, N times

t_mount --no-migrate --extent-size 4K --tier fast=ram:1G --tier slow=ram:1G

# --- a sparse file of N one-extent runs ---
f=$MNT/sparse
python3 - "$f" "$N" "$K" <<'EOF' || t_fail "writing the sparse file"
import os, sys
path, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(n):
    os.pwrite(fd, b"x", 2 * k * i)
os.fsync(fd)
os.close(fd)
EOF
t_eq "$(stat -c %s "$f")" $((2 * K * (N - 1) + 1)) "size of the sparse file"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$f")" \
	"fast=$((N * K)) slow=0" "layout of the sparse file"

# the whole list does not fit in one value: E2BIG, already at the probe
t_errno E2BIG "$SC" getxattr "$f" user.tierfs.extents 0

# read it page by page with getfattr, as a script would
off=0
pages=0
: >"$T/runs"
while :; do
	getfattr --absolute-names --only-values -n "user.tierfs.extents@$off" "$f" >"$T/page" ||
		t_fail "getfattr user.tierfs.extents@$off failed"
	bytes=$(stat -c %s "$T/page")
	[ "$bytes" -le 65536 ] || t_fail "page at $off is $bytes bytes, more than 64 KiB"
	pages=$((pages + 1))
	last=$(tail -n 1 "$T/page")
	if [ "${last%% *}" = next ]; then
		next=${last#next }
		[ "$next" -gt "$off" ] || t_fail "page at $off: next $next does not go forward"
		head -n -1 "$T/page" >>"$T/runs"
		if [ "$pages" -eq 1 ]; then
			# a probe and a read of exactly its size agree
			n=$("$SC" getxattr "$f" "user.tierfs.extents@$off" 0)
			t_eq "$n" "OK $bytes" "size probe of the first page"
			t_eq "$("$SC" getxattr "$f" "user.tierfs.extents@$off" "$bytes" "$T/exact")" \
				"OK $bytes" "first page with a buffer of its size"
			cmp -s "$T/page" "$T/exact" || t_fail "first page differs between reads"
			t_errno ERANGE "$SC" getxattr "$f" "user.tierfs.extents@$off" $((bytes - 1))
		fi
		off=$next
	else
		cat "$T/page" >>"$T/runs"
		break
	fi
	[ "$pages" -le 1000 ] || t_fail "more than 1000 pages"
done
# each page but the last nearly full: 64 KiB less at most one line and "next"
total=$(stat -c %s "$T/runs")
[ "$pages" -le $((total / (65536 - 128) + 1)) ] || t_fail "$pages pages for $total bytes of runs"
t_eq "$(wc -l <"$T/runs")" "$N" "runs over all pages"
# every run exactly once, in order: START = 2*K*i, LENGTH = K, on fast
awk -v k=$K '$1 != 2 * k * (NR - 1) || $2 != k || $3 != "fast" { print NR ": " $0; exit 1 }' \
	"$T/runs" || t_fail "the paged list is not the N runs in order: $(awk -v k=$K '$1 != 2 * k * (NR - 1) || $2 != k || $3 != "fast"' "$T/runs" | head -3)"

# a page starting inside a run, past the end, and malformed offsets
t_eq "$(getfattr --absolute-names --only-values -n "user.tierfs.extents@$((2 * K * (N - 1) + 7))" "$f")" \
	"$((2 * K * (N - 1))) $K fast" "page from inside the last extent"
t_eq "$("$SC" getxattr "$f" "user.tierfs.extents@$((2 * K * N))" 0)" "OK 0" "page past the end is empty"
t_errno EINVAL "$SC" getxattr "$f" "user.tierfs.extents@" 0
t_errno EINVAL "$SC" getxattr "$f" "user.tierfs.extents@-1" 0
t_errno EINVAL "$SC" getxattr "$f" "user.tierfs.extents@18446744073709551616" 0
t_errno EPERM "$SC" setxattr "$f" "user.tierfs.extents@0" x 0
t_errno ENODATA "$SC" getxattr "$MNT" "user.tierfs.extents@0" 0

# --- tierctl layout and migrate on it ---
"$TIERCTL" layout "$f" >"$T/layout.out" 2>"$T/layout.err" ||
	t_fail "tierctl layout of $N runs: $(cat "$T/layout.err")"
grep -qx "$f: $N runs; fast 391M (100.0%), slow 0 (0.0%); total 391M" "$T/layout.out" ||
	t_fail "tierctl layout totals: $(tail -n 1 "$T/layout.out")"
# header, column titles, N runs, totals
t_eq "$(wc -l <"$T/layout.out")" $((N + 3)) "lines of tierctl layout"
grep -qE "^ *$((N - 1)): +$((2 * K * (N - 1)))\.\. +$((2 * K * (N - 1) + K - 1)): +4K: fast$" "$T/layout.out" ||
	t_fail "tierctl layout: last run: $(tail -n 2 "$T/layout.out" | head -n 1)"

"$TIERCTL" migrate -q "$f" slow >"$T/mig.out" 2>"$T/mig.err" ||
	t_fail "tierctl migrate of $N runs: $(cat "$T/mig.err")"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$f")" \
	"fast=0 slow=$((N * K))" "layout after tierctl migrate"
"$TIERCTL" layout "$f" >"$T/layout2.out" 2>"$T/layout2.err" ||
	t_fail "tierctl layout after migrate: $(cat "$T/layout2.err")"
grep -qx "$f: $N runs; fast 0 (0.0%), slow 391M (100.0%); total 391M" "$T/layout2.out" ||
	t_fail "tierctl layout totals after migrate: $(tail -n 1 "$T/layout2.out")"
# the data is still there, every byte of it
python3 - "$f" "$N" "$K" <<'EOF' || t_fail "data after migrate"
import os, sys
path, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_RDONLY)
for i in range(0, n, 997):
    assert os.pread(fd, 2, 2 * k * i) == b"x\0"[: 2 if i < n - 1 else 1], i
os.close(fd)
EOF
rm -f "$f" || t_fail "rm of the sparse file"

# --- user.tierfs.effective: a newline in the FROM path ---
d="$MNT/a
b\\c"
mkdir -p "$d/sub" || t_fail "mkdir with a newline in the name"
setfattr -n user.tierfs.pin -v slow "$d" || t_fail "setfattr pin"
echo data >"$d/sub/file" || t_fail "create below it"
getfattr --absolute-names --only-values -n user.tierfs.effective "$d/sub/file" >"$T/eff" ||
	t_fail "getfattr user.tierfs.effective"
printf 'tiers=fast,slow default\npin=slow /a\\012b\\\\c\nsplit=- default\npromote=1 default\nio=native default\n' >"$T/eff.want"
cmp -s "$T/eff.want" "$T/eff" || t_fail "user.tierfs.effective: $(od -c "$T/eff" | head -5)"
"$TIERCTL" policy get "$d/sub/file" pin >"$T/pget.out" 2>"$T/pget.err" ||
	t_fail "tierctl policy get: $(cat "$T/pget.err")"
t_eq "$(cat "$T/pget.out")" "pin      slow                     /a\\nb\\\\c" "tierctl policy get with a newline in FROM"

t_pass
