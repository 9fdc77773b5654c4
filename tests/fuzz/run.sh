#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/fuzz/run.sh TARGET [MINUTES] [LIBFUZZER_ARGS...]
#
# Build the fuzz targets if needed and run one of them (policy, size,
# config or ctl) for MINUTES (default 10) on a copy of its seed corpus.
# New corpus entries and crash files go to a scratch directory (printed
# at the start and the end; FUZZ_WORK=DIR picks it), never into the
# repository; copy a crash that is worth keeping into tests/fuzz/corpus/TARGET/
# by hand.  FUZZ_BUILD=DIR picks the build directory (default
# build-fuzz, set up with clang and -Dfuzz=true when missing).  Exit
# status: libFuzzer's, nonzero on a crash, leak or timeout.
set -euo pipefail

usage() {
	echo "usage: tests/fuzz/run.sh policy|size|config|ctl [MINUTES] [LIBFUZZER_ARGS...]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
target=$1
shift
case $target in
policy|size|config|ctl) ;;
*) usage ;;
esac
minutes=10
if [ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]]; then
	minutes=$1
	shift
fi

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$src/build-fuzz}
case $build in /*) ;; *) build=$PWD/$build ;; esac

# build if needed (ninja does nothing when all is up to date)
"$src/tests/fuzz/build.sh" "$build" "tests/fuzz/fuzz_$target"

work=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/tierfs-fuzz-$target.XXXXXX")}
mkdir -p "$work/corpus" "$work/artifacts"
cp -n "$src/tests/fuzz/corpus/$target/"* "$work/corpus/" 2>/dev/null || true
dict=()
[ -f "$src/tests/fuzz/$target.dict" ] && dict=(-dict="$src/tests/fuzz/$target.dict")

echo "fuzz_$target: $minutes min, corpus and crashes in $work" >&2
rc=0
# detect_leaks: a path lost on an error path is a finding too;
# -max_len 4096: the longest value any of these parsers takes in
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
	"$build/tests/fuzz/fuzz_$target" "$work/corpus" "${dict[@]}" \
	-max_total_time=$((minutes * 60)) -max_len=4096 -timeout=10 \
	-artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@" || rc=$?
echo "fuzz_$target: exit $rc; $(ls "$work/corpus" | wc -l) corpus entries, crashes: $(ls "$work/artifacts" | wc -l) in $work/artifacts" >&2
exit $rc
