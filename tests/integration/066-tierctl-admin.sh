#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: tools
# TIMEOUT: 180
# IO: tiered per-tier read counters of the daemon's reads
#
# tierctl as an admin meets it (issue 19, items 6 and 10), through a live
# mount and a dead one -- a second tierfs whose daemon is killed with
# kill -9, so that every call on it fails with ENOTCONN:
# - stats --prometheus over both: exit 0, tierfs_up 1 for the live mount
#   and 0 for the dead one, tierfs_build_info{version=...}, the live
#   mount's metrics complete and none for the dead one (the output parsed
#   against the exposition format), and one stderr line naming the dead
#   mount and the 'umount -l' that clears it; text stats of both says
#   which mount each block is;
# - every other verb on the dead mount (and on a path inside it, and by
#   a relative path) says which mount is dead and 'umount -l MOUNT';
#   after that umount -l the mount is gone from the reports;
# - status --json (parsed with python3): every mount, up or not, and the
#   tiers with read_share and drained; layout --json;
# - status: a header of two short lines (not one of 140 columns), READ%
#   (the read share) instead of HIT%; a drained tier is marked in status,
#   status --json, top and the Prometheus export; 'drain MOUNT -' ends
#   draining as the protocol's "-" does;
# - top without MOUNT reports every mount;
# - layout and migrate count the bytes the tiers hold, not whole extents
#   (a 4000-byte file with 4M extents holds one 16K unit, not 4M);
# - policy get/set escape an unknown KEY; split sizes read back in units;
# - user.tierfs.ctl.migrate refuses numbers of 2^64 and more;
# - bash completion offers quota, and "-" after drain MOUNT.
#
# Environment: TIERCTL (path of tierctl; meson sets it).
. "$(dirname "$0")/lib.sh"
t_need_progs

: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$TIERCTL" ] || t_fail "tierctl binary '$TIERCTL' missing (set TIERCTL)"
command -v getfattr >/dev/null || t_skip "getfattr (attr package) missing"
command -v python3 >/dev/null || t_skip "python3 missing"
TC=$TIERCTL
SC=$PROGS/sc
K=1024
M=$((K * K))
COMPLETION=$(dirname "$0")/../../contrib/bash-completion/tierctl

mkdir -p "$T/disk"
t_mount --no-migrate --extent-size 4M --tier ram=ram:16M --tier "disk=file:$T/disk:64M"

# tc_run NAME ARGS... -- run tierctl, keep stdout/stderr/status in
# $T/NAME.out, $T/NAME.err and $RC
tc_run() {
	local name=$1
	shift
	"$TC" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}

# tc_err_is NAME WANT -- stderr is exactly one line, WANT
tc_err_is() {
	t_eq "$(cat "$T/$1.err")" "$2" "$1: stderr"
	t_eq "$(wc -l <"$T/$1.err")" 1 "$1: stderr lines"
}

# prom_check FILE -- FILE is the text exposition format: HELP and TYPE
# before the samples of each family, every family once, labels well formed
prom_check() {
	python3 - "$1" <<'EOF' || t_fail "not the exposition format: $(cat "$1")"
import re, sys
fams, cur = set(), None
help_re = re.compile(r'^# HELP (tierfs_[a-z0-9_]+) \S')
type_re = re.compile(r'^# TYPE (tierfs_[a-z0-9_]+) (counter|gauge)$')
smp_re = re.compile(r'^(tierfs_[a-z0-9_]+)\{((?:[a-z_]+="(?:[^"\\]|\\.)*",?)*)\} (-?[0-9.eE+-]+)$')
helped = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = help_re.match(line)
    if m:
        helped = m.group(1)
        continue
    m = type_re.match(line)
    if m:
        assert m.group(1) == helped, line
        assert m.group(1) not in fams, "family twice: " + line
        fams.add(m.group(1))
        cur = m.group(1)
        continue
    m = smp_re.match(line)
    assert m and m.group(1) == cur, "sample out of its family: " + line
    float(m.group(3))
EOF
}

