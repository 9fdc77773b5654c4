#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scale-bench.sh -- the numbers of issue 12 in one run, each next to tmpfs
# (and a plain directory where that means something), mounted in the
# same run: metadata operations, 10,000 small files, a 1 TiB sparse file,
# a million empty files (idle CPU, memory, create latency) and the speed
# of drain and migrate.  Prints one markdown table at the end.
# Not part of `meson test`; see tests/bench/README.md.
#
# Needs: root (tmpfs mounts, drop_caches), bash, cc, util-linux
# (mountpoint, findmnt), coreutils (df, du, dd, stat), fusermount3,
# tierfs and tierctl.

set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"
srcdir=$(cd "$(dirname "$0")" && pwd)

ALL_PARTS="meta,small,sparse,drain,inodes"

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

TIERFS_BIN, else --bin, else \$TIERFS_BIN, else ./build/fs/tierfs.
tierctl is taken from the same build (--tierctl to override).

Parts (--parts, comma-separated, in this order; default all):
  meta    create, stat (hot, and forced to the daemon after dropping the
          dentry and inode caches), rename, unlink, create+write 4K+
          close+unlink, each over META_N files in one directory; then
          lookups in a DIR_N-entry directory (random names hot, random
          names after dropping caches, missing names).  tierfs (RAM 1G +
          file 4G), tmpfs and a plain directory.
  small   SMALL_N files of 4 KiB on tierfs RAM 64M + file 2G, and on a
          tmpfs and a plain directory: files stored, df used, du, the
          file tier's disk use (its backing file's st_blocks)
  sparse  a 1 TiB sparse file, SPARSE_N writes of 4 KiB at random
          offsets (seed 42, O_DIRECT) on tierfs RAM 1G + file 16G
          (default extent size), tmpfs and a plain directory: writes
          that succeed, df, tier use, st_blocks, daemon memory
  drain   DRAIN_SIZE written to tierfs RAM 2G + file 4G
          (--migrate-bw 0), then tierctl drain of the RAM tier (until
          the RAM tier is empty, and until synced), tierctl migrate back
          to RAM (cold) and down again, in MB/s (10^6); once more
          drained at the default --migrate-bw, and the same bytes in
          4 KiB files drained at it, and a burst of twice a 256M RAM
          tier (seconds until it is under its high watermark); against
          dd O_DIRECT (and
          buffered, with and without sync) between a tmpfs file and the
          same directory
  inodes  MANY_N empty files in 10 directories on tierfs (migrator on,
          then --no-migrate) and tmpfs: create rate, slowest and p99
          create, the daemon's CPU over IDLE_SEC idle seconds, RSS per
          inode, RSS after deleting them all, unlink rate

Scale (--scale or \$SCALE):
  full    (default) META_N=100000 DIR_N=100000 SMALL_N=10000
          SPARSE_N=100000 MANY_N=1000000 IDLE_SEC=30 DRAIN_SIZE=1G;
          about 15 minutes on a 2-core VM
  small   META_N=10000 DIR_N=20000 SMALL_N=10000 SPARSE_N=10000
          MANY_N=100000 IDLE_SEC=10 DRAIN_SIZE=256M; 2-4 minutes
Each of META_N DIR_N SMALL_N SPARSE_N MANY_N IDLE_SEC DRAIN_SIZE can be
set in the environment to override the scale.

Options:
  --bin PATH        the tierfs daemon
  --tierctl PATH    tierctl (default: tools/tierctl next to fs/ of --bin)
  --scale S         small or full
  --parts LIST      a subset of $ALL_PARTS
  --file-dir DIR    where file tiers go (default /var/tmp)
  --plain-dir DIR   where the plain directory goes (default /var/tmp);
                    use the same filesystem as --file-dir
  --no-plain        leave the plain directory out
  --extra-tier-args "ARGS"
                    more tierfs arguments for every mount
  --out-dir DIR     keep results.tsv, table.md, daemon logs and
                    tierctl status output here
  --cc CC           C compiler for metabench.c (default \${CC:-cc})
  -h, --help        this text
EOF
}

bin=${TIERFS_BIN:-./build/fs/tierfs}
tierctl=
scale=${SCALE:-full}
parts=$ALL_PARTS
file_dir=/var/tmp
plain_dir=/var/tmp
use_plain=1
extra_tier_args=
out_dir=
cc=${CC:-cc}

while (($#)); do
	case $1 in
	--bin) bin=${2:?}; shift ;;
	--tierctl) tierctl=${2:?}; shift ;;
	--scale) scale=${2:?}; shift ;;
	--parts) parts=${2:?}; shift ;;
	--file-dir) file_dir=${2:?}; shift ;;
	--plain-dir) plain_dir=${2:?}; shift ;;
	--no-plain) use_plain=0 ;;
	--extra-tier-args) extra_tier_args=${2:?}; shift ;;
	--out-dir) out_dir=${2:?}; shift ;;
	--cc) cc=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done

case $scale in
full)
	: "${META_N:=100000}" "${DIR_N:=100000}" "${SMALL_N:=10000}"
	: "${SPARSE_N:=100000}" "${MANY_N:=1000000}" "${IDLE_SEC:=30}"
	: "${DRAIN_SIZE:=1G}"
	;;
