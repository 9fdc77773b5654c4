#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: options
# TIMEOUT: 120
#
# fstab and the direct command mount alike (issue 19):
#  - nosuid,nodev by default both ways: the direct command; the argument
#    shape mount.fuse3 gives the daemon (SOURCE DIR -o ...,dev,suid, the
#    two words it adds to every mount); mount.fuse3 itself; -o remount
#    with mount.fuse3's words.  Setuid binaries and device nodes on the
#    mount do nothing then (checked as another user).
#  - the opt-in: -o allow_suid gives suid, -o allow_dev gives dev, and
#    they work; nosuid/nodev given with them win.
#  - an fstab line without a config file: the source tierfs:default (the
#    default stack) or tierfs:NAME+NAME with -o tier=...; mount.fuse3
#    mounts it, the mount shows that source, and `mount -a` sees the
#    line mounted.  A source that does not name the tiers mounts with a
#    warning naming the one the mount shows; a bad one is refused.
. "$(dirname "$0")/lib.sh"
t_need_progs

opts() { findmnt -n -o OPTIONS "$1"; }
# flags DIR -- "suid" or "nosuid", then "dev" or "nodev"
flags() {
	local o=",$(opts "$1"),"
	case $o in *,nosuid,*) printf nosuid ;; *) printf suid ;; esac
	case $o in *,nodev,*) echo " nodev" ;; *) echo " dev" ;; esac
}

# --- the direct command: nosuid,nodev, also when asked for dev,suid
t_mount --tier ram=ram:16M
t_eq "$(flags "$MNT")" "nosuid nodev" "flags of a direct mount"
t_remount --tier ram=ram:16M -o dev,suid
t_eq "$(flags "$MNT")" "nosuid nodev" "flags of a direct mount with -o dev,suid"

# --- mount.fuse3's argument shape, with the default stack's source
t_remount tierfs:default --tier ram=ram:16M -o rw,dev,suid
t_eq "$(flags "$MNT")" "nosuid nodev" "flags with mount.fuse3's dev,suid"
t_eq "$(findmnt -n -o SOURCE "$MNT")" "tierfs:ram" "source of tierfs:default with a tier"
t_eq "$(cat "$T_LOG")" "tierfs: the source 'tierfs:default' does not name this mount's tiers: it shows as 'tierfs:ram'; give that as the fstab line's first field, so that mount -a sees it mounted" \
	"the source warning"
t_remount tierfs:ram -o tier=ram=ram:16M,rw,dev,suid
t_eq "$(findmnt -n -o SOURCE "$MNT")" "tierfs:ram" "source tierfs:ram"
[ -s "$T_LOG" ] && t_fail "a source that names the tiers warned: '$(cat "$T_LOG")'"
# mount -a of a line whose source does not name the tiers, over the
# live mount: refused in one line (no warning before it)
out=$("$TIERFS_BIN" tierfs:default "$MNT" -o tier=ram=ram:16M,dev,suid 2>&1) &&
	t_fail "a second tierfs over the live one mounted"
t_eq "$(printf '%s\n' "$out" | wc -l)" 1 "lines of the refusal ($out)"
t_like "$out" "*already a live tierfs mount (source tierfs:ram)*" "the refusal"

# setuid and device nodes do nothing (as uid 65534)
setuid_check() {
	cp "$(command -v id)" "$MNT/id" && chmod 4755 "$MNT/id" ||
		t_fail "cannot make a setuid binary on the mount"
	mknod "$MNT/null" c 1 3 && chmod 666 "$MNT/null" ||
		t_fail "cannot make a device node on the mount"
	SUID_EUID=$(t_as 65534:65534 "$MNT/id" -u 2>&1)
	if t_as 65534:65534 sh -c "echo x >'$MNT/null'" 2>/dev/null; then
		DEV_WORKS=yes
	else
		DEV_WORKS=no
	fi
	rm -f "$MNT/id" "$MNT/null"
}
t_remount tierfs:ram -o tier=ram=ram:16M,allow_other,dev,suid
setuid_check
t_eq "$SUID_EUID" 65534 "euid of a setuid-root binary on a nosuid mount"
t_eq "$DEV_WORKS" no "a device node on a nodev mount opens"

# --- the opt-in, as an fstab line would give it
t_remount tierfs:ram -o tier=ram=ram:16M,allow_other,allow_suid,dev,suid
t_eq "$(flags "$MNT")" "suid nodev" "flags with allow_suid"
setuid_check
t_eq "$SUID_EUID" 0 "euid of a setuid-root binary with allow_suid"
t_eq "$DEV_WORKS" no "a device node with allow_suid only"
t_remount tierfs:ram -o tier=ram=ram:16M,allow_other,allow_dev,dev,suid
t_eq "$(flags "$MNT")" "nosuid dev" "flags with allow_dev"
setuid_check
t_eq "$DEV_WORKS" yes "a device node with allow_dev"
t_remount --tier ram=ram:16M -o allow_suid,allow_dev
t_eq "$(flags "$MNT")" "suid dev" "flags with allow_suid,allow_dev on the command line"
t_remount --tier ram=ram:16M -o allow_suid,allow_dev,nosuid,nodev
t_eq "$(flags "$MNT")" "nosuid nodev" "nosuid,nodev win over allow_suid,allow_dev"

