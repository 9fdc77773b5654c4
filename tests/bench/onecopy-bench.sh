#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# onecopy-bench.sh -- the memory a file's data holds against its warm
# read speed, for each --page-cache mode, beside tmpfs (issue 18's
# "held twice" measurement): one file of --size written with fio, read
# warm, and the peak of (page cache growth + daemon RSS) over the bytes
# stored, sampled every 0.5 s, plus the same once the mount has settled.
# Rounds interleave the targets.  Not part of `meson test`; see
# tests/bench/README.md.
#
# Needs: root (tmpfs, drop_caches), bash, fio, python3, util-linux
# (mountpoint), coreutils du, fusermount3, tierfs.
set -euo pipefail
prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"
ALL_TARGETS="tmpfs,keep,drop,only,keepfile"
usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]
For each target and round (interleaved: A B C A B C ...), on a fresh
mount: fio writes one file of --size (rw=write bs=1M end_fsync=1), reads
it once (rw=read bs=1M, the warm-up), then reads it warm, sequentially
(bs=1M) and at random (bs=4k, --runtime seconds), invalidate=0 both.
Meanwhile the machine's Cached memory growth plus the daemon's RSS is
sampled every 0.5 s ("held"); "settled" is the same taken once more
after the reads, when the RAM tier of target only has handed its data
down (at most 60 s).  Prints medians per target and ratios to tmpfs.
Targets (--targets, default $ALL_TARGETS):
  tmpfs     a tmpfs of twice --size
  keep      tierfs --tier ram=ram:RAM (the default --page-cache keep)
  drop      the same with --page-cache drop
  only      tierfs --tier ram=ram:RAM --tier disk=file:DIR:FILE
            --page-cache only
  keepfile  the same tiers with --page-cache keep
Options:
  --bin PATH       the tierfs daemon (else \$TIERFS_BIN, else ./build/fs/tierfs)
  --size SIZE      the file (default 2G)
  --ram SIZE       the RAM tier (default 3G)
  --file-size SIZE the file tier (default 8G)
  --file-dir DIR   where the file tier goes (default /var/tmp)
  --runtime S      seconds of random reads (default 5)
  --rounds N       default 3
  --targets LIST   a subset of $ALL_TARGETS
  -h, --help       this text
EOF
}

bin=${TIERFS_BIN:-./build/fs/tierfs}
size=2G ram=3G file_size=8G file_dir=/var/tmp runtime=5 rounds=3
targets=$ALL_TARGETS
while (($#)); do
	case $1 in
	--bin) bin=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--ram) ram=$2; shift 2 ;;
	--file-size) file_size=$2; shift 2 ;;
	--file-dir) file_dir=$2; shift 2 ;;
	--runtime) runtime=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--targets) targets=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1; shift ;;
	esac
done
size_bytes=$(to_bytes "$size")
ram_bytes=$(to_bytes "$ram")
file_bytes=$(to_bytes "$file_size")
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive number"
[[ $runtime =~ ^[1-9][0-9]*$ ]] || die "--runtime wants a positive number"
declare -A seen=()
parse_targets "$targets" "$ALL_TARGETS"
((EUID == 0)) || die "needs root (tmpfs, drop_caches)"
command -v fio >/dev/null || die "needs fio"
[[ -x $bin ]] || die "tierfs binary '$bin' not found (build it or pass --bin)"
bin=$(realpath "$bin")
need_fuse
need_writable_dir "$file_dir" --file-dir

work=$(make_work onecopy-bench)
fuse_mnt= fuse_pid= fuse_name=tierfs tmpfs_mnt= rm_dirs=()
cleanup()
{
	mem_sample_stop
	fuse_umount
	tmpfs_umount
	rm_tracked_dirs
	rm_work || true
}
set_traps
warn_if_busy

# tier_used NAME: bytes the tier NAME of $fuse_mnt holds
tier_used()
{
	getfattr --only-values -n user.tierfs.stats "$fuse_mnt" 2>/dev/null |
		awk -v t="$1" '$1 == "tier" && $2 == t { for (i = 3; i <= NF; i++)
			if ($i ~ /^used=/) { sub(/^used=/, "", $i); print $i } }'
}

mount_target()
{
	local d i
	local -a args=()
	case $1 in
	tmpfs)
		tmpfs_mnt=$(mktemp -d "$work/mnt-tmpfs.XXXXXX")
		mount -t tmpfs -o "size=$((2 * size_bytes))" tmpfs "$tmpfs_mnt"
		mnt=$tmpfs_mnt pid=
		return ;;
	keep) args=(--tier "ram=ram:$ram_bytes") ;;
	drop) args=(--tier "ram=ram:$ram_bytes" --page-cache drop) ;;
	only | keepfile)
		d=$(mktemp -d "$file_dir/onecopy-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		args=(--tier "ram=ram:$ram_bytes" --tier "disk=file:$d:$file_bytes")
		[[ $1 == only ]] && args+=(--page-cache only) ;;
	esac
	fuse_mnt=$(mktemp -d "$work/mnt-$1.XXXXXX")
	"$bin" -f "${args[@]}" "$fuse_mnt" >"$work/tierfs-$1.log" 2>&1 &
	fuse_pid=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$fuse_mnt" && break
		kill -0 "$fuse_pid" 2>/dev/null || die "tierfs exited before mounting ($1): $(tail -n 3 "$work/tierfs-$1.log")"
		sleep 0.1
	done
	mountpoint -q "$fuse_mnt" || die "tierfs did not mount within 10 s ($1)"
	mnt=$fuse_mnt pid=$fuse_pid
}

