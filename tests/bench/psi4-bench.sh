#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# psi4-bench.sh -- a real program's scratch traffic: Psi4 CCSD(T) on water
# with its scratch directory on tmpfs, a plain directory and two tierfs
# configurations, interleaved runs, median wall times and ratios to tmpfs,
# the energy checked on every run; then one untimed run under `tierfs -d`
# that counts the FUSE requests per opcode.  Not part of `meson test`; see
# tests/bench/README.md.
#
# Needs: bash, psi4 (Debian: apt-get install psi4; installed if missing),
# fusermount3, util-linux (mountpoint, findmnt).  Root for the tmpfs.

set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$script_dir/../.." && pwd)

ALL_TARGETS="tmpfs,plain,ram,ram-native,ram-drop,ram-uring,ramfile,ramfile-drop,ram-only,ramfile-only,file-native"
DEFAULT_INPUT=$script_dir/psi4-h2o-ccsdt.in
# the input's CCSD(T)/cc-pVQZ energy with Psi4 1.3.2, the same on every fs
DEFAULT_REF=-76.3597933411

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

Runs \`psi4 -n THREADS -s SCRATCH -i INPUT -o OUT\` --runs times on every
target, interleaved (A B C D A B C D ...), each run in a fresh working
directory with a fresh, empty SCRATCH (a fresh mount for tmpfs and tierfs),
and prints the median wall time per target, its ratio to tmpfs and the
peak memory its data held (daemon RSS plus page cache).  Every
run's energy is checked; a run that fails or prints another energy stops
the benchmark with a non-zero exit.  Then one more, untimed run on tierfs
(target ram) with the daemon in debug mode (-d) counts the FUSE requests
per opcode.

Targets (--targets, default $ALL_TARGETS):
  tmpfs     a fresh tmpfs of RAM_BIG per run
  plain     a fresh directory under --plain-dir per run
  ram       tierfs --tier ram=ram:RAM_BIG --transport dev
  ram-native the same with --io native: each scratch file a file of its
            own in the RAM tier's tmpfs, moved by the kernel (passthrough)
  file-native tierfs --io native --tier disk=file:DIR:FILE_TIER_SIZE: each
            a file of its own in DIR (a native file does not spill, so
            a RAM tier smaller than a scratch file is no native stack)
  ram-uring the same with --transport uring (as root the script turns
            the fuse module's enable_uring on for these runs and back
            after each; skipped where it cannot)
  ramfile   tierfs --tier ram=ram:RAM_SMALL --tier disk=file:DIR:FILE_TIER_SIZE
  ram-drop, ramfile-drop  ram and ramfile with --page-cache=drop (the
            kernel caches nothing of the mount; the tiers hold one copy)
            (DIR a fresh directory under --file-dir)
  ram-only  tierfs --tier ram=ram:RAM_BIG --tier disk=file:DIR:FILE_TIER_SIZE
            --page-cache only (the page cache is the only copy in memory;
            the RAM tier hands what was written down after 1 s)
  ramfile-only  ramfile with --page-cache only

Options:
  --bin PATH             the tierfs daemon (else \$TIERFS_BIN, else
                         ./build/fs/tierfs)
  --runs N               runs per target (default 3)
  --input FILE           Psi4 input (else \$PSI4_INPUT, else
                         psi4-h2o-ccsdt.in beside this script)
  --ref-energy E         expected FINAL_ENERGY (default $DEFAULT_REF for
                         the default input; for another input, the first
                         run's energy, which every other run must match)
  --threads N            psi4 -n (default 2)
  --targets LIST         comma-separated subset of: $ALL_TARGETS
  --plain-dir DIR        default /var/tmp
  --file-dir DIR         where the file tier's directory goes (default /var/tmp)
  --ram-big SIZE         tmpfs size and RAM tier of target ram (default 2G)
  --ram-small SIZE       RAM tier of target ramfile (default 256M)
  --file-tier-size SIZE  file tier of target ramfile (default 8G)
  --extra-tier-args "ARGS"
                         more tierfs arguments for every tierfs mount
  --no-counts            skip the debug run that counts FUSE requests
  --out-dir DIR          keep every run's psi4 output, times.tsv, the
                         table and the request counts here
  -h, --help             this text
EOF
}

runs=3
input=${PSI4_INPUT:-}
ref=
threads=2
targets=$ALL_TARGETS
plain_dir=/var/tmp
file_dir=/var/tmp
ram_big=2G
ram_small=256M
file_tier_size=8G
extra_tier_args=
counts=1
out_dir=
bin=${TIERFS_BIN:-./build/fs/tierfs}

while (($#)); do
	case $1 in
	--bin) bin=${2:?}; shift ;;
	--runs) runs=${2:?}; shift ;;
	--input) input=${2:?}; shift ;;
	--ref-energy) ref=${2:?}; shift ;;
	--threads) threads=${2:?}; shift ;;
	--targets) targets=${2:?}; shift ;;
	--plain-dir) plain_dir=${2:?}; shift ;;
	--file-dir) file_dir=${2:?}; shift ;;
	--ram-big) ram_big=${2:?}; shift ;;
	--ram-small) ram_small=${2:?}; shift ;;
	--file-tier-size) file_tier_size=${2:?}; shift ;;
	--extra-tier-args) extra_tier_args=${2:?}; shift ;;
	--no-counts) counts=0 ;;
	--out-dir) out_dir=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "bad --runs '$runs'"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "bad --threads '$threads'"
ram_big_bytes=$(to_bytes "$ram_big")
ram_small_bytes=$(to_bytes "$ram_small")
file_tier_bytes=$(to_bytes "$file_tier_size")

parse_targets "$targets" "$ALL_TARGETS"
need_tierfs=$counts
for t in "${target_list[@]}"; do
	case $t in ram* | file*) need_tierfs=1 ;; esac
done
uring_param=/sys/module/fuse/parameters/enable_uring
uring_old=
if [[ -n ${seen[ram-uring]:-} ]] && [[ ! -w $uring_param ]]; then
	warn "target ram-uring skipped: no writable $uring_param (a kernel before 6.14, or not root)"
	unset "seen[ram-uring]"
	keep=()
	for t in "${target_list[@]}"; do
		[[ $t == ram-uring ]] || keep+=("$t")
	done
	target_list=("${keep[@]}")
fi

if [[ -z $input ]]; then
	input=$DEFAULT_INPUT
	[[ -n $ref ]] || ref=$DEFAULT_REF
fi
[[ -f $input && -r $input ]] || die "psi4 input '$input' not found (--input or \$PSI4_INPUT)"
input=$(realpath "$input")
if [[ -n $ref ]]; then
	[[ $ref =~ ^-?[0-9]+\.[0-9]+$ ]] || die "bad --ref-energy '$ref'"
	ref=$(awk -v e="$ref" 'BEGIN { printf "%.10f", e }')
fi

if ! command -v psi4 >/dev/null; then
	((EUID == 0)) || die "psi4 not found, and installing it needs root (apt-get install psi4)"
	echo "# psi4 not found: installing it with apt-get" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y psi4 >&2 ||
		{ apt-get update >&2 && apt-get install -y psi4 >&2; } ||
		die "apt-get install psi4 failed"
	command -v psi4 >/dev/null || die "psi4 still not found after apt-get install"
fi
if ((need_tierfs)); then
	[[ -x $bin ]] || die "tierfs binary '$bin' not found (build it or pass --bin)"
	bin=$(realpath "$bin")
	need_fuse
fi
if [[ -n ${seen[tmpfs]:-} ]] && ((EUID != 0)); then
	die "mounting a tmpfs needs root (or leave tmpfs out of --targets)"
fi
[[ -n ${seen[plain]:-} ]] && need_writable_dir "$plain_dir" --plain-dir
[[ -n ${seen[ramfile]:-}${seen[ramfile-drop]:-}${seen[ram-only]:-}${seen[ramfile-only]:-} ]] && need_writable_dir "$file_dir" --file-dir

# ---------------------------------------------------------------------
# setup and guaranteed teardown

work=$(make_work psi4-bench)
psi4_pid=
fuse_mnt=
fuse_pid=
tmpfs_mnt=
rm_dirs=()
# fuse_umount and tmpfs_umount (benchlib.sh) unmount the current tierfs
# and tmpfs, and remove their mount points
rmdir_mnt=1

cleanup()
{
	local rc=$?
	trap - EXIT INT TERM
	set +e
	stop_child "$psi4_pid"
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

# tierfs_mount NAME DEBUG ARGS...: mount tierfs with ARGS on a new
# directory; DEBUG=1 adds -d (libfuse logs every request to stderr)
tierfs_mount()
{
	local name=$1 debug=$2 i
	shift 2
	local -a xa dflag=()
	read -r -a xa <<<"$extra_tier_args"
	((debug)) && dflag=(-d)
	fuse_mnt=$(mktemp -d "$work/mnt-$name.XXXXXX")
	local -a cmd=("$bin" "${dflag[@]}" -f "$@" "${xa[@]}" "$fuse_mnt")
	echo "# $name: ${cmd[*]}" >&2
	"${cmd[@]}" >"$work/tierfs-$name.out" 2>"$work/tierfs-$name.log" &
	fuse_pid=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$fuse_mnt" && break
		if ! kill -0 "$fuse_pid" 2>/dev/null; then
			wait "$fuse_pid" || true
			fuse_pid=
			tail -n 20 "$work/tierfs-$name.log" | sed 's/^/tierfs: /' >&2
			die "tierfs exited before mounting ($name)"
		fi
		sleep 0.1
	done
	mountpoint -q "$fuse_mnt" || die "tierfs did not mount within 10 s ($name)"
}

# setup_scratch TARGET DEBUG: sets $scratch to an empty directory on TARGET
setup_scratch()
{
	local d
	case $1 in
	tmpfs)
		tmpfs_mnt=$(mktemp -d "$work/mnt-tmpfs.XXXXXX")
		mount -t tmpfs -o "size=$ram_big_bytes,mode=0700" tmpfs "$tmpfs_mnt"
		scratch=$tmpfs_mnt ;;
	plain)
		scratch=$(mktemp -d "$plain_dir/psi4-bench-plain.XXXXXX")
		rm_dirs+=("$scratch") ;;
	ram)
		tierfs_mount ram "$2" --tier "ram=ram:$ram_big_bytes" --transport dev
		scratch=$fuse_mnt ;;
	ram-drop)
		tierfs_mount ram-drop "$2" --tier "ram=ram:$ram_big_bytes" \
			--transport dev --page-cache drop
		scratch=$fuse_mnt ;;
	ram-native)
		tierfs_mount ram-native "$2" --tier "ram=ram:$ram_big_bytes" \
			--transport dev --io native
		scratch=$fuse_mnt ;;
	file-native)
		d=$(mktemp -d "$file_dir/psi4-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		tierfs_mount file-native "$2" --tier "disk=file:$d:$file_tier_bytes" \
			--io native
		scratch=$fuse_mnt ;;
	ram-uring)
		uring_old=$(cat "$uring_param")
		echo 1 >"$uring_param"
		tierfs_mount ram-uring "$2" --tier "ram=ram:$ram_big_bytes" --transport uring
		scratch=$fuse_mnt ;;
	ramfile)
		d=$(mktemp -d "$file_dir/psi4-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		tierfs_mount ramfile "$2" --tier "ram=ram:$ram_small_bytes" \
			--tier "disk=file:$d:$file_tier_bytes"
		scratch=$fuse_mnt ;;
	ramfile-drop)
		d=$(mktemp -d "$file_dir/psi4-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		tierfs_mount ramfile-drop "$2" --tier "ram=ram:$ram_small_bytes" \
			--tier "disk=file:$d:$file_tier_bytes" --page-cache drop
		scratch=$fuse_mnt ;;
	ram-only | ramfile-only)
		d=$(mktemp -d "$file_dir/psi4-bench-tier.XXXXXX")
		rm_dirs+=("$d")
		local rb=$ram_big_bytes
		[[ $1 == ramfile-only ]] && rb=$ram_small_bytes
		tierfs_mount "$1" "$2" --tier "ram=ram:$rb" \
			--tier "disk=file:$d:$file_tier_bytes" --page-cache only
		scratch=$fuse_mnt ;;
	esac
	[[ -z $(ls -A "$scratch") ]] || die "scratch directory $scratch is not empty"
}

# teardown_scratch: sets $daemon_hwm (peak RSS of a tierfs daemon), then
# unmounts or removes what setup_scratch made
teardown_scratch()
{
	daemon_hwm=
	if [[ -n $fuse_pid ]]; then
		daemon_hwm=$(awk '$1 == "VmHWM:" { printf "%.0f", $2 / 1024 }' \
			"/proc/$fuse_pid/status" 2>/dev/null) || daemon_hwm=
	fi
	fuse_umount
	tmpfs_umount
	rm_tracked_dirs
	uring_restore
}

# the fuse module's enable_uring as it was before a ram-uring run
uring_restore()
{
	[[ -z $uring_old ]] || echo "$uring_old" >"$uring_param" || true
	uring_old=
}

# energy OUT: the run's final energy with 10 decimals, or empty.  The
# default input prints "FINAL_ENERGY -76.3597933411"; for other inputs
# the last "* CCSD(T) total energy = ..." line of the CC module.
energy()
{
	local e
	e=$(awk '$1 == "FINAL_ENERGY" && $2 ~ /^-?[0-9.]+$/ { e = $2 }
		END { print e }' "$1")
	if [[ -z $e ]]; then
		e=$(awk '/\* CCSD\(T\) total energy/ { e = $NF }
			END { if (e != "") printf "%.10f", e }' "$1")
	fi
	echo "$e"
}

# keep_failed RUNDIR WHY: save the run's files where they survive cleanup
keep_failed()
{
	local dest
	if [[ -n $out_dir ]]; then
		dest=$out_dir/failed-${1##*/}
		mkdir -p "$dest"
	else
		dest=$(mktemp -d "/var/tmp/psi4-bench-failed.XXXXXX")
	fi
	cp -r "$1/." "$dest/" 2>/dev/null || true
	echo "$prog: FAILED: $2" >&2
	echo "$prog: psi4's output and files kept in $dest" >&2
	exit 1
}

# run_psi4 TARGET RUN DEBUG: one psi4 run; sets $secs and $energy_got
run_psi4()
{
	local t=$1 r=$2 debug=$3 rundir rc=0 t0 t1
	setup_scratch "$t" "$debug"
	rundir=$(mktemp -d "$work/run-$t-$r.XXXXXX")
	echo "# run $r, $t: scratch $scratch ($(findmnt -no FSTYPE -T "$scratch"))" >&2
	t0=$(date +%s.%N)
	(cd "$rundir" && exec psi4 -n "$threads" -s "$scratch" -i "$input" \
		-o "$rundir/out.txt") >"$rundir/psi4.stdout" 2>&1 &
	# a background psi4 lets the INT/TERM trap run at once
	psi4_pid=$!
	mem_sample_start "$scratch" "${fuse_pid:-}"
	wait "$psi4_pid" || rc=$?
	psi4_pid=
	mem_sample_stop
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	ls -A "$scratch" >"$rundir/scratch-left.txt" 2>&1 || true
	teardown_scratch
	sync
	if ((rc)); then
		tail -n 20 "$rundir/psi4.stdout" "$rundir/out.txt" >&2 2>/dev/null || true
		keep_failed "$rundir" "psi4 exited with status $rc (run $r on $t)"
	fi
	energy_got=$(energy "$rundir/out.txt")
	[[ -n $energy_got ]] ||
		keep_failed "$rundir" "no FINAL_ENERGY or CCSD(T) total energy in psi4's output (run $r on $t)"
	if [[ -z $ref ]]; then
		ref=$energy_got
		echo "# reference energy (first run): $ref" >&2
	fi
	[[ $energy_got == "$ref" ]] ||
		keep_failed "$rundir" "energy $energy_got differs from the reference $ref (run $r on $t)"
	if [[ -n $out_dir ]]; then
		cp "$rundir/out.txt" "$out_dir/out-$t-$r.txt"
	fi
	rm -rf "$rundir"
}

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
	ramfile) echo "tierfs RAM $ram_small + file" ;;
	ramfile-drop) echo "tierfs RAM $ram_small + file, page cache dropped" ;;
	ram-only) echo "tierfs RAM $ram_big + file, page cache only" ;;
	ramfile-only) echo "tierfs RAM $ram_small + file, page cache only" ;;
	esac
}

median()
{
	sort -n | awk '{ v[n++] = $1 }
		END {
			if (n == 0) { print "-"; exit }
			if (n % 2) printf "%.2f\n", v[int(n / 2)]
			else printf "%.2f\n", (v[n / 2 - 1] + v[n / 2]) / 2
		}'
}

declare -A times=() hwms=() helds=() med=()
# numbers from a busy machine compare nothing: say so up front
warn_if_busy
t_start=$(date +%s)
echo "# $(host_stamp), psi4 $(cd "$work" && psi4 --version 2>/dev/null | tail -n 1), load $(loadavg)"
echo "# psi4 -n $threads -i $input, $runs run(s) per target, interleaved; reference energy ${ref:-"(first run)"}"
((need_tierfs)) && echo "# tierfs: $bin"

for ((r = 1; r <= runs; r++)); do
	for t in "${target_list[@]}"; do
		run_psi4 "$t" "$r" 0
		times[$t]+="$secs "
		[[ -n $daemon_hwm ]] && hwms[$t]+="$daemon_hwm "
		[[ -n $mem_held ]] && helds[$t]+="$mem_held/$mem_stored "
		echo "# run $r, $t: ${secs} s, energy $energy_got${daemon_hwm:+, daemon peak RSS $daemon_hwm MiB}${mem_held:+, peak held $mem_held MiB for $mem_stored MiB stored}" >&2
		if [[ -n $out_dir ]]; then
			printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$r" "$secs" \
				"$energy_got" "${daemon_hwm:--}" >>"$out_dir/times.tsv"
		fi
	done
done

table=$work/table.md
{
	echo "| target | median wall (s) | ratio to tmpfs | runs (s) | daemon peak RSS (MiB) | peak held / peak stored (MiB) |"
	echo "|---|---:|---:|---|---|---|"
	for t in "${target_list[@]}"; do
		med[$t]=$(tr ' ' '\n' <<<"${times[$t]}" | grep . | median)
	done
	for t in "${target_list[@]}"; do
		ratio=-
		if [[ -n ${med[tmpfs]:-} ]]; then
			ratio=$(awk -v a="${med[$t]}" -v b="${med[tmpfs]}" \
				'BEGIN { printf "%.2fx", a / b }')
		fi
		hw=${hwms[$t]:-}
		he=${helds[$t]:-}
		printf '| %s | %s | %s | %s | %s | %s |\n' "$(label "$t")" "${med[$t]}" \
			"$ratio" "${times[$t]% }" "${hw:+${hw% }}" "${he:+${he% }}"
	done
} >"$table"
echo
cat "$table"
echo
echo "# all $((runs * ${#target_list[@]})) runs: energy $ref; $(($(date +%s) - t_start)) s, load at end $(loadavg)"

# ---------------------------------------------------------------------
# one untimed run with libfuse's request log

if ((counts)); then
	echo "# request counts: one more run on $(label ram), daemon with -d (untimed)" >&2
	run_psi4 ram counts 1
	log=$work/tierfs-ram.log	# the debug daemon's stderr
	# libfuse logs a request as "unique: 12, opcode: WRITE (16), ..."
	# and its reply as "   unique: 12, success, outsize: 16" or
	# "   unique: 12, error: -2 (No such file or directory), ..."
	awk '$1 == "unique:" && $3 == "opcode:" { print $4 }' "$log" |
		sort | uniq -c | sort -k1,1nr -k2,2 >"$work/counts.all"
	total=$(awk '{ s += $1 } END { print s + 0 }' "$work/counts.all")
	# error replies per opcode and errno, matched to their request by id
	awk '$1 == "unique:" && $3 == "opcode:" { op[$2] = $4; next }
		$1 == "unique:" && $3 == "error:" {
			o = ($2 in op) ? op[$2] : "?"
			e = $0; sub(/.*error: /, "", e); sub(/, outsize.*/, "", e)
			n[o " " e]++
		}
		$1 == "unique:" { delete op[$2] }
		END { for (k in n) print n[k], k }' "$log" |
		sort -k1,1nr >"$work/errors.all"
	errs=$(awk '{ s += $1 } END { print s + 0 }' "$work/errors.all")
	((total > 0)) || die "no requests in the debug log $log (did libfuse's -d output change?)"
	{
		echo
		echo "FUSE requests per opcode, top 15, in one untimed run on $(label ram) with \`tierfs -d -f\` (reads served from the page cache never reach the daemon):"
		echo
		echo "| opcode | requests | share |"
		echo "|---|---:|---:|"
		head -n 15 "$work/counts.all" | awk -v tot="$total" '{
			printf "| %s | %d | %.1f%% |\n", $2, $1, 100 * $1 / tot }'
		echo
		echo "$total requests of $(wc -l <"$work/counts.all") kinds; the run took $secs s under -d, energy $energy_got."
		echo "$errs answered with an error$( ((errs)) && printf ': %s' "$(head -n 5 "$work/errors.all" |
			awk '{ c = $1; $1 = ""; sub(/^ /, ""); printf "%s%s x %d", (NR > 1 ? "; " : ""), $0, c }')")."
	} | tee "$work/counts.md"
	[[ -z $out_dir ]] || cp "$work/counts.md" "$out_dir/"
fi

if [[ -n $out_dir ]]; then
	cp "$table" "$out_dir/table.md"
	echo "# psi4 outputs, times.tsv, table.md$( ((counts)) && echo " and counts.md") in $out_dir"
fi
exit 0
