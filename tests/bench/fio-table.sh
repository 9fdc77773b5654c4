#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fio-table.sh -- one table of fio numbers for tmpfs, a plain directory,
# three tierfs configurations (RAM tier larger than the file, file tier
# only, small RAM tier over a file tier) and two peer FUSE filesystems over
# a tmpfs (libfuse's example passthrough_ll, mergerfs), each value with its
# ratio to tmpfs.  Not part of `meson test`; see tests/bench/README.md.
#
# Needs: bash, fio, python3, util-linux (mountpoint, findmnt, fincore),
# coreutils df, fusermount3.  Root for the tmpfs and for dropping caches.
# Target ptll needs cc, pkg-config and libfuse3-dev (its examples); target
# mergerfs needs mergerfs (installed with apt-get when missing, as root).

set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

ALL_TARGETS="tmpfs,plain,ram,ram-native,ram-drop,ram-nosplice,ram-uring,file,file-native,file-drop,ramfile,ramfile-drop,ptll,ptll-wb,mergerfs,null,null-splice,null-wb,null-wb-splice,null-pt"
# libfuse's low-level passthrough example, as Debian's libfuse3-dev ships it
PTLL_SRC=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c
# seqwrite4 first: its four files are removed before seqwrite, so that
# they never share the mount with the big file (on a RAM tier of twice
# --size the two would fill it, and tierfs turns to write-through when
# space runs low)
ALL_TESTS="seqwrite4 seqwrite seqread-cold seqread-warm randread-cold randread-warm randwrite"

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

Runs six fio jobs (psync, one I/O in flight) on every target, one target
after the other, each freshly mounted in a private temporary directory and
unmounted after its jobs, and prints one markdown table: a row per job, a
column per target, every value followed by its ratio to tmpfs.

Jobs, in this order, on one file of --size:
  seq write 1M, 4 jobs rw=write bs=1M end_fsync=1, four writers, each its
                       own new file of a quarter of --size (the sum of
                       their bandwidths); the files are removed after it
  seq write 1M         the same with one writer, one pass over a new file
  seq read 1M, cold    rw=read bs=1M, one pass, fio's invalidate=1
  seq read 1M, warm    the same with invalidate=0, after a read pass
  rand read 4K, cold   rw=randread bs=4k, time-based, invalidate=1
  rand read 4K, warm   the same with invalidate=0, after a read pass
  rand write 4K        rw=randwrite bs=4k, time-based, on the same file
As root, the page cache is dropped (sync; echo 3 > drop_caches) before
each cold job, so a cold read comes from the daemon or the device.

Targets (--targets, in the order given; default $ALL_TARGETS):
  tmpfs     a fresh tmpfs of twice --size
  plain     a temporary directory under --plain-dir
  ram       tierfs --tier ram=ram:RAM_BIG (its default transport: /dev/fuse
            unless the fuse module's enable_uring is on; the column says)
  ram-native the same with --io native: each file a backing file in the
            RAM tier's tmpfs, which the kernel reads and writes itself
            (FUSE passthrough; no writeback cache)
  ram-drop  the same with --page-cache=drop: every open is direct I/O,
            the RAM tier holds the only copy
  ram-nosplice the same with --no-splice: each /dev/fuse request read
            whole, two copies per written byte (as before splice)
  ram-uring the same over FUSE over io_uring (--transport uring; as root
            the script switches the fuse module's enable_uring on for
            this target and back after it; skipped where it cannot)
  file      tierfs --tier disk=file:DIR:FILE_TIER_SIZE
  file-native the same with --io native (a backing file in DIR)
  ramfile   tierfs --tier ram=ram:RAM_SMALL --tier disk=file:DIR:FILE_TIER_SIZE
  file-drop, ramfile-drop  file and ramfile with --page-cache=drop
  ptll      libfuse's example passthrough_ll (built at run time from
            $PTLL_SRC
            with cc -O2), -f -o source=SRC, default options otherwise
  ptll-wb   the same with -o writeback (the kernel's writeback cache)
  mergerfs  mergerfs -f -o minfreespace=0 SRC, default options otherwise
  null      the ceiling: nullfs.c beside this script (built at run time),
            a FUSE server that copies each WRITE into pre-faulted memory
            and does nothing else, on /dev/fuse
  null-wb   the same with the kernel's writeback cache (as tierfs)
  null-splice, null-wb-splice  the same two with -o splice: libfuse
            splices each WRITE into a pipe and nullfs reads it out of
            the pipe, one copy per byte (the ceiling of splice)
  null-pt   the ceiling of FUSE passthrough: nullfs -o passthrough=SRC,
            each file a backing file on SRC (a fresh tmpfs of twice
            --size) that the kernel reads and writes itself
DIR is a temporary directory under --file-dir, SRC a fresh tmpfs of twice
--size.  ptll is skipped with a note when cc, pkg-config's fuse3 or the
example is missing; mergerfs is installed with apt-get when missing (as
root), else skipped with a note.  After each FUSE target the daemon's
RSS, the bytes the mount stores (df) and the file's page cache (fincore)
are printed.

Options:
  --bin PATH             the tierfs daemon (else \$TIERFS_BIN, else
                         ./build/fs/tierfs)
  --size SIZE            test file size (default 1G)
  --runtime SEC          seconds per time-based job (default 6)
  --plain-dir DIR        where the plain target's directory goes
                         (default /var/tmp)
  --file-dir DIR         where the file tier's directory goes
                         (default /var/tmp)
  --targets LIST         comma-separated subset of: $ALL_TARGETS
  --ram-big SIZE         RAM tier of target ram (default 2G)
  --ram-small SIZE       RAM tier of target ramfile (default 256M)
  --file-tier-size SIZE  file tier size (default 8G)
  --extra-tier-args "ARGS"
                         more tierfs arguments for every tierfs target
  --tests LIST           comma-separated subset of the jobs, by name:
                         ${ALL_TESTS// /,}
  --out-dir DIR          keep fio's JSON, results.tsv, the table and the
                         daemons' logs (and passthrough_ll's build log)
                         here
  -h, --help             this text
EOF
}

