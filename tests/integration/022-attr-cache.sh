#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 180
#
# The kernel caches names, negative names and attributes for a day
# (fs/ops.c): prove that it never shows stale ones.  Each check reads the
# attribute the way a program does (the kernel's cache, if it has one)
# and then forced from the daemon (statx AT_STATX_FORCE_SYNC, i.e.
# `stat --cached=never`), and the two must agree -- in that order, since
# the forced read refreshes the cache.  Where the right value is known it
# is checked too, so a cache and a daemon that agree on a wrong value
# fail as well.
#
# Cases: st_blocks (du) after writes, an fsync'd write of a file still
# open, truncate, punch (fallocate -p) and copy_file_range; nlink through
# another name after link and unlink; a negative entry, then a create of
# that name; rename over an existing name; chmod, chown and utimes; suid
# cleared by a write; atime after a read that reaches the daemon; ctime
# after a policy xattr; st_blocks after tierctl migrate moved the data
# between tiers; and a readdirplus listing (ls -l) followed by removal and
# forgets: the daemon's inode count must come back (lookup counts exact).
# Run with the writeback cache on (the default) and off.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc
TC=${TIERCTL:-}
MiB=$((1024 * 1024))

# same WHAT FORMAT PATH: the cached value (stat format FORMAT of PATH)
# is the daemon's; prints it
same() {
	local c f
	c=$(stat -c "$2" "$3") || t_fail "stat $3"
	f=$(stat --cached=never -c "$2" "$3") || t_fail "stat --cached=never $3"
	[ "$c" = "$f" ] || t_fail "$1: the kernel shows '$c', the daemon '$f'"
	echo "$c"
}

# every stat field that can be cached, at once
same_all() {
	same "$1" '%b %s %h %a %u %g %X %Y %Z' "$2" >/dev/null
}

