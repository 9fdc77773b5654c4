#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: config
# TIMEOUT: 120
# IO: tiered writes that spill between the tiers a config gives
#
# Configuration: every bad tier stack or config file stops the mount with
# exactly one line naming the problem, a non-zero exit, nothing mounted
# and nothing left in the tier directories:
#  unknown kind, unparsable size, missing path, a path that is a file or
#  on a read-only mount, a size larger than the free space (1T on a 16M
#  tmpfs), duplicate names (also as two [tier.a] sections in a row), two
#  tiers on one directory ("/x" and "/x/", a symlink), config lines with
#  an unknown key or section, syntax errors, sections lacking kind, path
#  or size, a missing config file, a config path that is not a regular
#  file (/dev/zero, a directory, a FIFO: refused at once, not read), a
#  [tier.NAME] section alone or empty among others (not the default stack,
#  not dropped), a key twice in a section or before any section, an
#  indented line continuing a value; no_migrate=0 in a config does not
#  turn migration off.
# Indentation in a config means nothing: indented keys mount.
# A good INI config mounts with its tiers and global settings (stats),
# the command line wins over it, and it mounts the fstab way: through
# mount.fuse3 and through `mount -t fuse.tierfs CONFIG MNT`.
# Backing data is private (0700 directory, 0600 lock file and unlinked
# slab, whatever the umask)
# and removed at unmount, also for a relative tier path in background
# mode; a foreground daemon on a relative mount point unmounts on SIGTERM.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

D=$T/d
mkdir -p "$D" "$T/d2" || t_fail mkdir

# try_mount ARGS... -- run tierfs -f ARGS $MNT; sets OUT and RC; RC is
# "mounted" if it mounted (it is unmounted again unless KEEP=1; then
# DPID is the daemon), "hung" if it neither mounted nor exited in 10 s
try_mount() {
	local pid i
	"$TIERFS_BIN" -f "$@" "$MNT" >"$T/out" 2>&1 &
	pid=$!
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		t_is_mounted "$MNT" && break
		sleep 0.05
	done
	if t_is_mounted "$MNT"; then
		RC=mounted
		DPID=$pid
		[ "${KEEP:-0}" = 1 ] && return
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
		t_wait_until 5 eval "! kill -0 $pid 2>/dev/null" || kill -9 "$pid"
		wait "$pid"
	elif kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		wait "$pid"
		RC=hung
	else
		wait "$pid"
		RC=$?
	fi
	OUT=$(cat "$T/out")
}

# refuse DESC GLOB ARGS... -- the mount must fail with one line matching
# GLOB (a soft failure otherwise: one run reports every such problem)
refuse() {
	local desc=$1 glob=$2 n left
	shift 2
	try_mount "$@"
	n=$(printf '%s\n' "$OUT" | grep -c .)
	left=$(tier_dirs "$D"; tier_dirs "$T/d2"; tier_dirs "$T/small")
	if [ "$RC" = mounted ] || [ "$RC" = hung ] || [ "$RC" = 0 ]; then
		t_soft_fail "$desc: not refused ($RC): '$OUT'"
	elif [ "$n" -ne 1 ]; then
		t_soft_fail "$desc: expected one line, got $n: '$OUT'"
	elif [[ "$OUT" != $glob ]]; then
		t_soft_fail "$desc: message '$OUT' does not match '$glob'"
	elif [ -n "$left" ]; then
		t_soft_fail "$desc: left behind: $left"
	else
		echo "ok: $desc: $OUT"
	fi
	rm -rf "${left:-/nonexistent}"
}

# refuse_conf DESC GLOB TEXT -- the same for a config file holding TEXT
refuse_conf() {
	printf '%b' "$3" >"$T/c.ini"
	refuse "$1" "$2" "$T/c.ini"
}

# --- tiers on the command line
refuse "unknown kind" "*unknown tier kind 'tape'*" --tier a=tape:"$D":10M
refuse "unparsable ram size" "*size '10Q'*" --tier a=ram:10Q
refuse "unparsable file size" "*size 'lots'*" --tier a=file:"$D":lots
refuse "negative size" "*size '-4M'*" --tier a=ram:-4M
refuse "empty size" "*size ''*" --tier a=ram:
refuse "zero size" "*'a'*zero*" --tier a=ram:0
refuse "file tier without path" "*needs a path*" --tier a=file:10M
refuse "missing path" "*'a'*$T/nonexistent*No such file or directory*" \
	--tier a=file:"$T/nonexistent":10M