# human BYTES: 1073741824 -> 1G, 268435456 -> 256M
human()
{
	awk -v b="$1" 'BEGIN {
		split("K M G T", u, " ")
		s = ""
		for (i = 4; i >= 1; i--)
			if (b >= 2 ^ (10 * i) && b % (2 ^ (10 * i)) == 0) {
				s = sprintf("%d%s", b / 2 ^ (10 * i), u[i])
				break
			}
		if (s == "")
			s = (b >= 1048576) ? sprintf("%.1fM", b / 1048576) : b
		print s }'
}

size=1G
runtime=6
plain_dir=/var/tmp
file_dir=/var/tmp
targets=$ALL_TARGETS
ram_big=2G
ram_small=256M
file_tier_size=8G
extra_tier_args=
out_dir=
tests=
bin=${TIERFS_BIN:-./build/fs/tierfs}

while (($#)); do
	case $1 in
	--bin) bin=${2:?}; shift ;;
	--size) size=${2:?}; shift ;;
	--runtime) runtime=${2:?}; shift ;;
	--plain-dir) plain_dir=${2:?}; shift ;;
	--file-dir) file_dir=${2:?}; shift ;;
	--targets) targets=${2:?}; shift ;;
	--ram-big) ram_big=${2:?}; shift ;;
	--ram-small) ram_small=${2:?}; shift ;;
	--file-tier-size) file_tier_size=${2:?}; shift ;;
	--extra-tier-args) extra_tier_args=${2:?}; shift ;;
	--out-dir) out_dir=${2:?}; shift ;;
	--tests) tests=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done

