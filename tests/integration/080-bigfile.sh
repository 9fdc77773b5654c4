#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: capacity
# TIMEOUT: 300
#
# A 2 GiB file on a 3G RAM tier: written with a position-dependent pattern,
# verified in full with O_DIRECT (so the daemon serves it) and in samples
# through the page cache, size,
# st_blocks, layout and statfs checked, then deleted and the space is back.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
G=1073741824

t_mount --tier ram=ram:3G
start=$(date +%s)
t_check "$P" -j 2 -b 1M -s 77 -f w "$MNT/big" 0 2G >/dev/null
t_eq "$(t_stat size "$MNT/big")" $((2 * G)) "size"
# O_DIRECT: the daemon serves every byte, not the page cache
t_check "$P" -d -j 2 -b 1M -s 77 v "$MNT/big" 0 2G >/dev/null
echo "2 GiB written and verified in $(($(date +%s) - start)) s"
# buffered reads of samples, across the 2^31 - 1 boundary region
for off in 0 $((G - 3)) $((2 * G - 1048576 - 5)); do
	t_check "$P" -s 77 v "$MNT/big" $off 1048576 >/dev/null
done
b=$(t_stat blocks "$MNT/big")
[ $((b * 512)) -ge $((2 * G)) ] || t_fail "st_blocks $b of a 2 GiB file"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$MNT/big" 2>&1)" "ram=$((2 * G))" "layout"
free=$(($(t_statfs bfree "$MNT") * $(t_statfs frsize "$MNT")))
t_eq "$free" $((1 * G)) "statfs free with 2 GiB used"
# the last bytes, read by a different tool
tail -c 8 "$MNT/big" | od -An -tx1 >"$T/tail" || t_fail "tail"
"$P" -s 77 w "$T/ref" $((2 * G - 8)) 8 >/dev/null || t_fail "reference"
tail -c 8 "$T/ref" | od -An -tx1 | cmp -s - "$T/tail" || t_fail "last 8 bytes differ"
rm -f "$T/ref"
rm "$MNT/big" || t_fail rm
free_is() { [ $(($(t_statfs bfree "$MNT") * $(t_statfs frsize "$MNT"))) = $((3 * G)) ]; }
t_wait_until 10 free_is || t_fail "space not back after deleting the 2 GiB file"

t_pass