small)
	: "${META_N:=10000}" "${DIR_N:=20000}" "${SMALL_N:=10000}"
	: "${SPARSE_N:=10000}" "${MANY_N:=100000}" "${IDLE_SEC:=10}"
	: "${DRAIN_SIZE:=256M}"
	;;
*) die "unknown scale '$scale' (small or full)" ;;
esac
for v in META_N DIR_N SMALL_N SPARSE_N MANY_N IDLE_SEC; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive whole number"
done
drain_bytes=$(to_bytes "$DRAIN_SIZE")
((drain_bytes >= 1 << 20 && drain_bytes <= 1 << 31)) ||
	die "DRAIN_SIZE must be between 1M and 2G (the RAM tier is 2G)"

parse_targets "$parts" "$ALL_PARTS"
((EUID == 0)) || die "needs root (tmpfs mounts, drop_caches)"
need_fuse
[[ -x $bin ]] || die "tierfs binary '$bin' not found (meson setup build-bench && ninja -C build-bench; then --bin build-bench/fs/tierfs)"
bin=$(realpath "$bin")
[[ -n $tierctl ]] || tierctl=$(dirname "$(dirname "$bin")")/tools/tierctl
[[ -x $tierctl ]] || die "tierctl '$tierctl' not found (--tierctl PATH)"
tierctl=$(realpath "$tierctl")
need_writable_dir "$file_dir" --file-dir
file_dir=$(realpath "$file_dir")
if ((use_plain)); then
	need_writable_dir "$plain_dir" --plain-dir
	plain_dir=$(realpath "$plain_dir")
fi
[[ -w /proc/sys/vm/drop_caches ]] || die "cannot write /proc/sys/vm/drop_caches"
command -v "$cc" >/dev/null || die "C compiler '$cc' not found (--cc)"
read -r -a xa <<<"$extra_tier_args"
clk_tck=$(getconf CLK_TCK)

# ---------------------------------------------------------------------
# setup and guaranteed teardown

work=$(make_work scale-bench)
fuse_mnt=
fuse_pid=
fuse_name=
tmpfs_mnt=
rm_dirs=()
child=
pd=
fd=

cleanup()
{
	local rc=$?
	trap - EXIT INT TERM
	set +e
	stop_child "$child"
	fuse_umount
	tmpfs_umount
	rm_tracked_dirs
	rm_work || warn "something is still mounted under $work; left in place"
	exit "$rc"
}
set_traps
make_out_dir

mb=$work/metabench
"$cc" -O2 -std=gnu17 -Wall -Wextra -o "$mb" "$srcdir/metabench.c" ||
	die "cannot build metabench"

# fuse_start NAME MNT ARGS...: tierfs -f ARGS MNT in the background
# (its pid in $fuse_pid), log in $work/NAME.log; wait until mounted
fuse_start()
{
	local name=$1 i
	fuse_mnt=$2
	shift 2
	fuse_name=tierfs
	mkdir -p "$fuse_mnt"
	echo "# $name: tierfs -f $* ${xa[*]} MNT"
	"$bin" -f "$@" "${xa[@]}" "$fuse_mnt" >"$work/$name.log" 2>&1 &
	fuse_pid=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$fuse_mnt" && break
		if ! kill -0 "$fuse_pid" 2>/dev/null; then
			wait "$fuse_pid" || true
			fuse_pid=
			sed "s/^/tierfs: /" "$work/$name.log" >&2
			die "tierfs exited before mounting ($name)"
		fi
		sleep 0.1
	done
	mountpoint -q "$fuse_mnt" || die "tierfs did not mount within 10 s ($name)"
	# the daemon stat()s the mount point just after mounting (README:
	# an unmount in that window fails with EBUSY); let it pass
	sleep 0.5
}

# fuse_stop NAME: unmount tierfs, keep its log in --out-dir
fuse_stop()
{
	fuse_umount
	[[ -n $out_dir ]] && cp "$work/$1.log" "$out_dir/" 2>/dev/null
	return 0
}

# tmpfs_start MNT SIZE: a fresh tmpfs
tmpfs_start()
{
	tmpfs_mnt=$1
	mkdir -p "$tmpfs_mnt"
	mount -t tmpfs -o "size=$2,nr_inodes=0,mode=0755" tmpfs "$tmpfs_mnt"
	echo "# tmpfs size=$2 on $tmpfs_mnt"
}

# new_dir VAR BASE NAME: a fresh directory under BASE in VAR, removed at
# exit (not in a command substitution: rm_dirs must be this shell's)
new_dir()
{
	local -n v=$1
	v=$(mktemp -d "$2/scale-bench-$3.XXXXXX")
	rm_dirs+=("$v")
}

drop_caches()
{
	sync
	echo "$1" >/proc/sys/vm/drop_caches
}

now() { date +%s.%N; }
# secs T0 T1: T1 - T0
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }

# mbench OP ARGS...: run metabench, echo its line as a "#" line, keep it
# in $mres
mbench()
{
	mres=$("$mb" "$@") || die "metabench $* failed"
	echo "#   $mres"
}

# key K: the value of K=... in $mres
key()
{
	local w
	for w in $mres; do
		[[ $w == "$1="* ]] && { echo "${w#*=}"; return; }
	done
	echo n/a
}