size_bytes=$(to_bytes "$size")
((size_bytes >= 1 << 20)) || die "--size must be at least 1M"
((size_bytes % (1 << 20) == 0)) || die "--size must be a multiple of 1M"
ram_big_bytes=$(to_bytes "$ram_big")
ram_small_bytes=$(to_bytes "$ram_small")
file_tier_bytes=$(to_bytes "$file_tier_size")
[[ $runtime =~ ^[1-9][0-9]*$ ]] || die "bad --runtime '$runtime'"
if [[ -n $tests ]]; then
	for t in ${tests//,/ }; do
		[[ " $ALL_TESTS " == *" $t "* ]] || die "unknown job '$t' in --tests (jobs: $ALL_TESTS)"
	done
	ALL_TESTS=${tests//,/ }
fi

parse_targets "$targets" "$ALL_TARGETS"

command -v fio >/dev/null || die "fio not found"
command -v python3 >/dev/null || die "python3 not found (reads fio's JSON)"

# A peer that cannot run is left out with a note (printed with the
# header) rather than failing the whole table.
skip_notes=()
# skip TARGET REASON
skip()
{
	skip_notes+=("target $1 skipped: $2")
	unset "seen[$1]"
}
uring_param=/sys/module/fuse/parameters/enable_uring
if [[ -n ${seen[ram-uring]:-} ]] && [[ ! -w $uring_param ]]; then
	skip ram-uring "no writable $uring_param (a kernel before 6.14, or not root)"
fi
if [[ -n ${seen[ptll-wb]:-} ]] && [[ -z ${seen[ptll]:-} ]]; then
	seen[ptll]=1	# built once for both; pruned from the list below
fi
if [[ -n ${seen[ptll]:-} ]]; then
	if ! command -v cc >/dev/null; then
		skip ptll "cc not found (passthrough_ll is compiled at run time)"
	elif [[ ! -r $PTLL_SRC ]]; then
		skip ptll "$PTLL_SRC not found (package libfuse3-dev)"
	elif ! command -v pkg-config >/dev/null || ! pkg-config --exists fuse3; then
		skip ptll "pkg-config cannot find fuse3 (packages pkg-config, libfuse3-dev)"
	fi
	[[ -n ${seen[ptll]:-} ]] || unset "seen[ptll-wb]"
fi
mergerfs_installed=0
if [[ -n ${seen[mergerfs]:-} ]] && ! command -v mergerfs >/dev/null; then
	if ((EUID == 0)) && command -v apt-get >/dev/null; then
		echo "$prog: mergerfs not found; apt-get install -y mergerfs" >&2
		if DEBIAN_FRONTEND=noninteractive apt-get install -y -q mergerfs >&2 &&
			hash -r && command -v mergerfs >/dev/null; then
			mergerfs_installed=1
		else
			skip mergerfs "mergerfs is not installed and apt-get install -y mergerfs failed"
		fi
	else
		skip mergerfs "mergerfs is not installed (as root the script installs it with apt-get)"
	fi
fi

# prune_targets: drop skipped targets from target_list
prune_targets()
{
	local t
	local -a keep=()
	for t in "${target_list[@]}"; do
		[[ -n ${seen[$t]:-} ]] && keep+=("$t")
	done
	((${#keep[@]})) || die "no target left to run (${skip_notes[*]})"
	target_list=("${keep[@]}")
}
prune_targets

need_tierfs=0
need_fuse=0
for t in "${target_list[@]}"; do
	case $t in
	ram | ram-* | file | file-* | ramfile | ramfile-*) need_tierfs=1; need_fuse=1 ;;
	ptll | ptll-wb | mergerfs | null*) need_fuse=1 ;;
	esac
done
if ((need_tierfs)); then
	[[ -x $bin ]] || die "tierfs binary '$bin' not found (build it or pass --bin)"
	bin=$(realpath "$bin")
fi
((need_fuse)) && need_fuse
if [[ -n ${seen[tmpfs]:-}${seen[ptll]:-}${seen[ptll-wb]:-}${seen[mergerfs]:-}${seen[null-pt]:-} ]] && ((EUID != 0)); then
	die "mounting a tmpfs (targets tmpfs, ptll, mergerfs, null-pt) needs root (or leave them out of --targets)"
fi
[[ -n ${seen[plain]:-} ]] && need_writable_dir "$plain_dir" --plain-dir
[[ -n ${seen[file]:-}${seen[ramfile]:-}${seen[file-drop]:-}${seen[ramfile-drop]:-}${seen[file-native]:-} ]] && need_writable_dir "$file_dir" --file-dir
can_drop=0
if [[ -w /proc/sys/vm/drop_caches ]]; then
	can_drop=1
else
	warn "not root: caches are not dropped, cold rows of plain and file tiers may be warm"
fi
[[ -n ${seen[ram]:-} ]] && ((ram_big_bytes <= size_bytes)) &&
	warn "--ram-big $ram_big is not larger than the file ($size)"
[[ -n ${seen[ramfile]:-} ]] && ((ram_small_bytes >= size_bytes)) &&
	warn "--ram-small $ram_small is not smaller than the file ($size): target ramfile does not span both tiers"
have_fincore=0
command -v fincore >/dev/null && have_fincore=1
have_getfattr=0
command -v getfattr >/dev/null && have_getfattr=1

# ---------------------------------------------------------------------
# setup and guaranteed teardown

work=$(make_work fio-table)
fio_pid=
fuse_mnt=
fuse_pid=
fuse_name=
tmpfs_mnt=
rm_dirs=()

# fuse_umount and tmpfs_umount (benchlib.sh) unmount the current FUSE
# mount (tierfs or a peer, named $fuse_name) and the current tmpfs
uring_old=
cleanup()
{
	local rc=$?
	trap - EXIT INT TERM
	set +e
	[[ -z $uring_old ]] || echo "$uring_old" >"$uring_param"
	stop_child "$fio_pid"
	# a peer's FUSE mount first, then the tmpfs under it
	fuse_umount
	tmpfs_umount
	rm_tracked_dirs
	rm_work || warn "something is still mounted under $work; left in place"
	exit "$rc"
}
set_traps
make_json_dir

# fuse_start NAME LOG MNT CMD...: run the FUSE daemon CMD (in the
# foreground, -f, as a background job of this script, so that its pid is
# known) with its output in LOG and wait until MNT is mounted
fuse_start()
{
	local name=$1 log=$2 i
	fuse_mnt=$3
	shift 3
	fuse_name=${1##*/}
	echo "# $name: $*"
	"$@" >"$log" 2>&1 &
	fuse_pid=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$fuse_mnt" && break
		if ! kill -0 "$fuse_pid" 2>/dev/null; then
			wait "$fuse_pid" || true
			fuse_pid=
			sed "s/^/$fuse_name: /" "$log" >&2
			die "$fuse_name exited before mounting ($name)"
		fi
		sleep 0.1
	done
	mountpoint -q "$fuse_mnt" || die "$fuse_name did not mount within 10 s ($name)"
}

# tierfs_mount NAME ARGS...: mount tierfs with ARGS on $work/NAME
tierfs_mount()
{
	local name=$1
	shift
	local -a xa
	read -r -a xa <<<"$extra_tier_args"
	mkdir "$work/$name"
	fuse_start "$name" "$work/tierfs-$name.log" "$work/$name" \
		"$bin" -f "$@" "${xa[@]}" "$work/$name"
}

# peer_tmpfs NAME: sets $src to a fresh tmpfs of twice --size on
# $work/NAME-src, for a peer FUSE filesystem to pass through to
peer_tmpfs()
{
	tmpfs_mnt=$work/$1-src
	mkdir "$tmpfs_mnt"
	mount -t tmpfs -o "size=$((2 * size_bytes)),mode=0700" tmpfs "$tmpfs_mnt"
	src=$tmpfs_mnt
	echo "# $1: tmpfs of $(human $((2 * size_bytes))) on $src underneath"
}

# file_tier_dir: sets $tier_dir to a fresh directory under --file-dir
# (not through $(...): rm_dirs must grow in this shell)
file_tier_dir()
{
	tier_dir=$(mktemp -d "$file_dir/fio-table-tier.XXXXXX")
	rm_dirs+=("$tier_dir")
}

drop_caches()
{
	if ((can_drop)); then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
}

# cached FILE: bytes of FILE in the page cache, or n/a
cached()
{
	local r
	if ((have_fincore)) && r=$(fincore -rbn -o RES "$1" 2>/dev/null) &&
		[[ $r =~ ^[0-9]+$ ]]; then
		echo "$r"
	else
		echo n/a
	fi
}

mib()
{
	[[ $1 =~ ^[0-9]+$ ]] || { echo "$1"; return; }
	awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'
}

test_label()
{
	case $1 in
	seqwrite) echo "seq write 1M" ;;
	seqwrite4) echo "seq write 1M, 4 jobs" ;;
	seqread-cold) echo "seq read 1M, cold" ;;
	seqread-warm) echo "seq read 1M, warm" ;;
	randread-cold) echo "rand read 4K, cold" ;;
	randread-warm) echo "rand read 4K, warm" ;;
	randwrite) echo "rand write 4K" ;;
	esac
}