# --------------------------------------------- a second mount, then dead
DEAD=$T/dead
mkdir -p "$DEAD"
T_EXTRA_MOUNTS+=("$DEAD") # umount -l at exit, whatever happens
$T_ENV_DEFSIG "$TIERFS_BIN" -f --tier ram=ram:4M "$DEAD" >"$T/dead.log" 2>&1 &
DEAD_PID=$!
t_wait_until 5 mountpoint -q "$DEAD" || t_fail "second mount did not appear: $(cat "$T/dead.log")"
echo x >"$DEAD/f" || t_fail "write on the second mount"
mkdir "$DEAD/sub" || t_fail "mkdir on the second mount"
tc_run up2 stats --prometheus "$MNT" "$DEAD"
grep -qx "tierfs_up{mount=\"$DEAD\"} 1" "$T/up2.out" || t_fail "second mount not up: $(grep up "$T/up2.out")"
kill -9 "$DEAD_PID"
wait "$DEAD_PID" 2>/dev/null
t_is_mounted "$DEAD" || t_fail "the killed daemon's mount is gone (expected a dead mount)"
stat "$DEAD" >/dev/null 2>&1 && t_fail "the dead mount still answers"

ENOTCONN="Transport endpoint is not connected"
dead_line="tierctl: '$DEAD' is a dead tierfs mount: its daemon is gone ($ENOTCONN); 'umount -l $DEAD' clears it"

# ------------------------------------------------------------ Prometheus
tc_run prom stats --prometheus "$MNT" "$DEAD"
t_eq $RC 0 "stats --prometheus with a dead mount: status"
tc_err_is prom "$dead_line"
prom_check "$T/prom.out"
grep -qx "tierfs_up{mount=\"$MNT\"} 1" "$T/prom.out" || t_fail "no tierfs_up 1 of the live mount"
grep -qx "tierfs_up{mount=\"$DEAD\"} 0" "$T/prom.out" || t_fail "no tierfs_up 0 of the dead mount"
version=$("$TC" --version | cut -d' ' -f2)
t_eq "$(grep '^tierfs_build_info' "$T/prom.out")" "tierfs_build_info{version=\"$version\"} 1" "build_info"
t_eq "$(grep -c "mount=\"$DEAD\"" "$T/prom.out")" 1 "samples of the dead mount (tierfs_up only)"
# the live mount's metrics are all there, as without the dead one
"$TC" stats --prometheus "$MNT" >"$T/prom1.out" || t_fail "stats --prometheus of the live mount"
t_eq "$(grep -v '^tierfs_up' "$T/prom.out" | grep -vc '^#')" \
	"$(grep -v '^tierfs_up' "$T/prom1.out" | grep -vc '^#')" "samples besides tierfs_up"
grep -q "^tierfs_tier_size_bytes{mount=\"$MNT\",tier=\"disk\"} $((64 * M))$" "$T/prom.out" ||
	t_fail "the live mount's metrics are missing"
# every tierfs mount (other mounts of this machine may be listed too)
tc_run promall stats --prometheus
t_eq $RC 0 "stats --prometheus of every mount, one dead"
prom_check "$T/promall.out"
grep -qx "tierfs_up{mount=\"$MNT\"} 1" "$T/promall.out" || t_fail "all: no tierfs_up 1 of the live mount"
grep -qx "tierfs_up{mount=\"$DEAD\"} 0" "$T/promall.out" || t_fail "all: no tierfs_up 0 of the dead mount"
grep -qxF "$dead_line" "$T/promall.err" || t_fail "all: stderr does not name the dead mount: $(cat "$T/promall.err")"
# a path that is not tierfs is still an error, and nothing is exported
tc_run promnot stats --prometheus /proc
t_eq $RC 1 "stats --prometheus of a path not on tierfs"
t_eq "$(cat "$T/promnot.out")" "" "stdout of stats --prometheus /proc"

