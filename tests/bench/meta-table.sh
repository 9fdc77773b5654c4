#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# meta-table.sh -- the rows of issue 17 that wait on one request at a
# time, in one table: a FUSE round trip, create + write 4K + close, the
# first stat after writing, unlink, and tar -xf / rm -rf of a tree the
# script makes itself; on tmpfs, a plain directory, tierfs on each
# transport, and the FUSE peers passthrough_ll and mergerfs.  Rounds are
# interleaved (every target once per round) and the table gives the
# medians.  Not part of `meson test`; see tests/bench/README.md.
#
# Needs: bash, cc, tar, python3, fusermount3; root (tmpfs mounts, and for
# tierfs over io_uring the fuse module's enable_uring, which the script
# switches on for those targets and back after each).

set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

ALL_TARGETS="tmpfs,plain,tierfs,tierfs-native,tierfs-nosplice,tierfs-uring,tierfs-base,ptll,mergerfs"
PTLL_SRC=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

Rows (each a median over --rounds; every round mounts every target
afresh, one after the other):
  round trip        µs per statx(AT_STATX_FORCE_SYNC) of one file: one
                    FUSE request each (metabench rtt, --n calls)
  create+write+close  files/s: create, write 4K, close (metabench fill)
  first stat        stats/s of those files right after (metabench stat)
  unlink            unlinks/s of them (metabench unlink)
  tar -xf           seconds to unpack a tree of --tree-files files in
                    100 directories (0-16K each, made once by the script)
  rm -rf            seconds to remove that tree

Targets (--targets; default $ALL_TARGETS):
  tmpfs, plain (a directory under --plain-dir), tierfs (RAM 2G,
  --transport dev), tierfs-native (the same with --io native: every
  file a native one), tierfs-nosplice (the same with --no-splice: every
  request read whole, as before splice), tierfs-uring (the same,
  --transport uring; skipped
  without the kernel's enable_uring), ptll (libfuse's passthrough_ll
  over a tmpfs), mergerfs (over a tmpfs), tierfs-base (RAM 2G with
  --base-bin, an older tierfs to compare with, its default transport;
  only with --base-bin).

Options:
  --bin PATH        the tierfs daemon (else \$TIERFS_BIN, else ./build/fs/tierfs)
  --base-bin PATH   another tierfs, for target tierfs-base
  --rounds N        rounds (default 3)
  --n N             files and round trips per round (default 10000)
  --tree-files N    files of the tar tree (default 10000: passthrough_ll
                    holds a descriptor per inode, and 20000 is the usual
                    hard limit)
  --plain-dir DIR   default /var/tmp
  --targets LIST    subset of: $ALL_TARGETS
  -h, --help        this text
EOF
}

rounds=3
n=10000
tree_files=10000
plain_dir=/var/tmp
targets=tmpfs,plain,tierfs,tierfs-uring,ptll,mergerfs
bin=${TIERFS_BIN:-./build/fs/tierfs}
base_bin=
while (($#)); do
	case $1 in
	--bin) bin=${2:?}; shift ;;
	--base-bin) base_bin=${2:?}; shift ;;
	--rounds) rounds=${2:?}; shift ;;
	--n) n=${2:?}; shift ;;
	--tree-files) tree_files=${2:?}; shift ;;
	--plain-dir) plain_dir=${2:?}; shift ;;
	--targets) targets=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$rounds'"
[[ $n =~ ^[1-9][0-9]*$ ]] || die "bad --n '$n'"
[[ $tree_files =~ ^[1-9][0-9]*$ ]] || die "bad --tree-files '$tree_files'"
((EUID == 0)) || die "needs root (tmpfs mounts, enable_uring)"
parse_targets "$targets" "$ALL_TARGETS"
need_fuse
command -v cc >/dev/null || die "cc not found (metabench is built at run time)"
bin=$(realpath "$bin")
uring_param=/sys/module/fuse/parameters/enable_uring
skip_notes=()
skip() { skip_notes+=("target $1 skipped: $2"); unset "seen[$1]"; }
[[ -n ${seen[tierfs-uring]:-} && ! -w $uring_param ]] &&
	skip tierfs-uring "no writable $uring_param (a kernel before 6.14)"
