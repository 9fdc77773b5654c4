#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: limits
# TIMEOUT: 120
#
# The figures of the job report per quota directory (issue 19 item 11)
# and `tierctl quota set` (item 10), over a RAM tier of 4M and a file
# tier, 1M extents:
#  - tierctl quota set DIR QUOTA stores trusted.tierfs.quota (root only:
#    a user gets one line; a bad value, a file and a missing DIR fail
#    with one line, nothing set); set DIR none removes it, also when
#    there is none;
#  - a fresh quota shows every figure at 0;
#  - 8M written with O_DIRECT (no page cache) into /a: write_bytes 8M,
#    spill_bytes what the layout has below RAM (> 0: the RAM tier is
#    4M; extents that outgrew RAM moved down count whole), peak_bytes 8M
#    (not the transient charge of a relocating extent); read back with
#    O_DIRECT: read_bytes 8M, read_below_bytes what the layout has below
#    RAM, so the share from RAM is known; the peak stays after rm;
#  - /b counts its own I/O only, and /a is not touched by it; a quota
#    nested in /b counts in both; its figures stay in /b's when it goes;
#    two writers and readers at once, the figures read meanwhile, add up
#    exactly (and, in the TSan run, race-free);
#  - tierctl quota DIR shows the figures ("spilled below ram", "reads that
#    reached tierfs"); --json has the same numbers (parsed with python3);
#  - contrib/slurm/epilog.sh (run here without Slurm, on a copy pointed
#    at this mount) prints the report line, appends it to the job's
#    output file as the job's user, and says when a job has no quota;
#  - writebacks failing at a quota count as writeback_errors, with the
#    bytes they did not store (where the kernel has FUSE's writeback
#    cache).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tiers/tlib.sh"
command -v setpriv >/dev/null || t_skip "setpriv missing"
command -v python3 >/dev/null || t_skip "python3 missing"
[ -n "${TIERCTL:-}" ] || t_skip "TIERCTL not set"

A=1001:1001
Q=trusted.tierfs.quota
TC=$TIERCTL

mkdir -p "$T/disk" || t_fail mkdir
t_mount -o allow_other --tier ram=ram:4M --tier disk=file:"$T/disk":64M \
	--no-migrate
chmod 0755 "$MNT" || t_fail chmod
mkdir "$MNT/a" "$MNT/b" || t_fail mkdir
chown 1001:1001 "$MNT/a" || t_fail chown

stored() { getfattr --absolute-names --only-values -n "$Q" -- "$1" 2>/dev/null; }
# fig DIR KEY -- one figure of the innermost quota of DIR
fig() {
	t_xattr "$1" user.tierfs.quota | head -n 1 | tr ' ' '\n' |
		sed -n "s/^$2=\([0-9]*\)$/\1/p"
}
figs() {
	local d=$1 k out=
	shift
	for k; do out+="$k=$(fig "$d" "$k") "; done
	echo "${out% }"
}
ALL="peak_bytes write_bytes spill_bytes read_bytes read_below_bytes writeback_errors writeback_lost_bytes"

# --- tierctl quota set ---
out=$("$TC" quota set "$MNT/a" 32M 2>&1) || t_fail "tierctl quota set: $out"
t_eq "$out" "" "tierctl quota set prints nothing"
t_eq "$(stored "$MNT/a")" 32M "the value stored"
t_check "$TC" quota set "$MNT/a" ram:2M,total:32M
t_eq "$(stored "$MNT/a")" ram:2M,total:32M "the value changed"
t_like "$(t_xattr "$MNT/a" user.tierfs.quota)" \
	"total=0/$((32 * M)) ram=0/$((2 * M)) disk=0/- inodes=0/- *dir=/a" "the quota in force"