rss_bytes()
{
	awk '$1 == "VmRSS:" { printf "%.0f\n", $2 * 1024 }' "/proc/$fuse_pid/status"
}

cpu_ticks()
{
	# utime + stime of all threads: fields 14 and 15, counted after the
	# ")" that ends the command name
	sed 's/.*) //' "/proc/$fuse_pid/stat" | awk '{ print $12 + $13 }'
}

# tstat KEY: a value of tierctl stats (e.g. tier.ram.used)
tstat()
{
	"$tierctl" stats "$fuse_mnt" | awk -v k="$1" '$1 == k { print $2; f = 1 }
		END { if (!f) print "n/a" }'
}

# tier_used: bytes used on all tiers, by tierctl stats
tier_used()
{
	"$tierctl" stats "$fuse_mnt" |
		awk '$1 ~ /^tier\..*\.used$/ { s += $2 } END { printf "%.0f\n", s }'
}

# slab_disk DIR: bytes on disk (st_blocks) of the daemon's open files
# below DIR (the file tier's unlinked backing file), each file once (a
# file tier holds its slab open twice, once O_DIRECT)
slab_disk()
{
	local f l i s=0
	local -A ino=()
	for f in /proc/"$fuse_pid"/fd/*; do
		l=$(readlink "$f" 2>/dev/null) || continue
		[[ $l == "$1"/* && $l != */lock ]] || continue
		i=$(stat -L -c %i "$f") || continue
		[[ -z ${ino[$i]:-} ]] || continue
		ino[$i]=1
		s=$((s + $(stat -L -c '%b * %B' "$f")))
	done
	echo "$s"
}

df_used() { df -B1 --output=used "$1" | tail -n 1 | tr -d ' '; }
du_bytes() { du -sB1 "$@" | awk '{ print $1 }'; }

status_note()
{
	local f=$work/status-$1.txt
	"$tierctl" status "$fuse_mnt" >"$f" 2>&1 || true
	sed 's/^/#   /' "$f"
	[[ -n $out_dir ]] && cp "$f" "$out_dir/"
	return 0
}

# ---------------------------------------------------------------------
# the table: one row per number

results=$work/results.tsv
: >"$results"

# row SECTION WHAT TIERFS TMPFS PLAIN RATIO_MODE NOTE
# RATIO_MODE: ratio (tierfs/tmpfs) or none; values are raw numbers or
# text, empty for none.  Fields are kept separated by \x1f (a tab is
# whitespace to read, and empty fields would merge)
row()
{
	local IFS=$'\x1f'
	echo "$*" >>"$results"
}

fmt()
{
	awk -v x="$1" 'BEGIN {
		if (x !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ || x ~ /^-?[0-9]+$/) { print x; exit }
		a = x < 0 ? -x : x
		if (a >= 1e6) printf "%.2fM\n", x / 1e6
		else if (a >= 1e4) printf "%.1fk\n", x / 1e3
		else if (a >= 100) printf "%.0f\n", x
		else if (a >= 10) printf "%.1f\n", x
		else printf "%.2f\n", x }'
}

ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		n = "^-?[0-9.]+(e[-+]?[0-9]+)?$"
		if (a !~ n || b !~ n || b == 0) { print ""; exit }
		r = a / b
		if (r >= 100) printf "%.0fx\n", r
		else if (r >= 10) printf "%.1fx\n", r
		else printf "%.2fx\n", r }'
}

mib() { awk -v x="$1" 'BEGIN { if (x ~ /^[0-9.]+$/) printf "%.1f\n", x / 1048576; else print x }'; }
per() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f\n", a / b; else print "n/a" }'; }

echo "# $prog: $(host_stamp), load $(loadavg)"
echo "# scale $scale: META_N=$META_N DIR_N=$DIR_N SMALL_N=$SMALL_N SPARSE_N=$SPARSE_N MANY_N=$MANY_N IDLE_SEC=$IDLE_SEC DRAIN_SIZE=$DRAIN_SIZE"
echo "# tierfs $bin${extra_tier_args:+ (extra args: $extra_tier_args)}"
echo "# file tiers in $file_dir ($(df --output=source,fstype "$file_dir" | tail -n 1 | tr -s ' '))$( ((use_plain)) && echo "; plain dir in $plain_dir")"
warn_if_busy

# ---------------------------------------------------------------------
# meta

declare -A M=()

# meta_run TARGET DIR: the metadata loops in DIR; results in M[TARGET.op]
meta_run()
{
	local t=$1 d=$2 big
	mkdir "$d/meta"
	echo "# meta on $t"
	mbench create "$d/meta" "$META_N"
	M[$t.create]=$(key rate)
	mbench stat "$d/meta" "$META_N" # one pass: everything is known
	mbench stat -t 2 "$d/meta" "$META_N"
	M[$t.stat_hot]=$(key rate)
	mbench stat -t 2 "$d/meta" 1
	M[$t.stat_one]=$(key rate)
	drop_caches 2
	mbench stat "$d/meta" "$META_N"
	M[$t.stat_cold]=$(key rate)
	mbench rename "$d/meta" "$META_N"
	M[$t.rename]=$(key rate)
	mbench unlink -p rf "$d/meta" "$META_N"
	M[$t.unlink]=$(key rate)
	mbench cwu -p t -b 4096 "$d/meta" "$META_N"
	M[$t.cwu]=$(key rate)
	big=$d/big
	mkdir "$big"
	mbench create "$big" "$DIR_N"
	M[$t.bigcreate]=$(key rate)
	mbench statrand -t 2 "$big" "$DIR_N"
	M[$t.look_hot]=$(key rate)
	drop_caches 2
	mbench statrand "$big" "$DIR_N"
	M[$t.look_cold]=$(key rate)
	mbench statmiss -t 2 "$big" "$DIR_N"
	M[$t.look_miss]=$(key rate)
}

