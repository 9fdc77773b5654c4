#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: tools
# TIMEOUT: 240
# IO: tiered layouts that spill from RAM to disk
#
# tierctl against a live mount: help and usage errors; status and stats
# in text, JSON (checked with python3 -m json.tool and field by field)
# and Prometheus format (every line against the exposition grammar,
# tierfs_up and tierfs_build_info among them; 066 has a dead mount);
# layout, each computed value read in one call (the daemon's
# ctl_computed); policy get/set/unset with its error messages; pin/unpin;
# migrate of a file and of a tree, with a partial ENOSPC, plain progress
# lines and a progress bar on a pty; drain and drain --undo, and a drain
# that cannot finish; top --once and -n; scrub, clean and after the file
# tier's slab is overwritten behind the daemon's back; refusals for a
# non-owner (uid 65534 on an allow_other mount) while its read-only
# queries work; random and malformed values written to the control
# channel and the policy attributes, after which the daemon must be
# alive, the mount usable and the data unchanged.  Every verb refuses a
# PATH or MOUNT that is not on tierfs (a plain file, and a mergerfs mount
# when mergerfs is installed) with one line and changes nothing; output
# to /dev/full is an error; file names with a newline, an ESC and other
# control bytes are printed escaped, as ls -b does.
#
# Environment: TIERCTL (path of tierctl; meson sets it), else it is
# looked for next to the tierfs binary's build directory.
. "$(dirname "$0")/lib.sh"

: "${TIERCTL:=$(dirname "$TIERFS_BIN")/../tools/tierctl}"
[ -x "$TIERCTL" ] || t_fail "tierctl binary '$TIERCTL' missing (set TIERCTL)"
command -v getfattr >/dev/null || t_skip "getfattr (attr package) missing"
command -v python3 >/dev/null || t_skip "python3 missing"

# a copy that uid 65534 can run even when the build tree is private
TC=$T/tierctl
cp "$TIERCTL" "$TC" || t_fail "cannot copy tierctl"
chmod 755 "$TC" || t_fail "cannot chmod $TC"

MiB=1048576
mkdir -p "$T/disk"
t_mount -o allow_other --no-migrate --tier ram=ram:8M \
	--tier "disk=file:$T/disk:64M"

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
	local got
	got=$(cat "$T/$1.err")
	t_eq "$got" "$2" "$1: stderr"
	t_eq "$(wc -l <"$T/$1.err")" 1 "$1: stderr lines"
}

# tier_of FILE -- "TIER" when all of FILE's data is on one tier
tier_of() {
	getfattr --absolute-names --only-values -n user.tierfs.extents "$1" | awk '
		{ t[$3] = 1 } END { n = 0; for (k in t) { n++; s = k } print (n == 1 ? s : "mixed") }'
}

stat_field() { # stat_field TIER KEY -- from tierctl stats
	"$TC" stats "$MNT" | awk -v k="tier.$1.$2" '$1 == k { print $2 }'
}

# ---------------------------------------------------------------- help
tc_run help --help
t_eq $RC 0 "--help status"
grep -q '^  status ' "$T/help.out" || t_fail "--help does not list status"
grep -q '^  scrub ' "$T/help.out" || t_fail "--help does not list scrub"
tc_run helpverb help migrate
t_eq $RC 0 "help migrate status"
grep -q '^usage: tierctl migrate' "$T/helpverb.out" || t_fail "help migrate: no usage line"
tc_run helpopt drain --help
t_eq $RC 0 "drain --help status"
grep -q -- '--undo' "$T/helpopt.out" || t_fail "drain --help does not mention --undo"
tc_run helpbad help frobnicate
t_eq $RC 2 "help of an unknown verb"
tc_err_is helpbad "tierctl: unknown command 'frobnicate' (see tierctl --help)"
tc_run unknown frobnicate
t_eq $RC 2 "unknown verb status"
tc_err_is unknown "tierctl: unknown command 'frobnicate' (see tierctl --help)"
tc_run noargs
t_eq $RC 2 "no arguments"
tc_run badopt status --frob "$MNT"
t_eq $RC 2 "unknown option status"
grep -q "^tierctl: unknown option '--frob' (usage: tierctl status \[--json \[--compact\]\] \[MOUNT...\])$" "$T/badopt.err" ||
	t_fail "unknown option message: $(cat "$T/badopt.err")"
t_eq "$(wc -l <"$T/badopt.err")" 1 "usage error lines"
tc_run version --version
t_like "$(cat "$T/version.out")" "tierctl *" "--version"

# ---------------------------------------------------------------- data
head -c $((12 * MiB)) /dev/urandom >"$T/f.ref"
# in order, 1M at a time: through the writeback cache the kernel may
# flush pages out of order, and the layout below expects RAM to fill first
dd if="$T/f.ref" of="$MNT/f" bs=1M oflag=direct status=none || t_fail "write f"
mkdir -p "$MNT/tree/sub" || t_fail mkdir
for i in 1 2 3; do
	head -c $((MiB + i * 4096)) /dev/urandom >"$T/t$i.ref"
	cp "$T/t$i.ref" "$MNT/tree/sub/t$i" || t_fail "write t$i"
