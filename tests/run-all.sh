#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The whole test run: a warning-free build with -Werror, every unit and
# mounted integration test, then the unit and integration tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
#
# Usage: tests/run-all.sh [BUILD_PREFIX]     (default: build-ci)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-build-ci}

run() {
	local dir=$1
	shift
	rm -rf "$dir"
	meson setup "$dir" -Dwerror=true "$@"
	ninja -C "$dir"
	meson test -C "$dir" --print-errorlogs --num-processes 2
}

run "$prefix"
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	run "$prefix-asan" -Db_sanitize=address,undefined -Dbuildtype=debug