[[ -n ${seen[ptll]:-} && ! -r $PTLL_SRC ]] && skip ptll "$PTLL_SRC not found"
[[ -n ${seen[tierfs-base]:-} && -z $base_bin ]] && skip tierfs-base "no --base-bin"
[[ -n ${seen[mergerfs]:-} ]] && ! command -v mergerfs >/dev/null &&
	skip mergerfs "mergerfs is not installed (apt-get install mergerfs)"
keep=()
for t in "${target_list[@]}"; do [[ -n ${seen[$t]:-} ]] && keep+=("$t"); done
target_list=("${keep[@]}")

# passthrough_ll keeps a descriptor open for every inode it has seen:
# the tree takes more than the usual 1024
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work=$(make_work meta-table)
fuse_mnt=
fuse_pid=
fuse_name=
tmpfs_mnt=
rm_dirs=()
uring_old=
cleanup()
{
	local rc=$?
	trap - EXIT INT TERM
	set +e
	[[ -z $uring_old ]] || echo "$uring_old" >"$uring_param"
	fuse_umount
	tmpfs_umount
	rm_tracked_dirs
	rm_work || warn "something is still mounted under $work; left in place"
	exit "$rc"
}
set_traps

mb=$work/metabench
cc -O2 -std=gnu17 -o "$mb" "$(dirname "${BASH_SOURCE[0]}")/metabench.c" ||
	die "cannot build metabench"
if [[ -n ${seen[ptll]:-} ]]; then
	# shellcheck disable=SC2046
	cc -O2 -o "$work/passthrough_ll" "$PTLL_SRC" $(pkg-config --cflags --libs fuse3) ||
		die "cannot build passthrough_ll"
fi

# the tree: 100 directories, tree_files files of 0..16K (fixed seed)
tree_tar=$work/tree.tar
python3 - "$work/tree" "$tree_files" <<'PY'
import os, random, sys
top, n = sys.argv[1], int(sys.argv[2])
random.seed(17)
for d in range(100):
    os.makedirs("%s/d%02d" % (top, d))
for i in range(n):
    with open("%s/d%02d/f%06d" % (top, i % 100, i), "wb") as f:
        f.write(os.urandom(random.randint(0, 16384)))
PY
tar -C "$work" -cf "$tree_tar" tree
rm -rf "$work/tree"

# fuse_up DIR NAME CMD...: start the FUSE daemon CMD (in the foreground)
# on $work/DIR, its log in $work/NAME.log, and wait for the mount
fuse_up()
{
	local i
	fuse_mnt=$work/$1
	fuse_name=$2
	shift 2
	mkdir -p "$fuse_mnt"
	"$@" >"$work/$fuse_name.log" 2>&1 &
	fuse_pid=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$fuse_mnt" && return 0
		kill -0 "$fuse_pid" 2>/dev/null || die "$fuse_name exited before mounting"
		sleep 0.1
	done
	die "$fuse_name did not mount"
}

peer_src()
{
	tmpfs_mnt=$work/$1-src
	mkdir -p "$tmpfs_mnt"
	mount -t tmpfs -o size=4G,mode=0700 tmpfs "$tmpfs_mnt"
}

# mount_target T: sets $dir to where the target's files go
mount_target()
{
	case $1 in
	tmpfs)
		tmpfs_mnt=$work/tmpfs
		mkdir -p "$tmpfs_mnt"
		mount -t tmpfs -o size=4G,mode=0700 tmpfs "$tmpfs_mnt"
		dir=$tmpfs_mnt ;;
	plain)
		dir=$(mktemp -d "$plain_dir/meta-table.XXXXXX")
		rm_dirs+=("$dir") ;;
	tierfs)
		fuse_up tierfs tierfs "$bin" -f --tier ram=ram:2G --transport dev "$work/tierfs"
		dir=$fuse_mnt ;;
	tierfs-native)
		fuse_up tierfs-native tierfs "$bin" -f --tier ram=ram:2G --transport dev --io native "$work/tierfs-native"
		dir=$fuse_mnt ;;
	tierfs-nosplice)
		fuse_up tierfs-nosplice tierfs "$bin" -f --tier ram=ram:2G --transport dev --no-splice "$work/tierfs-nosplice"
		dir=$fuse_mnt ;;
	tierfs-base)
		fuse_up tierfs-base tierfs-base "$base_bin" -f --tier ram=ram:2G "$work/tierfs-base"
		dir=$fuse_mnt ;;
	tierfs-uring)
		uring_old=$(cat "$uring_param")
		echo 1 >"$uring_param"
		fuse_up tierfs-uring tierfs "$bin" -f --tier ram=ram:2G --transport uring "$work/tierfs-uring"
		dir=$fuse_mnt ;;
	ptll)
		peer_src ptll
		fuse_up ptll passthrough_ll "$work/passthrough_ll" -f -o "source=$tmpfs_mnt" "$work/ptll"
		dir=$fuse_mnt ;;
	mergerfs)
		peer_src mergerfs
		fuse_up mergerfs mergerfs mergerfs -f -o minfreespace=0 "$tmpfs_mnt" "$work/mergerfs"
		dir=$fuse_mnt ;;
	esac
}