done
sync
check_data() {
	cmp -s "$T/f.ref" "$MNT/f" || t_fail "f differs ($1)"
	for i in 1 2 3; do
		cmp -s "$T/t$i.ref" "$MNT/tree/sub/t$i" || t_fail "tree/sub/t$i differs ($1)"
	done
	# bypass the page cache (keep_cache): read what the daemon has
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
	cmp -s "$T/f.ref" "$MNT/f" || t_fail "f differs after dropping caches ($1)"
}
check_data "after writing"

# ---------------------------------------------------------------- status
tc_run status status "$MNT"
t_eq $RC 0 "status MOUNT"
head -1 "$T/status.out" | grep -q "^$MNT: extent size 1M" || t_fail "status header: $(head -1 "$T/status.out")"
grep -qE '^TIER +KIND +PATH +SIZE +USED +FREE +USE% +EXTENTS +READ +WRITTEN +READ% +PROMOTED +DEMOTED$' "$T/status.out" ||
	t_fail "status column header: $(sed -n 2p "$T/status.out")"
grep -qE '^ram +ram +- +8M +8M +0 +100.0% +8 ' "$T/status.out" || t_fail "status ram row: $(cat "$T/status.out")"
grep -qE "^disk +file +$T/disk +64M " "$T/status.out" || t_fail "status disk row: $(cat "$T/status.out")"
# from a path inside the mount too
tc_run status2 status "$MNT/tree/sub"
t_eq $RC 0 "status of a subdirectory"
head -1 "$T/status2.out" | grep -q "^$MNT: " || t_fail "status of a subdirectory names '$(head -1 "$T/status2.out")'"
# every tierfs mount, ours among them (other mounts may be unreadable)
"$TC" status >"$T/all.out" 2>/dev/null
grep -q "^$MNT: " "$T/all.out" || t_fail "status without MOUNT does not list $MNT"
tc_run notfs status /proc
t_eq $RC 1 "status of a non-tierfs path"
tc_err_is notfs "tierctl: '/proc' is not on a tierfs mount"
tc_run enoent status "$MNT/nonexistent"
t_eq $RC 1 "status of a missing path"
tc_err_is enoent "tierctl: cannot access '$MNT/nonexistent': No such file or directory"

# ---------------------------------------------------------------- not tierfs
# not_tierfs PATH ARGS... -- tierctl ARGS (naming PATH) refuses PATH with
# exactly one line and exit 1, and prints nothing on stdout
not_tierfs() {
	local path=$1
	shift
	"$TC" "$@" >"$T/nt.out" 2>"$T/nt.err"
	t_eq $? 1 "tierctl $* (not tierfs): status"
	tc_err_is nt "tierctl: '$path' is not on a tierfs mount"
	t_eq "$(cat "$T/nt.out")" "" "tierctl $* (not tierfs): stdout"
}
# user xattrs of FILE, as getfattr dumps them
user_xattrs() {
	getfattr --absolute-names -d -m '^user\.' "$1" 2>/dev/null | grep -v '^#'
}
# every verb, on a file and a directory of $T's filesystem
refuse_outside() { # refuse_outside FILE DIR
	local f=$1 d=$2
	not_tierfs "$f" pin "$f" ram
	not_tierfs "$f" unpin "$f"
	not_tierfs "$f" policy set "$f" tiers=ram pin=ram promote=0
	not_tierfs "$f" policy unset "$f"
	not_tierfs "$f" policy unset "$f" pin
	not_tierfs "$d" policy set "$d" split=ram:1M,disk
	not_tierfs "$d" unpin "$d"
	not_tierfs "$f" policy get "$f"
	not_tierfs "$f" layout "$f"
	not_tierfs "$d" layout "$d"
	not_tierfs "$f" migrate "$f" ram
	not_tierfs "$d" migrate -q "$d" disk
	not_tierfs "$d" drain "$d" ram
	not_tierfs "$d" drain --undo "$d"
	not_tierfs "$d" scrub "$d"
	not_tierfs "$d" status "$d"
	not_tierfs "$d" stats "$d"
	not_tierfs "$d" stats --json "$d"
	not_tierfs "$d" stats --prometheus "$d"
	not_tierfs "$d" top --once "$d"
}
echo outside >"$T/outside"
mkdir "$T/outdir"
# a pin already there (when $T's filesystem takes user xattrs) must stay
setfattr -n user.tierfs.pin -v keep "$T/outdir" 2>/dev/null
out_f=$(user_xattrs "$T/outside")
out_d=$(user_xattrs "$T/outdir")
refuse_outside "$T/outside" "$T/outdir"
getfattr --absolute-names -n user.tierfs.pin "$T/outside" >/dev/null 2>&1 &&
	t_fail "tierctl wrote user.tierfs.pin outside tierfs"
t_eq "$(user_xattrs "$T/outside")" "$out_f" "xattrs of a file outside tierfs"
t_eq "$(user_xattrs "$T/outdir")" "$out_d" "xattrs of a directory outside tierfs"
# FUSE, but not tierfs: mergerfs hands user xattrs through to its branch
if command -v mergerfs >/dev/null; then
	mkdir -p "$T/branch/dir" "$T/merged"
	echo branch >"$T/branch/file"
	mergerfs "$T/branch" "$T/merged" || t_fail "cannot mount mergerfs"
	T_EXTRA_MOUNTS+=("$T/merged")
	refuse_outside "$T/merged/file" "$T/merged/dir"
	t_eq "$(user_xattrs "$T/branch/file")" "" "xattrs below a mergerfs mount"
	t_eq "$(user_xattrs "$T/branch/dir")" "" "xattrs of a directory below a mergerfs mount"
	fusermount3 -u "$T/merged" || umount -l "$T/merged"