refuse "missing pmem path" "*'a'*$T/nonexistent*No such file or directory*" \
	--tier a=pmem:"$T/nonexistent":10M
echo data >"$T/afile"
refuse "path is a file" "*'a'*$T/afile*Not a directory*" --tier a=file:"$T/afile":10M
# root passes access() and chmod checks: a read-only bind mount refuses
mkdir -p "$T/rosrc" "$T/ro"
mount --bind "$T/rosrc" "$T/ro" || t_fail "bind mount"
T_EXTRA_MOUNTS+=("$T/ro")
mount -o remount,bind,ro "$T/ro" || t_fail "read-only remount"
refuse "read-only path" "*'a'*$T/ro*Read-only file system*" --tier a=file:"$T/ro":4M
refuse "read-only pmem path" "*'a'*$T/ro*Read-only file system*" --tier a=pmem:"$T/ro":4M
[ -z "$(ls -A "$T/rosrc")" ] || t_fail "something was created under the read-only mount"
t_tmpfs "$T/small" 16M
refuse "file tier larger than free space" "*'a'*$T/small*No space left on device*" \
	--tier a=file:"$T/small":1T
refuse "pmem tier larger than free space" "*'a'*$T/small*No space left on device*" \
	--tier a=pmem:"$T/small":1T
# control: a size that fits mounts on the same tmpfs
try_mount --tier a=file:"$T/small":8M
[ "$RC" = mounted ] || t_fail "an 8M file tier on a 16M tmpfs did not mount ($RC): $OUT"
refuse "file tier a little larger than free space" "*'a2'*$T/small*No space left on device*" \
	--tier a=ram:1M --tier a2=file:"$T/small":17M
refuse "duplicate names" "*duplicate tier name 'a'*" --tier a=ram:4M --tier a=file:"$D":8M
refuse "same path" "*'a'*'b'*same*" --tier a=file:"$D":4M --tier b=file:"$D":4M
refuse "same path with a trailing slash" "*'a'*'b'*same*" \
	--tier a=file:"$D":4M --tier b=file:"$D/":4M
refuse "same path, pmem and file" "*'a'*'b'*same*" \
	--tier a=pmem:"$D":4M --tier b=file:"$D/.":4M
ln -s "$D" "$T/dlink"
refuse "same directory through a symlink" "*'a'*'b'*same*" \
	--tier a=file:"$D":4M --tier b=file:"$T/dlink":4M
refuse "bad extent size" "*extent size*" --tier a=ram:4M --extent-size 3K
refuse "low watermark above high" "*watermark*" --tier a=ram:4M --high-watermark 50 --low-watermark 60

# --- config files
RAM='[tier.a]\nkind = ram\nsize = 4M\n'
# either wording names the problem
shopt -s extglob
DUP="@(*duplicate tier name 'a'*|*tier.a*appears twice*)"
refuse "missing config file" "*cannot read config file*$T/none.ini*" "$T/none.ini"
refuse_conf "unknown key in [global]" "*c.ini*line 2*unknown key 'foo'*" \
	"[global]\nfoo = 1\n$RAM"
refuse_conf "unknown key in a tier" "*c.ini*line 4*unknown key 'colour'*" \
	"${RAM}colour = red\n"
refuse_conf "unknown section" "*c.ini*line [45]*unknown section*bogus*" \
	"$RAM[bogus]\nx = 1\n"
refuse_conf "unknown empty section" "*bogus*" "[bogus]\n$RAM"
refuse_conf "syntax error" "*c.ini*line 4*" "${RAM}this is not a setting\n"
refuse_conf "unknown kind in a config" "*c.ini*line 2*unknown tier kind 'tape'*" \
	"[tier.a]\nkind = tape\npath = $D\nsize = 4M\n"
refuse_conf "bad size in a config" "*c.ini*line 4*'4Q'*" \
	"[tier.a]\nkind = file\npath = $D\nsize = 4Q\n"
refuse_conf "tier without path" "*'a'*no path*" "[tier.a]\nkind = file\nsize = 4M\n"
refuse_conf "tier without size" "*'a'*no size*" "[tier.a]\nkind = file\npath = $D\n"
refuse_conf "tier without kind" "*'a'*no kind*" "[tier.a]\npath = $D\nsize = 4M\n"
refuse_conf "missing path in a config" "*'a'*$T/nonexistent*No such file or directory*" \
	"[tier.a]\nkind = file\npath = $T/nonexistent\nsize = 4M\n"