run_cases() {
	local mode=$1 f b b2 n i

	mkdir "$MNT/$mode" || t_fail mkdir
	cd "$MNT/$mode" || t_fail cd

	# ---- st_blocks after a write, a truncate, a punch
	: >f || t_fail create
	stat -c %b f >/dev/null # cache the empty file's attributes
	t_eq "$(same "$mode: blocks of an empty file" %b f)" 0 "$mode: empty file blocks"
	head -c $((3 * MiB)) /dev/urandom >f || t_fail write
	b=$(same "$mode: blocks after a 3M write" %b f)
	[ "$b" -ge $((3 * MiB / 512)) ] || t_fail "$mode: 3M written, $b blocks"
	t_eq "$(du -k f | cut -f1)" "$((b / 2))" "$mode: du after the write"
	t_ok "$SC" fallocate f punch 0 $((3 * MiB))
	t_eq "$(same "$mode: blocks after a punch" %b f)" 0 "$mode: blocks after punching it all"
	t_eq "$(same "$mode: size after a punch" %s f)" $((3 * MiB)) "$mode: size after a punch"
	head -c $((2 * MiB)) /dev/urandom | dd of=f conv=notrunc status=none || t_fail rewrite
	b=$(same "$mode: blocks after a rewrite" %b f)
	[ "$b" -ge $((2 * MiB / 512)) ] || t_fail "$mode: 2M rewritten, $b blocks"
	truncate -s 0 f || t_fail truncate
	t_eq "$(same "$mode: blocks after truncate" %b f)" 0 "$mode: blocks after truncate to 0"
	t_eq "$(du -k f | cut -f1)" 0 "$mode: du after truncate"
	truncate -s $((5 * MiB)) f || t_fail "truncate up"
	t_eq "$(same "$mode: blocks after truncate up" %b f)" 0 "$mode: a hole holds nothing"
	t_eq "$(same "$mode: size after truncate up" %s f)" $((5 * MiB)) "$mode: size"

	# ---- a write the kernel's writeback sends after we stat'ed: the
	# program's write(2) is long done when the daemon allocates
	rm -f g
	exec 3>g || t_fail "open g"
	head -c $((2 * MiB)) /dev/urandom >&3 || t_fail "write g"
	stat -c %b g >/dev/null # may cache blocks before the writeback
	sync g || t_fail "fsync g" # the writeback, g still open
	b=$(same "$mode: blocks after fsync of an open file" %b g)
	[ "$b" -ge $((2 * MiB / 512)) ] || t_fail "$mode: 2M fsync'd, $b blocks"
	exec 3>&-
	same_all "$mode: g after close" g

	# ---- copy_file_range into a file whose attributes are cached
	: >h
	stat -c %b h >/dev/null
	cp g h || t_fail "copy g h" # copy_file_range, where cp uses it
	b2=$(same "$mode: blocks after copy" %b h)
	[ "$b2" -ge $((2 * MiB / 512)) ] || t_fail "$mode: 2M copied, $b2 blocks"

	# ---- nlink through another name
	echo data >a
	t_eq "$(same "$mode: nlink a" %h a)" 1 "$mode: nlink of a new file"
	ln a b || t_fail link
	t_eq "$(same "$mode: nlink a after link" %h a)" 2 "$mode: nlink of a after link"
	t_eq "$(same "$mode: nlink b after link" %h b)" 2 "$mode: nlink of b after link"
	mkdir -p sub
	ln a sub/c || t_fail "link into sub"
	rm b || t_fail unlink
	t_eq "$(same "$mode: nlink a after unlink of b" %h a)" 2 "$mode: nlink of a after unlink of b"
	t_eq "$(same "$mode: nlink c after unlink of b" %h sub/c)" 2 "$mode: nlink of sub/c"
	rm a || t_fail "unlink a"
	t_eq "$(same "$mode: nlink c after unlink of a" %h sub/c)" 1 "$mode: nlink of sub/c at last"
	same_all "$mode: sub/c" sub/c

	# ---- negative entries: absent, then created, renamed in, linked in
	for n in neg1 neg2 neg3; do
		t_errno ENOENT "$SC" stat "$n"
		t_errno ENOENT "$SC" stat "$n" # now from the cache, if at all
	done
	echo one >neg1 || t_fail "create neg1"
	t_eq "$(cat neg1)" one "$mode: a file created after a negative lookup"
	echo two >tmp2 && mv tmp2 neg2 || t_fail "rename to neg2"
	t_eq "$(cat neg2)" two "$mode: a file renamed onto a negative entry"
	ln neg1 neg3 || t_fail "link to neg3"
	t_eq "$(same "$mode: nlink neg3" %h neg3)" 2 "$mode: a link made onto a negative entry"
	mkdir negd 2>/dev/null && rmdir negd
	t_errno ENOENT "$SC" stat negd
	mkdir negd || t_fail "mkdir negd"
	t_check test -d negd

	# ---- rename over an existing name
	echo old >r1
	echo new >r2
	stat r1 r2 >/dev/null
	oldino=$(stat -c %i r1)
	newino=$(stat -c %i r2)
	mv r2 r1 || t_fail "rename over"
	t_errno ENOENT "$SC" stat r2
	t_eq "$(cat r1)" new "$mode: data after rename over"
	t_eq "$(same "$mode: ino after rename over" %i r1)" "$newino" "$mode: r1 is the renamed file"
	[ "$oldino" != "$newino" ] || t_fail "$mode: two files, one inode number"
	echo again >r2 || t_fail "create r2 after it was renamed away"
	t_eq "$(cat r2)" again "$mode: r2 made again"
	mv r1 sub/r1 || t_fail "rename into sub"
	t_errno ENOENT "$SC" stat r1
	t_eq "$(cat sub/r1)" new "$mode: renamed into sub"

	# ---- chmod, chown, utimes, seen at once
	stat r2 >/dev/null
	chmod 0640 r2 || t_fail chmod
	t_eq "$(same "$mode: mode" %a r2)" 640 "$mode: chmod"
	chown 1234:5678 r2 || t_fail chown
	t_eq "$(same "$mode: owner" '%u:%g' r2)" 1234:5678 "$mode: chown"
	touch -m -d @1000000000 r2 || t_fail "touch -m"
	t_eq "$(same "$mode: mtime" %Y r2)" 1000000000 "$mode: utimes mtime"
	touch -a -d @1100000000 r2 || t_fail "touch -a"
	t_eq "$(same "$mode: atime" %X r2)" 1100000000 "$mode: utimes atime"
	same_all "$mode: r2" r2

	# ---- suid cleared by a write of another user (killpriv)
	echo x >s
	chown 4321:4321 s && chmod 06755 s || t_fail "chmod s"
	chmod o+w s "$MNT/$mode" || t_fail "chmod o+w"
	stat s >/dev/null
	t_as 1111:1111 sh -c 'echo more >>"$1"' sh "$MNT/$mode/s" ||
		t_fail "$mode: write as another user"
	m=$(same "$mode: mode after a write clearing suid" %a s)
	[ $((8#$m & 8#4000)) -eq 0 ] || t_fail "$mode: suid kept after a write: $m"
	same_all "$mode: s" s

	# ---- atime after a read that reaches the daemon (O_DIRECT), and a
	# listing
	head -c 65536 /dev/urandom >at
	touch -a -d @1000000000 at
	t_eq "$(stat -c %X at)" 1000000000 "$mode: atime set"
	dd if=at of=/dev/null iflag=direct bs=65536 status=none || t_fail "direct read"
	i=$(same "$mode: atime after a read" %X at)
	[ "$i" -gt 1000000000 ] || t_fail "$mode: atime not updated by a read"
	touch -a -d @1000000000 sub
	ls sub >/dev/null
	i=$(same "$mode: directory atime after a listing" %X sub)
	[ "$i" -gt 1000000000 ] || t_fail "$mode: atime not updated by a listing"

	# ---- ctime after a policy change (an xattr of the daemon's)
	stat at >/dev/null
	setfattr -n user.tierfs.tiers -v ram at || t_fail "set a policy"
	same_all "$mode: at after a policy" at

	# ---- readdirplus: ls -l of many names, then the kernel forgets
	mkdir many
	for i in $(seq 1 300); do : >many/e$i; done
	ls -l many >/dev/null || t_fail "ls -l"
	find many -type f | wc -l | grep -qx 300 || t_fail "$mode: find saw not 300 files"
	t_eq "$(ls -l many | grep -c '^-')" 300 "$mode: ls -l lists them all"
	rm -r many || t_fail "rm -r many"

	cd / || t_fail cd
}

# migrate: st_blocks as the data moves between tiers
run_migrate() {
	local f=$MNT/mig/f b
	mkdir "$MNT/mig"
	head -c $((3 * MiB + 4096)) /dev/urandom >"$f" || t_fail "write mig"
	b=$(same "blocks before migrate" %b "$f")
	"$TC" migrate -q "$f" disk || t_fail "tierctl migrate to disk"
	getfattr --absolute-names --only-values -n user.tierfs.layout "$f" | grep -q '^ram=0 ' ||
		t_fail "migrate left data on ram: $(getfattr --absolute-names --only-values -n user.tierfs.layout "$f")"
	b=$(same "blocks after migrate to disk" %b "$f")
	[ "$b" -gt 0 ] || t_fail "no blocks after migrate"
	same_all "after migrate to disk" "$f"
	"$TC" migrate -q "$f" ram || t_fail "tierctl migrate to ram"
	same_all "after migrate to ram" "$f"
	"$TC" migrate -q "$MNT/mig" disk || t_fail "tierctl migrate a tree"
	same_all "after migrate of the tree" "$f"
}

# the daemon's inode count (df -i)
inodes_used() {
	"$PROGS/sc" statfs "$MNT" | sed -n 's/.* files=\([0-9]*\) ffree=\([0-9]*\).*/\1 \2/p' |
		{ read -r files ffree; echo $((files - ffree)); }
}

# back to @1 once the kernel has forgotten what it may (the forgets of
# removed files are asynchronous: wait for them)
inodes_back_to() {
	sync
	echo 2 >/proc/sys/vm/drop_caches
	[ "$(inodes_used)" = "$1" ]
}

for wb in on off; do
	args=(-o allow_other --tier ram=ram:64M --tier disk=file:$T/disk:256M)
	[ $wb = off ] && args+=(--no-writeback-cache)
	mkdir -p "$T/disk"
	t_mount "${args[@]}"
	before=$(inodes_used)
	run_cases "wb$wb"
	[ -n "$TC" ] && run_migrate
	rm -rf "$MNT"/* || t_fail "rm -rf"
	t_wait_until 20 inodes_back_to "$before" ||
		t_fail "writeback $wb: $(inodes_used) inodes in use after removing everything, $before before (lookup counts)"
	t_unmount
done
t_pass
