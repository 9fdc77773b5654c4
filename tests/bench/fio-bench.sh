#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fio-bench.sh -- run the same fio jobs on tierfs, on a tmpfs of the same
# size and optionally on a plain directory, in one run, and print one table
# with the ratios.  Not part of `meson test`; see tests/bench/README.md.
#
# Needs: bash, fio, util-linux (mountpoint), fusermount3, and python3 or
# jq to read fio's JSON.  Mounting the tmpfs needs root (or --tmpfs-dir).

set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

Mounts tierfs (TIERFS_BIN, else \$TIERFS_BIN, else ./build/fs/tierfs) and a
tmpfs of the same size in a private temporary directory, runs fio on each,
unmounts both, and prints MiB/s (sequential) or IOPS (random) per target
and the ratio tierfs/tmpfs.

Options:
  --bin PATH             the tierfs daemon (same as TIERFS_BIN)
  --size SIZE            test file size (default 2G)
  --fs-size SIZE         tmpfs size and the default RAM tier size
                         (default: twice --size)
  --runtime SEC          seconds per time-based job (default 10)
  --ramp SEC             ramp time excluded from results (default 1)
  --repeat N             run every job N times, report the median
                         (default 1; first-touch page faults in a VM
                         make single write passes noisy)
  --jobs N               threads for the parallel random-read job
                         (default 4; 1 drops that job)
  --io MODES             buffered, direct or both (default both); direct
                         adds fio --direct=1 (O_DIRECT) and is reported
                         n/a on a target that refuses O_DIRECT
  --tests LIST           comma-separated subset of: $ALL_TESTS
                         (default: all)
  --tier-args "ARGS"     tierfs tier arguments, replacing the default
                         "--tier ram=ram:FS_SIZE"
  --extra-tier-args "ARGS"
                         more tierfs arguments after the tier arguments,
                         e.g. "--tier nvme=file:/scratch:100G"
  --plain-dir DIR        also run on DIR (a plain directory, e.g. on the
                         disk a file tier would use): adds a column
  --tmpfs-dir DIR        use this existing tmpfs instead of mounting one
  --no-tierfs            skip tierfs (compare tmpfs with --plain-dir only)
  --no-tmpfs             skip tmpfs
  --fio-args "ARGS"      extra arguments for every fio run
  --ioengine ENGINE      fio ioengine (default psync)
  --drop-caches          drop the page cache before every job (root)
  --out-dir DIR          keep fio's JSON, tierfs's log and results.tsv here
  -h, --help             this text
EOF
}

ALL_TESTS="seqwrite,seqread,randread,randread-par,randwrite"

size=2G
fs_size=
runtime=10
ramp=1
repeat=1
jobs=4
io=both
tests=$ALL_TESTS
tier_args=
extra_tier_args=
plain_dir=
tmpfs_dir=
no_tierfs=0
no_tmpfs=0
fio_args=
ioengine=psync
drop_caches=0
out_dir=
bin=${TIERFS_BIN:-./build/fs/tierfs}

while (($#)); do
	case $1 in
	--bin) bin=${2:?}; shift ;;
	--size) size=${2:?}; shift ;;
	--fs-size) fs_size=${2:?}; shift ;;
	--runtime) runtime=${2:?}; shift ;;
	--ramp) ramp=${2:?}; shift ;;
	--repeat) repeat=${2:?}; shift ;;
	--jobs) jobs=${2:?}; shift ;;
	--io) io=${2:?}; shift ;;
	--tests) tests=${2:?}; shift ;;
	--tier-args) tier_args=${2:?}; shift ;;
	--extra-tier-args) extra_tier_args=${2:?}; shift ;;
	--plain-dir) plain_dir=${2:?}; shift ;;
	--tmpfs-dir) tmpfs_dir=${2:?}; shift ;;
	--no-tierfs) no_tierfs=1 ;;
	--no-tmpfs) no_tmpfs=1 ;;
	--fio-args) fio_args=${2:?}; shift ;;
	--ioengine) ioengine=${2:?}; shift ;;
	--drop-caches) drop_caches=1 ;;
	--out-dir) out_dir=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done

