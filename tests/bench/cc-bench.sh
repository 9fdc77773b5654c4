#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# cc-bench.sh -- a coupled-cluster-shaped scratch file on tierfs: a file
# larger than the RAM tier whose hot region is re-read in passes while
# the rest is written once and read once.  Times every pass of the hot
# region with migration on, with --no-migrate, on a file tier alone, on
# tmpfs and (optionally) on a plain directory, and prints one table.
# Not part of `meson test`; see tests/bench/README.md.
#
# Needs: bash, a C compiler (cc), util-linux (mountpoint, findmnt),
# fusermount3, getfattr (attr); root for the tmpfs config.

set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"
srcdir=$(cd "$(dirname "$0")" && pwd)

ALL_CONFIGS="migrate,migrate-bw0,no-migrate,file-only,tmpfs,plain"
DEFAULT_CONFIGS="migrate,migrate-bw0,no-migrate,file-only,tmpfs"

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

Writes a scratch file of --size on each configuration, then reads its
hot region --passes times (O_DIRECT 1 MiB reads, a --sleep pause before
each pass so that every read counts as a new pass for tierfs's heat) and
the rest of the file once, and prints the time of every pass, the hot
region's layout before and after, and a summary table.

TIERFS_BIN, else --bin, else \$TIERFS_BIN, else ./build/fs/tierfs.

Options:
  --bin PATH             the tierfs daemon
  --ram SIZE             RAM tier size (default 512M)
  --file-tier-size SIZE  file tier size (default 4G)
  --size SIZE            scratch file size (default 1536M, three times
                         the RAM tier)
  --hot SIZE|PCT%        hot region size (default 25%)
  --hot-at start|end     where the hot region is (default start: written
                         first, so the rest of the file pushes it out of
                         RAM while it is written)
  --passes N             passes over the hot region (default 10)
  --sleep SEC            pause before every pass (default 0.5; tierfs
                         counts accesses at least 0.3 s apart as a new
                         pass)
  --settle SEC           pause after the write, before the first pass
                         (default 1)
  --cold-read MODE       interleaved (default): after every hot pass read
                         the next 1/N of the rest once; after: read all of
                         the rest once after the last pass; none
  --configs LIST         comma-separated subset of
                         $ALL_CONFIGS
                         (default $DEFAULT_CONFIGS)
                           migrate      RAM + file tier, default migration
                           migrate-bw0  the same with --migrate-bw 0
                           no-migrate   the same with --no-migrate
                           file-only    the file tier alone
                           tmpfs        a tmpfs (needs root)
                           plain        the file tier's directory itself
  --tier-dir DIR         directory of the file tier and of the plain
                         config (default \${TMPDIR:-/var/tmp})
  --extra-args "ARGS"    more tierfs arguments for every tierfs config
                         (e.g. "--promote-passes 2")
  --read-mode MODE       direct (default): O_DIRECT reads; fadvise:
                         posix_fadvise(DONTNEED) on the region, then
                         buffered reads.  A target refusing O_DIRECT
                         falls back to fadvise, and the output says so.
  --write-mode MODE      direct (default) or buffered (then fsync)
  --drop-caches          echo 1 > /proc/sys/vm/drop_caches before every
                         timed read (root): keeps the file tier's slab
                         and the plain directory out of the page cache,
                         as for a file tier much larger than RAM.
                         System-wide: it also drops other users' caches.
  --repeat N             run every config N times; the table shows
                         medians (default 1)
  --verify               after the passes, read the whole file back and
                         check every byte (not timed)
  --out-dir DIR          keep passes.tsv, summary.tsv and tierfs logs
  --cc CC                C compiler for ccscratch (default cc)
  -h, --help             this text
EOF
}

mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }

ram=512M
ft_size=4G
size=1536M
hot=25%
hot_at=start
passes=10
pause=0.5
settle=1
cold_read=interleaved
configs=$DEFAULT_CONFIGS
tier_dir=${TMPDIR:-/var/tmp}
extra_args=
read_mode=direct
write_mode=direct
drop_caches=0
repeat=1
verify=0
out_dir=
cc=${CC:-cc}
bin=${TIERFS_BIN:-./build/fs/tierfs}