if [[ -n ${seen[meta]:-} ]]; then
	echo "## meta: $META_N files in one directory; lookups in a $DIR_N-entry directory"
	tmpfs_start "$work/tmpfs" 4G
	meta_run tmpfs "$tmpfs_mnt"
	tmpfs_umount
	if ((use_plain)); then
		new_dir pd "$plain_dir" plain
		meta_run plain "$pd"
		rm -rf "$pd"
	fi
	new_dir fd "$file_dir" tier
	fuse_start meta "$work/mnt" --tier ram=ram:1G --tier "disk=file:$fd:4G"
	meta_run tierfs "$fuse_mnt"
	status_note meta
	fuse_stop meta
	for op in create stat_one stat_hot stat_cold rename unlink cwu bigcreate look_hot look_cold look_miss; do
		case $op in
		create) w="create (open O_CREAT\|O_EXCL + close), ops/s" ;;
		stat_one) w="stat of one known file, looped 2 s, ops/s" ;;
		stat_hot) w="stat of the $META_N known names, looped 2 s, ops/s" ;;
		stat_cold) w="stat forced to the daemon (after drop_caches 2), ops/s" ;;
		rename) w="rename, ops/s" ;;
		unlink) w="unlink, ops/s" ;;
		cwu) w="create + write 4K + close + unlink, ops/s" ;;
		bigcreate) w="create into one directory up to $DIR_N entries, ops/s" ;;
		look_hot) w="lookup of random names in a $DIR_N-entry dir (2 s), /s" ;;
		look_cold) w="the same after drop_caches 2 (each name once), /s" ;;
		look_miss) w="lookup of missing names there (ENOENT, 2 s), /s" ;;
		esac
		note=
		[[ $op == stat_cold || $op == look_cold ]] && note="drop_caches does not drop tmpfs dentries"
		row meta "$w" "${M[tierfs.$op]}" "${M[tmpfs.$op]}" "${M[plain.$op]:-}" ratio "$note"
	done
	rm_tracked_dirs
fi

# ---------------------------------------------------------------------
# small

if [[ -n ${seen[small]:-} ]]; then
	echo "## small: $SMALL_N files of 4 KiB"
	declare -A S=()
	tmpfs_start "$work/tmpfs" $((64 + 2048))M
	mkdir "$tmpfs_mnt/small"
	mbench fill -b 4096 "$tmpfs_mnt/small" "$SMALL_N"
	S[tmpfs.ok]=$(key ok)
	S[tmpfs.df]=$(df_used "$tmpfs_mnt")
	S[tmpfs.du]=$(du_bytes "$tmpfs_mnt/small")
	echo "#   tmpfs: df used ${S[tmpfs.df]}, du ${S[tmpfs.du]}"
	tmpfs_umount
	if ((use_plain)); then
		new_dir pd "$plain_dir" plain
		mbench fill -b 4096 "$pd" "$SMALL_N"
		S[plain.ok]=$(key ok)
		sync
		S[plain.du]=$(du_bytes "$pd")
		echo "#   plain: du ${S[plain.du]}"
		rm -rf "$pd"
	fi
	new_dir fd "$file_dir" tier
	fuse_start small "$work/mnt" --tier ram=ram:64M --tier "disk=file:$fd:2G"
	mkdir "$fuse_mnt/small"
	mbench fill -b 4096 "$fuse_mnt/small" "$SMALL_N"
	S[tierfs.ok]=$(key ok)
	sync
	S[tierfs.df]=$(df_used "$fuse_mnt")
	S[tierfs.du]=$(du_bytes "$fuse_mnt/small")
	S[tierfs.tiers]=$(tier_used)
	S[tierfs.slab]=$(slab_disk "$fd")
	echo "#   tierfs: df used ${S[tierfs.df]}, du ${S[tierfs.du]}, tiers used ${S[tierfs.tiers]}, file tier on disk ${S[tierfs.slab]}"
	status_note small
	fuse_stop small
	rm_tracked_dirs
	row small "4 KiB files stored (of $SMALL_N)" "${S[tierfs.ok]}" "${S[tmpfs.ok]}" "${S[plain.ok]:-}" ratio ""
	row small "df used, MiB" "$(mib "${S[tierfs.df]}")" "$(mib "${S[tmpfs.df]}")" "" ratio "tierfs: RAM 64M + file 2G"
	row small "df used / data stored" \
		"$(awk -v u="${S[tierfs.df]}" -v n="${S[tierfs.ok]}" 'BEGIN { printf "%.2f\n", u / (n * 4096) }')" \
		"$(awk -v u="${S[tmpfs.df]}" -v n="${S[tmpfs.ok]}" 'BEGIN { printf "%.2f\n", u / (n * 4096) }')" "" ratio ""
	row small "du (st_blocks), MiB" "$(mib "${S[tierfs.du]}")" "$(mib "${S[tmpfs.du]}")" "$(mib "${S[plain.du]:-}")" ratio ""
	row small "tier space used (tierctl stats), MiB" "$(mib "${S[tierfs.tiers]}")" "" "" none ""
	row small "file tier's backing file on disk (st_blocks), MiB" "$(mib "${S[tierfs.slab]}")" "" "" none ""
