#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: posix
# TIMEOUT: 60
#
# unlink and rmdir: error cases (ENOENT, EISDIR, ENOTEMPTY, ENOTDIR,
# EINVAL), an unlinked open file stays readable and writable through its fd
# until close (by this process and by another), removing a directory that
# is a process's cwd, and reuse of names.
. "$(dirname "$0")/lib.sh"
t_need_progs
SC=$PROGS/sc

t_mount --tier ram=ram:64M
cd "$MNT" || t_fail cd

mkdir -p dir/sub full || t_fail mkdir
echo x >file && echo y >full/f || t_fail create
touch full/.hidden dir/sub/.only || t_fail touch

t_errno ENOENT "$SC" unlink missing
t_errno ENOENT "$SC" rmdir missing
t_errno EISDIR "$SC" unlink dir
t_errno ENOTDIR "$SC" rmdir file
t_errno ENOTEMPTY "$SC" rmdir full
t_errno ENOTEMPTY "$SC" rmdir dir/sub
t_errno ENOTEMPTY "$SC" rmdir dir
t_errno EINVAL "$SC" rmdir dir/sub/.
t_errno ENOTDIR "$SC" unlink file/x
t_ok "$SC" unlink dir/sub/.only
t_ok "$SC" rmdir dir/sub
t_errno ENOENT "$SC" stat dir/sub
t_ok "$SC" rmdir dir
t_eq "$(ls -A | sort | tr '\n' ' ')" "file full " "listing after rmdir"
t_ok "$SC" unlink file
t_errno ENOENT "$SC" stat file
# names can be reused, with the other type
t_ok "$SC" mkdir file 0755
t_ok "$SC" open dir creat,w
t_eq "$(t_stat type file):$(t_stat type dir)" dir:reg "reused names"

# unlinked open file: this process, through the fd (C program)
t_ok "$PROGS/iomodes" unlink-open "$MNT/uo"
# (it leaves a new 3-byte file of the same name behind)
t_eq "$(cat uo)" new "new file made after unlink-open"

# unlinked open file held by another process
"$PROGS/pattern" w "$MNT/held" 0 3M >/dev/null || t_fail "write held"
exec 3<"$MNT/held"
rm held || t_fail "rm held"
t_errno ENOENT "$SC" stat held
"$PROGS/pattern" v /dev/fd/3 0 3M >/dev/null ||
	t_fail "unlinked file not readable through /dev/fd in another process"
exec 3<&-
# after the last close a new file of the same name starts empty
t_ok "$SC" open held creat,w
t_eq "$(t_stat size held)" 0 "new file with the old name"

# rmdir of another process's working directory
mkdir gone || t_fail mkdir
(
	cd gone || exit 3
	rmdir "$MNT/gone" || exit 4
	ls -a . >/dev/null 2>&1
	touch newfile 2>/dev/null && exit 5
	exit 0
)
rc=$?
[ $rc -ne 5 ] || t_fail "created a file in a removed directory"
t_eq "$rc" 0 "removing the cwd of a process"
t_errno ENOENT "$SC" stat gone
t_ok "$SC" stat full/f

cd /
t_pass
