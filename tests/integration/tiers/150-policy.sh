#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: policy
# TIMEOUT: 150
# IO: tiered policies over extents: promotion, spill and return of pinned data (210-native checks native files' pin and io)
#
# Per-directory policies (user.tierfs.{tiers,pin,split,promote}) on
# RAM 8M / PMem 16M / file 64M, 1M extents, watermarks 100/95 (so that
# no demotion for room interferes), allow_other:
#  - tiers: data only on the listed tiers, in that order; ENOSPC when they
#    are full even though others have room; df DIR reports their capacity;
#  - pin: data on that tier and never promoted however hot; promote=0
#    keeps hot data down; a control file read the same way is promoted;
#  - split=ram:2M,disk:4M,pm: exact byte ranges per tier (extents xattr),
#    also "-1" for the rest and sparse writes;
#  - inheritance three levels deep, a nearer directory overriding, a
#    file's own attribute winning, effective naming each source, removal
#    reverting to the inherited value, existing data following a changed
#    policy (the migrator moves it);
#  - rename between directories with different pins: new data follows
#    the new parent at once, existing data is moved by the migrator; a
#    renamed directory takes the files below it along; a hard link made
#    and removed again in another directory leaves the file governed by
#    the directory it is still in;
#  - pin (and a split range) on a full tier spills, then moves back up
#    when room frees;
#  - every invalid value fails with EINVAL and changes nothing;
#  - getfattr -d -m - lists exactly the attributes set (no virtual ones);
#  - a non-owner may not set or remove a policy on root's directory or
#    file (EPERM), may on their own, and may read the virtual attributes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tlib.sh"

mkdir -p "$T/pm" "$T/disk" || t_fail mkdir
MOUNT_ARGS=(--tier ram=ram:8M --tier pm=pmem:"$T/pm":16M --tier disk=file:"$T/disk":64M
	-o allow_other --high-watermark 100 --low-watermark 95 --promote-passes 3)
NOBODY=65534:65534

setp() { t_ok "$SC" setxattr "$1" "user.tierfs.$2" "$3" 0; }
getp() { t_xattr "$1" "user.tierfs.$2"; }
eff() { t_xattr "$1" user.tierfs.effective; }
# eff_key PATH KEY -- the "KEY=VALUE FROM" line of the effective policy
eff_key() { eff "$1" | grep "^$2="; }
df_total() { echo $(($(t_statfs blocks "$1") * $(t_statfs frsize "$1"))); }
df_free() { echo $(($(t_statfs bfree "$1") * $(t_statfs frsize "$1"))); }
is_layout() { [ "$(layout "$1")" = "$2" ]; }
is_extents() { [ "$(extents "$1")" = "$2" ]; }
wait_layout() {
	local f=$1
	wait_for "${3:-10}" 'layout of $f: $(layout "$f"), expected '"$2" is_layout "$1" "$2"
}

t_mount "${MOUNT_ARGS[@]}"
ALL=$((88 * M))
t_eq "$(df_total "$MNT")" "$ALL" "df total of the root"
t_eq "$(eff "$MNT")" "tiers=ram,pm,disk default
pin=- default
split=- default
promote=1 default
io=native default" "effective policy of the root"

# --- tiers
mkdir "$MNT/tpm" "$MNT/tord" "$MNT/trd" || t_fail mkdir
setp "$MNT/tpm" tiers pm
setp "$MNT/tord" tiers disk,pm
setp "$MNT/trd" tiers ram,disk
t_eq "$(df_total "$MNT/tpm")" $((16 * M)) "df total of a tiers=pm directory"
t_eq "$(df_total "$MNT/trd")" $((72 * M)) "df total of a tiers=ram,disk directory"
t_eq "$(df_total "$MNT/tord")" $((80 * M)) "df total of a tiers=disk,pm directory"
out=$("$P" -s 1 w "$MNT/tpm/f" 0 20M)
t_eq "$out" "ERR write ENOSPC at $((16 * M)) done $((16 * M))" "writing 20M where only the 16M pm tier is allowed"
t_eq "$(layout "$MNT/tpm/f")" "ram=0 pm=$((16 * M)) disk=0" "layout under tiers=pm"
t_eq "$(df_free "$MNT/tpm")" 0 "df free of a full tiers=pm directory"
t_eq "$(df_free "$MNT/trd")" $((72 * M)) "df free of tiers=ram,disk while pm is full"
pat_v -s 1 "$MNT/tpm/f" 0 16M
rm "$MNT/tpm/f" || t_fail rm
wait_for 5 "pm not freed" eval '[ "$(tstat pm used)" = 0 ]'
pat_w -s 2 "$MNT/tord/f" 0 2M
t_eq "$(layout "$MNT/tord/f")" "ram=0 pm=0 disk=$((2 * M))" "layout under tiers=disk,pm"
t_eq "$(df_free "$MNT/tord")" $((78 * M)) "df free of tiers=disk,pm after 2M"
rm "$MNT/tord/f"