while (($#)); do
	case $1 in
	--bin) bin=${2:?}; shift ;;
	--ram) ram=${2:?}; shift ;;
	--file-tier-size) ft_size=${2:?}; shift ;;
	--size) size=${2:?}; shift ;;
	--hot) hot=${2:?}; shift ;;
	--hot-at) hot_at=${2:?}; shift ;;
	--passes) passes=${2:?}; shift ;;
	--sleep) pause=${2:?}; shift ;;
	--settle) settle=${2:?}; shift ;;
	--cold-read) cold_read=${2:?}; shift ;;
	--configs) configs=${2:?}; shift ;;
	--tier-dir) tier_dir=${2:?}; shift ;;
	--extra-args) extra_args=${2:?}; shift ;;
	--read-mode) read_mode=${2:?}; shift ;;
	--write-mode) write_mode=${2:?}; shift ;;
	--drop-caches) drop_caches=1 ;;
	--repeat) repeat=${2:?}; shift ;;
	--verify) verify=1 ;;
	--out-dir) out_dir=${2:?}; shift ;;
	--cc) cc=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done

MiB=$((1 << 20))
ram_bytes=$(to_bytes "$ram")
ft_bytes=$(to_bytes "$ft_size")
size_bytes=$(to_bytes "$size")
((size_bytes >= 4 * MiB && size_bytes % MiB == 0)) ||
	die "--size must be a multiple of 1M and at least 4M"
if [[ $hot =~ ^([0-9]+)%$ ]]; then
	pct=${BASH_REMATCH[1]}
	((pct > 0 && pct < 100)) || die "--hot percentage must be 1..99"
	hot_bytes=$((size_bytes * pct / 100 / MiB * MiB))
else
	hot_bytes=$(to_bytes "$hot")
fi
((hot_bytes >= MiB && hot_bytes % MiB == 0 && hot_bytes < size_bytes)) ||
	die "--hot must be a multiple of 1M, at least 1M and less than --size"
case $hot_at in
start) hot_off=0; cold_off=$hot_bytes ;;
end) hot_off=$((size_bytes - hot_bytes)); cold_off=0 ;;
*) die "--hot-at takes start or end" ;;
esac
cold_bytes=$((size_bytes - hot_bytes))
[[ $passes =~ ^[1-9][0-9]*$ ]] || die "bad --passes '$passes'"
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "bad --repeat '$repeat'"
[[ $pause =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "bad --sleep '$pause'"
[[ $settle =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "bad --settle '$settle'"
if awk -v s="$pause" 'BEGIN { exit !(s < 0.4) }'; then
	warn "--sleep $pause is under 0.4 s: tierfs may count" \
		"two passes as one (accesses under 0.3 s apart are one pass)"
fi
case $cold_read in interleaved | after | none) ;; *)
	die "--cold-read takes interleaved, after or none" ;;
esac
case $read_mode in direct | fadvise) ;; *)
	die "--read-mode takes direct or fadvise" ;;
esac
case $write_mode in direct | buffered) ;; *)
	die "--write-mode takes direct or buffered" ;;
