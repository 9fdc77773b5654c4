#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# memfollow-bench.sh -- a job whose memory grows while the RAM tier holds
# its scratch (issue 18, the memory follower, fs/memwatch.h).
#
# A memory cgroup of --node bytes stands for the node: the daemon runs
# in one child of it, the job in another.  The job writes --scratch
# bytes with dd (they land in the RAM tier, --ram), then takes --grow
# bytes of anonymous memory (128 MiB every half second), and then reads its scratch back --reads
# times and checks it.  With the follower (the default) the RAM tier
# should give memory back by demoting to the file tier; with
# --no-memory-follow the node's limit is met by the RAM tier's pages,
# which the kernel cannot reclaim, and the OOM killer picks a victim.
#
# Per round and mode it prints: whether the job and the daemon lived,
# the read phase's wall time, the node cgroup's peak, what the RAM tier
# held at the end and its limit, and the bytes demoted.  Rounds
# interleave the two modes.  Root, a memory cgroup (v1 or v2), python3.
set -u
prog=memfollow-bench
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

bin=${TIERFS_BIN:-./build/fs/tierfs}
rounds=3 node=4G ram=3G scratch=2560M grow=2G reads=2 dir=/var/tmp
while [ $# -gt 0 ]; do
	case $1 in
	--bin) bin=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--node) node=$2; shift ;;
	--ram) ram=$2; shift ;;
	--scratch) scratch=$2; shift ;;
	--grow) grow=$2; shift ;;
	--reads) reads=$2; shift ;;
	--file-dir) dir=$2; shift ;;
	-h|--help) sed -n '4,19p' "$0"; exit 0 ;;
	*) die "unknown argument '$1'" ;;
	esac
	shift
done
need_fuse
[ -x "$bin" ] || die "no tierfs at '$bin' (--bin)"
command -v python3 >/dev/null || die "needs python3"
node_b=$(to_bytes "$node") grow_b=$(to_bytes "$grow")
scratch_mb=$(( $(to_bytes "$scratch") >> 20 ))

v1mnt=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
if [ -n "$v1mnt" ]; then
	own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
	parent=$v1mnt${own%/} lim=memory.limit_in_bytes peak=memory.max_usage_in_bytes
else
	parent=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	echo +memory >"$parent/cgroup.subtree_control" 2>/dev/null
	lim=memory.max peak=memory.peak
fi
cg=$parent/memfollow.$$
work=$(mktemp -d "$dir/memfollow.XXXXXX")
mnt=$work/mnt
mkdir -p "$mnt" "$work/ft"
cleanup() {
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	for c in "$cg/job" "$cg/daemon"; do
		[ -d "$c" ] && while read -r p; do echo "$p" >"$parent/cgroup.procs"; done <"$c/cgroup.procs" 2>/dev/null
		rmdir "$c" 2>/dev/null
	done
	rmdir "$cg" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

one() { # MODE ROUND
	local mode=$1 extra=() t0 t1 job=ok daemon=ok st
	[ "$mode" = nofollow ] && extra=(--no-memory-follow)
	mkdir "$cg" "$cg/daemon" "$cg/job" || die "cannot make cgroups under $parent"
	[ -n "$v1mnt" ] || echo +memory >"$cg/cgroup.subtree_control"
	echo "$node_b" >"$cg/$lim"
	sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' x "$cg/daemon" \
		"$bin" -f --tier ram=ram:"$ram" --tier disk=file:"$work/ft":8G \
		"${extra[@]}" "$mnt" >"$work/log" 2>&1 &
	local dpid=$!
	for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
	mountpoint -q "$mnt" || die "no mount: $(cat "$work/log")"
	# the job: write, grow, read back and check
	sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' x "$cg/job" \
		python3 - "$mnt/scratch" "$scratch_mb" "$grow_b" "$reads" "$work/t" <<'PY' &
import hashlib, os, sys, time
path, mb, grow, reads, tfile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
blk = [hashlib.sha256(b"%d" % i).digest() * 32768 for i in range(16)]  # 1 MiB each
with open(path, "wb", buffering=0) as f:
    for i in range(mb):
        f.write(blk[i % 16])
    os.fsync(f.fileno())
held = []  # the job's memory grows, 128 MiB every 0.5 s (256 MB/s)
while grow > 0:
    held.append(b"\1" * min(grow, 128 << 20))
    grow -= 128 << 20
    time.sleep(0.5)
time.sleep(1)
t0 = time.monotonic()
for _ in range(reads):
    with open(path, "rb", buffering=0) as f:
        for i in range(mb):
            if f.read(1 << 20) != blk[i % 16]:
                sys.exit(3)
open(tfile, "w").write("%.2f" % (time.monotonic() - t0))
PY
	local jpid=$!
	wait "$jpid" || job="died($?)"
	kill -0 "$dpid" 2>/dev/null || daemon=died
	st=$(getfattr --only-values -n user.tierfs.stats "$mnt" 2>/dev/null)
	if [ -z "$st" ]; then
		printf '%-9s round %s: job %-9s daemon %-5s (no stats: the mount is gone or hung)\n' \
			"$mode" "$2" "$job" "$daemon"
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
		kill "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
		rm -f "$work/t"
		rm -rf "$work/ft"/*
		rmdir "$cg/job" "$cg/daemon" "$cg"
		return
	fi
	printf '%-9s round %s: job %-9s daemon %-5s reads %6ss  node peak %5d MiB  ram used %5d MiB limit %5d MiB  demoted %5d MiB  shrinks %s\n' \
		"$mode" "$2" "$job" "$daemon" "$(cat "$work/t" 2>/dev/null || echo -)" \
		$(( $(cat "$cg/$peak" 2>/dev/null || echo 0) >> 20 )) \
		$(( $(awk '$1=="tier"&&$2=="ram"{for(i=3;i<=NF;i++){split($i,a,"=");if(a[1]=="used")print a[2]}}' <<<"$st" || echo 0) + 0 >> 20 )) \
		$(( $(awk '$1=="tier"&&$2=="ram"{for(i=3;i<=NF;i++){split($i,a,"=");if(a[1]=="limit")print a[2]}}' <<<"$st") + 0 >> 20 )) \
		$(( $(awk '$1=="tier"&&$2=="ram"{for(i=3;i<=NF;i++){split($i,a,"=");if(a[1]=="demote_bytes")print a[2]}}' <<<"$st") + 0 >> 20 )) \
		"$(awk '$1=="memory"{for(i=2;i<=NF;i++){split($i,a,"=");if(a[1]=="shrinks")print a[2]}}' <<<"$st")"
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
	kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	rm -f "$work/t"
	rm -rf "$work/ft"/*
	rmdir "$cg/job" "$cg/daemon" "$cg"
}

echo "# node $node, RAM tier $ram over a file tier in $dir, scratch $scratch, the job grows by $grow, $reads reads; load $(loadavg)"
for r in $(seq "$rounds"); do
	one follow "$r"
	one nofollow "$r"
done
