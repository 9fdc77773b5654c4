#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nwchem-bench.sh -- the case tierfs exists for: a scratch file larger
# than the RAM tier, read back again and again.  NWChem's semidirect SCF
# of benzene (nwchem-benzene-scf.nw beside this script) writes about
# 1.4 GB of two-electron integrals to its scratch directory and reads
# them back on every SCF iteration.  Interleaved runs on tmpfs, a plain
# directory, tierfs with a RAM tier that holds it all (both transports)
# and tierfs with a RAM tier of half of it over a file tier; median wall
# times and ratios to tmpfs, the energy checked on every run.  For every
# tierfs run the daemon's counters after the run are kept (FUSE requests
# per opcode, bytes read from each tier, the migrator's moves), the
# evidence of where a slow run waited.  Not part of `meson test`; see
# tests/bench/README.md.
#
# Needs: bash, nwchem and mpirun (Debian: apt-get install nwchem;
# installed if missing, as root), fusermount3, getfattr.  Root for the
# tmpfs.
set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ALL_TARGETS="tmpfs,plain,ram,ram-native,ram-drop,ram-uring,half,half-drop,half-only,file-native"
DEFAULT_INPUT=$script_dir/nwchem-benzene-scf.nw
# the input's SCF energy with Debian's NWChem 7.0.2, 8 decimals
DEFAULT_REF=-230.72843877

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

