#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/fuzz/build.sh BUILD_DIR [NINJA_TARGET...]
#
# Set up BUILD_DIR as a fuzz build (clang, -Dfuzz=true; the Check tests
# are left out, they are not what a fuzz build is for) unless it exists,
# then build the given targets (default: all).  Used by run.sh and
# smoke.sh.  Needs clang and libclang-rt-14-dev (Debian 12).
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
shift
if [ ! -f "$build/build.ninja" ]; then
	CC=${FUZZ_CC:-clang} meson setup "$build" "$src" -Dfuzz=true \
		-Db_lundef=false -Dtests=disabled -Dwerror=true \
		>"$build.setup.log" 2>&1 || {
		cat "$build.setup.log" >&2
		exit 1
	}
	rm -f "$build.setup.log"
fi
ninja -C "$build" "$@" >&2