refuse_conf "duplicate tier sections" "$DUP" \
	"$RAM[tier.b]\nkind = ram\nsize = 4M\n$RAM"
refuse_conf "duplicate tier sections in a row" "$DUP" "$RAM$RAM"
refuse_conf "same directory in a config" "*same*" \
	"[tier.b]\nkind = file\npath = $D\nsize = 4M\n[tier.c]\nkind = pmem\npath = $D/\nsize = 4M\n"
refuse_conf "bad extent size in a config" "*c.ini*line 2*extent size*" \
	"[global]\nextent_size = 1000\n$RAM"

# a config path that is not a regular file is refused at once, without
# reading it: /dev/zero never ends, a directory reads as empty (the
# embedded default stack would mount), opening a FIFO waits for a writer.
# try_mount gives up after 10 s, so a hang fails the check ("hung")
# instead of blocking the test.
mkdir -p "$T/confdir"
mkfifo "$T/fifo" || t_fail mkfifo
refuse "config file /dev/zero" "tierfs: config file '/dev/zero' is not a regular file" \
	/dev/zero
refuse "config file that is a directory" "tierfs: config file '$T/confdir' is a directory" \
	"$T/confdir"
refuse "config file that is a FIFO" "tierfs: config file '$T/fifo' is not a regular file" \
	"$T/fifo"
# an empty tier section is an error: alone it left the default stack in
# force, among others it was dropped
refuse_conf "a tier section alone" \
	"tierfs: $T/c.ini: line 1: section '\[tier.ram\]' is empty*" "[tier.ram]\n"
refuse_conf "an empty tier section" \
	"tierfs: $T/c.ini: line 4: section '\[tier.x\]' is empty*" \
	"$RAM[tier.x]\n[tier.b]\nkind = ram\nsize = 4M\n"
refuse_conf "an empty tier section at the end" \
	"tierfs: $T/c.ini: line 4: section '\[tier.x\]' is empty*" "$RAM[tier.x]\n"
# a key twice in one section: the second no longer wins silently
refuse_conf "duplicate key" \
	"tierfs: $T/c.ini: line 4: duplicate key 'size' in \[tier.a\]*first on line 3*" \
	"${RAM}size = 8M\n"
refuse_conf "duplicate key in [global]" \
	"tierfs: $T/c.ini: line 3: duplicate key 'high_watermark' in \[global\]*first on line 2*" \
	"[global]\nhigh_watermark = 90\nhigh_watermark = 50\n$RAM"
refuse_conf "key before any section" \
	"tierfs: $T/c.ini: line 1: key 'high_watermark' comes before any section*" \
	"high_watermark = 90\n[global]\nhigh_watermark = 50\n$RAM"
# inih took an indented line as the rest of the value before it: the
# path silently became $T/d2
refuse_conf "indented line after a path" "tierfs: $T/c.ini: line 4: syntax error" \
	"[tier.a]\nkind = file\npath = $D\n  $T/d2\nsize = 4M\n"
# ... and indented keys are keys
printf '[tier.a]\n  kind = ram\n  size = 4M\n[tier.b]\n\tkind = ram\n\tsize = 4M\n' >"$T/ind.ini"
KEEP=1 try_mount "$T/ind.ini"
if [ "$RC" = mounted ]; then
	got=$(stats | awk '$1 == "tier" { printf "%s%s ", $2, $0 ~ /size=4194304/ ? "" : "?" }')
	[ "$got" = "a b " ] || t_soft_fail "indented config: tiers '$got', expected 'a b '"
	fusermount3 -u "$MNT" || umount -l "$MNT"
	t_wait_until 5 eval "! kill -0 $DPID 2>/dev/null" || kill -9 "$DPID"
	wait "$DPID"
else
	t_soft_fail "a config with indented keys did not mount ($RC): '$OUT'"
fi

# no_migrate = 0 must not turn migration off (refusing it would do too)
printf '[global]\nno_migrate = 0\n[tier.a]\nkind = ram\nsize = 4M\n[tier.b]\nkind = ram\nsize = 4M\n' >"$T/nm.ini"
KEEP=1 try_mount "$T/nm.ini"
if [ "$RC" = mounted ]; then
	en=$(mstat enabled)
	[ "$en" = 1 ] || t_soft_fail "no_migrate = 0 in a config turned migration off (migrator enabled=$en)"
	fusermount3 -u "$MNT" || umount -l "$MNT"
	t_wait_until 5 eval "! kill -0 $DPID 2>/dev/null" || kill -9 "$DPID"
	wait "$DPID"