Runs \`mpirun -np RANKS nwchem INPUT\` --runs times on every target,
interleaved (A B C ... A B C ...), each run with a fresh, empty scratch
directory (a fresh mount for tmpfs and tierfs), and prints the median
wall time per target, its ratio to tmpfs, and for the tierfs targets the
daemon's counters after each run.  A run that fails or prints another
SCF energy stops the benchmark with a non-zero exit.

Targets (--targets, default $ALL_TARGETS):
  tmpfs      a fresh tmpfs of --ram-big per run
  plain      a fresh directory under --plain-dir per run
  ram        tierfs --tier ram=ram:RAM_BIG --transport dev
  ram-uring  the same with --transport uring (the fuse module's
             enable_uring is switched on for these runs and back after
             each; skipped where it cannot be)
  ram-drop, half-drop  ram and half with --page-cache=drop (the kernel
             caches nothing of the mount; the tiers hold one copy)
  half       tierfs --tier ram=ram:RAM_HALF --tier disk=file:DIR:8G, a RAM
             tier of half the integral file (DIR a fresh directory under
             --file-dir)
  half-only  half with --page-cache only (the page cache is the only
             copy in memory; the RAM tier hands data down after 1 s)
  ram-native ram with --io native: the integral file a file of its own in
             the RAM tier's tmpfs, moved by the kernel (passthrough)
  file-native tierfs --io native --tier disk=file:DIR:8G (a native file
             does not spill: a RAM tier of half of it is no native stack)

Options:
  --bin PATH         the tierfs daemon (else \$TIERFS_BIN, else ./build/fs/tierfs)
  --runs N           runs per target (default 3)
  --ranks N          MPI ranks (default 2)
  --input FILE       NWChem input with SCRATCH and PERMANENT where the
                     directories go (default nwchem-benzene-scf.nw here)
  --ref-energy E     expected "Total SCF energy" to 8 decimals (default
                     $DEFAULT_REF for the default input; none otherwise)
  --targets LIST     comma-separated subset of: $ALL_TARGETS
  --ram-big SIZE     tmpfs size and RAM tier of ram (default 4G)
  --ram-half SIZE    RAM tier of half (default 700M)
  --plain-dir DIR    default /var/tmp
  --file-dir DIR     where the file tier goes (default /var/tmp)
  --out-dir DIR      keep every run's output, times.tsv and the counters
  -h, --help         this text
EOF
}

bin=${TIERFS_BIN:-./build/fs/tierfs}
runs=3
ranks=2
input=
ref=
targets=$ALL_TARGETS
ram_big=4G
ram_half=700M
plain_dir=/var/tmp
file_dir=/var/tmp
out_dir=
while (($#)); do
	case $1 in
	--bin) bin=${2:?}; shift ;;
	--runs) runs=${2:?}; shift ;;
	--ranks) ranks=${2:?}; shift ;;
	--input) input=${2:?}; shift ;;
	--ref-energy) ref=${2:?}; shift ;;
	--targets) targets=${2:?}; shift ;;
	--ram-big) ram_big=${2:?}; shift ;;
	--ram-half) ram_half=${2:?}; shift ;;
	--plain-dir) plain_dir=${2:?}; shift ;;
	--file-dir) file_dir=${2:?}; shift ;;
	--out-dir) out_dir=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "bad --runs '$runs'"
[[ $ranks =~ ^[1-9][0-9]*$ ]] || die "bad --ranks '$ranks'"
ram_big_bytes=$(to_bytes "$ram_big")
ram_half_bytes=$(to_bytes "$ram_half")
parse_targets "$targets" "$ALL_TARGETS"
if [[ -z $input ]]; then
	input=$DEFAULT_INPUT
	[[ -n $ref ]] || ref=$DEFAULT_REF
fi
[[ -f $input && -r $input ]] || die "NWChem input '$input' not found (--input)"
input=$(realpath "$input")

if ! command -v nwchem >/dev/null || ! command -v mpirun >/dev/null; then
	((EUID == 0)) || die "nwchem not found, and installing it needs root (apt-get install nwchem)"
	echo "# nwchem not found: installing it with apt-get" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y nwchem >&2 ||
		{ apt-get update >&2 && apt-get install -y nwchem >&2; } ||
		die "apt-get install nwchem failed"
	command -v nwchem >/dev/null || die "nwchem still not found after apt-get install"
fi
uring_param=/sys/module/fuse/parameters/enable_uring
uring_old=
need_tierfs=0
keep=()
for t in "${target_list[@]}"; do
	if [[ $t == ram-uring && ! -w $uring_param ]]; then
		warn "target ram-uring skipped: no writable $uring_param (a kernel before 6.14, or not root)"
		continue
	fi
	keep+=("$t")
	case $t in ram* | half* | file*) need_tierfs=1 ;; esac
done
target_list=("${keep[@]}")
if ((need_tierfs)); then
	[[ -x $bin ]] || die "tierfs binary '$bin' not found (build it or pass --bin)"
	bin=$(realpath "$bin")
	need_fuse
	command -v getfattr >/dev/null || die "getfattr not found (package attr)"
fi
if [[ -n ${seen[tmpfs]:-} ]] && ((EUID != 0)); then
	die "mounting a tmpfs needs root (or leave tmpfs out of --targets)"
fi
[[ -n ${seen[plain]:-} ]] && need_writable_dir "$plain_dir" --plain-dir
[[ -n ${seen[half]:-}${seen[half-drop]:-}${seen[half-only]:-} ]] && need_writable_dir "$file_dir" --file-dir

work=$(make_work nwchem-bench)
run_pid=
fuse_mnt=
fuse_pid=
tmpfs_mnt=
rm_dirs=()
rmdir_mnt=1

uring_restore()
{
	[[ -z $uring_old ]] || echo "$uring_old" >"$uring_param" || true
	uring_old=
}

cleanup()
{
	local rc=$?
	trap - EXIT INT TERM
	set +e
	stop_child "$run_pid"
	stop_child "${mem_sampler:-}"
	fuse_umount
	tmpfs_umount
	rm_tracked_dirs
	uring_restore
	rm_work || warn "something is still mounted under $work; left in place"
	exit "$rc"
}
set_traps
make_out_dir

label()
{
	case $1 in
	tmpfs) echo tmpfs ;;
	plain) echo "plain dir" ;;
	ram) echo "tierfs RAM $ram_big" ;;
	ram-drop) echo "tierfs RAM $ram_big, page cache dropped" ;;
	ram-native) echo "tierfs RAM $ram_big, native" ;;
	file-native) echo "tierfs file, native" ;;
	ram-uring) echo "tierfs RAM $ram_big, io_uring" ;;
	half) echo "tierfs RAM $ram_half + file" ;;
	half-drop) echo "tierfs RAM $ram_half + file, page cache dropped" ;;
	half-only) echo "tierfs RAM $ram_half + file, page cache only" ;;
	esac
}

# tierfs_up NAME ARGS...: mount tierfs with ARGS on $work/NAME
tierfs_up()
{
	local name=$1 i
	shift
	fuse_mnt=$work/$name
	fuse_name=tierfs
	mkdir -p "$fuse_mnt"
	"$bin" -f "$@" "$fuse_mnt" >"$work/tierfs-$name.log" 2>&1 &
	fuse_pid=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$fuse_mnt" && return 0
		kill -0 "$fuse_pid" 2>/dev/null ||
			die "tierfs exited before mounting ($name): $(tail -n 3 "$work/tierfs-$name.log")"
		sleep 0.1
	done
	die "tierfs did not mount within 10 s ($name)"
}

# scratch_up TARGET: sets $scratch to an empty directory on TARGET
scratch_up()
{
	local d
	case $1 in
	tmpfs)
		tmpfs_mnt=$(mktemp -d "$work/mnt-tmpfs.XXXXXX")
		mount -t tmpfs -o "size=$ram_big_bytes,mode=0700" tmpfs "$tmpfs_mnt"
		scratch=$tmpfs_mnt ;;
	plain)
		scratch=$(mktemp -d "$plain_dir/nwchem-bench-plain.XXXXXX")
		rm_dirs+=("$scratch") ;;
	ram)
		tierfs_up ram --tier "ram=ram:$ram_big_bytes" --transport dev
		scratch=$fuse_mnt ;;
	ram-drop)
		tierfs_up ram-drop --tier "ram=ram:$ram_big_bytes" --transport dev \
			--page-cache drop
		scratch=$fuse_mnt ;;
	ram-native)
		tierfs_up ram-native --tier "ram=ram:$ram_big_bytes" --transport dev \
			--io native
		scratch=$fuse_mnt ;;
	file-native)
		d=$(mktemp -d "$file_dir/nwchem-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		tierfs_up file-native --tier "disk=file:$d:8G" --io native
		scratch=$fuse_mnt ;;
	ram-uring)
		uring_old=$(cat "$uring_param")
		echo 1 >"$uring_param"
		tierfs_up ram-uring --tier "ram=ram:$ram_big_bytes" --transport uring
		scratch=$fuse_mnt ;;
	half)
		d=$(mktemp -d "$file_dir/nwchem-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		tierfs_up half --tier "ram=ram:$ram_half_bytes" --tier "disk=file:$d:8G"
		scratch=$fuse_mnt ;;
	half-drop)
		d=$(mktemp -d "$file_dir/nwchem-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		tierfs_up half-drop --tier "ram=ram:$ram_half_bytes" \
			--tier "disk=file:$d:8G" --page-cache drop
		scratch=$fuse_mnt ;;
	half-only)
		d=$(mktemp -d "$file_dir/nwchem-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		tierfs_up half-only --tier "ram=ram:$ram_half_bytes" \
			--tier "disk=file:$d:8G" --page-cache only
		scratch=$fuse_mnt ;;
	esac
}

# counters: the daemon's view of the run just ended, one line
counters()
{
	getfattr --only-values -n user.tierfs.stats "$fuse_mnt" 2>/dev/null |
		awk '$1 == "tier" { for (i = 3; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == "read_bytes" || kv[1] == "promote_bytes" ||
				    kv[1] == "demote_bytes")
					printf "%s.%s=%.0fM ", $2, kv[1], kv[2] / 1048576
			} }
			$1 == "requests" { for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == "read" || kv[1] == "write")
					printf "%s=%s ", kv[1], kv[2]
			} }'
}

energy_of()
{
	awk '/Total SCF energy =/ { e = $5 } END { if (e != "") printf "%.8f", e }' "$1"
}

echo "# $(host_stamp), NWChem $(dpkg-query -W -f='${Version}' nwchem 2>/dev/null || echo '?'), load $(loadavg)"
echo "# mpirun -np $ranks nwchem $input, $runs run(s) per target, interleaved${ref:+; reference energy $ref}"
((need_tierfs)) && echo "# tierfs: $bin"
warn_if_busy
printf 'target\trun\tseconds\tenergy\tcounters\theld\n' >"$work/times.tsv"
for ((run = 1; run <= runs; run++)); do
	for t in "${target_list[@]}"; do
		echo "# run $run: $t" >&2
		scratch_up "$t"
		d=$(mktemp -d "$work/run-$t-$run.XXXXXX")
		sed "s|SCRATCH|$scratch|; s|PERMANENT|$d|" "$input" >"$d/in.nw"
		t0=$(date +%s.%N)
		(cd "$d" && exec mpirun --allow-run-as-root -np "$ranks" nwchem in.nw) \
			>"$d/out.txt" 2>"$d/err.txt" &
		run_pid=$!
		mem_sample_start "$scratch" "${fuse_pid:-}"
		rc=0
		wait "$run_pid" || rc=$?
		run_pid=
		mem_sample_stop
		t1=$(date +%s.%N)
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
		e=$(energy_of "$d/out.txt")
		[[ -n $out_dir ]] && cp "$d/out.txt" "$out_dir/out-$t-$run.txt"
		((rc == 0)) && [[ -n $e ]] ||
			die "run $run on $t failed (exit $rc): $(tail -n 3 "$d/err.txt")"
		[[ -z $ref || $e == "$ref" ]] ||
			die "run $run on $t: energy $e, expected $ref"
		c=
		[[ -n $fuse_pid ]] && c=$(counters)
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$run" "$secs" "$e" "$c" \
			"${mem_held:+$mem_held/$mem_stored}" >>"$work/times.tsv"
		fuse_umount
		tmpfs_umount
		rm_tracked_dirs
		uring_restore
		rm -rf "$d"
	done
done

# the table: medians, ratios to tmpfs, every run, the last run's counters
python3 - "$work/times.tsv" "${target_list[@]}" <<'EOF' | tee "$work/table.md"
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
order = sys.argv[2:]
med = {t: statistics.median(float(r[2]) for r in rows if r[0] == t) for t in order}
labels = {"tmpfs": "tmpfs", "plain": "plain dir", "ram": "tierfs RAM, /dev/fuse",
          "ram-drop": "tierfs RAM, page cache dropped",
          "ram-uring": "tierfs RAM, io_uring", "half": "tierfs RAM half + file",
          "half-drop": "tierfs RAM half + file, page cache dropped",
          "half-only": "tierfs RAM half + file, page cache only",
          "ram-native": "tierfs RAM, native",
          "file-native": "tierfs file, native"}
print()
print("| target | median wall (s) | ratio to tmpfs | runs (s) | peak held / stored (MiB) | counters of the last run |")
print("|---|---:|---:|---|---|---|")
for t in order:
    runs = [r for r in rows if r[0] == t]
    ratio = "%.2fx" % (med[t] / med["tmpfs"]) if "tmpfs" in med else ""
    print("| %s | %.2f | %s | %s | %s | %s |" % (labels[t], med[t], ratio,
          " ".join(r[2] for r in runs), " ".join(r[5] for r in runs),
          runs[-1][4] if runs[-1][4] else ""))
print()
print("energy %s in all %d runs" % (rows[0][3], len(rows)))
EOF
echo "# load at end $(loadavg)"
if [[ -n $out_dir ]]; then
	cp "$work/times.tsv" "$work/table.md" "$out_dir/"
	echo "# outputs, times.tsv and table.md in $out_dir"
fi