test_unit()
{
	case $1 in
	seq*) echo MiB/s ;;
	*) echo IOPS ;;
	esac
}

declare -A val=()	# val[target,test]
declare -A cpu_gib=()	# cpu_gib[target]: daemon CPU s per GiB of seq write

# daemon_cpu: user + system CPU seconds of the FUSE daemon so far
daemon_cpu()
{
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' \
		"/proc/$fuse_pid/stat" 2>/dev/null || echo 0
}
failed=0

# run_test KEY DIR TEST: one fio job; sets val[KEY,TEST]
run_test()
{
	local key=$1 dir=$2 test=$3
	local f=$dir/bench.dat json=$json_dir/$key-$test.json
	local rc=0 out bw iops err c
	local -a a=(--name="$test" --directory="$dir" --filename=bench.dat
		--size="$size_bytes" --ioengine=psync --iodepth=1
		--fallocate=none --output-format=json --output="$json")
	local timed=(--time_based --runtime="$runtime")

	case $test in
	seqwrite)
		rm -f "$f" "$dir"/bench4.*
		a+=(--rw=write --bs=1M --end_fsync=1) ;;
	seqwrite4)
		rm -f "$f" "$dir"/bench4.*
		a=(--name="$test" --directory="$dir" --filename_format='bench4.$jobnum'
			--size=$((size_bytes / 4)) --numjobs=4 --group_reporting
			--ioengine=psync --iodepth=1 --fallocate=none
			--output-format=json --output="$json"
			--rw=write --bs=1M --end_fsync=1) ;;
	seqread-cold)
		rm -f "$dir"/bench4.*
		drop_caches
		a+=(--rw=read --bs=1M) ;;
	randread-cold)
		drop_caches
		a+=(--rw=randread --bs=4k "${timed[@]}") ;;
	seqread-warm | randread-warm)
		# one read pass, then check how much of the file it left
		dd if="$f" of=/dev/null bs=1M status=none ||
			warn "warm-up read of $f failed"
		c=$(cached "$f")
		printf '#   %-14s %s of %s in the page cache after the warm-up pass\n' \
			"$test:" "$(mib "$c")" "$(mib "$size_bytes")"
		a+=(--invalidate=0)
		if [[ $test == seqread-warm ]]; then
			a+=(--rw=read --bs=1M)
		else
			a+=(--rw=randread --bs=4k "${timed[@]}")
		fi ;;
	randwrite)
		a+=(--rw=randwrite --bs=4k "${timed[@]}") ;;
	esac
	echo "# running $test on $key" >&2
	local cpu0=
	[[ $test == seqwrite && -n $fuse_pid ]] && cpu0=$(daemon_cpu)
	fio "${a[@]}" >"$json.log" 2>&1 &
	# a background fio lets the INT/TERM trap run at once
	fio_pid=$!
	wait "$fio_pid" || rc=$?
	fio_pid=
	if [[ -n $cpu0 ]]; then
		# daemon CPU (user + system) per GiB the job wrote
		cpu_gib[$key]=$(awk -v a="$cpu0" -v b="$(daemon_cpu)" -v s="$size_bytes" \
			'BEGIN { printf "%.2f", (b - a) / (s / 1073741824) }')
	fi
	if ((rc)) || ! out=$(fio_json_sums "$json" 2>>"$json.log"); then
		echo "$prog: fio $test on $key failed (exit $rc):" >&2
		sed 's/^/  /' "$json.log" >&2
		val[$key,$test]=fail
		failed=1
		return
	fi
	read -r bw iops err <<<"$out"
	[[ -s $json.log ]] || rm -f "$json.log"
	if ((err)); then
		echo "$prog: fio $test on $key: error $err" >&2
		val[$key,$test]=fail
		failed=1
	elif [[ $test == seq* ]]; then
		val[$key,$test]=$(awk -v b="$bw" 'BEGIN { printf "%.0f", b / 1048576 }')
	else
		val[$key,$test]=$(awk -v v="$iops" 'BEGIN { printf "%.0f", v }')
	fi
}