out=$(t_as $A "$TC" quota set "$MNT/a" 1G 2>&1) && t_fail "a user set a quota: $out"
t_eq "$out" "tierctl: only root may set the quota of '$MNT/a' ($Q)" "a user's quota set"
out=$(t_as $A "$TC" quota set "$MNT/a" none 2>&1) && t_fail "a user removed a quota: $out"
t_like "$out" "tierctl: only root may remove the quota of *" "a user's quota set none"
t_eq "$(stored "$MNT/a")" ram:2M,total:32M "a user changed nothing"
for bad in 12Q nvme:1G ram:1M,ram:2M "total:" "1M 2M"; do
	out=$("$TC" quota set "$MNT/a" "$bad" 2>&1) && t_fail "quota set $bad succeeded"
	t_like "$out" "tierctl: invalid quota '$bad' for '$MNT/a': *a tier (ram, disk)*" "quota set $bad"
done
t_eq "$(stored "$MNT/a")" ram:2M,total:32M "a bad value changed nothing"
echo x >"$MNT/file" || t_fail "file"
out=$("$TC" quota set "$MNT/file" 1M 2>&1) && t_fail "quota set on a file succeeded"
t_like "$out" "tierctl: '$MNT/file' is not a directory*" "quota set on a file"
out=$("$TC" quota set "$MNT/nope" 1M 2>&1) && t_fail "quota set on nothing succeeded"
t_like "$out" "tierctl: *nope*" "quota set on a missing directory"
out=$("$TC" quota set "$MNT/a" 2>&1)
t_eq "$?" 2 "quota set without QUOTA: usage exit status"
t_like "$out" "tierctl: quota set takes DIR and QUOTA*usage: tierctl quota*" "quota set without QUOTA"
t_check "$TC" quota set "$MNT/b" none # none there: not an error
t_check "$TC" quota set "$MNT/a" none
stored "$MNT/a" >/dev/null && t_fail "quota set none left the attribute"
t_like "$("$TC" quota "$MNT/a")" "*no quota*" "no quota after set none"
t_check "$TC" quota set "$MNT/a" 32M
t_check "$TC" quota set "$MNT/b" 32M

# --- fresh: every figure 0 ---
t_eq "$(figs "$MNT/a" $ALL)" \
	"peak_bytes=0 write_bytes=0 spill_bytes=0 read_bytes=0 read_below_bytes=0 writeback_errors=0 writeback_lost_bytes=0" \
	"the figures of a fresh quota"

# --- /a: 8M written and read with O_DIRECT, half of it below RAM ---
t_as $A dd if=/dev/urandom of="$MNT/a/f" bs=1M count=8 oflag=direct status=none ||
	t_fail "O_DIRECT write into /a"
ram=$(on_tier ram "$MNT/a/f") && disk=$(on_tier disk "$MNT/a/f") || t_fail "layout of /a/f"
echo "a/f: ram=$ram disk=$disk"
t_eq $((ram + disk)) $((8 * M)) "a/f held"
[ "$disk" -gt 0 ] || t_fail "nothing spilled below a 4M RAM tier: $(layout "$MNT/a/f")"
t_eq "$(figs "$MNT/a" peak_bytes write_bytes spill_bytes read_bytes)" \
	"peak_bytes=$((8 * M)) write_bytes=$((8 * M)) spill_bytes=$disk read_bytes=0" \
	"the figures after the write"
t_as $A dd if="$MNT/a/f" of=/dev/null bs=1M iflag=direct status=none ||
	t_fail "O_DIRECT read of /a/f"
t_eq "$(figs "$MNT/a" read_bytes read_below_bytes)" \
	"read_bytes=$((8 * M)) read_below_bytes=$disk" "the figures after the read"
# half of it once more, from the start (the RAM part)
t_as $A dd if="$MNT/a/f" of=/dev/null bs=1M count=2 iflag=direct status=none ||
	t_fail "O_DIRECT read of the head of /a/f"
t_eq "$(figs "$MNT/a" read_bytes read_below_bytes)" \
	"read_bytes=$((10 * M)) read_below_bytes=$disk" "a read from RAM"

# --- /b counts its own; nested quotas count in both ---
t_eq "$(figs "$MNT/b" $ALL)" \
	"peak_bytes=0 write_bytes=0 spill_bytes=0 read_bytes=0 read_below_bytes=0 writeback_errors=0 writeback_lost_bytes=0" \
	"/b untouched by /a"