fi

# ---------------------------------------------------------------- stats
tc_run stats stats "$MNT"
t_eq $RC 0 "stats text"
grep -qx 'tier.ram.size 8388608' "$T/stats.out" || t_fail "stats text: no tier.ram.size"
grep -qx 'mount.extent_size 1048576' "$T/stats.out" || t_fail "stats text: no mount.extent_size"

# read some data back so that a hit ratio exists
cat "$MNT/f" >/dev/null
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
cat "$MNT/f" >/dev/null

tc_run json stats --json "$MNT"
t_eq $RC 0 "stats --json"
python3 -m json.tool "$T/json.out" >/dev/null || t_fail "stats --json is not valid JSON: $(cat "$T/json.out")"
python3 - "$T/json.out" "$MNT" "$T/disk" <<'EOF' || t_fail "stats --json content"
import json, sys
d = json.load(open(sys.argv[1]))
mnt, disk = sys.argv[2], sys.argv[3]
assert d["version"] == 1, d["version"]
assert d["mount"] == mnt, d["mount"]
assert d["extent_size"] == 1048576
assert isinstance(d["inodes"], int) and d["inodes"] >= 6
m = d["migrator"]
assert m["enabled"] is False, m
for k in ("passes", "moved", "retries", "failures", "high_watermark",
          "low_watermark", "bandwidth"):
    assert isinstance(m[k], int), k
t = d["tiers"]
assert [x["name"] for x in t] == ["ram", "disk"], t
assert t[0]["kind"] == "ram" and t[0]["path"] is None
assert t[1]["kind"] == "file" and t[1]["path"] == disk
assert t[0]["size"] == 8 << 20 and t[1]["size"] == 64 << 20
assert t[0]["used"] == 8 << 20 and t[0]["free"] == 0 and t[0]["extents"] == 8
keys = ("size", "used", "free", "extents", "read_bytes", "read_ops",
        "write_bytes", "write_ops", "promotions", "promote_bytes",
        "demotions", "demote_bytes", "spills", "csum_errors", "io_errors")
for x in t:
    for k in keys:
        assert isinstance(x[k], int) and x[k] >= 0, (x["name"], k)
reads = sum(x["read_bytes"] for x in t)
assert reads > 0
for x in t:
    assert abs(x["read_share"] - x["read_bytes"] / reads) < 1e-9, x
    # the old name of read_share stays in version 1
    assert x["hit_ratio"] == x["read_share"], x
assert abs(sum(x["read_share"] for x in t) - 1) < 1e-9
r = d["requests"]
assert r["init"] == 1 and r["lookup"] > 0 and r["getxattr"] > 0, r
assert all(isinstance(v, int) and v > 0 for v in r.values()), r
EOF
"$TC" stats --json --compact "$MNT" >"$T/compact.out" || t_fail "stats --json --compact"
t_eq "$(wc -l <"$T/compact.out")" 1 "compact JSON lines"
python3 -m json.tool "$T/compact.out" >/dev/null || t_fail "compact JSON invalid"
tc_run json2 stats --json "$MNT" "$MNT"
t_eq $RC 2 "stats --json with two mounts"