# --- split
mkdir "$MNT/s" "$MNT/s2" || t_fail mkdir
setp "$MNT/s" split ram:2M,disk:4M,pm
setp "$MNT/s2" split pm:3M,disk:-1
pat_w -s 3 "$MNT/s/f" 0 10M
t_eq "$(extents "$MNT/s/f")" "0 $((2 * M)) ram
$((2 * M)) $((4 * M)) disk
$((6 * M)) $((4 * M)) pm" "extents under split=ram:2M,disk:4M,pm"
t_eq "$(layout "$MNT/s/f")" "ram=$((2 * M)) pm=$((4 * M)) disk=$((4 * M))" "layout under split"
pat_w -s 4 "$MNT/s2/f" 0 5M
t_eq "$(extents "$MNT/s2/f")" "0 $((3 * M)) pm
$((3 * M)) $((2 * M)) disk" "extents under split=pm:3M,disk:-1"
# sparse writes land by their offsets; boundaries are exact
for off in $((2 * M - 1)) $((2 * M)) $((6 * M - 1)) $((6 * M)) $((100 * M)); do
	t_ok "$SC" write "$MNT/s/sparse" "$off" x
done
t_eq "$(extents "$MNT/s/sparse")" "$M $M ram
$((2 * M)) $M disk
$((5 * M)) $M disk
$((6 * M)) $M pm
$((100 * M)) $M pm" "extents of sparse writes under split"
pat_v -d -s 3 "$MNT/s/f" 0 10M
pat_v -d -s 4 "$MNT/s2/f" 0 5M
rm -r "$MNT/s" "$MNT/s2" || t_fail rm

# --- pin and promote=0 keep hot data where it is; a control moves up
mkdir "$MNT/pin" "$MNT/np" "$MNT/ctl" || t_fail mkdir
setp "$MNT/pin" pin pm
setp "$MNT/np" promote 0
setp "$MNT/np" tiers disk
setp "$MNT/ctl" tiers disk
pat_w -s 5 "$MNT/pin/f" 0 3M
pat_w -s 6 "$MNT/np/f" 0 3M
pat_w -s 7 "$MNT/ctl/f" 0 3M
# now let the data go anywhere; it stays on disk until it is hot
t_ok "$SC" removexattr "$MNT/np" user.tierfs.tiers
t_ok "$SC" removexattr "$MNT/ctl" user.tierfs.tiers
t_eq "$(eff_key "$MNT/np/f" tiers)" "tiers=ram,pm,disk default" "effective tiers after removexattr"
t_eq "$(eff_key "$MNT/np/f" promote)" "promote=0 /np" "effective promote"
t_eq "$(eff_key "$MNT/pin/f" pin)" "pin=pm /pin" "effective pin"
t_eq "$(layout "$MNT/pin/f") $(layout "$MNT/np/f") $(layout "$MNT/ctl/f")" \
	"ram=0 pm=$((3 * M)) disk=0 ram=0 pm=0 disk=$((3 * M)) ram=0 pm=0 disk=$((3 * M))" "layouts before the hot reads"
for ((i = 0; i < 20; i++)); do
	pat_v -d -s 5 "$MNT/pin/f" 0 3M
	pat_v -d -s 6 "$MNT/np/f" 0 3M
	pat_v -d -s 7 "$MNT/ctl/f" 0 3M
	is_layout "$MNT/ctl/f" "ram=$((3 * M)) pm=0 disk=0" && break
	sleep 0.5
done
wait_layout "$MNT/ctl/f" "ram=$((3 * M)) pm=0 disk=0" 3
wait_passes 2 # had they been promoted too, it would show now
t_eq "$(layout "$MNT/pin/f")" "ram=0 pm=$((3 * M)) disk=0" "a hot file pinned to pm"
t_eq "$(layout "$MNT/np/f")" "ram=0 pm=0 disk=$((3 * M))" "a hot file under promote=0"
rm -r "$MNT/pin" "$MNT/np" "$MNT/ctl" || t_fail rm