# ------------------------------------------------------- text stats, both
tc_run text stats "$MNT" "$DEAD"
t_eq $RC 1 "text stats with a dead mount"
tc_err_is text "$dead_line"
t_eq "$(head -1 "$T/text.out")" "mount $MNT" "text stats: the block names its mount"
grep -qx 'tier.disk.size 67108864' "$T/text.out" || t_fail "text stats of the live mount"
# two live paths of two mounts: a header before each block
tc_run text2 stats "$MNT" "$MNT/"
t_eq "$(grep -c '^mount ' "$T/text2.out")" 0 "one mount named twice is one block, no header"

# -------------------------------------------------- other verbs, the hint
dead_verb() { # dead_verb WANT ARGS... -- tierctl ARGS fails with one line WANT
	local want=$1
	shift
	"$TC" "$@" >"$T/dv.out" 2>"$T/dv.err"
	t_eq $? 1 "tierctl $* on the dead mount: status"
	tc_err_is dv "$want"
}
dead_verb "$dead_line" status "$DEAD"
dead_verb "$dead_line" stats --json "$DEAD"
dead_verb "$dead_line" top --once "$DEAD"
dead_verb "$dead_line" scrub "$DEAD"
dead_verb "$dead_line" drain "$DEAD" ram
inside="tierctl: '$DEAD/sub/f' is on a dead tierfs mount, '$DEAD': its daemon is gone ($ENOTCONN); 'umount -l $DEAD' clears it"
dead_verb "$inside" layout "$DEAD/sub/f"
dead_verb "$inside" policy get "$DEAD/sub/f"
dead_verb "$inside" migrate "$DEAD/sub/f" ram
dead_verb "$inside" pin "$DEAD/sub/f" ram
(cd "$T" && "$TC" status dead/../dead >"$T/rel.out" 2>"$T/rel.err")
t_eq "$(cat "$T/rel.err")" "tierctl: 'dead/../dead' is a dead tierfs mount: its daemon is gone ($ENOTCONN); 'umount -l $DEAD' clears it" \
	"a relative path to the dead mount"

# status of both: the live table on stdout, the dead mount on stderr
tc_run st2 status "$MNT" "$DEAD"
t_eq $RC 1 "status with a dead mount"
tc_err_is st2 "$dead_line"
t_eq "$(head -1 "$T/st2.out" | cut -d: -f1)" "$MNT" "status with a dead mount shows the live one"
# status --json: both mounts
tc_run sj status --json "$MNT" "$DEAD"
t_eq $RC 1 "status --json with a dead mount"
tc_err_is sj "$dead_line"
python3 - "$T/sj.out" "$MNT" "$DEAD" <<'EOF' || t_fail "status --json with a dead mount: $(cat "$T/sj.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1
live, dead = d["mounts"]
assert live["mount"] == sys.argv[2] and live["up"] is True, live
assert [t["name"] for t in live["tiers"]] == ["ram", "disk"], live
assert dead == {"mount": sys.argv[3], "up": False, "dead": True,
                "error": dead["error"]}, dead
assert ("'umount -l %s' clears it" % sys.argv[3]) in dead["error"], dead
EOF
# every mount: ours among them, the dead one on stderr
"$TC" status >"$T/all.out" 2>"$T/all.err"
grep -q "^$MNT: extent size 4M" "$T/all.out" || t_fail "status without MOUNT does not show $MNT"
grep -qxF "$dead_line" "$T/all.err" || t_fail "status without MOUNT: no line on the dead mount: $(cat "$T/all.err")"
# top without MOUNT: every mount, like status and stats
"$TC" top --once >"$T/topall.out" 2>"$T/topall.err"
t_eq "$(grep -c "^$MNT: rates over" "$T/topall.out")" 1 "top without MOUNT shows $MNT"
grep -qxF "$dead_line" "$T/topall.err" || t_fail "top without MOUNT: no line on the dead mount: $(cat "$T/topall.err")"