run_all_tests()
{
	local t
	for t in $ALL_TESTS; do
		run_test "$1" "$2" "$t"
	done
}

# proc_bytes FIELD: VmRSS/VmHWM of the current daemon in bytes, or n/a
proc_bytes()
{
	awk -v f="$1:" '$1 == f { printf "%d\n", $2 * 1024; found = 1 }
		END { if (!found) print "n/a" }' "/proc/$fuse_pid/status" \
		2>/dev/null || echo n/a
}

declare -A label=() mem_rss=() mem_hwm=() mem_used=() mem_cache=() mem_layout=()

# fuse_stats KEY: memory of the current FUSE daemon and mount after the jobs
fuse_stats()
{
	local key=$1 rss hwm used c lay=
	rss=$(proc_bytes VmRSS)
	hwm=$(proc_bytes VmHWM)
	used=$(df -B1 --output=used "$fuse_mnt" 2>/dev/null | tail -n 1 | tr -d ' ') || used=
	[[ $used =~ ^[0-9]+$ ]] || used=n/a
	c=$(cached "$fuse_mnt/bench.dat")
	if ((have_getfattr)); then
		lay=$(getfattr --absolute-names -n user.tierfs.layout \
			--only-values "$fuse_mnt/bench.dat" 2>/dev/null |
			awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "=")
				printf "%s%s=%.0fM", (i > 1 ? " " : ""), kv[1],
					kv[2] / 1048576 } }') || lay=
	fi
	mem_rss[$key]=$rss
	mem_hwm[$key]=$hwm
	mem_used[$key]=$used
	mem_cache[$key]=$c
	mem_layout[$key]=${lay:-n/a}
	echo "# $key after its jobs: daemon VmRSS $(mib "$rss") (peak VmHWM $(mib "$hwm")), stored (df used) $(mib "$used"), bench.dat in page cache $(mib "$c"), layout ${lay:-n/a}"
}

