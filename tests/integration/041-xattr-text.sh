#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 60
# IO: tiered extent runs of user.tierfs.extents
#
# The computed text attributes at their widest (issue 10, bugs 1 and 2):
# - user.tierfs.extents with the longest lines a mount can produce (a
#   32-character tier name, 19-digit offsets, 11-digit run lengths), enough
#   of them to cross the text buffer's first allocation mid-line.  The old
#   builder grew only with 64 bytes of slack and overran its heap buffer
#   here (the daemon aborted and the mount was gone).  Every run must be
#   listed, byte for byte, and the daemon must live on.
# - user.tierfs.effective of a file under four 250-character directory
#   names: the old builder's fixed 1 KiB buffer silently dropped the keys
#   set far up, so a pin in force did not show.  Every key must be listed
#   with the directory that sets it.
# Both are read with getfattr and with exact-size getxattr calls.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc

G=$((1 << 30))
BASE=$((1 << 62)) # 4611686018427387904: byte offsets of 19 digits
NAME=tier32-abcdefghijklmnopqrstuvwxy # 32 characters, TIER_NAME_MAX
t_eq "${#NAME}" 32 "tier name length"

# daemon_alive WHAT -- the daemon still runs and the mount answers
daemon_alive() {
	kill -0 "$T_PID" 2>/dev/null || t_fail "daemon died after $1"
	stat "$MNT" >/dev/null 2>&1 || t_fail "mount gone after $1"
}