# as the hint says: umount -l clears it
umount -l "$DEAD" || t_fail "umount -l of the dead mount"
t_is_mounted "$DEAD" && t_fail "dead mount still there after umount -l"
tc_run promafter stats --prometheus "$MNT"
grep -q "$DEAD" "$T/promafter.out" && t_fail "the cleared mount is still exported"
"$TC" top --once >"$T/topall2.out" 2>/dev/null
grep -q "^$MNT: rates over" "$T/topall2.out" || t_fail "top without MOUNT after umount -l"

# ------------------------------------------------------------ status text
head -c 4000 /dev/urandom >"$T/small.ref"
cp "$T/small.ref" "$MNT/small" || t_fail "write small"
head -c $((2 * M)) /dev/urandom >"$T/two.ref"
dd if="$T/two.ref" of="$MNT/two" bs=1M oflag=direct status=none || t_fail "write two"
sync
cat "$MNT/two" >/dev/null
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
cat "$MNT/two" >/dev/null
tc_run st status "$MNT"
t_eq $RC 0 "status"
# two short lines, then the table: no line of 140 columns
l1=$(sed -n 1p "$T/st.out")
t_like "$l1" "$MNT: extent size 4M, * inodes of *, xattrs * of *, daemon RSS *" "status line 1"
[ $((${#l1} - ${#MNT})) -le 80 ] || t_fail "status line 1 is ${#l1} columns: $l1"
t_like "$(sed -n 2p "$T/st.out")" "migrator off: * passes, * extents moved" "status line 2"
grep -qE '^TIER +KIND +PATH +SIZE +USED +FREE +USE% +EXTENTS +READ +WRITTEN +READ% +PROMOTED +DEMOTED$' "$T/st.out" ||
	t_fail "status column header: $(sed -n 3p "$T/st.out")"
grep -q 'HIT%' "$T/st.out" && t_fail "status still says HIT%"
grep -qE '^ram +ram +- +16M .* 100\.0% +0 +0$' "$T/st.out" || t_fail "ram row (all reads from ram): $(cat "$T/st.out")"

# --------------------------------------------------------------- drained
tc_run dr drain -q "$MNT" ram
t_eq $RC 0 "drain ram"
tc_run st status "$MNT"
grep -qE '^ram\* +ram +- +16M +0 ' "$T/st.out" || t_fail "drained ram not marked: $(cat "$T/st.out")"
grep -qE '^disk +file ' "$T/st.out" || t_fail "disk marked as well: $(cat "$T/st.out")"
t_eq "$(tail -1 "$T/st.out")" "* drained: ram (no new data until 'tierctl drain --undo $MNT')" "status footnote"
tc_run top top --once "$MNT"
grep -qE '^ram\* ' "$T/top.out" || t_fail "top does not mark the drained tier: $(cat "$T/top.out")"
grep -qxF "* drained: ram (no new data until 'tierctl drain --undo $MNT')" "$T/top.out" || t_fail "top footnote"
tc_run prd stats --prometheus "$MNT"
grep -qx "tierfs_tier_draining{mount=\"$MNT\",tier=\"ram\"} 1" "$T/prd.out" || t_fail "no tierfs_tier_draining 1"
grep -qx "tierfs_tier_draining{mount=\"$MNT\",tier=\"disk\"} 0" "$T/prd.out" || t_fail "no tierfs_tier_draining 0"
tc_run sj status --json "$MNT"
t_eq $RC 0 "status --json"
python3 - "$T/sj.out" "$MNT" "$T/disk" <<'EOF' || t_fail "status --json: $(cat "$T/sj.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and len(d["mounts"]) == 1, d
m = d["mounts"][0]
assert m["mount"] == sys.argv[2] and m["up"] is True
assert m["extent_size"] == 4 << 20 and m["inodes"] >= 3, m
for k in ("max_inodes", "xattr_bytes", "max_xattr_bytes", "rss"):
    assert isinstance(m[k], int), k
assert m["migrator"] == {"enabled": False, "passes": 0, "moved": 0}, m
ram, disk = m["tiers"]
assert ram["name"] == "ram" and ram["kind"] == "ram" and ram["path"] is None
assert disk["name"] == "disk" and disk["kind"] == "file" and disk["path"] == sys.argv[3]
assert ram["drained"] is True and disk["drained"] is False
assert ram["used"] == 0 and ram["use_ratio"] == 0 and ram["size"] == 16 << 20
assert disk["used"] > 0 and 0 < disk["use_ratio"] < 1
# every read so far came from ram (before the drain)
assert ram["read_share"] == 1 and disk["read_share"] == 0, (ram, disk)
for t in (ram, disk):
    for k in ("size", "used", "free", "extents", "read_bytes", "write_bytes",
              "promotions", "demotions"):
        assert isinstance(t[k], int) and t[k] >= 0, (t["name"], k)
EOF
"$TC" status --json --compact "$MNT" >"$T/sjc.out" || t_fail "status --json --compact"
t_eq "$(wc -l <"$T/sjc.out")" 1 "compact status JSON lines"
tc_run sjbad status --compact "$MNT"
t_eq $RC 2 "status --compact without --json"
# the protocol's "-" ends draining
tc_run undo drain "$MNT" -
t_eq $RC 0 "drain MOUNT -"
t_eq "$(cat "$T/undo.out")" "$MNT: draining ended; every tier takes new data" "drain MOUNT - output"
"$TC" status "$MNT" >"$T/st.out" || t_fail "status after drain -"
grep -q '\*' "$T/st.out" && t_fail "a tier still marked after drain -: $(cat "$T/st.out")"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.stats "$MNT" | grep -c 'draining=1')" 0 "draining after drain -"

# ------------------------------------------------------ layout and migrate
cmp -s "$T/small.ref" "$MNT/small" || t_fail "small differs after the drain"
# small is on disk now (drained off ram); a 4000-byte file holds one
# allocation unit of its 4M extent: 16K (4M / 256, tiers/tier.h)
tc_run lay layout "$MNT/small"
t_eq $RC 0 "layout small"
t_eq "$(head -1 "$T/lay.out")" "File size of $MNT/small is 4000 (3.9K, extent size 4M)" "layout header"
t_eq "$(tail -1 "$T/lay.out")" "$MNT/small: 1 run; ram 0 (0.0%), disk 16K (100.0%); total 16K" "layout totals of a small file"
tc_run mig migrate "$MNT/small" ram
t_eq $RC 0 "migrate small"
t_eq "$(tail -1 "$T/mig.out")" "migrate to ram: 100% (16K of 16K)" "migrate progress of a small file"
cmp -s "$T/small.ref" "$MNT/small" || t_fail "small differs after migrate"
# a hole inside an extent holds nothing: 1 byte at 0 and at 1M
t_ok "$SC" write "$MNT/holey" 0 a
t_ok "$SC" write "$MNT/holey" $M b
tc_run lay2 layout "$MNT/holey"
t_eq "$(tail -1 "$T/lay2.out")" "$MNT/holey: 1 run; ram 32K (100.0%), disk 0 (0.0%); total 32K" "layout of a file with a hole"
tc_run lj layout --json "$MNT/small" "$MNT"
t_eq $RC 0 "layout --json"
python3 - "$T/lj.out" "$MNT" <<'EOF' || t_fail "layout --json: $(cat "$T/lj.out")"
import json, sys
d = json.load(open(sys.argv[1]))
mnt = sys.argv[2]
assert d["version"] == 1
f, top = d["files"]
assert f == {"path": mnt + "/small", "type": "file", "size": 4000,
             "extent_size": 4 << 20,
             "runs": [{"start": 0, "length": 4 << 20, "tier": "ram"}],
             "tiers": [{"name": "ram", "bytes": 16384}, {"name": "disk", "bytes": 0}],
             "total": 16384}, f
assert top["path"] == mnt and top["type"] == "directory", top
assert [t["name"] for t in top["tiers"]] == ["ram", "disk"], top
assert top["total"] == sum(t["bytes"] for t in top["tiers"]) >= (16 + 32) * 1024 + (2 << 20), top
EOF
# a directory: the bytes held, not the whole extents of its files
mkdir "$MNT/tree"
for i in 1 2 3; do head -c 1000 /dev/urandom >"$MNT/tree/s$i"; done
sync
tc_run migt migrate "$MNT/tree" disk
t_eq $RC 0 "migrate a tree of small files"
t_eq "$(tail -1 "$T/migt.out")" "migrate to disk: 100% (48K of 48K)" "migrate progress of a tree"

# ---------------------------------------------------------------- policy
tc_run pk policy get "$MNT/small" $'co\033[31mlour'
t_eq $RC 2 "policy get of an unknown key"
tc_err_is pk "tierctl: unknown policy key 'co\\033[31mlour': use tiers, pin, split, promote or io"
grep -q $'\033' "$T/pk.err" && t_fail "an unknown key reached the terminal raw"
tc_run pk2 policy set "$MNT/small" $'k\ney=1'
t_eq $RC 2 "policy set of an unknown key"
tc_err_is pk2 "tierctl: unknown policy key 'k\\ney': use tiers, pin, split, promote or io"
t_check "$TC" policy set "$MNT/tree" split=ram:1536K,disk
tc_run ps policy get "$MNT/tree/s1" split
t_eq "$(cat "$T/ps.out")" "split    ram:1536K,disk           /tree" "split read back in units"
t_check "$TC" policy set "$MNT/tree" split=ram:1G,disk
tc_run ps policy get "$MNT/tree" split
t_eq "$(cat "$T/ps.out")" "split    ram:1G,disk              /tree" "split of 1G"
t_check "$TC" policy unset "$MNT/tree"

# ------------------------------------------ ctl.migrate numbers past 2^64
t_check "$TC" migrate -q "$MNT/two" ram
t_errno EINVAL "$SC" setxattr "$MNT/two" user.tierfs.ctl.migrate "disk 18446744073709551616 1" 0
t_errno EINVAL "$SC" setxattr "$MNT/two" user.tierfs.ctl.migrate "disk 0 18446744073709551616" 0
t_errno EINVAL "$SC" setxattr "$MNT/two" user.tierfs.ctl.migrate "disk 99999999999999999999999 1" 0
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$MNT/two")" "ram=$((2 * M)) disk=0" "refused moves moved nothing"
# 2^64 - 1 is a length ("to the end") and still taken
t_ok "$SC" setxattr "$MNT/two" user.tierfs.ctl.migrate "disk 0 18446744073709551615" 0
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.layout "$MNT/two")" "ram=0 disk=$((2 * M))" "move to the end"
cmp -s "$T/two.ref" "$MNT/two" || t_fail "two differs after the moves"

# ------------------------------------------------------ bash completion
if [ -f "$COMPLETION" ]; then
	complete_words() { # complete_words WORD... -- what tierctl WORD... <TAB> offers
		bash -c '. "$1"; shift; COMP_WORDS=(tierctl "$@"); COMP_CWORD=$#
			COMP_LINE="tierctl $*"; COMP_POINT=${#COMP_LINE}
			_tierctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$@"
	}
	complete_words qu | grep -qx quota || t_fail "completion does not offer quota"
	complete_words status --j | grep -qx -- --json || t_fail "completion of status --json"
	complete_words drain "$MNT" "" | grep -qx -- - || t_fail "completion of drain MOUNT -"
	complete_words drain "$MNT" "" | grep -qx disk || t_fail "completion of drain MOUNT TIER"
fi

# ------------------------------------------------------------------ help
"$TC" help top | grep -q '^usage: tierctl top .*\[MOUNT\.\.\.\]$' || t_fail "help top: $("$TC" help top | head -1)"
"$TC" help drain | grep -q 'drain MOUNT -' || t_fail "help drain does not mention drain MOUNT -"
kill -0 "$T_PID" 2>/dev/null || t_fail "daemon died"
t_pass