# tierfs_target KEY NAME-OF-COLUMN TIERARGS...
tierfs_target()
{
	local key=$1
	label[$key]=$2
	shift 2
	tierfs_mount "$key" "$@"
	local tr
	tr=$(getfattr --only-values -n user.tierfs.stats "$fuse_mnt" 2>/dev/null |
		sed -n 's/.* transport=\([a-z]*\).*/\1/p')
	[[ -z $tr ]] || label[$key]="${label[$key]} [$tr]"
	run_all_tests "$key" "$fuse_mnt"
	fuse_stats "$key"
	# FUSE requests per opcode over all of this target's jobs
	getfattr --only-values -n user.tierfs.stats "$fuse_mnt" 2>/dev/null |
		sed -n "s/^requests /# $key requests: /p"
	cp "$work/tierfs-$key.log" "$json_dir/" 2>/dev/null || true
	fuse_umount
}

# peer_target KEY NAME-OF-COLUMN CMD...: the jobs on a peer FUSE
# filesystem that CMD mounts on $work/KEY over $src (see peer_tmpfs; CMD
# names both); unmounts it and the tmpfs afterwards
peer_target()
{
	local key=$1
	label[$key]=$2
	shift 2
	mkdir "$work/$key"
	fuse_start "$key" "$work/$key.log" "$work/$key" "$@"
	run_all_tests "$key" "$fuse_mnt"
	fuse_stats "$key"
	cp "$work/$key.log" "$json_dir/" 2>/dev/null || true
	fuse_umount
	tmpfs_umount
}

# passthrough_ll as shipped: the example compiled as its header says
# (it defines _GNU_SOURCE itself and finds passthrough_helpers.h next to
# itself), with -O2
ptll_bin=$work/passthrough_ll
if [[ -n ${seen[ptll]:-} ]]; then
	echo "# building $ptll_bin from $PTLL_SRC" >&2
	# shellcheck disable=SC2046 # pkg-config's flags are meant to split
	if ! cc -O2 -o "$ptll_bin" "$PTLL_SRC" \
		$(pkg-config --cflags --libs fuse3) \
		>"$json_dir/passthrough_ll-build.log" 2>&1; then
		sed 's/^/cc: /' "$json_dir/passthrough_ll-build.log" >&2
		skip ptll "cc -O2 $PTLL_SRC failed (output above)"
		prune_targets
	fi
	[[ -s $json_dir/passthrough_ll-build.log ]] ||
		rm -f "$json_dir/passthrough_ll-build.log"
fi

# the ceiling server, built as its header says
null_bin=$work/nullfs
if [[ -n ${seen[null]:-}${seen[null-wb]:-}${seen[null-splice]:-}${seen[null-wb-splice]:-}${seen[null-pt]:-} ]]; then
	# shellcheck disable=SC2046 # pkg-config's flags are meant to split
	if ! cc -O2 -o "$null_bin" "$(dirname "${BASH_SOURCE[0]}")/nullfs.c" \
		$(pkg-config --cflags --libs fuse3) >"$json_dir/nullfs-build.log" 2>&1; then
		sed 's/^/cc: /' "$json_dir/nullfs-build.log" >&2
		skip null "cannot build nullfs.c (output above)"
		for t in null-wb null-splice null-wb-splice null-pt; do
			skip "$t" "cannot build nullfs.c"
		done
		prune_targets
	fi
	[[ -s $json_dir/nullfs-build.log ]] || rm -f "$json_dir/nullfs-build.log"
fi

# numbers from a busy machine compare nothing: say so up front
warn_if_busy
t_start=$(date +%s)
echo "# $(host_stamp), $(fio --version), load $(loadavg)"
echo "# file $(human "$size_bytes"), runtime ${runtime}s, ioengine psync iodepth 1, caches dropped before cold jobs: $( ((can_drop)) && echo yes || echo no)"
((need_tierfs)) && echo "# tierfs: $bin"
[[ -n ${seen[ptll]:-} ]] &&
	echo "# ptll: passthrough_ll built from $PTLL_SRC, libfuse $(pkg-config --modversion fuse3)"