esac
IFS=, read -r -a config_list <<<"$configs"
((${#config_list[@]})) || die "no configs"
need_tierfs=0
for c in "${config_list[@]}"; do
	[[ ,$ALL_CONFIGS, == *,$c,* ]] || die "unknown config '$c'"
	[[ $c != tmpfs && $c != plain ]] && need_tierfs=1
	if [[ $c == tmpfs ]] && ((EUID != 0)); then
		die "the tmpfs config needs root (mount -t tmpfs)"
	fi
done
((ram_bytes + ft_bytes >= size_bytes)) ||
	die "--ram plus --file-tier-size must hold --size"
((ft_bytes >= size_bytes)) ||
	die "--file-tier-size must hold --size (for the file-only config)"
if ((drop_caches)) && [[ ! -w /proc/sys/vm/drop_caches ]]; then
	die "--drop-caches needs root"
fi
need_writable_dir "$tier_dir"
tier_dir=$(realpath "$tier_dir")
if ((need_tierfs)); then
	[[ -x $bin ]] || die "tierfs binary '$bin' not found (build it: meson setup build-bench && ninja -C build-bench; then --bin build-bench/fs/tierfs)"
	command -v fusermount3 >/dev/null || die "fusermount3 not found"
	command -v getfattr >/dev/null || die "getfattr not found (Debian: attr)"
	[[ -c /dev/fuse ]] || die "/dev/fuse missing"
	bin=$(realpath "$bin")
fi
command -v "$cc" >/dev/null || die "C compiler '$cc' not found (--cc)"

# ---------------------------------------------------------------------
# setup and guaranteed teardown

work=$(make_work cc-bench)
tierfs_mnt=
tierfs_pid=
tmpfs_mnt=
plain_sub=
child_pid=
cur_log=

unmount_tierfs()
{
	local i
	if [[ -n $tierfs_mnt ]] && mountpoint -q "$tierfs_mnt"; then
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
		wait "$tierfs_pid" 2>/dev/null || true
		tierfs_pid=
	fi
	tierfs_mnt=
}

unmount_tmpfs()
{
	if [[ -n $tmpfs_mnt ]] && mountpoint -q "$tmpfs_mnt"; then
		umount "$tmpfs_mnt" || umount -l "$tmpfs_mnt"
	fi
	tmpfs_mnt=
}

cleanup()
{
	local rc=$?
	trap - EXIT INT TERM
	set +e
	stop_child "$child_pid"
	unmount_tierfs
	unmount_tmpfs
	[[ -n $plain_sub ]] && rm -rf "$plain_sub"
	if [[ -n $cur_log && -f $cur_log ]]; then
		if ((rc)) && [[ -s $cur_log ]]; then
			echo "$prog: last lines of the tierfs log:" >&2
			tail -n 20 "$cur_log" | sed 's/^/  tierfs: /' >&2
		fi
		[[ -n $out_dir ]] && cp "$cur_log" "$out_dir/"
	fi
	# only unmounted directories are left; refuse to recurse otherwise
	rm_work
	exit "$rc"
}
set_traps
make_out_dir
res_dir=${out_dir:-$work}
passes_tsv=$res_dir/passes.tsv
summary_tsv=$res_dir/summary.tsv
printf 'config\trep\tpass\tseconds\tMiB/s\thot_layout\n' >"$passes_tsv"
printf 'config\trep\tread\twrite_MiB/s\tfirst_s\tlast_s\tmed3_s\thot_ram_before_MiB\thot_ram_after_MiB\tall_ram_pass\tpromotions\tdemotions\twrite_demotions\tmig_failures\tverify\n' >"$summary_tsv"

ccs=$work/ccscratch
"$cc" -O2 -std=gnu17 -Wall -o "$ccs" "$srcdir/ccscratch.c" ||
	die "cannot build ccscratch"

# run_bg CMD...: run CMD in the background and wait, so that a signal's
# trap runs at once; stdout goes to $work/out.
run_bg()
{
	local rc=0
	"$@" >"$work/out" &
	child_pid=$!
	wait "$child_pid" || rc=$?
	child_pid=
	return $rc
}

# mount_tierfs LOGNAME ARGS...: mount tierfs at $work/tierfs
mount_tierfs()
{
	local log=$work/$1 i
	shift
	tierfs_mnt=$work/tierfs
	mkdir -p "$tierfs_mnt"
	echo "#   $bin -f $* $tierfs_mnt"
	cur_log=$log
	"$bin" -f "$@" "$tierfs_mnt" >"$log" 2>&1 &
	tierfs_pid=$!
	for ((i = 0; i < 200; i++)); do
		mountpoint -q "$tierfs_mnt" && return 0
		if ! kill -0 "$tierfs_pid" 2>/dev/null; then
			wait "$tierfs_pid" || true
			tierfs_pid=
			die "tierfs exited before mounting (its log follows)"
		fi
		sleep 0.1
	done
	die "tierfs did not mount within 20 s"
}

# stats_sum FIELD: FIELD summed over the tiers of the mounted tierfs
stats_sum()
{
	getfattr --absolute-names -n user.tierfs.stats --only-values \
		"$tierfs_mnt" 2>/dev/null | awk -v f="$1" '
		$1 == "tier" || $1 == "migrator" {
			for (i = 2; i <= NF; i++)
				if (split($i, kv, "=") == 2 && kv[1] == f)
					s += kv[2]
		}
		END { print s + 0 }'
}

# layout FILE OFF LEN: "ram=B disk=B hole=B" or "n/a"
layout() { "$ccs" layout "$@" 2>/dev/null || echo "n/a"; }

# pretty LAYOUT: bytes to MiB: "ram=384M disk=0M"
pretty()
{
	[[ $1 == n/a ]] && { echo "n/a"; return; }
	awk '{ for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "hole" && kv[2] == 0)
			continue
		printf "%s%s=%.0fM", (i > 1 ? " " : ""), kv[1], kv[2] / 1048576 }
		print "" }' <<<"$1"
}

# ram_bytes_of LAYOUT: bytes on the tier called "ram", or "-"
ram_bytes_of()
{
	awk '{ for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "ram") { print kv[2]; exit }
	} print "-" }' <<<"$1"
}