fi

# ---------------------------------------------------------------------
# sparse

if [[ -n ${seen[sparse]:-} ]]; then
	echo "## sparse: a 1 TiB file, $SPARSE_N writes of 4 KiB at random offsets (seed 42, O_DIRECT)"
	declare -A P=()
	tmpfs_start "$work/tmpfs" 17G
	mbench sparse -z 1T -b 4096 -s 42 "$tmpfs_mnt/sparse" "$SPARSE_N"
	P[tmpfs.ok]=$(key ok)
	P[tmpfs.rate]=$(key rate)
	P[tmpfs.df]=$(df_used "$tmpfs_mnt")
	P[tmpfs.blocks]=$(($(stat -c '%b * %B' "$tmpfs_mnt/sparse")))
	tmpfs_umount
	if ((use_plain)); then
		new_dir pd "$plain_dir" plain
		mbench sparse -z 1T -b 4096 -s 42 "$pd/sparse" "$SPARSE_N"
		P[plain.ok]=$(key ok)
		P[plain.rate]=$(key rate)
		P[plain.blocks]=$(($(stat -c '%b * %B' "$pd/sparse")))
		rm -rf "$pd"
	fi
	new_dir fd "$file_dir" tier
	fuse_start sparse "$work/mnt" --tier ram=ram:1G --tier "disk=file:$fd:16G"
	rss0=$(rss_bytes)
	mbench sparse -z 1T -b 4096 -s 42 "$fuse_mnt/sparse" "$SPARSE_N"
	P[tierfs.ok]=$(key ok)
	P[tierfs.rate]=$(key rate)
	P[tierfs.first]=$(key first_fail)
	sync
	P[tierfs.df]=$(df_used "$fuse_mnt")
	P[tierfs.tiers]=$(tier_used)
	P[tierfs.blocks]=$(($(stat -c '%b * %B' "$fuse_mnt/sparse")))
	P[tierfs.slab]=$(slab_disk "$fd")
	P[tierfs.extents]=$(($(tstat tier.ram.extents) + $(tstat tier.disk.extents)))
	P[tierfs.ramused]=$(tstat tier.ram.used)
	rss1=$(rss_bytes)
	# daemon memory per stored extent: RSS growth less the RAM tier's
	# data, which is exactly the bytes it holds (the units written; the
	# rest of a RAM extent is never touched, so not resident).  Some
	# extents hold two or more of the random writes: count them all.
	P[tierfs.perext]=$(awk -v a="$rss0" -v b="$rss1" -v r="${P[tierfs.ramused]}" -v n="${P[tierfs.extents]}" \
		'BEGIN { if (n > 0) printf "%.0f\n", (b - a - r) / n; else print "n/a" }')
	echo "#   tierfs: first failed write #${P[tierfs.first]}, df used ${P[tierfs.df]}, tiers ${P[tierfs.tiers]}, st_blocks ${P[tierfs.blocks]}, file tier on disk ${P[tierfs.slab]}, extents ${P[tierfs.extents]}, RSS $rss0 -> $rss1"
	status_note sparse
	fuse_stop sparse
	rm_tracked_dirs
	row sparse "4 KiB writes that succeeded (of $SPARSE_N)" "${P[tierfs.ok]}" "${P[tmpfs.ok]}" "${P[plain.ok]:-}" ratio "tierfs: RAM 1G + file 16G"
	row sparse "writes/s (O_DIRECT)" "${P[tierfs.rate]}" "${P[tmpfs.rate]}" "${P[plain.rate]:-}" ratio ""
	row sparse "df used, MiB" "$(mib "${P[tierfs.df]}")" "$(mib "${P[tmpfs.df]}")" "" ratio ""
	row sparse "st_blocks of the file, MiB" "$(mib "${P[tierfs.blocks]}")" "$(mib "${P[tmpfs.blocks]}")" "$(mib "${P[plain.blocks]:-}")" ratio ""
	row sparse "st_blocks per successful write, KiB" \
		"$(per "${P[tierfs.blocks]}" $((${P[tierfs.ok]} * 1024)))" \
		"$(per "${P[tmpfs.blocks]}" $((${P[tmpfs.ok]} * 1024)))" \
		"$( ((use_plain)) && per "${P[plain.blocks]}" $((${P[plain.ok]} * 1024)))" ratio ""
	row sparse "tier space used (tierctl stats), MiB" "$(mib "${P[tierfs.tiers]}")" "" "" none "${P[tierfs.extents]} extents"
	row sparse "file tier's backing file on disk, MiB" "$(mib "${P[tierfs.slab]}")" "" "" none ""
	row sparse "daemon RSS per extent, B" "${P[tierfs.perext]}" "" "" none "RSS growth less the RAM tier's used bytes; page tables not counted"