umount_target()
{
	case $1 in
	plain) rm -rf "$dir" ;;
	tmpfs) tmpfs_umount ;;
	*) fuse_umount; tmpfs_umount ;;
	esac
	if [[ -n $uring_old ]]; then
		echo "$uring_old" >"$uring_param"
		uring_old=
	fi
}

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" $2"; }
declare -A vals=()	# vals[target,row] = space-separated values
add() { vals[$1,$2]="${vals[$1,$2]:-} $3"; }

ROWS="rtt cwc stat unlink tar rm"
row_label()
{
	case $1 in
	rtt) echo "round trip (µs, lower is better)" ;;
	cwc) echo "create+write 4K+close (/s)" ;;
	stat) echo "first stat after writing (/s)" ;;
	unlink) echo "unlink (/s)" ;;
	tar) echo "tar -xf, $tree_files files (s, lower is better)" ;;
	rm) echo "rm -rf of it (s, lower is better)" ;;
	esac
}

warn_if_busy
echo "# $(host_stamp), load $(loadavg); $rounds rounds, n=$n, tree $tree_files files"
for note in "${skip_notes[@]}"; do echo "# note: $note"; done
for ((r = 1; r <= rounds; r++)); do
	for t in "${target_list[@]}"; do
		echo "# round $r: $t" >&2
		mount_target "$t"
		out=$("$mb" rtt "$dir/rtt" "$n")
		add "$t" rtt "$(awk -v s="$(field secs "$out")" -v n="$n" 'BEGIN { printf "%.2f", s * 1e6 / n }')"
		mkdir "$dir/m"
		out=$("$mb" fill -b 4096 "$dir/m" "$n")
		add "$t" cwc "$(field rate "$out")"
		out=$("$mb" stat "$dir/m" "$n")
		add "$t" stat "$(field rate "$out")"
		out=$("$mb" unlink "$dir/m" "$n")
		add "$t" unlink "$(field rate "$out")"
		s=$(date +%s.%N)
		if tar -C "$dir" -xf "$tree_tar"; then
			e=$(date +%s.%N)
			add "$t" tar "$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')"
		else
			warn "tar -xf failed on $t"
		fi
		s=$(date +%s.%N)
		rm -rf "$dir/tree"
		e=$(date +%s.%N)
		add "$t" rm "$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')"
		umount_target "$t"
	done
done

median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
printf '| row |'
for t in "${target_list[@]}"; do printf ' %s |' "$t"; done
printf '\n|---|'
for t in "${target_list[@]}"; do printf -- '---:|'; done
printf '\n'
for row in $ROWS; do
	printf '| %s |' "$(row_label "$row")"
	ref=
	[[ -n ${seen[tmpfs]:-} ]] && ref=$(median "${vals[tmpfs,$row]:-}")
	for t in "${target_list[@]}"; do
		if [[ -z ${vals[$t,$row]:-} ]]; then
			printf ' failed |'
			continue
		fi
		m=$(median "${vals[$t,$row]}")
		if [[ -n $ref && $t != tmpfs ]]; then
			printf ' %s (%sx) |' "$m" "$(awk -v a="$m" -v b="$ref" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
		else
			printf ' %s |' "$m"
		fi
	done
	printf '\n'
done
echo
echo "(x) = ratio to tmpfs; medians of $rounds interleaved rounds; load at end $(loadavg)"