tc_run prom stats --prometheus "$MNT"
t_eq $RC 0 "stats --prometheus"
# the exposition format, line by line
help_re='^# HELP (tierfs_[a-z0-9_]+) [^ ].*$'
type_re='^# TYPE (tierfs_[a-z0-9_]+) (counter|gauge)$'
sample_re='^(tierfs_[a-z0-9_]+)\{([^}]*)\} (-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)$'
label_re='^[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*$'
family='' ftype='' nsamples=0 declare_help=
while IFS= read -r line; do
	if [[ $line =~ $help_re ]]; then
		declare_help=${BASH_REMATCH[1]}
	elif [[ $line =~ $type_re ]]; then
		family=${BASH_REMATCH[1]}
		ftype=${BASH_REMATCH[2]}
		t_eq "$declare_help" "$family" "HELP before TYPE of $family"
		if [ "$ftype" = counter ]; then
			t_like "$family" "*_total" "counter name"
		else
			[[ $family != *_total ]] || t_fail "gauge $family ends in _total"
		fi
	elif [[ $line =~ $sample_re ]]; then
		name=${BASH_REMATCH[1]}
		labels=${BASH_REMATCH[2]}
		t_eq "$name" "$family" "sample after the TYPE line of its family"
		[[ $labels =~ $label_re ]] || t_fail "bad labels: $line"
		# one family is about tierctl, not a mount
		[[ $name == tierfs_build_info || $labels == *"mount=\"$MNT\""* ]] ||
			t_fail "no mount label: $line"
		if [[ $name == tierfs_tier_* ]]; then
			[[ $labels =~ (^|,)tier=\"(ram|disk)\" ]] || t_fail "no tier label: $line"
		fi
		nsamples=$((nsamples + 1))
	else
		t_fail "not exposition format: '$line'"
	fi
done <"$T/prom.out"
[ $nsamples -ge 30 ] || t_fail "only $nsamples samples"
grep -qx "tierfs_tier_used_bytes{mount=\"$MNT\",tier=\"ram\"} 8388608" "$T/prom.out" ||
	t_fail "no ram used_bytes sample"
grep -qx "tierfs_tier_size_bytes{mount=\"$MNT\",tier=\"disk\"} 67108864" "$T/prom.out" ||
	t_fail "no disk size_bytes sample"
grep -q '^# TYPE tierfs_tier_read_bytes_total counter$' "$T/prom.out" || t_fail "no read bytes counter"
grep -qx "tierfs_up{mount=\"$MNT\"} 1" "$T/prom.out" || t_fail "no tierfs_up 1 of $MNT"
grep -qx "tierfs_build_info{version=\"$("$TC" --version | cut -d' ' -f2)\"} 1" "$T/prom.out" ||
	t_fail "no tierfs_build_info: $(grep build_info "$T/prom.out")"

# ---------------------------------------------------------------- write errors
# output that cannot be written is an error: exit 1 and one line
if [ -w /dev/full ]; then
	full() { # full ARGS... -- tierctl ARGS with stdout on /dev/full
		"$TC" "$@" >/dev/full 2>"$T/full.err"
		t_eq $? 1 "tierctl $* >/dev/full: status"
		tc_err_is full "tierctl: cannot write to standard output: No space left on device"
	}
	full status "$MNT"
	full stats "$MNT"
	full stats --json "$MNT"
	full stats --json --compact "$MNT"
	full stats --prometheus "$MNT"
	full top --once "$MNT"
	full layout "$MNT/f"
	full layout "$MNT/tree"
	full policy get "$MNT/f"
	full --help
	full --version
	full help migrate
	full status --help
	# an error and a lost output: both lines, the error first
	"$TC" status "$MNT" "$T/outside" >/dev/full 2>"$T/full.err"
	t_eq $? 1 "status of a good and a bad path >/dev/full"
	t_eq "$(cat "$T/full.err")" "tierctl: '$T/outside' is not on a tierfs mount
tierctl: cannot write to standard output: No space left on device" "stderr of both errors"
	# nothing to write is no error
	"$TC" policy set "$MNT/tree" promote=1 >/dev/full 2>"$T/full.err" ||
		t_fail "policy set >/dev/full: $(cat "$T/full.err")"
	"$TC" policy unset "$MNT/tree" promote >/dev/full 2>&1 || t_fail "policy unset >/dev/full"
fi

# ---------------------------------------------------------------- layout
tc_run layout layout "$MNT/f"
t_eq $RC 0 "layout f"
head -1 "$T/layout.out" | grep -q "^File size of $MNT/f is 12582912 (12M, extent size 1M)$" ||
	t_fail "layout header: $(head -1 "$T/layout.out")"
grep -qE '^ +0: +0\.\. +8388607: +8M: ram$' "$T/layout.out" || t_fail "layout run 0: $(cat "$T/layout.out")"
grep -qE '^ +1: +8388608\.\. +12582911: +4M: disk$' "$T/layout.out" || t_fail "layout run 1: $(cat "$T/layout.out")"
grep -qx "$MNT/f: 2 runs; ram 8M (66.7%), disk 4M (33.3%); total 12M" "$T/layout.out" ||
	t_fail "layout totals: $(tail -1 "$T/layout.out")"
tc_run layoutdir layout "$MNT/tree"
t_eq $RC 0 "layout of a directory"
# three files of 1M + i*4K hold 3M + 24K, to the 4 KiB unit
grep -q "^$MNT/tree: ram 0 (0.0%), disk 3.0M (100.0%); total 3.0M$" "$T/layoutdir.out" || t_fail "layout of a directory: $(cat "$T/layoutdir.out")"
# each computed value once per call (issue 32): tierctl reads it in one
# getxattr, not a size probe and then a read, which computed it twice
# (a directory's layout walked the tree twice, scrub read each file
# twice); the daemon counts what it computed (mount.ctl_computed, the
# stats text excepted)
computed() {
	getfattr --absolute-names --only-values -n user.tierfs.stats "$MNT" |
		awk '$1 == "mount" { for (i = 2; i <= NF; i++)
			if (index($i, "ctl_computed=") == 1) print substr($i, 14) }'
}
# once_each WANT ARGS... -- tierctl ARGS computes WANT values
once_each() {
	local want=$1 c0 c1
	shift
	c0=$(computed)
	[ -n "$c0" ] || t_fail "no ctl_computed in the stats"
	"$TC" "$@" >/dev/null || t_fail "tierctl $*"
	c1=$(computed)
	t_eq "$((c1 - c0))" "$want" "values computed for tierctl $*"
}
once_each 1 layout "$MNT/tree"
once_each 2 layout "$MNT/f" # its extent list (one page) and its totals
once_each 1 policy get "$MNT/f"
once_each "$(find "$MNT/tree" -type f | wc -l)" scrub -q "$MNT/tree"
tc_run layoutbad layout "$MNT/f" /proc/version
t_eq $RC 1 "layout with a non-tierfs file"
tc_err_is layoutbad "tierctl: '/proc/version' is not on a tierfs mount"

# ---------------------------------------------------------------- policy
tc_run pget policy get "$MNT/f"
t_eq $RC 0 "policy get"
grep -qE '^tiers +ram,disk +default$' "$T/pget.out" || t_fail "default tiers: $(cat "$T/pget.out")"
grep -qE '^promote +1 +default$' "$T/pget.out" || t_fail "default promote: $(cat "$T/pget.out")"
t_check "$TC" policy set "$MNT/tree" tiers=disk promote=0
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.tiers "$MNT/tree")" disk "stored tiers"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.promote "$MNT/tree")" 0 "stored promote"
tc_run pget2 policy get "$MNT/tree/sub/t1" tiers
t_eq $RC 0 "policy get KEY"
grep -qE '^tiers +disk +/tree$' "$T/pget2.out" || t_fail "inherited tiers: $(cat "$T/pget2.out")"
t_eq "$(wc -l <"$T/pget2.out")" 1 "policy get KEY lines"
# new data below /tree goes to disk although ram has room after a move
t_check "$TC" migrate -q "$MNT/f" disk
head -c $MiB /dev/urandom >"$T/new.ref"
cp "$T/new.ref" "$MNT/tree/new" || t_fail "write tree/new"
t_eq "$(tier_of "$MNT/tree/new")" disk "tier of a file below tiers=disk"