dd if=/dev/zero of="$MNT/b/g" bs=1M count=3 oflag=direct status=none || t_fail "write into /b"
mkdir "$MNT/b/in" || t_fail mkdir
t_check "$TC" quota set "$MNT/b/in" 8M
dd if=/dev/zero of="$MNT/b/in/x" bs=1M count=2 oflag=direct status=none || t_fail "write into /b/in"
dd if="$MNT/b/in/x" of=/dev/null bs=1M iflag=direct status=none || t_fail "read of /b/in/x"
t_eq "$(figs "$MNT/b/in" peak_bytes write_bytes read_bytes)" \
	"peak_bytes=$((2 * M)) write_bytes=$((2 * M)) read_bytes=$((2 * M))" "the nested quota's figures"
t_eq "$(figs "$MNT/b" peak_bytes write_bytes read_bytes)" \
	"peak_bytes=$((5 * M)) write_bytes=$((5 * M)) read_bytes=$((2 * M))" "/b counts the nested quota's too"
t_eq "$(figs "$MNT/a" write_bytes read_bytes)" \
	"write_bytes=$((8 * M)) read_bytes=$((10 * M))" "/a untouched by /b"
rm -r "$MNT/b/in" || t_fail "rm -r /b/in"
drop_caches # the kernel forgets /b/in: its node is freed
t_eq "$(figs "$MNT/b" write_bytes read_bytes)" \
	"write_bytes=$((5 * M)) read_bytes=$((2 * M))" "/b keeps what the removed quota counted"

# --- concurrent: writers, readers and the figures read meanwhile (for
# the TSan run: the counters are the data path's atomics) ---
mkdir "$MNT/b/c" || t_fail mkdir
pids=()
for i in 1 2; do
	(dd if=/dev/zero of="$MNT/b/c/w$i" bs=256K count=16 oflag=direct status=none &&
		dd if="$MNT/b/c/w$i" of=/dev/null bs=256K iflag=direct status=none) &
	pids+=($!)
done
for _ in $(seq 20); do
	t_xattr "$MNT/b/c" user.tierfs.quota >/dev/null
done
for p in "${pids[@]}"; do wait "$p" || t_fail "a concurrent writer failed"; done
t_eq "$(figs "$MNT/b" write_bytes read_bytes)" \
	"write_bytes=$((13 * M)) read_bytes=$((10 * M))" "/b after the concurrent I/O"
rm -r "$MNT/b/c" || t_fail "rm b/c"

# --- tierctl quota and --json ---
out=$(t_as $A "$TC" quota "$MNT/a") || t_fail "tierctl quota: $out"
echo "$out"
rpct=$(python3 -c "print('%.1f' % (100.0 * (10 * $M - $disk) / (10 * $M)))")
t_like "$out" "*quota on /a*peak *8M of 32M *25.0%*written *8M*spilled *below ram*read *10M, $rpct% from ram ?reads that reached tierfs?*writeback *0 errors*" \
	"tierctl quota shows the figures"
out=$("$TC" quota --json "$MNT/a") || t_fail "tierctl quota --json: $out"
python3 - "$out" $((8 * M)) "$disk" $((10 * M)) <<'PY' || t_fail "tierctl quota --json: $out"
import json, sys
doc = json.loads(sys.argv[1])
w, below, r = (int(x) for x in sys.argv[2:5])
assert doc["version"] == 1, doc
q = doc["paths"][0]["quotas"][0]
assert q["dir"] == "/a", q
want = {"peak_bytes": w, "write_bytes": w, "spill_bytes": below,
        "read_bytes": r, "read_below_bytes": below,
        "writeback_errors": 0, "writeback_lost_bytes": 0,
        "first_tier": "ram"}
for k, v in want.items():
    assert q[k] == v, (k, q[k], v)
assert abs(q["read_first_tier_ratio"] - (r - below) / r) < 1e-9, q
assert q["total"] == {"used": w, "limit": 32 << 20}, q
PY
out=$("$TC" quota --json --compact "$MNT/b")
t_like "$out" '*"write_bytes":13631488,*"read_first_tier_ratio":*' "tierctl quota --json of /b"