# --- inheritance three levels deep, nearer override, the file's own
mkdir -p "$MNT/i/j/k" || t_fail mkdir
setp "$MNT/i" tiers disk
pat_w -s 8 "$MNT/i/j/k/f" 0 2M
t_eq "$(layout "$MNT/i/j/k/f")" "ram=0 pm=0 disk=$((2 * M))" "layout inherited from three levels up"
t_eq "$(eff "$MNT/i/j/k/f")" "tiers=disk /i
pin=- default
split=- default
promote=1 default
io=native default" "effective policy inherited from three levels up"
t_eq "$(eff_key "$MNT/i/j/k" tiers)" "tiers=disk /i" "effective tiers of a directory"
setp "$MNT/i/j" tiers pm
t_eq "$(eff_key "$MNT/i/j/k/f" tiers)" "tiers=pm /i/j" "effective tiers after a nearer override"
pat_w -s 9 "$MNT/i/j/k/g" 0 1M
t_eq "$(layout "$MNT/i/j/k/g")" "ram=0 pm=$M disk=0" "new data under the nearer override"
# existing data is now on a tier it may not use: the migrator moves it
wait_layout "$MNT/i/j/k/f" "ram=0 pm=$((2 * M)) disk=0"
setp "$MNT/i/j/k/f" tiers ram
t_eq "$(eff_key "$MNT/i/j/k/f" tiers)" "tiers=ram (this file)" "effective tiers set on the file itself"
wait_layout "$MNT/i/j/k/f" "ram=$((2 * M)) pm=0 disk=0"
t_ok "$SC" removexattr "$MNT/i/j/k/f" user.tierfs.tiers
t_eq "$(eff_key "$MNT/i/j/k/f" tiers)" "tiers=pm /i/j" "effective tiers after removing the file's own"
t_ok "$SC" removexattr "$MNT/i/j" user.tierfs.tiers
t_eq "$(eff_key "$MNT/i/j/k/f" tiers)" "tiers=disk /i" "effective tiers after removing the override"
t_eq "$(eff_key "$MNT/i/j" tiers)" "tiers=disk /i" "effective tiers of the directory after removal"
wait_layout "$MNT/i/j/k/f" "ram=0 pm=0 disk=$((2 * M))"
wait_layout "$MNT/i/j/k/g" "ram=0 pm=0 disk=$M"
t_eq "$(layout "$MNT/i")" "ram=0 pm=0 disk=$((3 * M))" "layout of the top directory"
pat_v -d -s 8 "$MNT/i/j/k/f" 0 2M
pat_v -d -s 9 "$MNT/i/j/k/g" 0 1M
rm -r "$MNT/i" || t_fail rm

# --- rename between directories with different policies
mkdir "$MNT/rx" "$MNT/ry" || t_fail mkdir
setp "$MNT/rx" pin disk
setp "$MNT/ry" pin pm
pat_w -s 10 "$MNT/rx/g" 0 2M
t_eq "$(layout "$MNT/rx/g")" "ram=0 pm=0 disk=$((2 * M))" "layout before rename"
mv "$MNT/rx/g" "$MNT/ry/g" || t_fail mv
t_eq "$(eff_key "$MNT/ry/g" pin)" "pin=pm /ry" "effective pin after rename"
pat_w -s 11 "$MNT/ry/g" $((2 * M)) $((2 * M))
[ "$(on_tier disk "$MNT/ry/g")" -le $((2 * M)) ] ||
	t_fail "new data after rename went to the old parent's tier: $(layout "$MNT/ry/g")"
wait_for 10 'existing data did not follow the rename: $(extents "$MNT/ry/g" | tr "\n" ";")' \
	is_extents "$MNT/ry/g" "0 $((4 * M)) pm"