tc_run pbad policy set "$MNT/f" tiers=nosuch
t_eq $RC 1 "invalid tier"
tc_err_is pbad "tierctl: invalid value 'nosuch' for tiers: unknown tier 'nosuch' (tiers: ram, disk)"
tc_run pbad2 policy set "$MNT/f" promote=maybe
t_eq $RC 1 "invalid promote"
tc_err_is pbad2 "tierctl: invalid value 'maybe' for promote: expected 0 or 1"
tc_run pbad3 policy set "$MNT/f" split=ram:lots,disk
t_eq $RC 1 "invalid split"
tc_err_is pbad3 "tierctl: invalid value 'ram:lots,disk' for split: bad size 'lots' for tier 'ram' (use a number with an optional K, M, G or T suffix)"
tc_run pbad4 policy set "$MNT/f" colour=blue
t_eq $RC 2 "unknown key"
grep -q "^tierctl: unknown policy key 'colour': use tiers, pin, split, promote or io$" "$T/pbad4.err" ||
	t_fail "unknown key message: $(cat "$T/pbad4.err")"
tc_run pbad5 policy set "$MNT/f" tiers=disk bogus
t_eq $RC 2 "argument without ="
getfattr --absolute-names -n user.tierfs.tiers "$MNT/f" >/dev/null 2>&1 && t_fail "a refused policy set changed something"
tc_run pbad6 policy frob "$MNT/f"
t_eq $RC 2 "unknown policy action"
t_check "$TC" policy set "$MNT/tree/sub" split=ram:1M,disk
tc_run pget3 policy get "$MNT/tree/sub/t2" split
grep -qE '^split +ram:(1M|1048576),disk +/tree/sub$' "$T/pget3.out" || t_fail "split: $(cat "$T/pget3.out")"
t_check "$TC" policy unset "$MNT/tree/sub"
t_check "$TC" policy unset "$MNT/tree" promote
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.tiers "$MNT/tree")" disk "tiers kept by unset of promote"
getfattr --absolute-names -n user.tierfs.promote "$MNT/tree" >/dev/null 2>&1 && t_fail "promote not unset"
t_check "$TC" policy unset "$MNT/tree"
t_check "$TC" policy unset "$MNT/tree" # nothing set: no error
getfattr --absolute-names -n user.tierfs.tiers "$MNT/tree" >/dev/null 2>&1 && t_fail "tiers not unset"

# ---------------------------------------------------------------- pin/unpin
t_check "$TC" pin "$MNT/tree/sub/t3" disk
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.pin "$MNT/tree/sub/t3")" disk "pin stored"
tc_run pget4 policy get "$MNT/tree/sub/t3" pin
grep -qE '^pin +disk +\(this file\)$' "$T/pget4.out" || t_fail "pin in effective: $(cat "$T/pget4.out")"
tc_run pinbad pin "$MNT/tree/sub/t3" nosuch
t_eq $RC 1 "pin to an unknown tier"
tc_err_is pinbad "tierctl: invalid value 'nosuch' for pin: unknown tier 'nosuch' (tiers: ram, disk)"
t_check "$TC" unpin "$MNT/tree/sub/t3"
getfattr --absolute-names -n user.tierfs.pin "$MNT/tree/sub/t3" >/dev/null 2>&1 && t_fail "unpin left the pin"
t_check "$TC" unpin "$MNT/tree/sub/t3"

# ---------------------------------------------------------------- migrate
# f is on disk now (moved above), ram is empty: ram takes 8 of 12 extents
t_eq "$(tier_of "$MNT/f")" disk "f after migrate to disk"
t_eq "$(stat_field ram used)" 0 "ram used after moving f off"
tc_run mig migrate "$MNT/f" ram
t_eq $RC 1 "migrate more than fits"
grep -q "^tierctl: tier 'ram' is full (or draining): moved 8M of 12M; '$MNT/f' not finished$" "$T/mig.err" ||
	t_fail "partial migrate message: $(cat "$T/mig.err")"