size_bytes=$(to_bytes "$size")
((size_bytes >= 1 << 20)) || die "--size must be at least 1M"
((size_bytes % (1 << 20) == 0)) || die "--size must be a multiple of 1M"
if [[ -n $fs_size ]]; then
	fs_bytes=$(to_bytes "$fs_size")
else
	fs_bytes=$((2 * size_bytes))
fi
((fs_bytes > size_bytes)) || die "--fs-size must exceed --size"
[[ $runtime =~ ^[1-9][0-9]*$ ]] || die "bad --runtime '$runtime'"
[[ $ramp =~ ^[0-9]+$ ]] || die "bad --ramp '$ramp'"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "bad --jobs '$jobs'"
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "bad --repeat '$repeat'"
case $io in
buffered) modes=(buffered) ;;
direct) modes=(direct) ;;
both) modes=(buffered direct) ;;
*) die "--io takes buffered, direct or both" ;;
esac
IFS=, read -r -a test_list <<<"$tests"
for t in "${test_list[@]}"; do
	[[ ,$ALL_TESTS, == *,$t,* ]] || die "unknown test '$t'"
done
if ((jobs == 1)); then
	# the parallel job would repeat randread
	IFS=, read -r -a test_list <<<"$(tr , '\n' <<<"$tests" |
		grep -vx randread-par | paste -sd, || true)"