[[ -n ${seen[mergerfs]:-} ]] &&
	echo "# mergerfs: $(command -v mergerfs), $(mergerfs --version 2>&1 | head -n 1)$( ((mergerfs_installed)) && echo ", installed by this run with apt-get")"
for n in "${skip_notes[@]}"; do
	echo "# note: $n"
done

for t in "${target_list[@]}"; do
	echo "# --- target $t" >&2
	case $t in
	tmpfs)
		label[$t]=tmpfs
		tmpfs_mnt=$work/tmpfs
		mkdir "$tmpfs_mnt"
		mount -t tmpfs -o "size=$((2 * size_bytes)),mode=0700" tmpfs "$tmpfs_mnt"
		echo "# tmpfs: tmpfs of $(human $((2 * size_bytes))) on $tmpfs_mnt"
		run_all_tests tmpfs "$tmpfs_mnt"
		tmpfs_umount ;;
	plain)
		label[$t]="plain dir"
		d=$(mktemp -d "$plain_dir/fio-table-plain.XXXXXX")
		rm_dirs+=("$d")
		echo "# plain: $d ($(findmnt -no FSTYPE,SOURCE -T "$d" | tr -s ' '))"
		run_all_tests plain "$d"
		rm -rf "$d" ;;
	ram)
		tierfs_target ram "tierfs RAM $(human "$ram_big_bytes")" \
			--tier "ram=ram:$ram_big_bytes" ;;
	ram-native)
		tierfs_target ram-native "tierfs RAM $(human "$ram_big_bytes"), native" \
			--tier "ram=ram:$ram_big_bytes" --io native ;;
	ram-drop)
		tierfs_target ram-drop "tierfs RAM $(human "$ram_big_bytes"), page cache dropped" \
			--tier "ram=ram:$ram_big_bytes" --page-cache drop ;;
	ram-nosplice)
		tierfs_target ram-nosplice "tierfs RAM $(human "$ram_big_bytes"), no splice" \
			--tier "ram=ram:$ram_big_bytes" --no-splice ;;
	ram-uring)
		uring_old=$(cat "$uring_param")
		echo 1 >"$uring_param"
		tierfs_target ram-uring "tierfs RAM $(human "$ram_big_bytes"), io_uring" \
			--tier "ram=ram:$ram_big_bytes" --transport uring
		echo "$uring_old" >"$uring_param"
		uring_old= ;;
	file)
		file_tier_dir
		tierfs_target file "tierfs file" \
			--tier "disk=file:$tier_dir:$file_tier_bytes" ;;
	file-native)
		file_tier_dir
		tierfs_target file-native "tierfs file, native" \
			--tier "disk=file:$tier_dir:$file_tier_bytes" --io native ;;
	file-drop)
		file_tier_dir
		tierfs_target file-drop "tierfs file, page cache dropped" \
			--tier "disk=file:$tier_dir:$file_tier_bytes" \
			--page-cache drop ;;
	ramfile)
		file_tier_dir
		tierfs_target ramfile "tierfs RAM $(human "$ram_small_bytes") + file" \
			--tier "ram=ram:$ram_small_bytes" \
			--tier "disk=file:$tier_dir:$file_tier_bytes" ;;
	ramfile-drop)
		file_tier_dir
		tierfs_target ramfile-drop "tierfs RAM $(human "$ram_small_bytes") + file, page cache dropped" \
			--tier "ram=ram:$ram_small_bytes" \
			--tier "disk=file:$tier_dir:$file_tier_bytes" \
			--page-cache drop ;;
	ptll)
		peer_tmpfs ptll
		peer_target ptll passthrough_ll \
			"$ptll_bin" -f -o "source=$src" "$work/ptll" ;;
	null | null-wb | null-splice | null-wb-splice)
		mkdir "$work/$t"
		o=()
		label[$t]="nullfs"
		if [[ $t == null-wb* ]]; then
			o=(-o writeback)
			label[$t]+=" writeback"
		fi
		if [[ $t == *-splice ]]; then
			o+=(-o splice)
			label[$t]+=" splice"
		fi
		label[$t]+=" (ceiling)"
		fuse_start "$t" "$work/$t.log" "$work/$t" "$null_bin" "${o[@]}" -f "$work/$t"
		run_all_tests "$t" "$fuse_mnt"
		fuse_stats "$t"
		fuse_umount ;;
	null-pt)
		peer_tmpfs null-pt
		label[$t]="nullfs passthrough (ceiling)"
		mkdir "$work/$t"
		fuse_start "$t" "$work/$t.log" "$work/$t" "$null_bin" \
			-o "passthrough=$src" -f "$work/$t"
		run_all_tests "$t" "$fuse_mnt"
		fuse_stats "$t"
		fuse_umount
		tmpfs_umount ;;
	ptll-wb)
		peer_tmpfs ptll-wb
		peer_target ptll-wb "passthrough_ll writeback" \
			"$ptll_bin" -f -o "source=$src" -o writeback "$work/ptll-wb" ;;
	mergerfs)
		# mergerfs's default minfreespace=4G would refuse to create
		# a file on a branch with less free space (ENOSPC): the
		# only option changed
		peer_tmpfs mergerfs
		peer_target mergerfs mergerfs \
			mergerfs -f -o minfreespace=0 "$src" "$work/mergerfs" ;;
	esac