t_eq "$(stat_field ram used)" $((8 * MiB)) "ram used after a partial migrate"
check_data "after a partial migrate"
# a tree, with plain progress lines (stdout is no terminal here)
tc_run migtree migrate "$MNT/tree" disk
t_eq $RC 0 "migrate a tree"
t_eq "$(tail -1 "$T/migtree.out")" "migrate to disk: 100% (0 of 0)" "migrate of data already there"
t_check "$TC" migrate -q "$MNT/f" disk
tc_run migtree2 migrate "$MNT/tree" ram
t_eq $RC 0 "migrate a tree to ram"
# what the tiers hold for t1-t3 (1M + 4K, 8K, 12K) and new (1M): 4M + 24K,
# not the 7 whole extents of their runs
t_eq "$(tail -1 "$T/migtree2.out")" "migrate to ram: 100% (4.0M of 4.0M)" "migrate progress end"
for x in tree/sub/t1 tree/sub/t2 tree/sub/t3 tree/new; do
	t_eq "$(tier_of "$MNT/$x")" ram "$x after migrating the tree"
done
grep -q '\[' "$T/migtree2.out" && t_fail "progress bar drawn on a non-terminal"
# a progress bar on a terminal
if command -v script >/dev/null; then
	script -qec "'$TC' migrate '$MNT/tree' disk" /dev/null >"$T/pty.out" 2>&1 ||
		t_fail "migrate on a pty: $(cat "$T/pty.out")"
	grep -q $'\r''migrate to disk \[##############################\] 100%' "$T/pty.out" ||
		t_fail "no progress bar on a terminal: $(od -c "$T/pty.out" | head)"
fi
tc_run migbad migrate "$MNT/f" nosuch
t_eq $RC 1 "migrate to an unknown tier"
tc_err_is migbad "tierctl: unknown tier 'nosuch' on '$MNT' (tiers: ram, disk)"
tc_run migq migrate -q "$MNT/tree" ram
t_eq "$(cat "$T/migq.out")" "" "migrate -q output"
check_data "after migrations"

# ---------------------------------------------------------------- drain
t_check "$TC" migrate -q "$MNT/f" disk
t_check "$TC" migrate -q "$MNT/tree" ram
tc_run drain drain "$MNT" ram
t_eq $RC 0 "drain ram"
# (what RAM held: f's extents there and the tree, to the 4 KiB unit)
grep -qE "^$MNT: tier ram drained \([0-9.]+M moved\); it takes no new data until 'tierctl drain --undo $MNT'\$" "$T/drain.out" ||
	t_fail "drain message: $(cat "$T/drain.out")"
t_eq "$(stat_field ram used)" 0 "ram used after drain"
head -c $MiB /dev/urandom >"$T/d1.ref"
cp "$T/d1.ref" "$MNT/d1" || t_fail "write while drained"
t_eq "$(tier_of "$MNT/d1")" disk "new data while ram is drained"
tc_run undo drain --undo "$MNT" ram
t_eq $RC 0 "drain --undo"
cp "$T/d1.ref" "$MNT/d2" || t_fail "write after undo"
t_eq "$(tier_of "$MNT/d2")" ram "new data after drain --undo"
# disk holds more than ram can take
tc_run drainfail drain "$MNT" disk
t_eq $RC 1 "drain that cannot finish"
grep -q "^tierctl: cannot drain 'disk': the other tiers cannot take its data (.* left on it); it takes no new data until 'tierctl drain --undo $MNT'$" "$T/drainfail.err" ||
	t_fail "drain failure message: $(cat "$T/drainfail.err")"
t_check "$TC" drain -q -u "$MNT"
tc_run drainbad drain "$MNT" nosuch
t_eq $RC 1 "drain of an unknown tier"
tc_err_is drainbad "tierctl: unknown tier 'nosuch' on '$MNT' (tiers: ram, disk)"
check_data "after draining"
cmp -s "$T/d1.ref" "$MNT/d1" || t_fail "d1 differs"

# ---------------------------------------------------------------- top
tc_run top top --once "$MNT"
t_eq $RC 0 "top --once"
t_eq "$(grep -c "^$MNT: rates over" "$T/top.out")" 1 "top --once screens"
grep -qE '^ram +[0-9.]+[KMG]? +[0-9.]+% ' "$T/top.out" || t_fail "top ram row: $(cat "$T/top.out")"
grep -q $'\033' "$T/top.out" && t_fail "escape sequences from top --once"
tc_run top2 top -n 2 -d 0.2 "$MNT"
t_eq $RC 0 "top -n 2"
t_eq "$(grep -c "^$MNT: rates over" "$T/top2.out")" 2 "top -n 2 screens"
tc_run topbad top -n 0 "$MNT"
t_eq $RC 2 "top -n 0"

# ---------------------------------------------------------------- non-owner
echo secret >"$MNT/rootfile"
chmod 644 "$MNT/rootfile"
echo open >"$MNT/openfile"
chmod 666 "$MNT/openfile" # writable, so the daemon's owner check decides
mkdir "$MNT/nobody" && chown 65534:65534 "$MNT/nobody"
for f in rootfile openfile; do
	t_as 65534:65534 "$TC" policy set "$MNT/$f" tiers=disk >"$T/nb.out" 2>"$T/nb.err"
	t_eq $? 1 "non-owner policy set on $f"
	tc_err_is nb "tierctl: only the owner or root may change the policy of '$MNT/$f'"
	getfattr --absolute-names -n user.tierfs.tiers "$MNT/$f" >/dev/null 2>&1 && t_fail "non-owner changed $f"
	t_as 65534:65534 "$TC" pin "$MNT/$f" disk >"$T/nb.out" 2>"$T/nb.err"
	t_eq $? 1 "non-owner pin on $f"
	tc_err_is nb "tierctl: only the owner or root may change the policy of '$MNT/$f'"