# --- the peak stays after rm ---
rm "$MNT/a/f" || t_fail rm
t_like "$(t_xattr "$MNT/a" user.tierfs.quota)" "total=0/$((32 * M)) *peak_bytes=$((8 * M)) *" "the peak after rm"

# --- the shell epilog (contrib/slurm/epilog.sh) prints the report ---
EPILOG=$(dirname "$0")/../../contrib/slurm/epilog.sh
if command -v setpriv >/dev/null && [ -f "$EPILOG" ]; then
	sed "s|^SCRATCH=/scratch\$|SCRATCH=$MNT|" "$EPILOG" >"$T/epilog.sh" || t_fail "epilog copy"
	mkdir "$MNT/job77" "$T/wd" || t_fail mkdir
	t_check "$TC" quota set "$MNT/job77" 16M
	dd if=/dev/zero of="$MNT/job77/f" bs=1M count=2 oflag=direct status=none || t_fail "job77 write"
	dd if="$MNT/job77/f" of=/dev/null bs=1M iflag=direct status=none || t_fail "job77 read"
	echo "the job's output" >"$T/wd/slurm-77.out" && chown 1001:1001 "$T/wd/slurm-77.out" ||
		t_fail "job output"
	chmod 0755 "$T/wd"
	out=$(SLURM_JOB_ID=77 SLURM_JOB_UID=1001 SLURM_JOB_GID=1001 SLURM_JOB_USER=u1001 \
		SLURM_JOB_WORK_DIR=$T/wd SLURMD_NODENAME=n1 bash "$T/epilog.sh" 2>&1) ||
		t_fail "epilog.sh failed: $out"
	want="tierfs: job 77 on n1: scratch peak 2M of 16M quota; written 2M, * spilled below ram; read 2M, *% from ram (reads that reached tierfs: page cache hits are not seen); writeback errors 0"
	t_like "$out" "$want" "epilog.sh: the report on stdout"
	t_like "$(tail -n 1 "$T/wd/slurm-77.out")" "$want" "epilog.sh: the report in the job's output"
	t_eq "$(stat -c %u "$T/wd/slurm-77.out")" 1001 "the output file stays the job's"
	[ -e "$MNT/job77" ] && t_fail "epilog.sh left $MNT/job77"
	mkdir "$MNT/job78" || t_fail mkdir
	out=$(SLURM_JOB_ID=78 SLURMD_NODENAME=n1 bash "$T/epilog.sh" 2>&1) || t_fail "epilog.sh (no quota): $out"
	t_eq "$out" "tierfs: job 78 on n1: no scratch report: $MNT/job78 has no quota of its own, and tierfs counts per quota (set QUOTA_DEFAULT in prolog.sh)" \
		"epilog.sh without a quota"
fi

# --- failed writebacks at a quota ---
t_remount -o allow_other --tier ram=ram:64M --tier disk=file:"$T/disk":256M \
	--dirty-max 4M
[ "$(_rec_key mount "" writeback_cache)" = 1 ] ||
	{ echo "no writeback cache for FUSE: writeback errors not tested"; t_pass; }
mkdir "$MNT/w" || t_fail mkdir
t_check "$TC" quota set "$MNT/w" 20M
out=$(dd if=/dev/zero of="$MNT/w/f" bs=1M count=30 2>&1) && t_fail "30M into a 20M quota: $out"
errs=$(fig "$MNT/w" writeback_errors)
lost=$(fig "$MNT/w" writeback_lost_bytes)
echo "w: writeback_errors=$errs writeback_lost_bytes=$lost; mount: $(_rec_key mount "" writeback_errors)"
[ "$errs" -gt 0 ] && [ "$lost" -gt 0 ] ||
	t_fail "failed writebacks not counted: $(t_xattr "$MNT/w" user.tierfs.quota)"
[ "$(fig "$MNT/w" write_bytes)" -le $((20 * M)) ] ||
	t_fail "more stored than the quota: $(t_xattr "$MNT/w" user.tierfs.quota)"
t_like "$("$TC" quota "$MNT/w")" "*writeback *$errs errors, * not stored*" "tierctl quota: writeback errors"
t_pass