# ram_mib LAYOUT: MiB on the tier called "ram", or "-"
ram_mib()
{
	awk '{ for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "ram") { printf "%.0f\n", kv[2] / 1048576; exit }
	} print "-" }' <<<"$1"
}

maybe_drop()
{
	if ((drop_caches)); then
		sync
		echo 1 >/proc/sys/vm/drop_caches
	fi
}

# read_region FILE OFF LEN: timed read; prints seconds
read_region()
{
	maybe_drop
	run_bg "$ccs" read "$1" "$2" "$3" -m "$rmode" ||
		die "read of $1 [$2, +$3) failed"
	awk '{ print $1 }' "$work/out"
}

median()
{
	sort -g | awk '{ v[n++] = $1 } END {
		if (n == 0) { print "-"; exit }
		if (n % 2) print v[int(n / 2)]
		else printf "%.6g\n", (v[n / 2 - 1] + v[n / 2]) / 2 }'
}

# run_config CONFIG REP
run_config()
{
	local cfg=$1 rep=$2 dir file
	local -a targs xargs_
	local t wsec wmibs before after p sec lay chunk coff clen
	local first='' last='' hb ha promo=- demo=- fails=- vres=- wdemo=- allram=-
	local -a times=()

	read -r -a xargs_ <<<"$extra_args"
	echo
	echo "## $cfg (run $rep/$repeat), load $(loadavg)"
	case $cfg in
	migrate | migrate-bw0 | no-migrate)
		targs=(--tier "ram=ram:$ram_bytes" --tier "disk=file:$tier_dir:$ft_bytes")
		[[ $cfg == migrate-bw0 ]] && targs+=(--migrate-bw 0)
		[[ $cfg == no-migrate ]] && targs+=(--no-migrate)
		mount_tierfs "tierfs-$cfg-$rep.log" "${targs[@]}" "${xargs_[@]}"
		dir=$tierfs_mnt
		;;
	file-only)
		mount_tierfs "tierfs-$cfg-$rep.log" \
			--tier "disk=file:$tier_dir:$ft_bytes" "${xargs_[@]}"
		dir=$tierfs_mnt
		;;
	tmpfs)
		tmpfs_mnt=$work/tmpfs
		mkdir -p "$tmpfs_mnt"
		mount -t tmpfs -o "size=$((size_bytes + 64 * MiB)),mode=0700" \
			tmpfs "$tmpfs_mnt"
		echo "#   tmpfs size=$((size_bytes + 64 * MiB))"
		dir=$tmpfs_mnt
		;;
	plain)
		plain_sub=$(mktemp -d "$tier_dir/cc-bench.XXXXXX")
		echo "#   plain directory $plain_sub ($(findmnt -no FSTYPE,SOURCE -T "$plain_sub"))"
		dir=$plain_sub
		;;
	esac
	file=$dir/scratch.dat

	rmode=$read_mode
	wmode=$write_mode
	if ! "$ccs" probe "$dir"; then
		[[ $rmode == direct ]] && rmode=fadvise
		[[ $wmode == direct ]] && wmode=buffered
		echo "#   $cfg refuses O_DIRECT: buffered I/O, posix_fadvise(DONTNEED) before every read"
	fi

	# 1. write the whole file once
	run_bg "$ccs" write "$file" 0 "$size_bytes" -m "$wmode" ||
		die "writing $file failed"
	read -r wsec _ <"$work/out"
	wmibs=$(awk -v s="$wsec" -v b="$size_bytes" 'BEGIN { printf "%.1f", b / 1048576 / s }')
	echo "#   write $(mib "$size_bytes") MiB ($wmode): ${wsec} s, $wmibs MiB/s"
	sleep "$settle"

	before=$(layout "$file" "$hot_off" "$hot_bytes")
	echo "#   hot region [$(mib "$hot_off"), $(mib $((hot_off + hot_bytes)))) MiB before passes: $(pretty "$before")"
	if [[ -n $tierfs_mnt ]]; then
		wdemo=$(stats_sum demotions)
		echo "#   tierfs during the write (+${settle} s): demotions $wdemo, promotions $(stats_sum promotions)"
	fi
	[[ $(ram_bytes_of "$before") == "$hot_bytes" ]] && allram=0
	echo "#   whole file after write: $(pretty "$(layout "$file" 0 "$size_bytes")")"
	echo "#   reads: $( [[ $rmode == direct ]] && echo "O_DIRECT" || echo "buffered after posix_fadvise(DONTNEED)"), 1 MiB; pause ${pause} s before each pass"

	# 2. the passes
	chunk=$((cold_bytes / passes / MiB * MiB))
	for ((p = 1; p <= passes; p++)); do
		sleep "$pause"
		sec=$(read_region "$file" "$hot_off" "$hot_bytes")
		times+=("$sec")
		lay=$(layout "$file" "$hot_off" "$hot_bytes")
		if [[ $allram == - && $(ram_bytes_of "$lay") == "$hot_bytes" ]]; then
			allram=$p
		fi
		printf '    pass %2d: %8.3f s %8.1f MiB/s   hot: %s\n' "$p" "$sec" \
			"$(awk -v s="$sec" -v b="$hot_bytes" 'BEGIN { printf "%.1f", b / 1048576 / s }')" \
			"$(pretty "$lay")"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$rep" "$p" "$sec" \
			"$(awk -v s="$sec" -v b="$hot_bytes" 'BEGIN { printf "%.1f", b / 1048576 / s }')" \
			"$lay" >>"$passes_tsv"
		if [[ $cold_read == interleaved ]]; then
			if ((chunk == 0)); then
				((p == 1)) && coff=$cold_off clen=$cold_bytes || clen=0
			else
				coff=$((cold_off + (p - 1) * chunk))
				clen=$chunk
				((p == passes)) && clen=$((cold_off + cold_bytes - coff))
			fi
			if ((clen > 0)); then
				read_region "$file" "$coff" "$clen" >/dev/null
			fi
		fi
	done
	if [[ $cold_read == after ]]; then
		read_region "$file" "$cold_off" "$cold_bytes" >/dev/null
	fi
	sleep "$pause"
	after=$(layout "$file" "$hot_off" "$hot_bytes")
	echo "#   hot region after passes: $(pretty "$after")"
	echo "#   whole file after passes: $(pretty "$(layout "$file" 0 "$size_bytes")")"
	if [[ -n $tierfs_mnt ]]; then
		promo=$(stats_sum promotions)
		demo=$(stats_sum demotions)
		fails=$(stats_sum failures)
		echo "#   tierfs: promotions $promo, demotions $demo, migrator moved $(stats_sum moved), retries $(stats_sum retries), failures $fails"
	fi
	if ((verify)); then
		if run_bg "$ccs" read "$file" 0 "$size_bytes" -m "$rmode" -v; then
			vres=ok
		else
			vres=FAIL
			echo "$prog: $cfg: verification FAILED" >&2
		fi
		echo "#   verify whole file: $vres"
	fi

	first=${times[0]}
	last=${times[$((passes - 1))]}
	t=$(printf '%s\n' "${times[@]: -3}" | median)
	hb=$(ram_mib "$before")
	ha=$(ram_mib "$after")
	[[ $hb == - ]] && allram=-
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$cfg" "$rep" "$rmode" "$wmibs" "$first" "$last" "$t" "$hb" "$ha" \
		"$allram" "$promo" "$demo" "$wdemo" "$fails" "$vres" >>"$summary_tsv"

	# teardown of this config
	rm -f "$file"
	if [[ -n $tierfs_mnt ]]; then
		unmount_tierfs
		if [[ -n $out_dir ]]; then
			cp "$cur_log" "$out_dir/"
		fi
		if grep -qiE 'error|warn|fail' "$cur_log"; then
			echo "#   tierfs log:"
			sed 's/^/#     /' "$cur_log" | head -20
		fi
		cur_log=
	fi
	unmount_tmpfs
	if [[ -n $plain_sub ]]; then
		rm -rf "$plain_sub"
		plain_sub=
	fi
	echo "#   load after: $(loadavg)"
}

