#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tier-bench.sh -- fio on tierfs's file tier, in two parts, both through
# fio-bench.sh (same jobs, same table):
#   file:  tierfs with only a file tier in DIR against DIR used directly
#          (seq 1M write/read, rand 4k read/write; O_DIRECT and buffered)
#   span:  a file twice the RAM tier, spanning a RAM and a file tier,
#          against tmpfs and DIR (seq 1M write/read)
# Not part of `meson test`; see tests/bench/README.md.

set -euo pipefail

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"
srcdir=$(cd "$(dirname "$0")" && pwd)

usage()
{
	cat <<EOF
usage: $prog [OPTIONS] [TIERFS_BIN]

TIERFS_BIN, else --bin, else \$TIERFS_BIN, else ./build/fs/tierfs.

Options:
  --parts LIST           file, span or file,span (default file,span)
  --dir DIR              directory of the file tier and of the plain
                         directory column (default \${TMPDIR:-/var/tmp});
                         both use the same filesystem
  --file-size SIZE       fio file size in part file (default 1G)
  --file-tier-size SIZE  file tier size (default 4G; must hold the file)
  --ram SIZE             RAM tier size in part span (default 1G)
  --span-size SIZE       fio file size in part span (default: twice --ram)
  --file-tests LIST      fio-bench tests of part file
                         (default seqwrite,seqread,randread,randwrite)
  --span-tests LIST      fio-bench tests of part span (default seqwrite,seqread)
  --io MODES             buffered, direct or both (default both)
  --runtime SEC          seconds per time-based job (default 10)
  --repeat N             run every job N times, report the median
  --extra-tier-args "ARGS"
                         more tierfs arguments (e.g. "--no-migrate")
  --drop-caches          drop the page cache before every job (root;
                         system-wide).  Without it the file tier's slab
                         and the plain directory's file may be served
                         from the page cache.
  --out-dir DIR          keep fio's JSON etc. in DIR/file and DIR/span
  --bin PATH             the tierfs daemon
  -h, --help             this text
Other fio-bench.sh options can follow "--".
EOF
}

parts=file,span
dir=${TMPDIR:-/var/tmp}
file_size=1G
ft_size=4G
ram=1G
span_size=
file_tests=seqwrite,seqread,randread,randwrite
span_tests=seqwrite,seqread
io=both
runtime=10
repeat=1
extra_tier_args=
drop=()
out_dir=
bin=${TIERFS_BIN:-./build/fs/tierfs}
pass=()

while (($#)); do
	case $1 in
	--parts) parts=${2:?}; shift ;;
	--dir) dir=${2:?}; shift ;;
	--file-size) file_size=${2:?}; shift ;;
	--file-tier-size) ft_size=${2:?}; shift ;;
	--ram) ram=${2:?}; shift ;;
	--span-size) span_size=${2:?}; shift ;;
	--file-tests) file_tests=${2:?}; shift ;;
	--span-tests) span_tests=${2:?}; shift ;;
	--io) io=${2:?}; shift ;;
	--runtime) runtime=${2:?}; shift ;;
	--repeat) repeat=${2:?}; shift ;;
	--extra-tier-args) extra_tier_args=${2:?}; shift ;;
	--drop-caches) drop=(--drop-caches) ;;
	--out-dir) out_dir=${2:?}; shift ;;
	--bin) bin=${2:?}; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; pass=("$@"); break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) bin=$1 ;;
	esac
	shift
done

need_writable_dir "$dir"
dir=$(realpath "$dir")
[[ -x $bin ]] || die "tierfs binary '$bin' not found (meson setup build-bench && ninja -C build-bench; then --bin build-bench/fs/tierfs)"
bin=$(realpath "$bin")
ram_bytes=$(to_bytes "$ram")
ft_bytes=$(to_bytes "$ft_size")
file_bytes=$(to_bytes "$file_size")
if [[ -n $span_size ]]; then
	span_bytes=$(to_bytes "$span_size")
else
	span_bytes=$((2 * ram_bytes))
fi
((file_bytes < ft_bytes)) || die "--file-tier-size must exceed --file-size"
((span_bytes > ram_bytes)) || die "--span-size must exceed --ram (else nothing spans)"
((span_bytes < ram_bytes + ft_bytes)) ||
	die "--ram plus --file-tier-size must exceed --span-size"

IFS=, read -r -a part_list <<<"$parts"
for p in "${part_list[@]}"; do
	[[ $p == file || $p == span ]] || die "unknown part '$p'"
done

common=(--io "$io" --runtime "$runtime" --repeat "$repeat" --plain-dir "$dir"
	"${drop[@]}")
[[ -n $extra_tier_args ]] && common+=(--extra-tier-args "$extra_tier_args")

rc=0
for p in "${part_list[@]}"; do
	out=()
	[[ -n $out_dir ]] && out=(--out-dir "$out_dir/$p")
	echo
	case $p in
	file)
		echo "### part file: tierfs with one file tier in $dir (--tier disk=file:$dir:$ft_size) vs $dir directly"
		# fio-bench.sh unmounts tierfs via its trap and removes its
		# plain-dir subdirectory; tierfs removes its own slab directory
		"$srcdir/fio-bench.sh" --no-tmpfs --size "$file_bytes" \
			--tier-args "--tier disk=file:$dir:$ft_bytes" \
			--tests "$file_tests" "${common[@]}" "${out[@]}" \
			"${pass[@]}" "$bin" || rc=$?
		;;
	span)
		echo "### part span: a $((span_bytes >> 20)) MiB file over RAM $((ram_bytes >> 20)) MiB + file tier in $dir vs tmpfs and $dir"
		"$srcdir/fio-bench.sh" --size "$span_bytes" \
			--fs-size "$((span_bytes + ram_bytes))" \
			--tier-args "--tier ram=ram:$ram_bytes --tier disk=file:$dir:$ft_bytes" \
			--tests "$span_tests" "${common[@]}" "${out[@]}" \
			"${pass[@]}" "$bin" || rc=$?
		;;
	esac
done
exit $rc
