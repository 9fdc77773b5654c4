#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: migrate
# TIMEOUT: 180
#
# A migrator whose cost follows what changed (issue 12).  Among 20,000
# empty files and two files with data (RAM 8M over a 64M file tier,
# 1M extents, watermarks 75/50):
#  - passes look only at the inodes with data: the migrator's
#    visited_inodes grows by at most 2 per pass, and while nothing
#    changes every pass is idle and looks at nothing;
#  - a hot region of a file on the file tier, read in passes, still
#    reaches RAM (exchanged with the colder file there), and a write that
#    puts RAM above its high watermark still demotes the coldest extents
#    down to the low one;
#  - a removed file leaves the tracker (tracked_inodes) and gives its
#    space back at once.
# Waiting is counted in migrator passes, not seconds.  The counters come
# from the "migrator" stats record; a daemon whose stats do not show them
# yet (fs/fs.c prints the record) gets the behaviour checks only, and the
# test says so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"

mkdir -p "$T/disk" || t_fail mkdir
t_mount --tier ram=ram:8M --tier disk=file:"$T/disk":64M \
	--high-watermark 75 --low-watermark 50

# the empty files, created as fast as one process can
mkdir "$MNT/e" || t_fail mkdir
python3 - "$MNT/e" <<'EOF' || t_fail "creating 20,000 empty files failed"
import os, sys
d = sys.argv[1]
for i in range(20000):
    os.close(os.open(f"{d}/f{i}", os.O_CREAT | os.O_WRONLY, 0o644))
EOF
t_eq "$(find "$MNT/e" -type f | wc -l)" 20000 "empty files"

# cold: 5M in RAM; hot: 4M placed on the file tier by a policy that is
# then removed (so the migrator may bring it up)
pat_w -s 1 "$MNT/cold" 0 5M
touch "$MNT/hot" || t_fail touch
setfattr -n user.tierfs.tiers -v disk "$MNT/hot" || t_fail setfattr
pat_w -s 2 "$MNT/hot" 0 4M
setfattr -x user.tierfs.tiers "$MNT/hot" || t_fail "setfattr -x"
t_eq "$(layout "$MNT/hot")" "ram=0 disk=$((4 * M))" "layout of the hot file"
t_eq "$(layout "$MNT/cold")" "ram=$((5 * M)) disk=0" "layout of the cold file"

# one stats record, several keys at one instant: "passes visited_inodes"
mig() {
	stats | awk -v keys="$*" '
		$1 == "migrator" {
			n = split(keys, k, " ")
			for (j = 1; j <= n; j++)
				for (i = 2; i <= NF; i++)
					if (index($i, k[j] "=") == 1)
						v[j] = substr($i, length(k[j]) + 2)
			out = v[1]
			for (j = 2; j <= n; j++)
				out = out " " v[j]
			print out
		}'
}
counters=0
if mstat visited_inodes >/dev/null; then
	counters=1
else
	echo "note: this daemon's stats show no visited_inodes (fs/fs.c); counter checks skipped"
fi

# at most 2 inodes (the files with data) per pass, from @1 @2 on
check_visits() {
	local p0=$1 v0=$2 p1 v1
	read -r p1 v1 <<<"$(mig passes visited_inodes)"
	echo "passes $p0 -> $p1, visited inodes $v0 -> $v1"
	[ $((v1 - v0)) -le $((2 * (p1 - p0))) ] ||
		t_soft_fail "passes visited $((v1 - v0)) inodes in $((p1 - p0)) passes, with 2 files holding data"
}

wait_idle
if [ "$counters" = 1 ]; then
	read -r p0 v0 i0 <<<"$(mig passes visited_inodes idle_passes)"
	wait_passes 4
	read -r p1 v1 i1 <<<"$(mig passes visited_inodes idle_passes)"
	t_eq "$((v1 - v0))" 0 "inodes visited by passes while nothing changed"
	[ $((i1 - i0)) -ge 4 ] || t_soft_fail "idle passes $i0 -> $i1 over passes $p0 -> $p1"
	t_eq "$(mstat tracked_inodes)" 2 "inodes with data in the tracker"
	read -r p0 v0 <<<"$(mig passes visited_inodes)"
fi

# hot: the first 2M read in passes, O_DIRECT, 0.5 s apart
hot_up() { [ "$(extents "$MNT/hot" | head -n 1)" = "0 $((2 * M)) ram" ]; }
for ((i = 0; i < 30; i++)); do
	pat_v -d -s 2 "$MNT/hot" 0 2M
	hot_up && break
	sleep 0.5
done
t_wait_until 3 hot_up ||
	t_fail "hot region not in RAM: $(extents "$MNT/hot" | tr '\n' ';')"
echo "hot region in RAM after $((i + 1)) read passes: cold $(layout "$MNT/cold")"
wait_idle
t_eq "$(on_tier ram "$MNT/hot")" $((2 * M)) "RAM bytes of the hot file (the unread half stays)"
[ "$(tstat ram promotions)" -ge 2 ] || t_soft_fail "promotions into RAM: $(tstat ram promotions)"

# cold: 3M more of it puts RAM (6M, at the high mark) above 75%; the
# coldest go down until RAM holds 4M, its low watermark
pat_w -s 1 "$MNT/cold" 5M 3M
used_is() { [ "$(tstat "$1" used)" = "$2" ]; }
wait_for 20 'RAM not down to the low watermark: used $(tstat ram used)' used_is ram $((4 * M))
wait_idle
t_eq "$(tstat ram used)" $((4 * M)) "RAM used after demotion"
[ "$(tstat ram demotions)" -ge 3 ] || t_soft_fail "demotions from RAM: $(tstat ram demotions)"
t_eq "$(on_tier ram "$MNT/hot")" $((2 * M)) "the hot region stays in RAM"
pat_v -d -s 1 "$MNT/cold" 0 8M
pat_v -d -s 2 "$MNT/hot" 0 4M
t_eq "$(mstat failures)" 0 "migration failures"
[ "$counters" = 1 ] && check_visits "$p0" "$v0"

# removed: out of the tracker, and its space back at once
rm "$MNT/hot" || t_fail rm
held() { [ "$(($(tstat ram used) + $(tstat disk used)))" = $((8 * M)) ]; }
wait_for 5 'space of the removed file held: ram $(tstat ram used) disk $(tstat disk used)' held
if [ "$counters" = 1 ]; then
	t_eq "$(mstat tracked_inodes)" 1 "inodes with data after rm"
	wait_idle
	read -r p0 v0 <<<"$(mig passes visited_inodes)"
	wait_passes 3
	read -r p1 v1 <<<"$(mig passes visited_inodes)"
	t_eq "$((v1 - v0))" 0 "inodes visited while idle after rm"
fi
rm -r "$MNT/e" "$MNT/cold" || t_fail "rm -r"
wait_for 5 'space held after removing everything: ram $(tstat ram used) disk $(tstat disk used)' \
	eval '[ "$(tstat ram used)" = 0 ] && [ "$(tstat disk used)" = 0 ]'
[ "$counters" = 1 ] && t_eq "$(mstat tracked_inodes)" 0 "inodes with data at the end"
t_done