fi

# ---------------------------------------------------------------------
# drain

mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f\n", b / t / 1e6 }'; }

# drain_ram: tierctl drain of the RAM tier of $fuse_mnt; sets t1 to when
# the RAM tier is empty.  tierctl polls every 200 ms: follow the RAM tier
# more closely here, and let tierctl finish on its own
drain_ram()
{
	"$tierctl" drain -q "$fuse_mnt" ram &
	child=$!
	while [[ $(tstat tier.ram.used) != 0 ]]; do
		kill -0 "$child" 2>/dev/null || break
		sleep 0.02
	done
	t1=$(now)
	wait "$child" || warn "tierctl drain failed"
	child=
}

# drain_run KEY ARGS...: mount tierfs RAM 2G + file 4G with ARGS, write
# the tmpfs file $src into it, drain the RAM tier; D[KEY.drain] is MB/s
# until the RAM tier is empty, D[KEY.sync] the same including a sync of
# the file tier's filesystem after it
drain_run()
{
	local k=$1 fd ru t0 t1 t2 t3
	shift
	new_dir fd "$file_dir" tier
	fuse_start "drain-$k" "$work/mnt" --tier ram=ram:2G --tier "disk=file:$fd:4G" "$@"
	dd if="$src" of="$fuse_mnt/data" bs=1M conv=fsync status=none
	ru=$(tstat tier.ram.used)
	echo "#   written: ram used $ru, disk used $(tstat tier.disk.used)"
	sync
	t0=$(now)
	drain_ram
	t2=$(now)
	sync -f "$fd"
	t3=$(now)
	D[$k.drain]=$(mbps "$ru" "$(secs "$t0" "$t1")")
	D[$k.sync]=$(mbps "$ru" "$(secs "$t0" "$t3")")
	echo "#   drain: $(secs "$t0" "$t1") s until RAM empty (${D[$k.drain]} MB/s), tierctl returned after $(secs "$t0" "$t2") s, synced after $(secs "$t0" "$t3") s; disk used $(tstat tier.disk.used)"
}

# small_drain_run: the same bytes as DRAIN_SIZE in 4 KiB files (one
# extent each), drained at the default --migrate-bw; D[small.sync] is
# the same including a sync of the file tier's filesystem; D[small.drain] is
# MB/s until the RAM tier is empty (issue 18: the limiter charges what an
# extent holds, and a small move must not cost more than its bytes)
small_drain_run()
{
	local fd ru t0 t1 t3 n=$((drain_bytes / 4096))
	new_dir fd "$file_dir" tier
	fuse_start "drain-small" "$work/mnt" --tier ram=ram:2G --tier "disk=file:$fd:4G"
	mkdir "$fuse_mnt/small" || die "mkdir on tierfs"
	python3 - "$fuse_mnt/small" "$n" <<'PY' || die "writing $n small files"
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
b = os.urandom(4096)
for i in range(n):
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        f.write(b)
PY
	sync
	ru=$(tstat tier.ram.used)
	echo "#   small files: $n of 4 KiB written; ram used $ru"
	t0=$(now)
	drain_ram
	sync -f "$fd"
	t3=$(now)
	D[small.drain]=$(mbps "$ru" "$(secs "$t0" "$t1")")
	D[small.sync]=$(mbps "$ru" "$(secs "$t0" "$t3")")
	echo "#   drain of the small files: $(secs "$t0" "$t1") s until RAM empty (${D[small.drain]} MB/s), synced after $(secs "$t0" "$t3") s; $(tstat migrator.throttled_bytes) bytes charged to the limiter"
}

# burst_run: a burst of twice the RAM tier (RAM 256M + file 4G, the
# default watermarks and --migrate-bw); D[burst] is the seconds from the
# burst's end until the RAM tier is back under its high watermark, and
# D[burst.bound] what issue 18 allows: burst / --migrate-bw + 10 s
burst_run()
{
	local fd t0 t1 high=$((256 * 1048576 * 90 / 100)) used
	new_dir fd "$file_dir" tier
	fuse_start "burst" "$work/mnt" --tier ram=ram:256M --tier "disk=file:$fd:4G"
	dd if=/dev/zero of="$fuse_mnt/burst" bs=1M count=512 conv=fsync status=none
	t0=$(now)
	echo "#   burst of 512M written: ram used $(tstat tier.ram.used)"
	while used=$(tstat tier.ram.used) && ((used > high)); do
		(($(secs "$t0" "$(now)" | cut -d. -f1) < 120)) || break
		sleep 0.05
	done
	t1=$(now)
	D[burst]=$(secs "$t0" "$t1")
	D[burst.bound]=$(awk 'BEGIN { printf "%.1f\n", 512 / 512 + 10 }')
	echo "#   RAM under its high watermark after ${D[burst]} s (ram used $used)"
}