elif [[ "$OUT" != *no_migrate* ]]; then
	t_soft_fail "no_migrate = 0: neither mounted nor refused by name ($RC): '$OUT'"
fi
printf '[global]\nno_migrate = 1\n[tier.a]\nkind = ram\nsize = 4M\n[tier.b]\nkind = ram\nsize = 4M\n' >"$T/nm.ini"
t_mount "$T/nm.ini"
t_eq "$(mstat enabled)" 0 "migrator with no_migrate = 1"
t_unmount

# --- a good config file
cat >"$T/good.ini" <<EOF
# scratch for tests
[global]
extent_size = 64K
high_watermark = 70
low_watermark = 40
migrate_bw = 10M
heat_half_life = 5
promote_passes = 2
options = allow_other

[tier.fast]
kind = ram
size = 4M

[tier.pm]
kind = pmem
path = $T/d2
size = 8M

[tier.slow]
kind = file
path = $D
size = 16M
EOF
t_mount "$T/good.ini"
st=$(stats)
echo "$st"
t_eq "$(printf '%s\n' "$st" | awk '$1 == "tier" { printf "%s ", $2 }')" "fast pm slow " "tiers of the good config"
t_eq "$(tstat fast kind) $(tstat fast size)" "ram $((4 * M))" "tier fast"
t_eq "$(tstat pm kind) $(tstat pm path) $(tstat pm size)" "pmem $T/d2 $((8 * M))" "tier pm"
t_eq "$(tstat slow kind) $(tstat slow path) $(tstat slow size)" "file $D $((16 * M))" "tier slow"
t_eq "$(mstat enabled) $(mstat high_watermark) $(mstat low_watermark) $(mstat bandwidth)" \
	"1 70 40 $((10 * M))" "migrator settings of the good config"
t_eq "$(_rec_key mount "" extent_size)" 65536 "extent size of the good config"
grep " $MNT " /proc/mounts | grep -q allow_other || t_fail "options = allow_other not applied: $(grep " $MNT " /proc/mounts)"
pat_w -s 5 "$MNT/f" 0 6M
# the migrator runs (high watermark 70%): only the total is fixed
t_like "$(layout "$MNT/f")" "fast=* pm=* slow=*" "layout on the good config"
t_eq "$(layout "$MNT/f" | tr ' =' '\n\n' | awk 'NR % 2 == 0 { s += $1 } END { print s }')" $((6 * M)) "bytes in the layout"
pat_v -d -s 5 "$MNT/f" 0 6M
# backing data is private
for d in "$D" "$T/d2"; do
	bd=$(tier_dirs "$d")
	t_eq "$(stat -c '%a %u' "$bd")" "700 0" "mode of $bd"
	t_eq "$(stat -c '%a %u' "$bd/lock")" "600 0" "mode of $bd/lock"
	# the slab has no name (an unlinked file): only the lock is there
	t_eq "$(ls -A "$bd")" lock "contents of $bd"
	t_eq "$(stat -L -c '%a %u %h' "$(slab_of "$d")")" "600 0 0" "mode and links of the slab in $d"
done
t_unmount
t_eq "$(tier_dirs "$D")$(tier_dirs "$T/d2")" "" "backing data left after unmount"

# the command line wins: extent size and tiers
t_mount --extent-size 128K "$T/good.ini"
t_eq "$(_rec_key mount "" extent_size)" 131072 "extent size from the command line over the config"
t_eq "$(mstat high_watermark)" 70 "high watermark still from the config"
t_unmount
t_mount --tier only=ram:2M "$T/good.ini"
t_eq "$(stats | awk '$1 == "tier" { printf "%s ", $2 }')" "only " "tiers from the command line over the config"
t_eq "$(tier_dirs "$D")" "" "a config tier that the command line replaced made a directory"
t_unmount