# exact_get PATH NAME OUT -- getxattr with a size query first and then a
# buffer of exactly that size, the value into OUT; also too small by one
exact_get() {
	local n
	n=$("$SC" getxattr "$1" "$2" 0) || t_fail "size query of $2: $n"
	n=${n#OK }
	t_eq "$("$SC" getxattr "$1" "$2" "$n" "$3")" "OK $n" "$2 with a buffer of its size"
	t_eq "$(stat -c %s "$3")" "$n" "$2 bytes written"
	if [ "$n" -gt 0 ]; then
		t_errno ERANGE "$SC" getxattr "$1" "$2" $((n - 1))
	fi
}

# --- bug 1: user.tierfs.extents with the widest lines ---
# 1G extents, one RAM tier (address space only: nothing is written).
# (issue 11: a RAM tier must fit in memory; this one only takes address
# space, so the test tells tierfs it has the memory -- a test-only knob)
TIERFS_TEST_MEMORY=128G t_mount --extent-size 1G --no-migrate --tier "$NAME=ram:96G"
f=$MNT/wide
touch "$f" || t_fail "create"
: >"$T/want"
# 63 single-extent runs with a hole after each: 63 lines of 64 bytes,
# 4032 bytes, which leaves exactly 64 free in a first allocation of 4 KiB
for i in $(seq 0 62); do
	off=$((BASE + 2 * i * G))
	fallocate -n -o "$off" -l 4096 "$f" || t_fail "fallocate at $off"
	echo "$off $G $NAME" >>"$T/want"
done
# then a run of 10 extents: a 65-byte line, the one that did not fit
off=$((BASE + 126 * G))
fallocate -n -o "$off" -l $((10 * G)) "$f" || t_fail "fallocate of 10 extents at $off"
echo "$off $((10 * G)) $NAME" >>"$T/want"
# and 15 more single runs after it, the last one through posix_fallocate
# (no -n: the file's size grows to cover it)
for i in $(seq 0 14); do
	off=$((BASE + (137 + 2 * i) * G))
	if [ "$i" -eq 14 ]; then
		fallocate -o "$off" -l 4096 "$f" || t_fail "posix_fallocate at $off"
	else
		fallocate -n -o "$off" -l 4096 "$f" || t_fail "fallocate at $off"
	fi
	echo "$off $G $NAME" >>"$T/want"
done
t_eq "$(t_stat size "$f")" $((BASE + 165 * G + 4096)) "size after posix_fallocate"

getfattr --absolute-names --only-values -n user.tierfs.extents "$f" >"$T/got" 2>"$T/err" ||
	{ cat "$T/err"; daemon_alive "getfattr user.tierfs.extents"; t_fail "getfattr -n user.tierfs.extents failed"; }
daemon_alive "getfattr user.tierfs.extents"
t_eq "$(wc -l <"$T/got")" 79 "extent runs listed"
cmp "$T/want" "$T/got" || { diff "$T/want" "$T/got" | head; t_fail "user.tierfs.extents differs"; }
exact_get "$f" user.tierfs.extents "$T/got.exact"
cmp "$T/want" "$T/got.exact" || t_fail "user.tierfs.extents through getxattr differs"
t_eq "$(stat -c %s "$T/want")" $((78 * 64 + 65)) "bytes of user.tierfs.extents"
# the same file, the layout in the same words as ever: the bytes held,
# to the allocation unit (1G / 256 = 4M: tiers/tier.h) -- 4096 bytes take
# one unit, or two where they cross a unit's end
U=$((G / 256))
held=$((10 * G))
while read -r off len _; do
	[ "$len" = "$G" ] || continue
	held=$((held + ((off + 4096 + U - 1) / U - off / U) * U))
done <"$T/want"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$f")" "$NAME=$held" "user.tierfs.layout"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$MNT")" "$NAME=$held" "user.tierfs.layout of the root"
# and again, the daemon still well
t_check getfattr --absolute-names -n user.tierfs.extents "$f" >/dev/null
daemon_alive "reading user.tierfs.extents twice"
rm -f "$f" || t_fail "rm"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$MNT")" "$NAME=0" "layout after rm"

# --- bug 2: user.tierfs.effective under long paths ---
t_remount --no-migrate --tier fast=ram:64M --tier disk=ram:64M
a=$(printf 'a%.0s' $(seq 250))
b=$(printf 'b%.0s' $(seq 250))
c=$(printf 'c%.0s' $(seq 250))
d=$(printf 'd%.0s' $(seq 250))
deep=$MNT/$a/$b/$c/$d
mkdir -p "$deep" || t_fail "mkdir of 4 x 250-character names"
setfattr -n user.tierfs.pin -v disk "$deep" || t_fail "setfattr pin on the deepest directory"
echo data >"$deep/file" || t_fail "create in the deepest directory"

printf 'tiers=fast,disk default\npin=disk /%s/%s/%s/%s\nsplit=- default\npromote=1 default\nio=native default\n' \
	"$a" "$b" "$c" "$d" >"$T/want"
getfattr --absolute-names --only-values -n user.tierfs.effective "$deep/file" >"$T/got" ||
	t_fail "getfattr -n user.tierfs.effective failed"
grep -q "^pin=disk /$a/$b/$c/$d\$" "$T/got" ||
	t_fail "the pin in force is missing from user.tierfs.effective: $(cut -c1-40 "$T/got" | tr '\n' '|')"
cmp "$T/want" "$T/got" || t_fail "user.tierfs.effective of the file differs"
exact_get "$deep/file" user.tierfs.effective "$T/got.exact"
cmp "$T/want" "$T/got.exact" || t_fail "user.tierfs.effective through getxattr differs"
# the directory that sets it says the same
getfattr --absolute-names --only-values -n user.tierfs.effective "$deep" >"$T/got" || t_fail "getfattr on the directory"
cmp "$T/want" "$T/got" || t_fail "user.tierfs.effective of the directory differs"
# and the data does go where the pin says
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$deep/file")" "fast=0 disk=4096" "layout of the pinned file (one 4 KiB unit)"

# every key set at a different depth, each line over 250 bytes, together
# more than 2.5 KiB; and one key on the file itself
setfattr -n user.tierfs.tiers -v disk,fast "$MNT/$a" || t_fail "setfattr tiers"
setfattr -n user.tierfs.split -v fast:8M,disk "$MNT/$a/$b" || t_fail "setfattr split"
setfattr -n user.tierfs.promote -v 0 "$MNT/$a/$b/$c" || t_fail "setfattr promote"
setfattr -n user.tierfs.io -v tiered "$deep" || t_fail "setfattr io"
printf 'tiers=disk,fast /%s\npin=disk /%s/%s/%s/%s\nsplit=fast:8388608,disk /%s/%s\npromote=0 /%s/%s/%s\nio=tiered /%s/%s/%s/%s\n' \
	"$a" "$a" "$b" "$c" "$d" "$a" "$b" "$a" "$b" "$c" "$a" "$b" "$c" "$d" >"$T/want"
exact_get "$deep/file" user.tierfs.effective "$T/got"
cmp "$T/want" "$T/got" || t_fail "user.tierfs.effective with every key set above"
setfattr -n user.tierfs.promote -v 1 "$deep/file" || t_fail "setfattr promote on the file"
sed 's/^promote=0 .*/promote=1 (this file)/' "$T/want" >"$T/want2"
exact_get "$deep/file" user.tierfs.effective "$T/got"
cmp "$T/want2" "$T/got" || t_fail "user.tierfs.effective with a key on the file"
daemon_alive "user.tierfs.effective"

cd /
t_pass