fi
((${#test_list[@]})) || die "no tests left to run"

command -v fio >/dev/null || die "fio not found"
if command -v python3 >/dev/null; then
	json_tool=python3
elif command -v jq >/dev/null; then
	json_tool=jq
else
	die "need python3 or jq to read fio's JSON output"
fi
if ((drop_caches)) && [[ ! -w /proc/sys/vm/drop_caches ]]; then
	die "--drop-caches needs root"
fi
have_getfattr=0
command -v getfattr >/dev/null && have_getfattr=1

if ((!no_tierfs)); then
	[[ -x $bin ]] || die "tierfs binary '$bin' not found (build it, pass its path, or use --no-tierfs)"
	need_fuse
	bin=$(realpath "$bin")
fi
[[ -n $plain_dir ]] && need_writable_dir "$plain_dir"
if [[ -n $tmpfs_dir ]]; then
	[[ $(stat -f -c %T "$tmpfs_dir") == tmpfs ]] ||
		die "'$tmpfs_dir' is not on a tmpfs"
elif ((!no_tmpfs)) && ((EUID != 0)); then
	die "mounting a tmpfs needs root; pass --tmpfs-dir /dev/shm or --no-tmpfs"
fi

# ---------------------------------------------------------------------
# setup and guaranteed teardown

work=$(make_work tierfs-bench)
tierfs_mnt=
tierfs_pid=
tmpfs_mnt=
plain_sub=
tmpfs_sub=
fio_pid=

cleanup()
{
	local rc=$? i
	trap - EXIT INT TERM
	set +e
	stop_child "$fio_pid"
	if [[ -n $tierfs_mnt ]]; then
		if mountpoint -q "$tierfs_mnt"; then
			fusermount3 -u "$tierfs_mnt" 2>/dev/null ||
				umount "$tierfs_mnt" 2>/dev/null ||
				fusermount3 -uz "$tierfs_mnt"
		fi
		if [[ -n $tierfs_pid ]]; then
			for ((i = 0; i < 100; i++)); do
				kill -0 "$tierfs_pid" 2>/dev/null || break
				sleep 0.1
			done
			if kill -0 "$tierfs_pid" 2>/dev/null; then
				echo "$prog: tierfs (pid $tierfs_pid) did not exit after unmount; killing it" >&2
				kill "$tierfs_pid"
			fi
			wait "$tierfs_pid" 2>/dev/null
		fi
	fi
	if [[ -n $tmpfs_mnt ]] && mountpoint -q "$tmpfs_mnt"; then
		umount "$tmpfs_mnt" || umount -l "$tmpfs_mnt"
	fi
	[[ -n $plain_sub ]] && rm -rf "$plain_sub"
	[[ -n $tmpfs_sub ]] && rm -rf "$tmpfs_sub"
	if [[ -n $out_dir && -f $work/tierfs.log ]]; then
		cp "$work/tierfs.log" "$out_dir/"
	fi
	# only unmounted directories are left; refuse to recurse otherwise
	rm_work
	exit "$rc"
}
set_traps
make_json_dir

# Targets in column order: label and directory.
labels=()
dirs=()

if ((!no_tmpfs)); then
	if [[ -n $tmpfs_dir ]]; then
		tmpfs_sub=$(mktemp -d "$tmpfs_dir/tierfs-bench.XXXXXX")
		dirs+=("$tmpfs_sub")
	else
		tmpfs_mnt=$work/tmpfs
		mkdir "$tmpfs_mnt"
		mount -t tmpfs -o "size=$fs_bytes,mode=0700" tmpfs "$tmpfs_mnt"
		dirs+=("$tmpfs_mnt")
	fi
	labels+=(tmpfs)
fi

if ((!no_tierfs)); then
	tierfs_mnt=$work/tierfs
	mkdir "$tierfs_mnt"
	read -r -a targs <<<"${tier_args:---tier ram=ram:$fs_bytes}"
	read -r -a xargs_ <<<"$extra_tier_args"
	tierfs_cmd=("$bin" -f "${targs[@]}" "${xargs_[@]}" "$tierfs_mnt")
	echo "# ${tierfs_cmd[*]}"
	"${tierfs_cmd[@]}" >"$work/tierfs.log" 2>&1 &
	tierfs_pid=$!
	for ((i = 0; i < 200; i++)); do
		mountpoint -q "$tierfs_mnt" && break
		if ! kill -0 "$tierfs_pid" 2>/dev/null; then
			wait "$tierfs_pid" || true
			tierfs_pid=
			sed 's/^/tierfs: /' "$work/tierfs.log" >&2
			die "tierfs exited before mounting"
		fi
		sleep 0.1
	done
	mountpoint -q "$tierfs_mnt" || die "tierfs did not mount within 20 s"
	dirs+=("$tierfs_mnt")
	labels+=(tierfs)
fi

if [[ -n $plain_dir ]]; then
	plain_sub=$(mktemp -d "$plain_dir/tierfs-bench.XXXXXX")
	dirs+=("$plain_sub")
	labels+=("plain dir")
fi

((${#dirs[@]})) || die "no targets left (--no-tmpfs, --no-tierfs and no --plain-dir)"

# ---------------------------------------------------------------------
# fio

# json_get FILE: prints "bw_bytes iops error" summed over jobs and
# directions (one job per file, so one of read/write is zero).
json_get()
{
	if [[ $json_tool == python3 ]]; then
		fio_json_sums "$1"
	else
		sed -n '/^{/,$p' "$1" | jq -r '
			[.jobs[] | .read.bw_bytes + .write.bw_bytes] | add as $bw |
			[.jobs[] | .read.iops + .write.iops] | add as $iops |
			([.jobs[] | .error] | max) as $err |
			"\($bw) \($iops) \($err)"'
	fi
}

# supports_direct DIR: can DIR's filesystem open files with O_DIRECT?
supports_direct()
{
	local f=$1/.direct-probe r=1
	if dd if=/dev/zero of="$f" bs=4096 count=1 oflag=direct \
		status=none 2>/dev/null; then
		r=0
	fi
	rm -f "$f"
	return $r
}

# tierfs_layout FILE: bytes of FILE per tier, in MiB ("ram=1024M disk=1024M")
tierfs_layout()
{
	local v
	v=$(getfattr --absolute-names -n user.tierfs.layout --only-values \
		"$1" 2>/dev/null) || { echo "n/a"; return; }
	awk '{ for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		printf "%s%s=%.0fM", (i > 1 ? " " : ""), kv[1], kv[2] / 1048576 }
		print "" }' <<<"$v"
}

# tierfs_counters: per tier "NAME: promotions P, demotions D, spills S"
# and the migrator's moves, from user.tierfs.stats on the mount root.
tierfs_counters()
{
	getfattr --absolute-names -n user.tierfs.stats --only-values \
		"$tierfs_mnt" 2>/dev/null | awk '
		function get(f,   i, kv) {
			for (i = 2; i <= NF; i++)
				if (split($i, kv, "=") == 2 && kv[1] == f)
					return kv[2]
			return "?"
		}
		$1 == "tier" {
			printf "%s%s: promotions %s, demotions %s, spills %s",
				(n++ ? "; " : ""), $2, get("promotions"),
				get("demotions"), get("spills")
		}
		$1 == "migrator" {
			printf "; migrator moved %s, retries %s, failures %s",
				get("moved"), get("retries"), get("failures")
		}
		END { print "" }'
}

# test_args TEST: fio arguments of one test.
test_args()
{
	local timed=(--time_based --runtime="$runtime" --ramp_time="$ramp")
	case $1 in
	seqwrite) echo --rw=write --bs=1M --end_fsync=1 ;;
	seqread) echo --rw=read --bs=1M "${timed[@]}" ;;
	randread) echo --rw=randread --bs=4k --norandommap "${timed[@]}" ;;
	randread-par)
		echo --rw=randread --bs=4k --norandommap --numjobs="$jobs" \
			--group_reporting "${timed[@]}" ;;
	randwrite) echo --rw=randwrite --bs=4k --norandommap "${timed[@]}" ;;
	esac
}