done
# to the tier it is not on, so that there is something to move
other=ram
[ "$(tier_of "$MNT/openfile")" = ram ] && other=disk
t_as 65534:65534 "$TC" migrate "$MNT/openfile" $other >"$T/nb.out" 2>"$T/nb.err"
t_eq $? 1 "non-owner migrate"
tc_err_is nb "tierctl: only the owner or root may migrate '$MNT/openfile'"
t_as 65534:65534 "$TC" drain "$MNT" ram >"$T/nb.out" 2>"$T/nb.err"
t_eq $? 1 "non-root drain"
tc_err_is nb "tierctl: only root may drain a tier of '$MNT'"
t_eq "$(cat "$T/nb.out")" "" "non-root drain: no progress output"
# read-only queries and one's own files work
t_as 65534:65534 "$TC" status "$MNT" >"$T/nb.out" 2>&1 || t_fail "status as uid 65534: $(cat "$T/nb.out")"
t_as 65534:65534 "$TC" stats --json "$MNT" >"$T/nb.out" 2>&1 || t_fail "stats as uid 65534"
python3 -m json.tool "$T/nb.out" >/dev/null || t_fail "stats --json as uid 65534"
t_as 65534:65534 "$TC" layout "$MNT/rootfile" >/dev/null 2>&1 || t_fail "layout as uid 65534"
t_as 65534:65534 "$TC" policy get "$MNT/rootfile" >/dev/null 2>&1 || t_fail "policy get as uid 65534"
t_as 65534:65534 "$TC" policy set "$MNT/nobody" tiers=disk >"$T/nb.out" 2>&1 ||
	t_fail "owner's policy set as uid 65534: $(cat "$T/nb.out")"
t_eq "$(getfattr --absolute-names --only-values -n user.tierfs.tiers "$MNT/nobody")" disk "policy set by its owner"

# ---------------------------------------------------------------- names
# file names are printed escaped as ls -b does: a newline or an ESC in a
# name neither splits a line nor reaches the terminal
odd=$'a\nb\033[31mc\\d'      # a, newline, b, ESC [31m, c, backslash, d
odd_q='a\nb\033[31mc\\d'     # and as tierctl must print it
mkdir -p "$MNT/names/$odd" || t_fail "mkdir of an odd name"
echo odd >"$MNT/names/$odd/$odd" || t_fail "create of an odd name"
tc_run esc layout "$MNT/names/$odd/$odd"
t_eq $RC 0 "layout of an odd name"
grep -q $'\033' "$T/esc.out" && t_fail "layout printed a raw ESC: $(od -c "$T/esc.out" | head)"
t_eq "$(wc -l <"$T/esc.out")" 4 "layout lines of an odd name"
head -1 "$T/esc.out" >"$T/esc.head"
[[ $(cat "$T/esc.head") == "File size of $MNT/names/$odd_q/$odd_q is 4 ("* ]] ||
	t_fail "layout header of an odd name: $(cat "$T/esc.head")"
[[ $(tail -1 "$T/esc.out") == "$MNT/names/$odd_q/$odd_q: 1 run; "* ]] ||
	t_fail "layout totals of an odd name: $(tail -1 "$T/esc.out")"
tc_run escdir layout "$MNT/names/$odd"
t_eq $RC 0 "layout of an odd directory"
t_eq "$(wc -l <"$T/escdir.out")" 1 "layout lines of an odd directory"
[[ $(cat "$T/escdir.out") == "$MNT/names/$odd_q: ram "* ]] ||
	t_fail "layout of an odd directory: $(cat "$T/escdir.out")"
# where a policy comes from is a path too
t_check "$TC" policy set "$MNT/names/$odd" tiers=disk
tc_run escpol policy get "$MNT/names/$odd/$odd" tiers
t_eq $RC 0 "policy get below an odd name"
t_eq "$(cat "$T/escpol.out")" "tiers    disk                     /names/$odd_q" "policy source of an odd name"
# and in messages
tc_run escerr layout "$MNT/names/$odd/nope"
t_eq $RC 1 "layout of a missing odd name"
tc_err_is escerr "tierctl: cannot access '$MNT/names/$odd_q/nope': No such file or directory"
tc_run escerr2 pin "$T/outside$odd" ram
t_eq $RC 1 "pin of a missing odd name"
tc_err_is escerr2 "tierctl: cannot access '$T/outside$odd_q': No such file or directory"
# other bytes: controls, a C1 control (U+009B, CSI) and bytes that are no
# UTF-8 are octal; UTF-8 text is kept
odd2=$'\001\177\xc2\x9b\xff caf\xc3\xa9'
odd2_q=$'\\001\\177\\302\\233\\377 caf\xc3\xa9'
echo odd >"$MNT/names/$odd2" || t_fail "create of a name with control bytes"
tc_run esc2 layout "$MNT/names/$odd2"
t_eq $RC 0 "layout of a name with control bytes"
[[ $(head -1 "$T/esc2.out") == "File size of $MNT/names/$odd2_q is "* ]] ||
	t_fail "layout of a name with control bytes: $(head -1 "$T/esc2.out" | od -c)"
rm -rf "$MNT/names" || t_fail "rm names"