echo "# $(host_stamp), load $(loadavg)"
echo "# file $(mib "$size_bytes") MiB, hot region $(mib "$hot_bytes") MiB at $hot_at, $passes passes, pause ${pause} s, cold reads $cold_read"
echo "# RAM tier $(mib "$ram_bytes") MiB, file tier $(mib "$ft_bytes") MiB in $tier_dir ($(findmnt -no FSTYPE,SOURCE -T "$tier_dir"))"
echo "# reads: $read_mode ($([[ $read_mode == direct ]] && echo "O_DIRECT, the page cache is bypassed" || echo "posix_fadvise(DONTNEED) then buffered")), writes: $write_mode$( ((drop_caches)) && echo ", page cache dropped before every timed read")"
[[ -n $extra_args ]] && echo "# extra tierfs arguments: $extra_args"

for ((rep = 1; rep <= repeat; rep++)); do
	for cfg in "${config_list[@]}"; do
		run_config "$cfg" "$rep"
	done
done

# ---------------------------------------------------------------------
# table: medians over the repetitions

# col CFG N: median of column N of summary.tsv for CFG (or the last
# non-numeric value)
col()
{
	awk -F'\t' -v c="$1" -v n="$2" 'NR > 1 && $1 == c { print $n }' \
		"$summary_tsv" | {
		mapfile -t v
		if ((${#v[@]} == 0)); then
			echo "-"
		elif [[ ${v[0]} =~ ^[0-9.]+$ ]]; then
			printf '%s\n' "${v[@]}" | median
		else
			echo "${v[-1]}"
		fi
	}
}

echo
echo "# hot region $(mib "$hot_bytes") MiB; times in seconds per pass; median of $repeat run(s); load now $(loadavg)"
{
	printf 'config\tread\twrite MiB/s\tfirst pass\tlast pass\tmedian last 3\tMiB/s (med3)\thot on ram before\tafter (MiB)\tall on ram after pass\tpromotions\tdemotions (in write)'
	((verify)) && printf '\tverify'
	printf '\n'
	for cfg in "${config_list[@]}"; do
		m3=$(col "$cfg" 7)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "$cfg" \
			"$(col "$cfg" 3)" "$(col "$cfg" 4)" \
			"$(awk -v v="$(col "$cfg" 5)" 'BEGIN { printf "%.3f", v }')" \
			"$(awk -v v="$(col "$cfg" 6)" 'BEGIN { printf "%.3f", v }')" \
			"$(awk -v v="$m3" 'BEGIN { printf "%.3f", v }')" \
			"$(awk -v s="$m3" -v b="$hot_bytes" 'BEGIN { printf "%.0f", b / 1048576 / s }')" \
			"$(col "$cfg" 8)" "$(col "$cfg" 9)" "$(col "$cfg" 10)" \
			"$(col "$cfg" 11)" \
			"$(col "$cfg" 12)$(w=$(col "$cfg" 13); [[ $w != - ]] && echo " ($w)")"
		((verify)) && printf '\t%s' "$(col "$cfg" 15)"
		printf '\n'
	done
} | column -t -s $'\t'
if [[ -n $out_dir ]]; then
	echo
	echo "# passes.tsv, summary.tsv and tierfs logs in $out_dir"
fi