pat_v -d -s 10 "$MNT/ry/g" 0 2M
pat_v -d -s 11 "$MNT/ry/g" $((2 * M)) $((2 * M))
# a renamed directory takes its files to the new ancestors' policy
mkdir -p "$MNT/rx/sub/deeper" || t_fail mkdir
pat_w -s 12 "$MNT/rx/sub/deeper/h" 0 1M
t_eq "$(layout "$MNT/rx/sub/deeper/h")" "ram=0 pm=0 disk=$M" "layout before the directory rename"
mv "$MNT/rx/sub" "$MNT/ry/sub" || t_fail mv
t_eq "$(eff_key "$MNT/ry/sub/deeper/h" pin)" "pin=pm /ry" "effective pin after a directory rename"
wait_layout "$MNT/ry/sub/deeper/h" "ram=0 pm=$M disk=0"
t_eq "$(layout "$MNT/ry")" "ram=0 pm=$((5 * M)) disk=0" "layout of the new parent"
t_eq "$(layout "$MNT/rx")" "ram=0 pm=0 disk=0" "layout of the old parent"
pat_v -d -s 12 "$MNT/ry/sub/deeper/h" 0 1M
rm -r "$MNT/rx" "$MNT/ry" || t_fail rm

# a hard link in another directory, removed again: the file is still
# below its first directory, whose policy governs it again
mkdir "$MNT/la" "$MNT/lb" || t_fail mkdir
setp "$MNT/la" tiers disk
setp "$MNT/lb" tiers pm
pat_w -s 13 "$MNT/la/f" 0 1M
ln "$MNT/la/f" "$MNT/lb/g" || t_fail ln
rm "$MNT/lb/g" || t_fail rm
e=$(eff_key "$MNT/la/f" tiers)
[ "$e" = "tiers=disk /la" ] ||
	t_soft_fail "effective tiers of /la/f after its link in /lb was removed: '$e', expected 'tiers=disk /la'"
pat_w -s 14 "$MNT/la/f" $M $M
l=$(layout "$MNT/la/f")
[ "$l" = "ram=0 pm=0 disk=$((2 * M))" ] ||
	t_soft_fail "layout of /la/f written after the link in /lb was removed: '$l', expected all on disk"
pat_v -d -s 13 "$MNT/la/f" 0 1M
pat_v -d -s 14 "$MNT/la/f" $M $M
rm -r "$MNT/la" "$MNT/lb" || t_fail rm

# --- invalid values fail with EINVAL and change nothing
mkdir "$MNT/v" || t_fail mkdir
setp "$MNT/v" tiers disk
setp "$MNT/v" promote 0
touch "$MNT/v/file"
setp "$MNT/v/file" pin pm
eff_v=$(eff "$MNT/v")
eff_f=$(eff "$MNT/v/file")
bad() {
	local key=$1 path
	shift
	for v in "$@"; do
		for path in "$MNT/v" "$MNT/v/file"; do
			t_errno EINVAL "$SC" setxattr "$path" "user.tierfs.$key" "${v:--}" 0
		done
	done
}
bad tiers nosuch "" ",ram" "ram," "ram,,disk" "ram:" "ram:2M" "ram,ram" " ram" "RAM" "ram,nosuch"
bad pin nosuch "" "ram,disk" "ram:1M" ",ram"
bad split "ram:" "ram:-5M" "ram:5X" ",ram" "ram," "ram:-1,disk" "nosuch:1M" "ram:0" "" \
	"ram:2M,,disk" "ram:2M,disk:x" ":2M"
bad promote 2 "" yes -1 " 1" "1 " 10
t_errno EINVAL "$SC" setxattr "$MNT/v" user.tierfs.bogus 1 0
t_errno EPERM "$SC" setxattr "$MNT/v" user.tierfs.layout x 0
t_errno EPERM "$SC" setxattr "$MNT/v" user.tierfs.effective x 0
t_eq "$(getp "$MNT/v" tiers)" disk "stored tiers after invalid values"
t_eq "$(getp "$MNT/v" promote)" 0 "stored promote after invalid values"
t_eq "$(getp "$MNT/v/file" pin)" pm "stored pin of the file after invalid values"
t_like "$(getp "$MNT/v" split)" "(getfattr*failed*" "split after invalid values"
t_like "$(getp "$MNT/v" pin)" "(getfattr*failed*" "pin of the directory after invalid values"
t_eq "$(eff "$MNT/v")" "$eff_v" "effective policy of the directory after invalid values"
t_eq "$(eff "$MNT/v/file")" "$eff_f" "effective policy of the file after invalid values"

# --- getfattr -d -m - lists what is set, and nothing virtual
setfattr -n user.note -v hello "$MNT/v" || t_fail setfattr
t_eq "$(getfattr --absolute-names -d -m - "$MNT/v" 2>&1 | grep -v '^#' | grep .)" \
	'user.note="hello"