test_label()
{
	case $1 in
	seqwrite) echo "seq write 1M" ;;
	seqread) echo "seq read 1M" ;;
	randread) echo "rand read 4k" ;;
	randread-par) echo "rand read 4k x$jobs" ;;
	randwrite) echo "rand write 4k" ;;
	esac
}

# run_one MODE TEST INDEX REP: run TEST on target INDEX; appends a line
# "mode test label value unit" to $results.
run_one()
{
	local mode=$1 test=$2 i=$3 rep=$4
	local dir=${dirs[$i]} label=${labels[$i]}
	local json=$json_dir/${mode}-${test}-${label// /_}-${rep}.json
	local direct=0
	local -a args
	local rc=0 out bw iops err
	local -a extra

	if [[ $mode == direct ]] && ! supports_direct "$dir"; then
		printf '%s\t%s\t%s\tn/a\tno O_DIRECT\n' "$mode" "$test" "$label" \
			>>"$results"
		return
	fi
	[[ $mode == direct ]] && direct=1
	# a fresh file for the write pass; the other tests reuse it
	[[ $test == seqwrite ]] && rm -f "$dir/bench.dat"
	if ((drop_caches)); then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
	read -r -a args <<<"$(test_args "$test")"
	read -r -a extra <<<"$fio_args"
	# fallocate=none: measure the writes, not a preallocation the
	# target may implement very differently (or not at all)
	fio --name="$test" --directory="$dir" --filename=bench.dat \
		--size="$size_bytes" --ioengine="$ioengine" --fallocate=none \
		--direct="$direct" \
		"${args[@]}" "${extra[@]}" \
		--output-format=json --output="$json" \
		>"$json.log" 2>&1 &
	# waiting on a background fio lets a signal's trap run at once
	fio_pid=$!
	wait "$fio_pid" || rc=$?
	fio_pid=
	if ((rc)) || ! out=$(json_get "$json" 2>>"$json.log"); then
		echo "$prog: fio $mode $test on $label failed (exit $rc):" >&2
		sed 's/^/  /' "$json.log" >&2
		printf '%s\t%s\t%s\tfail\tfio exit %s\n' "$mode" "$test" \
			"$label" "$rc" >>"$results"
		return
	fi
	read -r bw iops err <<<"$out"
	if [[ $label == tierfs && $test == seqwrite ]]; then
		printf '# tierfs layout of bench.dat after %s seq write (%d/%d): %s\n' \
			"$mode" "$rep" "$repeat" "$(tierfs_layout "$dir/bench.dat")"
	fi
	if ((err)); then
		printf '%s\t%s\t%s\tfail\terrno %s\n' "$mode" "$test" "$label" \
			"$err" >>"$results"
	elif [[ $test == seq* ]]; then
		printf '%s\t%s\t%s\t%s\tMiB/s\n' "$mode" "$test" "$label" \
			"$(awk -v b="$bw" 'BEGIN { printf "%.1f", b / 1048576 }')" \
			>>"$results"
	else
		printf '%s\t%s\t%s\t%s\tIOPS\n' "$mode" "$test" "$label" \
			"$(awk -v v="$iops" 'BEGIN { printf "%.0f", v }')" \
			>>"$results"
	fi
}

results=${out_dir:-$work}/results.tsv
: >"$results"

echo "# $(host_stamp), $(fio --version), load $(loadavg)"
echo "# file $size ($size_bytes B), fs size $fs_bytes B, runtime ${runtime}s (+${ramp}s ramp), ioengine $ioengine, modes ${modes[*]}, median of $repeat"
echo "# direct: O_DIRECT (fio --direct=1), no page cache; buffered: page cache, fio drops the file's cache with posix_fadvise(DONTNEED) at the start of each job (invalidate=1)$( ((drop_caches)) && echo "; all caches dropped before every job")"
for ((i = 0; i < ${#dirs[@]}; i++)); do
	printf '# %-9s %s (%s)\n' "${labels[$i]}" "${dirs[$i]}" \
		"$(findmnt -no FSTYPE,SOURCE -T "${dirs[$i]}")"
done

for mode in "${modes[@]}"; do
	for test in "${test_list[@]}"; do
		for ((rep = 1; rep <= repeat; rep++)); do
			for ((i = 0; i < ${#dirs[@]}; i++)); do
				printf '# running %-8s %-13s on %s (%d/%d)\n' \
					"$mode" "$test" "${labels[$i]}" "$rep" \
					"$repeat" >&2
				run_one "$mode" "$test" "$i" "$rep"
			done
		done
	done
	if [[ -n $tierfs_mnt ]] && ((have_getfattr)); then
		echo "# tierfs counters after $mode (since mount): $(tierfs_counters)"
	fi
	for ((i = 0; i < ${#dirs[@]}; i++)); do
		rm -f "${dirs[$i]}/bench.dat"
	done
done

# ---------------------------------------------------------------------
# table

# median MODE TEST LABEL: median of the numeric results of the repeats,
# else the first non-numeric one ("n/a", "fail"), else "-".
median()
{
	awk -F'\t' -v m="$1" -v t="$2" -v l="$3" '
		$1 == m && $2 == t && $3 == l {
			if ($4 ~ /^[0-9.]+$/)
				v[n++] = $4
			else if (bad == "")
				bad = $4
		}
		END {
			if (n == 0) {
				print (bad == "" ? "-" : bad)
				exit
			}
			for (i = 1; i < n; i++)	# insertion sort, n is tiny
				for (j = i; j > 0 && v[j - 1] + 0 > v[j] + 0; j--) {
					x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
				}
			if (n % 2)
				print v[int(n / 2)]
			else
				printf "%.1f\n", (v[n / 2 - 1] + v[n / 2]) / 2
		}' "$results"
}

# Ratio columns: tierfs against each other target present.
ratios=()
for l in "${labels[@]}"; do
	[[ $l == tierfs ]] && continue
	if [[ " ${labels[*]} " == *" tierfs "* ]]; then
		ratios+=("tierfs/$l")
	elif [[ $l != tmpfs && " ${labels[*]} " == *" tmpfs "* ]]; then
		ratios+=("$l/tmpfs")
	fi
done

echo
{
	printf 'mode\ttest\tunit'
	printf '\t%s' "${labels[@]}" "${ratios[@]}"
	printf '\n'
	for mode in "${modes[@]}"; do
		for test in "${test_list[@]}"; do
			unit=IOPS
			[[ $test == seq* ]] && unit=MiB/s
			printf '%s\t%s\t%s' "$mode" "$(test_label "$test")" "$unit"
			declare -A val=()
			for l in "${labels[@]}"; do
				val[$l]=$(median "$mode" "$test" "$l")
				printf '\t%s' "${val[$l]:--}"
			done
			for r in "${ratios[@]}"; do
				printf '\t%s' "$(awk -v a="${val[${r%/*}]}" \
					-v b="${val[${r#*/}]}" 'BEGIN {
					if (a + 0 > 0 && b + 0 > 0)
						printf "%.2f", a / b
					else
						printf "-" }')"
			done
			unset val
			printf '\n'
		done
	done
} | column -t -s $'\t'

echo "# load at end $(loadavg)"
if [[ -n $out_dir ]]; then
	echo
	echo "# fio JSON, results.tsv and tierfs.log in $out_dir"
fi