done
t_end=$(date +%s)

# ---------------------------------------------------------------------
# table

# cell KEY TEST: "VALUE (RATIOx)", the ratio to tmpfs when there is one
cell()
{
	local v=${val[$1,$2]:--} ref=${val[tmpfs,$2]:-}
	if [[ $1 != tmpfs && $v =~ ^[0-9]+$ && $ref =~ ^[0-9]+$ ]] && ((ref > 0)); then
		awk -v a="$v" -v b="$ref" 'BEGIN { printf "%d (%.2fx)", a, a / b }'
	else
		echo "$v"
	fi
}

ratio()
{
	local v=${val[$1,$2]:--} ref=${val[tmpfs,$2]:-}
	if [[ $v =~ ^[0-9]+$ && $ref =~ ^[0-9]+$ ]] && ((ref > 0)); then
		awk -v a="$v" -v b="$ref" 'BEGIN { printf "%.3f", a / b }'
	else
		echo -
	fi
}

table=$work/table.md
{
	printf '| test | unit |'
	for t in "${target_list[@]}"; do printf ' %s |' "${label[$t]}"; done
	printf '\n|---|---|'
	for t in "${target_list[@]}"; do printf -- '---:|'; done
	printf '\n'
	for test in $ALL_TESTS; do
		printf '| %s | %s |' "$(test_label "$test")" "$(test_unit "$test")"
		for t in "${target_list[@]}"; do
			printf ' %s |' "$(cell "$t" "$test")"
		done
		printf '\n'
	done
} >"$table"

echo
cat "$table"
if [[ -n ${seen[tmpfs]:-} ]]; then
	echo
	echo "(x) = ratio to tmpfs."
fi

have_mem=0
for t in "${target_list[@]}"; do
	[[ -n ${mem_rss[$t]:-} ]] && have_mem=1
done
if ((have_mem)); then
	{
		echo
		echo "| FUSE target | daemon VmRSS | peak VmHWM | stored (df used) | bench.dat page cache | layout | daemon CPU s per GiB written |"
		echo "|---|---:|---:|---:|---:|---|---:|"
		for t in "${target_list[@]}"; do
			[[ -n ${mem_rss[$t]:-} ]] || continue
			printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${label[$t]}" \
				"$(mib "${mem_rss[$t]}")" "$(mib "${mem_hwm[$t]}")" \
				"$(mib "${mem_used[$t]}")" "$(mib "${mem_cache[$t]}")" \
				"${mem_layout[$t]}" "${cpu_gib[$t]:--}"
		done
	} >>"$table"
	echo
	sed -n '/^| FUSE target/,$p' "$table"
fi

echo
echo "# $((t_end - t_start)) s, load at end $(loadavg)"

if [[ -n $out_dir ]]; then
	{
		printf 'target\ttest\tunit\tvalue\tratio_to_tmpfs\n'
		for t in "${target_list[@]}"; do
			for test in $ALL_TESTS; do
				printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$test" \
					"$(test_unit "$test")" "${val[$t,$test]:--}" \
					"$(ratio "$t" "$test")"
			done
		done
	} >"$out_dir/results.tsv"
	{
		printf 'target\tvmrss_bytes\tvmhwm_bytes\tdf_used_bytes\tpage_cache_bytes\tlayout\n'
		for t in "${target_list[@]}"; do
			[[ -n ${mem_rss[$t]:-} ]] || continue
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${mem_rss[$t]}" \
				"${mem_hwm[$t]}" "${mem_used[$t]}" \
				"${mem_cache[$t]}" "${mem_layout[$t]}"
		done
	} >"$out_dir/memory.tsv"
	cp "$table" "$out_dir/table.md"
	echo "# fio JSON, results.tsv, memory.tsv, table.md and the FUSE daemons' logs in $out_dir"
fi
exit "$failed"