user.tierfs.promote="0"
user.tierfs.tiers="disk"' "getfattr -d -m - of a directory with a policy"
t_eq "$(getfattr --absolute-names -d -m - "$MNT/v/file" 2>&1 | grep -v '^#' | grep .)" \
	'user.tierfs.pin="pm"' "getfattr -d -m - of a file with a pin"
mkdir "$MNT/plain"
t_eq "$(getfattr --absolute-names -d -m - "$MNT/plain" 2>&1)" "" "getfattr -d -m - of a directory with no attributes"
t_eq "$(getfattr --absolute-names -d -m - "$MNT" 2>&1)" "" "getfattr -d -m - of the root"

# --- owners
mkdir "$MNT/pub" && chmod 0777 "$MNT/pub" || t_fail "mkdir pub"
touch "$MNT/pub/rootfile" && chmod 0666 "$MNT/pub/rootfile" || t_fail "rootfile"
setp "$MNT/pub" promote 1
t_errno EPERM t_as "$NOBODY" "$SC" setxattr "$MNT/pub" user.tierfs.tiers pm 0
t_errno EPERM t_as "$NOBODY" "$SC" setxattr "$MNT/pub/rootfile" user.tierfs.pin pm 0
t_errno EPERM t_as "$NOBODY" "$SC" removexattr "$MNT/pub" user.tierfs.promote
t_errno EPERM t_as "$NOBODY" "$SC" setxattr "$MNT/pub/rootfile" user.tierfs.ctl.migrate pm 0
t_eq "$(getp "$MNT/pub" promote)" 1 "policy after a refused removal"
t_like "$(getp "$MNT/pub" tiers)" "(getfattr*failed*" "policy after a refused set"
t_ok t_as "$NOBODY" "$SC" mkdir "$MNT/pub/mine" 0755
t_ok t_as "$NOBODY" "$SC" setxattr "$MNT/pub/mine" user.tierfs.tiers disk 0
t_ok t_as "$NOBODY" "$SC" write "$MNT/pub/mine/f" 0 hello
t_ok t_as "$NOBODY" "$SC" setxattr "$MNT/pub/mine/f" user.tierfs.pin pm 0
t_ok t_as "$NOBODY" "$SC" removexattr "$MNT/pub/mine/f" user.tierfs.pin
# removing the pin hands the file back to its directory's tiers=disk: the
# migrator moves it, asynchronously
wait_layout "$MNT/pub/mine/f" "ram=0 pm=0 disk=$U"
for a in effective layout extents verify; do
	t_ok t_as "$NOBODY" "$SC" getxattr "$MNT/pub/rootfile" "user.tierfs.$a" 4096
done
t_ok t_as "$NOBODY" "$SC" getxattr "$MNT" user.tierfs.stats 65536
rm -r "$MNT/pub" "$MNT/v" "$MNT/plain" || t_fail rm

# --- pin and split on a full tier spill, then move back up
t_remount "${MOUNT_ARGS[@]}"
mkdir "$MNT/pr" "$MNT/sp" || t_fail mkdir
setp "$MNT/pr" pin ram
setp "$MNT/sp" split ram:2M,disk
pat_w -s 12 "$MNT/filler" 0 6M
t_eq "$(layout "$MNT/filler")" "ram=$((6 * M)) pm=0 disk=0" "layout of the filler"
pat_w -s 13 "$MNT/pr/f" 0 4M
t_eq "$(layout "$MNT/pr/f")" "ram=$((2 * M)) pm=$((2 * M)) disk=0" "pin=ram with 2M left in RAM: the rest spills to the next tier"
pat_w -s 14 "$MNT/sp/f" 0 3M
t_eq "$(layout "$MNT/sp/f")" "ram=0 pm=$((2 * M)) disk=$M" "split range on a full tier spills"
sleep 1 # a few migrator passes with no room: nothing may break
t_eq "$(layout "$MNT/pr/f")" "ram=$((2 * M)) pm=$((2 * M)) disk=0" "pinned file while RAM stays full"
rm "$MNT/filler" || t_fail rm
wait_layout "$MNT/pr/f" "ram=$((4 * M)) pm=0 disk=0"
wait_layout "$MNT/sp/f" "ram=$((2 * M)) pm=0 disk=$M"
pat_v -d -s 13 "$MNT/pr/f" 0 4M
pat_v -d -s 14 "$MNT/sp/f" 0 3M
t_eq "$(mstat failures)" 0 "migration failures"

t_done