# --- -o remount as mount.fuse3 runs it: its dev,suid change nothing
# (the binary itself: a remount takes no --transport, which
# TIERFS_TEST_TRANSPORT's wrapper would add)
t_remount tierfs:ram -o tier=ram=ram:16M
"$TIERFS_BIN_REAL" tierfs:ram "$MNT" -o remount,ro,dev,suid || t_fail "remount ro"
t_like "$(opts "$MNT")" "ro,nosuid,nodev*" "options after remount,ro,dev,suid"
# an fstab line's plain "tierfs" names no particular mount: accepted
"$TIERFS_BIN_REAL" tierfs "$MNT" -o remount,rw,dev,suid || t_fail "remount rw with source tierfs"
t_like "$(opts "$MNT")" "rw,nosuid,nodev*" "options after remount,rw,dev,suid"
"$TIERFS_BIN_REAL" tierfs:ram "$MNT" -o remount,allow_suid,dev,suid || t_fail "remount allow_suid"
t_eq "$(flags "$MNT")" "suid nodev" "flags after remount,allow_suid"
"$TIERFS_BIN_REAL" tierfs:ram "$MNT" -o remount,dev,suid || t_fail "remount without allow_suid"
t_eq "$(flags "$MNT")" "nosuid nodev" "flags after a remount without allow_suid"
t_unmount

# --- bad sources: one line, nothing mounted
out=$("$TIERFS_BIN" tierfs:ram/x --tier ram=ram:16M "$MNT" 2>&1) &&
	t_fail "tierfs:ram/x mounted"
t_like "$out" "tierfs: bad source 'tierfs:ram/x': give a config file, or tierfs:default*" "a bad source"
t_is_mounted "$MNT" && t_fail "a bad source left a mount"

# --- mount.fuse3 itself, as mount(8) runs it for an fstab line (PATH
# is ours here: mount(8) itself would look in /usr/local/sbin etc.)
if command -v mount.fuse3 >/dev/null; then
	mkdir -p "$T/bin" "$T/fm" "$T/fd"
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$TIERFS_BIN" >"$T/bin/tierfs"
	chmod 755 "$T/bin/tierfs"
	PATH=$T/bin:$PATH mount.fuse3 tierfs:ram "$T/fm" -t fuse.tierfs \
		-o tier=ram=ram:16M,nofail 2>"$T/fm.err" ||
		t_fail "mount.fuse3 tierfs:ram: $(cat "$T/fm.err")"
	T_EXTRA_MOUNTS+=("$T/fm")
	t_eq "$(findmnt -n -o SOURCE "$T/fm")" tierfs:ram "source through mount.fuse3"
	t_eq "$(flags "$T/fm")" "nosuid nodev" "flags through mount.fuse3"
	printf 'tierfs:ram %s fuse.tierfs tier=ram=ram:16M,nofail 0 0\n' "$T/fm" >"$T/fstab"
	out=$(mount -T "$T/fstab" -a -v 2>&1) || t_fail "mount -a: $out"
	t_like "$out" "*already mounted*" "mount -a on the mounted tierfs:ram line"

	# the default stack from fstab (its RAM tier a quarter of a stand-in
	# memory size; its file tier in /var/tmp/tierfs-0 is sparse)
	TIERFS_TEST_MEMORY=1G PATH=$T/bin:$PATH mount.fuse3 tierfs:default "$T/fd" \
		-t fuse.tierfs -o allow_other,nofail 2>"$T/fd.err" ||
		t_fail "mount.fuse3 tierfs:default: $(cat "$T/fd.err")"
	T_EXTRA_MOUNTS+=("$T/fd")
	t_eq "$(findmnt -n -o SOURCE "$T/fd")" tierfs:default "source of the default stack through mount.fuse3"
	t_eq "$(flags "$T/fd")" "nosuid nodev" "flags of the default stack through mount.fuse3"
	echo data >"$T/fd/f" && t_eq "$(cat "$T/fd/f")" data "a file on the default stack"
	printf 'tierfs:default %s fuse.tierfs allow_other,nofail 0 0\n' "$T/fd" >"$T/fstab"
	out=$(mount -T "$T/fstab" -a -v 2>&1) || t_fail "mount -a: $out"
	t_like "$out" "*already mounted*" "mount -a on the mounted tierfs:default line"
	for m in "$T/fm" "$T/fd"; do
		t_wait_until 5 fusermount3 -u "$m" || t_fail "unmount of $m"
	done
fi
t_pass
