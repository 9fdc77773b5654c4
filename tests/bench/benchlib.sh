# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# The globals used here ($prog, $work, $fuse_mnt, ...) are the sourcing
# script's:
# shellcheck disable=SC2154
#
# benchlib.sh -- helpers shared by the benchmark scripts in tests/bench/.
# Sourced, not run:
#
#	. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"
#
# It only defines functions (no options set, no variables, no commands
# run).  The functions read and write the calling script's globals named
# below; every message starts with "$prog: " ($prog is the script's name,
# which the script sets before calling anything here).
#
# Messages and checks
#   die MSG...          print "$prog: MSG" on stderr and exit 1
#   warn MSG...         print "$prog: warning: MSG" on stderr
#   to_bytes SIZE       print SIZE in bytes: a whole number with an
#                       optional K, M, G or T (powers of 1024, either
#                       case) and an optional B or iB ("1G", "256M",
#                       "1GiB", "4096"); die "cannot parse size 'SIZE'"
#                       on anything else
#   need_writable_dir DIR [OPTION]
#                       die "[OPTION ]'DIR' is not a writable directory"
#                       unless DIR is a directory this process can write
#   need_fuse           die unless fusermount3 is in $PATH and /dev/fuse
#                       is a character device
#   parse_targets LIST ALL
#                       split the comma-separated LIST into the array
#                       target_list and set seen[T]=1 (global associative
#                       array) for every target T; die on an empty LIST,
#                       a target not in the comma-separated ALL, or a
#                       target given twice
#
# The machine
#   loadavg             print the 1, 5 and 15 minute load averages
#   host_stamp          print "UTC-TIME KERNEL RELEASE, N CPUs", the start
#                       of a result's first "#" line
#   warn_if_busy        warn when the 1 minute load average is above 0.5
#                       (numbers from a busy machine are noisy)
#
# Setup and teardown
#   make_work NAME      create a private (0700) temporary directory
#                       ${TMPDIR:-/tmp}/NAME.XXXXXX and print its path;
#                       the script keeps it in $work
#   set_traps           run the script's cleanup function on EXIT, and
#                       exit 130 on SIGINT, 143 on SIGTERM (so that the
#                       EXIT trap runs)
#   make_out_dir        when $out_dir is set: create it and make it an
#                       absolute path
#   make_json_dir       make_out_dir, then set $json_dir to $out_dir, or
#                       when there is none to a new $work/json
#   stop_child PID      when PID is not empty: kill it and reap it
#   fuse_umount         unmount the FUSE mount $fuse_mnt if mounted
#                       (fusermount3 -u, else umount, else fusermount3
#                       -uz, else a warning), wait up to 30 s for its
#                       daemon $fuse_pid to exit (then kill it), warn on
#                       a non-zero exit status.  Messages name the daemon
#                       $fuse_name (default tierfs).  Clears fuse_mnt,
#                       fuse_pid and fuse_name.
#   tmpfs_umount        unmount the tmpfs $tmpfs_mnt if mounted (umount,
#                       else umount -l, else a warning).  Clears
#                       tmpfs_mnt.
#                       With rmdir_mnt=1 both also remove the (empty)
#                       mount point.
#   rm_tracked_dirs     rm -rf every directory in the array rm_dirs,
#                       then empty it
#   rm_work             rm -rf $work unless something is still mounted
#                       below it; then return 1 (and remove nothing)
#
# Memory
#   mem_sample_start DIR [PID]
#                       sample every half second, in the background, the
#                       memory a run's data holds: the growth of the
#                       machine's page cache since the start (Cached in
#                       /proc/meminfo: a tmpfs's pages, the mount's page
#                       cache, a file tier's slab, a plain directory's
#                       cache) plus the resident memory of the FUSE daemon
#                       PID when given; beside the bytes stored below DIR
#                       (du).  Run nothing else meanwhile: other files'
#                       cache counts too
#   mem_sample_stop     stop the sampler; sets mem_held and mem_stored
#                       (MiB, the peak of each over the samples; empty
#                       without samples)
#
# fio
#   fio_json_sums FILE  print "BW_BYTES IOPS ERROR" of fio's JSON output
#                       in FILE (notes before the JSON are skipped),
#                       bandwidth and IOPS summed over all jobs and both
#                       directions, ERROR the first non-zero job error;
#                       needs python3

die()
{
	echo "$prog: $*" >&2
	exit 1
}

warn()
{
	echo "$prog: warning: $*" >&2
}