# ---------------------------------------------------------------- fuzz
echo fuzz >"$MNT/fz"
# values that must be refused, with the tree unchanged
refuse() { # refuse NAME PATH VALUE...
	local name=$1 path=$2 v
	shift 2
	for v in "$@"; do
		setfattr -n "$name" -v "$v" "$path" 2>/dev/null &&
			t_fail "setfattr $name='$v' was accepted"
	done
	return 0
}
refuse user.tierfs.ctl.migrate "$MNT/fz" nosuch 'nosuch 0 1' 'ram -1 5' \
	'ram 0 1 2' 'ram 0 0' 'ram x y' 'ram  0' '0x00' \
	"$(printf 'r%.0s' $(seq 300))" 'ram 0 1 disk'
refuse user.tierfs.ctl.migrate "$MNT/tree" ram # a directory
refuse user.tierfs.ctl.drain "$MNT" nosuch 'ram disk' '0x0a0a' "$(printf 'd%.0s' $(seq 300))"
refuse user.tierfs.tiers "$MNT/fz" nosuch 'ram,,disk' ',' 'ram,nosuch' '0x72616d0064'
refuse user.tierfs.pin "$MNT/fz" nosuch 'ram,disk' '0x00'
refuse user.tierfs.split "$MNT/fz" 'ram:x,disk' 'ram:1M,nosuch' 'nosuch:1M,ram' 'ram:,disk'
refuse user.tierfs.promote "$MNT/fz" 2 yes -1 '0x00'
for i in $(seq 200); do
	n=$((RANDOM % 48 + 1))
	hex=$(head -c $n /dev/urandom | od -An -tx1 | tr -d ' \n')
	for name in ctl.migrate tiers pin split promote; do
		setfattr -n "user.tierfs.$name" -v "0x$hex" "$MNT/fz" 2>/dev/null
	done
	setfattr -n user.tierfs.ctl.drain -v "0x$hex" "$MNT" 2>/dev/null
	setfattr -n user.tierfs.ctl.migrate -v "0x$hex" "$MNT/f" 2>/dev/null
done
kill -0 "$T_PID" 2>/dev/null || t_fail "daemon died while fuzzing"
mountpoint -q "$MNT" || t_fail "mount gone after fuzzing"
# end any drain a random value may have started, drop random policies
setfattr -n user.tierfs.ctl.drain -v - "$MNT" || t_fail "drain - after fuzzing"
for name in tiers pin split promote; do
	setfattr -x "user.tierfs.$name" "$MNT/fz" 2>/dev/null
done
t_eq "$(cat "$MNT/fz")" fuzz "fz after fuzzing"
check_data "after fuzzing"
"$TC" status "$MNT" >/dev/null || t_fail "status after fuzzing"
"$TC" policy get "$MNT/fz" >"$T/pget5.out" || t_fail "policy get after fuzzing"
grep -qE '^tiers +ram,disk +default$' "$T/pget5.out" || t_fail "policy after fuzzing: $(cat "$T/pget5.out")"
cp "$T/new.ref" "$MNT/afterfuzz" || t_fail "write after fuzzing"
cmp -s "$T/new.ref" "$MNT/afterfuzz" || t_fail "read after fuzzing"

# ---------------------------------------------------------------- scrub
tc_run scrub scrub "$MNT"
t_eq $RC 0 "scrub"
nfiles=$(find "$MNT" -type f | wc -l)
grep -qE "^checked [0-9]+ extents in $nfiles files, 0 errors$" "$T/scrub.out" ||
	t_fail "scrub summary: $(tail -1 "$T/scrub.out") ($nfiles files)"
t_eq "$(grep '^scrub: ' "$T/scrub.out" | tail -1)" "scrub: 100% ($nfiles of $nfiles)" "scrub progress"
tc_run scrubq scrub -q "$MNT/tree"
t_like "$(cat "$T/scrubq.out")" "checked * extents in 4 files, 0 errors" "scrub -q of a subtree"
# damage the file tier behind the daemon's back: scrub must notice
t_check "$TC" migrate -q "$MNT/f" disk
# the slab has no name (it is unlinked): reach it through the daemon's fd
slab=
for fd in /proc/"$T_PID"/fd/*; do
	case $(readlink "$fd") in
	"$(realpath "$T/disk")"/tierfs-*" (deleted)") slab=$fd ;;
	esac
done
[ -n "$slab" ] || t_fail "no slab of the disk tier open in the daemon"
if [ -n "$slab" ]; then
	# the slab is address space (a slot per 4 KiB unit: tiers/tier.h);
	# the data sits in its lowest slots, so overwrite as many bytes as
	# the tier's size, not the whole sparse file
	size=$((64 * 1024 * 1024))
	head -c "$size" /dev/urandom | dd of="$slab" conv=notrunc status=none
	tc_run scrubbad scrub -q "$MNT"
	t_eq $RC 1 "scrub with damaged extents"
	grep -qE "^checked [0-9]+ extents in [0-9]+ files, [1-9][0-9]* errors$" "$T/scrubbad.out" ||
		t_fail "scrub summary with errors: $(cat "$T/scrubbad.out")"
	grep -q "^tierctl: '$MNT/f': [0-9]* of [0-9]* extents failed their checksum$" "$T/scrubbad.err" ||
		t_fail "scrub does not name f: $(cat "$T/scrubbad.err")"
fi
kill -0 "$T_PID" 2>/dev/null || t_fail "daemon died"
t_pass