if [[ -n ${seen[drain]:-} ]]; then
	echo "## drain: $DRAIN_SIZE from the RAM tier to a file tier"
	declare -A D=()
	tmpfs_start "$work/tmpfs" $((drain_bytes * 2 + (64 << 20)))
	src=$tmpfs_mnt/src
	dd if=/dev/urandom of="$src" bs=1M count=$((drain_bytes >> 20)) status=none
	# the references: dd between the tmpfs and the directory the file
	# tiers use
	new_dir pd "$file_dir" dd
	sync
	t0=$(now)
	dd if="$src" of="$pd/copy" bs=1M iflag=direct oflag=direct status=none
	t1=$(now)
	D[dd_direct]=$(mbps "$drain_bytes" "$(secs "$t0" "$t1")")
	t0=$(now)
	dd if="$pd/copy" of="$tmpfs_mnt/back" bs=1M iflag=direct oflag=direct status=none
	t1=$(now)
	D[dd_up]=$(mbps "$drain_bytes" "$(secs "$t0" "$t1")")
	rm -f "$pd/copy" "$tmpfs_mnt/back"
	sync
	t0=$(now)
	dd if="$src" of="$pd/copy" bs=1M status=none
	t1=$(now)
	sync -f "$pd/copy"
	t2=$(now)
	D[dd_buf]=$(mbps "$drain_bytes" "$(secs "$t0" "$t1")")
	D[dd_sync]=$(mbps "$drain_bytes" "$(secs "$t0" "$t2")")
	rm -f "$pd/copy"
	echo "#   dd tmpfs -> dir: O_DIRECT ${D[dd_direct]} MB/s, buffered ${D[dd_buf]} MB/s (${D[dd_sync]} with sync); dir -> tmpfs O_DIRECT ${D[dd_up]} MB/s"
	drain_run bw0 --migrate-bw 0
	"$tierctl" drain -q --undo "$fuse_mnt" ram >/dev/null
	# promotion from a cold file tier: drop the slab's page cache
	drop_caches 1
	t0=$(now)
	"$tierctl" migrate -q "$fuse_mnt/data" ram
	t1=$(now)
	D[up]=$(mbps "$(tstat tier.ram.used)" "$(secs "$t0" "$t1")")
	echo "#   migrate to ram: $(secs "$t0" "$t1") s; ram used $(tstat tier.ram.used)"
	t0=$(now)
	"$tierctl" migrate -q "$fuse_mnt/data" disk
	t1=$(now)
	D[down]=$(mbps "$(tstat tier.disk.used)" "$(secs "$t0" "$t1")")
	echo "#   migrate to disk: $(secs "$t0" "$t1") s; disk used $(tstat tier.disk.used)"
	status_note drain-bw0
	fuse_stop drain-bw0
	rm_tracked_dirs
	drain_run default
	status_note drain-default
	fuse_stop drain-default
	rm_tracked_dirs
	small_drain_run
	status_note drain-small
	fuse_stop drain-small
	rm_tracked_dirs
	burst_run
	status_note burst
	fuse_stop burst
	tmpfs_umount
	rm_tracked_dirs
	row drain "tierctl drain RAM -> file tier, --migrate-bw 0, MB/s" "${D[bw0.drain]}" "${D[dd_direct]}" "" ratio "tmpfs column: dd tmpfs -> dir, O_DIRECT, bs=1M"
	row drain "  the same until synced (sync -f), MB/s" "${D[bw0.sync]}" "${D[dd_sync]}" "" ratio "tmpfs column: dd buffered + sync -f"
	row drain "tierctl drain at the default --migrate-bw, MB/s" "${D[default.drain]}" "${D[dd_direct]}" "" ratio ""
	row drain "tierctl migrate RAM -> file tier, --migrate-bw 0, MB/s" "${D[down]}" "${D[dd_direct]}" "" ratio ""
	row drain "tierctl migrate file tier -> RAM (cold), --migrate-bw 0, MB/s" "${D[up]}" "${D[dd_up]}" "" ratio "tmpfs column: dd dir -> tmpfs, O_DIRECT"
	row drain "tierctl drain of the same bytes in 4 KiB files, default --migrate-bw, MB/s" "${D[small.drain]}" "${D[default.drain]}" "" ratio "tmpfs column: the one-file drain at the default --migrate-bw"
	row drain "  the same until synced (sync -f), MB/s" "${D[small.sync]}" "${D[default.sync]}" "" ratio "tmpfs column: the one-file drain until synced"
	row drain "RAM 256M after a 512M burst: seconds until under its high watermark" "${D[burst]}" "${D[burst.bound]}" "" none "tmpfs column: the bound, burst / --migrate-bw + 10 s"
	row drain "reference: dd tmpfs -> dir, buffered, no sync, MB/s" "" "${D[dd_buf]}" "" none ""
fi

# ---------------------------------------------------------------------
# inodes

# slab_bytes: bytes in the shmem inode and dentry slabs (tmpfs's cost)
slab_bytes()
{
	awk '$1 == "shmem_inode_cache" || $1 == "dentry" { s += $3 * $4 }
		END { print s + 0 }' /proc/slabinfo
}

