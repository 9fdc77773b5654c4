#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/fuzz/smoke.sh [SECONDS]
#
# For CI: build every fuzz target, replay its seed corpus (each seed must
# pass), then fuzz it for SECONDS (default 30) from a scratch copy of
# that corpus.  Exit 1 when any target crashes, leaks, times out or
# fails a seed; the crash files are kept in the scratch directory, whose
# path is printed (FUZZ_WORK=DIR picks it).  FUZZ_BUILD=DIR picks the
# build directory (default build-fuzz).
set -uo pipefail

seconds=${1:-30}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$src/build-fuzz}
case $build in /*) ;; *) build=$PWD/$build ;; esac
targets="policy size config ctl"
work=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/tierfs-fuzz-smoke.XXXXXX")}

"$src/tests/fuzz/build.sh" "$build" $(for t in $targets; do echo tests/fuzz/fuzz_$t; done) ||
	exit 1

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=
for t in $targets; do
	exe=$build/tests/fuzz/fuzz_$t
	mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
	cp "$src/tests/fuzz/corpus/$t/"* "$work/$t/corpus/"
	dict=()
	[ -f "$src/tests/fuzz/$t.dict" ] && dict=(-dict="$src/tests/fuzz/$t.dict")

	# every seed once, each as its own input (a crash names the file)
	if ! "$exe" -runs=1 -artifact_prefix="$work/$t/artifacts/" \
		"$src/tests/fuzz/corpus/$t/"* >"$work/$t/replay.log" 2>&1; then
		echo "fuzz_$t: a seed fails:" >&2
		tail -n 40 "$work/$t/replay.log" >&2
		failed="$failed $t"
		continue
	fi
	if "$exe" "$work/$t/corpus" "${dict[@]}" \
		-max_total_time="$seconds" -max_len=4096 -timeout=10 \
		-artifact_prefix="$work/$t/artifacts/" -print_final_stats=1 \
		>"$work/$t/fuzz.log" 2>&1; then
		echo "fuzz_$t: ok, $(grep -o 'Done [0-9]* runs' "$work/$t/fuzz.log" | tail -n 1) in ${seconds}s" >&2
	else
		echo "fuzz_$t: CRASH; input and log in $work/$t" >&2
		grep -E -A 30 '^==[0-9]+==|check failed|runtime error' \
			"$work/$t/fuzz.log" | head -n 60 >&2
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz smoke test failed:$failed (work directory $work)" >&2
	exit 1
fi
echo "fuzz smoke test passed: $targets, ${seconds}s each" >&2