# privacy does not depend on the umask; a relative tier path in
# background mode (the daemon changes to / when it detaches) is still
# cleaned up at unmount
(
	cd "$T" || exit 1
	umask 000
	exec "$TIERFS_BIN" --tier r=ram:1M --tier rel=file:d:8M "$MNT"
) >"$T_LOG" 2>&1 || t_fail "background mount with a relative tier path: $(cat "$T_LOG")"
mountpoint -q "$MNT" || t_fail "background mount did not appear"
pat_w -s 6 "$MNT/g" 0 3M
bd=$(tier_dirs "$D")
t_eq "$(stat -c '%a' "$bd") $(stat -c '%a' "$bd/lock")" "700 600" "modes with umask 000"
fusermount3 -u "$MNT" || t_fail "unmount of the background mount"
t_wait_until 5 eval '[ -z "$(tier_dirs "$D")" ]' ||
	t_soft_fail "relative tier path: backing data left after unmount: $(tier_dirs "$D") (daemon log: $(cat "$T_LOG"))"
rm -rf "$(tier_dirs "$D")" 2>/dev/null

# a foreground daemon on a relative mount point unmounts on SIGTERM
(cd "$T" && exec $T_ENV_DEFSIG "$TIERFS_BIN" -f --tier a=ram:4M mnt) >"$T_LOG" 2>&1 &
fpid=$!
t_wait_until 5 mountpoint -q "$MNT" || t_fail "relative mount point: no mount"
kill -TERM "$fpid"
wait "$fpid"
if t_is_mounted "$MNT"; then
	umount -l "$MNT"
	t_soft_fail "SIGTERM left a relative mount point mounted: $(cat "$T_LOG")"
fi

# --- the fstab way: mount.fuse3 finds "tierfs" on PATH ...
if ! command -v mount.fuse3 >/dev/null; then
	[ ${#T_SOFT[@]} -eq 0 ] || t_done
	t_skip "mount.fuse3 missing: the fstab checks cannot run"
fi
mkdir -p "$T/bin"
ln -s "$TIERFS_BIN" "$T/bin/tierfs"
PATH=$T/bin:$PATH mount.fuse3 "$T/good.ini" "$MNT" -t tierfs -o allow_other ||
	t_fail "mount.fuse3 CONFIG MNT -t tierfs"
t_eq "$(awk -v m="$MNT" '$2 == m { print $3 }' /proc/mounts)" fuse.tierfs "fstype of a mount.fuse3 mount"
t_eq "$(stats | awk '$1 == "tier" { printf "%s ", $2 }')" "fast pm slow " "tiers through mount.fuse3"
umount "$MNT" || t_fail "umount"
t_wait_until 5 eval '[ -z "$(tier_dirs "$D")$(tier_dirs "$T/d2")" ]' ||
	t_fail "backing data left after umount of a mount.fuse3 mount"

# ... and mount(8) runs it with no PATH of its own, so the shell's default
# PATH applies: put a link in /usr/local/sbin unless one is there already
# (a lock keeps two runs of this test from removing each other's link)
LINK=/usr/local/sbin/tierfs
exec 9>/run/lock/tierfs-test-sbin-link.lock && flock -w 60 9 ||
	t_fail "cannot lock /run/lock/tierfs-test-sbin-link.lock"
if [ -e "$LINK" ] || [ -L "$LINK" ]; then
	echo "$LINK exists: skipping mount -t fuse.tierfs"
	t_done
fi
mkdir -p /usr/local/sbin
ln -s "$TIERFS_BIN" "$LINK" || t_fail "cannot create $LINK"
drop_link() {
	[ "$(readlink "$LINK")" = "$TIERFS_BIN" ] && rm -f "$LINK"
}
trap 'rc=$?; drop_link; (exit $rc); t_cleanup' EXIT
out=$(timeout 30 mount -t fuse.tierfs -o allow_other,nofail "$T/good.ini" "$MNT" 2>&1 9>&-)
rc=$?
drop_link
exec 9>&-
[ $rc -eq 0 ] || t_fail "mount -t fuse.tierfs CONFIG MNT: $out"
t_eq "$(stats | awk '$1 == "tier" { printf "%s ", $2 }')" "fast pm slow " "tiers through mount -t fuse.tierfs"
pat_w -s 7 "$MNT/h" 0 1M
pat_v -s 7 "$MNT/h" 0 1M
umount "$MNT" || t_fail "umount"
t_wait_until 5 eval '[ -z "$(tier_dirs "$D")$(tier_dirs "$T/d2")" ]' ||
	t_fail "backing data left after umount of a mount -t fuse.tierfs mount"

t_done