# many_tierfs NAME ARGS...: MANY_N creates, idle CPU, memory, unlinks
declare -A I=()
many_tierfs()
{
	local k=$1 fd rss0 rss1 rss2 c0 c1 p0 p1 t0 t1
	shift
	new_dir fd "$file_dir" tier
	fuse_start "inodes-$k" "$work/mnt" --tier ram=ram:256M --tier "disk=file:$fd:2G" "$@"
	sleep 1
	rss0=$(rss_bytes)
	mbench create -d 10 "$fuse_mnt" "$MANY_N"
	I[$k.rate]=$(key rate)
	I[$k.max]=$(key max_ms)
	I[$k.p99]=$(key p99_ms)
	I[$k.fail]=$(key fail)
	sleep 2
	rss1=$(rss_bytes)
	p0=$(tstat migrator.passes)
	c0=$(cpu_ticks)
	t0=$(now)
	sleep "$IDLE_SEC"
	c1=$(cpu_ticks)
	t1=$(now)
	p1=$(tstat migrator.passes)
	I[$k.cpu]=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$clk_tck" \
		'BEGIN { printf "%.1f\n", 100 * (b - a) / hz / (t1 - t0) }')
	I[$k.passes]=$((p1 - p0))
	I[$k.perinode]=$(awk -v a="$rss0" -v b="$rss1" -v n="$MANY_N" 'BEGIN { printf "%.0f\n", (b - a) / n }')
	echo "#   idle ${IDLE_SEC} s: CPU ${I[$k.cpu]}% of a core, ${I[$k.passes]} migrator passes; RSS $rss0 -> $rss1"
	mbench unlink -d 10 "$fuse_mnt" "$MANY_N"
	I[$k.unlink]=$(key rate)
	sleep 3
	rss2=$(rss_bytes)
	I[$k.after]=$(awk -v a="$rss0" -v b="$rss2" 'BEGIN { printf "%.1f\n", (b - a) / 1048576 }')
	I[$k.held]=$(awk -v a="$rss0" -v b="$rss1" 'BEGIN { printf "%.1f\n", (b - a) / 1048576 }')
	echo "#   after unlinking all: RSS $rss2 (${I[$k.after]} MiB above the empty mount)"
	status_note "inodes-$k"
	fuse_stop "inodes-$k"
	rm_tracked_dirs
}

if [[ -n ${seen[inodes]:-} ]]; then
	echo "## inodes: $MANY_N empty files in 10 directories"
	tmpfs_start "$work/tmpfs" 1G
	s0=$(slab_bytes)
	mbench create -d 10 "$tmpfs_mnt" "$MANY_N"
	I[tmpfs.rate]=$(key rate)
	I[tmpfs.max]=$(key max_ms)
	I[tmpfs.p99]=$(key p99_ms)
	s1=$(slab_bytes)
	I[tmpfs.perinode]=$(awk -v a="$s0" -v b="$s1" -v n="$MANY_N" 'BEGIN { printf "%.0f\n", (b - a) / n }')
	mbench unlink -d 10 "$tmpfs_mnt" "$MANY_N"
	I[tmpfs.unlink]=$(key rate)
	tmpfs_umount
	many_tierfs on
	many_tierfs off --no-migrate
	row inodes "create $MANY_N empty files, migrator on, ops/s" "${I[on.rate]}" "${I[tmpfs.rate]}" "" ratio "${I[on.fail]} failed"
	row inodes "  slowest create, ms" "${I[on.max]}" "${I[tmpfs.max]}" "" ratio ""
	row inodes "  p99 create, ms" "${I[on.p99]}" "${I[tmpfs.p99]}" "" ratio ""
	row inodes "create $MANY_N empty files, --no-migrate, ops/s" "${I[off.rate]}" "${I[tmpfs.rate]}" "" ratio "${I[off.fail]} failed"
	row inodes "  slowest create, ms" "${I[off.max]}" "${I[tmpfs.max]}" "" ratio ""
	row inodes "  p99 create, ms" "${I[off.p99]}" "${I[tmpfs.p99]}" "" ratio ""
	row inodes "idle daemon CPU at $MANY_N files, migrator on, % of a core" "${I[on.cpu]}" "" "" none "${I[on.passes]} passes in ${IDLE_SEC} s"
	row inodes "idle daemon CPU at $MANY_N files, --no-migrate, %" "${I[off.cpu]}" "" "" none ""
	row inodes "memory per empty inode, B" "${I[on.perinode]}" "${I[tmpfs.perinode]}" "" ratio "tierfs: daemon RSS; tmpfs: shmem_inode_cache + dentry slabs (system-wide)"
	row inodes "daemon RSS held by $MANY_N inodes, MiB" "${I[on.held]}" "" "" none ""
	row inodes "daemon RSS after unlinking all, MiB above the empty mount" "${I[on.after]}" "" "" none "--no-migrate: ${I[off.after]}"
	row inodes "unlink of $MANY_N files, ops/s" "${I[on.unlink]}" "${I[tmpfs.unlink]}" "" ratio ""
fi

# ---------------------------------------------------------------------
# the table

table=$work/table.md
{
	echo
	echo "| part | what | tierfs | tmpfs | tierfs/tmpfs | plain dir | note |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	while IFS=$'\x1f' read -r sec what tv mv pv mode note; do
		r=
		[[ $mode == ratio ]] && r=$(ratio "$tv" "$mv")
		echo "| $sec | $what | $(fmt "$tv") | $(fmt "$mv") | $r | $(fmt "$pv") | $note |"
	done <"$results"
} >"$table"
cat "$table"
if [[ -n $out_dir ]]; then
	cp "$results" "$table" "$out_dir/"
fi
echo "# done $(host_stamp), load $(loadavg)"
