#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: readdir
# TIMEOUT: 60
#
# A listing must end even when the lister renames every entry it gets to a
# new name in the same directory (fstests generic/736; btrfs fixed the same
# infinite loop in Linux 6.5).  Renamed entries may come back, but not
# without bound: more than 4x the directory's size fails (ext4 returns
# about 1.5x, tmpfs 1x).  No file may be lost or doubled by the renames.
. "$(dirname "$0")/lib.sh"
t_need_progs

t_mount --tier ram=ram:64M
mkdir "$MNT/r" || t_fail mkdir
t_check "$PROGS/dirtest" renameloop "$MNT/r" 5000

t_pass