to_bytes()
{
	local s=$1 n mult
	[[ $s =~ ^([0-9]+)([KkMmGgTt]?)(i?[Bb])?$ ]] ||
		die "cannot parse size '$s'"
	n=${BASH_REMATCH[1]}
	case ${BASH_REMATCH[2]^^} in
	"") mult=1 ;;
	K) mult=$((1 << 10)) ;;
	M) mult=$((1 << 20)) ;;
	G) mult=$((1 << 30)) ;;
	T) mult=$((1 << 40)) ;;
	esac
	echo $((10#$n * mult))
}

need_writable_dir()
{
	[[ -d $1 && -w $1 ]] || die "${2:+$2 }'$1' is not a writable directory"
}

need_fuse()
{
	command -v fusermount3 >/dev/null || die "fusermount3 not found"
	[[ -c /dev/fuse ]] || die "/dev/fuse missing"
}

parse_targets()
{
	local t all=$2
	IFS=, read -r -a target_list <<<"$1"
	((${#target_list[@]})) || die "--targets is empty"
	declare -gA seen=()
	for t in "${target_list[@]}"; do
		[[ ,$all, == *,$t,* ]] || die "unknown target '$t' (one of $all)"
		[[ -z ${seen[$t]:-} ]] || die "target '$t' given twice"
		seen[$t]=1
	done
}

loadavg()
{
	cut -d' ' -f1-3 /proc/loadavg
}

host_stamp()
{
	echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -sr), $(nproc) CPUs"
}

warn_if_busy()
{
	awk '$1 > 0.5 { exit 1 }' /proc/loadavg ||
		warn "load average $(loadavg): the machine is not idle, numbers will be noisy"
}

make_work()
{
	local w
	w=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") && chmod 0700 "$w" &&
		echo "$w"
}

set_traps()
{
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

make_out_dir()
{
	if [[ -n $out_dir ]]; then
		mkdir -p "$out_dir"
		out_dir=$(realpath "$out_dir")
	fi
}

make_json_dir()
{
	make_out_dir
	if [[ -n $out_dir ]]; then
		json_dir=$out_dir
	else
		json_dir=$work/json
		mkdir "$json_dir"
	fi
}

mem_sample_start()
{
	local base
	mem_sampler= mem_held= mem_stored=
	base=$(awk '$1 == "Cached:" { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)
	mem_samples=$(mktemp "${TMPDIR:-/tmp}/mem-samples.XXXXXX")
	(
		local rss cached stored
		# files come and go under du: no sample may end it
		set +e +o pipefail
		trap - INT TERM
		while :; do
			rss=0
			if [[ -n ${2:-} ]]; then
				rss=$(awk '$1 == "VmRSS:" { printf "%.0f\n", $2 * 1024 }' \
					"/proc/$2/status" 2>/dev/null) || rss=0
			fi
			cached=$(awk '$1 == "Cached:" { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)
			stored=$(du -s -B1 -x "$1" 2>/dev/null | awk '{ print $1 }')
			echo "$((${rss:-0} + cached - base)) ${stored:-0}"
			sleep 0.5
		done
	) >"$mem_samples" &
	mem_sampler=$!
}

mem_sample_stop()
{
	[[ -n ${mem_sampler:-} ]] || return 0
	# its status is the signal's: not an error of the script
	stop_child "$mem_sampler" || true
	mem_sampler=
	read -r mem_held mem_stored < <(awk '
		$1 > h { h = $1 } $2 > s { s = $2 }
		END { if (NR) printf "%.0f %.0f\n", h / 1048576, s / 1048576 }' \
		"$mem_samples")
	rm -f "$mem_samples"
}

stop_child()
{
	if [[ -n $1 ]]; then
		kill "$1" 2>/dev/null
		wait "$1" 2>/dev/null
	fi
}

fuse_umount()
{
	local i rc=0 name=${fuse_name:-tierfs}
	if [[ -n $fuse_mnt ]] && mountpoint -q "$fuse_mnt"; then
		fusermount3 -u "$fuse_mnt" 2>/dev/null ||
			umount "$fuse_mnt" 2>/dev/null ||
			fusermount3 -uz "$fuse_mnt" ||
			warn "could not unmount $fuse_mnt"
	fi
	if [[ -n $fuse_pid ]]; then
		# tierfs frees its tiers (and removes its file tier
		# directory) before exiting
		for ((i = 0; i < 300; i++)); do
			kill -0 "$fuse_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$fuse_pid" 2>/dev/null; then
			warn "$name (pid $fuse_pid) did not exit 30 s after unmount; killing it"
			kill "$fuse_pid" 2>/dev/null || true
		fi
		wait "$fuse_pid" 2>/dev/null || rc=$?
		((rc == 0)) || warn "$name (pid $fuse_pid) exited with status $rc"
	fi
	((${rmdir_mnt:-0})) && [[ -n $fuse_mnt ]] && rmdir "$fuse_mnt" 2>/dev/null
	fuse_mnt=
	fuse_pid=
	fuse_name=
}

tmpfs_umount()
{
	if [[ -n $tmpfs_mnt ]] && mountpoint -q "$tmpfs_mnt"; then
		umount "$tmpfs_mnt" || umount -l "$tmpfs_mnt" ||
			warn "could not unmount $tmpfs_mnt"
	fi
	((${rmdir_mnt:-0})) && [[ -n $tmpfs_mnt ]] && rmdir "$tmpfs_mnt" 2>/dev/null
	tmpfs_mnt=
}

rm_tracked_dirs()
{
	local d
	for d in "${rm_dirs[@]}"; do
		[[ -n $d ]] && rm -rf "$d"
	done
	rm_dirs=()
}

rm_work()
{
	# rm -rf only if nothing is mounted below $work any more
	if ! findmnt -rn -o TARGET | grep -q "^$work/"; then
		rm -rf "$work"
		return 0
	fi
	return 1
}

fio_json_sums()
{
	python3 - "$1" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
# fio may print notes before the JSON object; skip to its start
d = json.loads(text[text.index("{"):])
bw = iops = 0.0
err = 0
for j in d.get("jobs", []):
    err = err or j.get("error", 0)
    for k in ("read", "write"):
        bw += j[k]["bw_bytes"]
        iops += j[k]["iops"]
print(f"{bw:.0f} {iops:.1f} {err}")
EOF
}
