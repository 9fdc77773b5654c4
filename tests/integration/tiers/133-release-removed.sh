#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 90
# IO: tiered extents of removed files in the migrator
#
# A file removed while the migrator is moving it gives its space back at
# once, not when the pass ends (issue 10, bug 6).  RAM 8M over a file
# tier, watermarks 50/10 and a migration bandwidth of 1M/s: filling RAM
# starts a pass that demotes 7 extents, one a second.  The file is
# removed during that pass; both tiers must be empty again within 3 s
# (the old code held the space for the rest of the pass, 6 s or more),
# and the migrator must not count the removed file's extents as moved.
# A removed file that is still open keeps its data and stays readable.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/disk" || t_fail mkdir
used_is() { [ "$(tstat "$1" used)" = "$2" ]; }
empty() { used_is ram 0 && used_is disk 0; }

t_mount --tier ram=ram:8M --tier disk=file:"$T/disk":64M \
	--high-watermark 50 --low-watermark 10 --migrate-bw 1M
pat_w -s 1 "$MNT/a" 0 8M
wait_for 10 'the migrator did not start demoting: disk used $(tstat disk used)' \
	eval '[ "$(tstat disk used)" -gt 0 ]'
moved=$(mstat moved)
rm "$MNT/a" || t_fail rm
t_wait_until 3 empty ||
	t_fail "space of a removed file held: ram $(tstat ram used) disk $(tstat disk used)"
sleep 1.5
m2=$(mstat moved)
[ "$m2" -le $((moved + 1)) ] ||
	t_fail "the migrator went on moving a removed file: moved $moved -> $m2"

# removed but open: the data stays, and so does its space
pat_w -s 2 "$MNT/b" 0 8M
wait_for 10 'no demotion of b: disk used $(tstat disk used)' \
	eval '[ "$(tstat disk used)" -gt 0 ]'
exec 7<"$MNT/b"
rm "$MNT/b" || t_fail rm
sleep 2
# ram and disk are read one after the other, and a move may be under way
# between the reads (its copy holds a slot on both tiers for a moment):
# the sum must come back to 8M; the data itself is checked next
held_8m() { [ $(($(tstat ram used) + $(tstat disk used))) -eq $((8 * M)) ]; }
wait_for 10 'an open removed file lost space: ram $(tstat ram used) disk $(tstat disk used)' held_8m
t_check "$PROGS/pattern" -s 2 v /dev/fd/7 0 8M >/dev/null
exec 7<&-
t_wait_until 5 empty || t_fail "space of b held after its last close"
t_pass