umount_target()
{
	if [[ -n $fuse_pid ]]; then
		fuse_umount
	else
		tmpfs_umount
	fi
	rm_tracked_dirs
}

# fio_run NAME ARGS...: prints "BW_BYTES IOPS" of one fio job on $mnt/f
fio_run()
{
	local name=$1 out err
	shift
	out=$work/fio-$name.json
	fio --name="$name" --filename="$mnt/f" --ioengine=psync --iodepth=1 \
		--output-format=json "$@" >"$out" 2>"$work/fio-$name.err" ||
		die "fio $name failed: $(tail -n 3 "$work/fio-$name.err")"
	read -r bw iops err < <(fio_json_sums "$out")
	[[ $err == 0 ]] || die "fio $name: job error $err"
	echo "$bw $iops"
}

# one_run TARGET: appends "TARGET write_MiBs seqread_MiBs randread_iops
# held_peak stored_peak held_settled" to $work/results
one_run()
{
	local t=$1 w sr rr bw iops base now rss i
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount_target "$t"
	# page fio, du, getfattr and the daemon in again after the drop,
	# so that their pages do not count as held
	fio --name=warm --filename="$work/warm" --size=1M --rw=write \
		--output-format=json >/dev/null 2>&1 || true
	rm -f "$work/warm"
	du -s "$mnt" >/dev/null
	[[ -n $fuse_pid ]] && tier_used ram >/dev/null
	base=$(awk '$1 == "Cached:" { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)
	mem_sample_start "$mnt" "$pid"
	read -r bw iops < <(fio_run write --rw=write --bs=1M --size="$size_bytes" --end_fsync=1)
	w=$((bw / 1048576))
	fio_run warmup --rw=read --bs=1M --size="$size_bytes" --invalidate=0 >/dev/null
	read -r bw iops < <(fio_run seqread --rw=read --bs=1M --size="$size_bytes" --invalidate=0)
	sr=$((bw / 1048576))
	read -r bw iops < <(fio_run randread --rw=randread --bs=4k --size="$size_bytes" \
		--invalidate=0 --time_based --runtime="$runtime")
	rr=$iops
	if [[ $t == only ]]; then
		for ((i = 0; i < 600; i++)); do
			[[ $(tier_used ram) == 0 ]] && break
			sleep 0.1
		done
		[[ $(tier_used ram) == 0 ]] || warn "only: the RAM tier still holds $(tier_used ram) bytes after 60 s"
	fi
	sleep 1 # one more sample of the sampler
	mem_sample_stop
	rss=0
	[[ -n $pid ]] && rss=$(awk '$1 == "VmRSS:" { printf "%.0f\n", $2 * 1024 }' "/proc/$pid/status")
	now=$(awk '$1 == "Cached:" { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)
	echo "# round $r, $t: write $w MiB/s, warm seq read $sr MiB/s, warm rand read $rr IOPS, peak held $mem_held MiB for $mem_stored MiB stored, settled $(((now - base + rss) / 1048576)) MiB" >&2
	echo "$t $w $sr $rr $mem_held $mem_stored $(((now - base + rss) / 1048576))" >>"$work/results"
	umount_target
}

echo "# $(host_stamp), load $(loadavg); size $size, RAM tier $ram, file tier in $file_dir" >&2
: >"$work/results"
for ((r = 1; r <= rounds; r++)); do
	for t in "${target_list[@]}"; do
		one_run "$t"
	done
done

python3 - "$work/results" "${target_list[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
order = sys.argv[2:]
def med(t, k):
    v = [float(r[k]) for r in rows if r[0] == t]
    return statistics.median(v) if v else None
labels = {"tmpfs": "tmpfs", "keep": "tierfs RAM, keep", "drop": "tierfs RAM, drop",
          "only": "tierfs RAM + file, only", "keepfile": "tierfs RAM + file, keep"}
def ratio(t, k):
    a, b = med(t, k), med("tmpfs", k)
    return f" ({a / b:.2f}x)" if b and t != "tmpfs" else ""
print("| target | seq write 1M (MiB/s) | warm seq read 1M (MiB/s) | warm rand read 4K (IOPS) | peak held / stored | settled held / stored |")
print("|---|---:|---:|---:|---:|---:|")
for t in order:
    st = med(t, 5)
    print(f"| {labels[t]} | {med(t, 1):.0f}{ratio(t, 1)} | {med(t, 2):.0f}{ratio(t, 2)} "
          f"| {med(t, 3) / 1000:.1f}k{ratio(t, 3)} | {med(t, 4) / st:.2f}x | {med(t, 6) / st:.2f}x |")
PY
echo "# done $(host_stamp), load $(loadavg)" >&2
