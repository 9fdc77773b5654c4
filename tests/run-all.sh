#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The whole test run: a warning-free build with -Werror, every unit and
# mounted integration test, the mounted tests again with native files
# (--io native: FUSE passthrough), then the unit and integration tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer, a third time
# under ThreadSanitizer, and last a short run of every fuzz target
# (tests/fuzz/smoke.sh: the seed corpora, then FUZZ_SECONDS each, default 20).
#
# Usage: tests/run-all.sh [BUILD_PREFIX]     (default: build-ci)
#
# TSAN_SUITES (default "unit integration") picks the suites of the TSan
# pass, e.g. TSAN_SUITES="unit integration-concurrency integration-migrate"
# for a shorter run.
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
# The native leg (issue 33): the mounted tests again with --io native, so
# that new files are native (FUSE passthrough) where the kernel offers
# it; the tests of what only tiered files do skip (# IO: tiered in their
# header, lib.sh), and 210-native skips where passthrough is missing.
TIERFS_TEST_IO=native meson test -C "$prefix" --print-errorlogs \
	--num-processes 2 --suite integration --no-suite integration-services
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	run "$prefix-asan" -Db_sanitize=address,undefined -Dbuildtype=debug

# ---- FUSE over io_uring ----
#
# The legs above run on /dev/fuse (the kernel offers io_uring only with
# the fuse module's enable_uring=1, off by default).  This one turns it
# on for the run (root; restored at exit, also on failure) and runs the
# mounted suite again (less the tests that start services of their own,
# GROUP services), in the ASan+UBSan build, with every daemon started
# as --transport uring (lib.sh's TIERFS_TEST_TRANSPORT), so that a mount
# that cannot use the rings fails instead of falling back.  Skipped, with
# a line saying so, on a kernel without the parameter (before 6.14).
uring_param=/sys/module/fuse/parameters/enable_uring
if [ -w "$uring_param" ]; then
	uring_old=$(cat "$uring_param")
	restore_uring() { echo "$uring_old" >"$uring_param" || true; }
	trap restore_uring EXIT
	echo 1 >"$uring_param"
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	TIERFS_TEST_TRANSPORT=uring \
		meson test -C "$prefix-asan" --print-errorlogs --num-processes 2 \
		--suite integration --no-suite integration-services
	restore_uring
	trap - EXIT
else
	echo "uring: no $uring_param (a kernel before 6.14): the io_uring leg is skipped"
fi

# ---- ThreadSanitizer ----
#
# Every report fails the run.  A report does not stop the process
# (halt_on_error=0: one run shows every race); a process that reported
# exits 66 at its end.  Reports go to files, not to stderr:
#   - the mounted tests (tests/integration/lib.sh) point log_path into
#     their work directory, so that a report from the daemon -- which runs
#     in the background with its stderr in a log file, or detached with no
#     stderr at all -- fails the test that triggered it, with the report
#     in its log;
#   - everything else (the unit tests, whose Check forks run each test in
#     a child) writes to $tsan_dir (meson-logs/tsan), and any file there
#     fails the run below.
# Suppressions: tests/tsan.supp, for third-party code only.
#
# Run time: on 2 cores the TSan build of the whole unit + mounted suite
# takes about 7 minutes (plain and ASan+UBSan together about 5), so the
# whole run stays well under 20 minutes and TSan checks every test, not a
# subset.  If it ever has to shrink, TSAN_SUITES="unit
# integration-concurrency integration-migrate" keeps the tests that
# exercise threads hardest (070-concurrent, 140-stress, 130-134 migrate).
rm -rf "$prefix-tsan"
meson setup "$prefix-tsan" -Dwerror=true -Db_sanitize=thread -Dbuildtype=debug
ninja -C "$prefix-tsan"
tsan_dir=$PWD/$prefix-tsan/meson-logs/tsan
mkdir -p "$tsan_dir"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}halt_on_error=0:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp:log_path=$tsan_dir/tsan"

# tsan_wrap BINARY -- set wrap so that TSan-instrumented programs start.
# gcc 12's libtsan (LLVM 15's runtime) knows only the address layout of
# vm.mmap_rnd_bits <= 28 and dies with "FATAL: ThreadSanitizer: unexpected
# memory mapping" under the higher entropy of newer kernels (and some
# distributions' defaults; newer runtimes re-exec themselves without ASLR).
# The fix, in order of preference: none needed; run the tests with ASLR
# off (setarch -R: the personality is inherited by every child, the
# daemon included); lower vm.mmap_rnd_bits to 28 for the run (root only,
# restored at exit).
tsan_out=
tsan_ok() {
	tsan_out=$(TSAN_OPTIONS=log_path=stderr "$@" --version 2>&1) &&
		! grep -q 'ThreadSanitizer' <<<"$tsan_out"
}
wrap=()
tsan_wrap() {
	local bin=$1 bits
	if tsan_ok "$bin"; then
		return 0
	fi
	echo "tsan: $bin does not start ($(head -n 1 <<<"$tsan_out")); trying setarch -R"
	if tsan_ok setarch "$(uname -m)" -R "$bin"; then
		wrap=(setarch "$(uname -m)" -R)
		return 0
	fi
	bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo "")
	if [ -n "$bits" ] && [ "$bits" -gt 28 ] &&
		sysctl -q -w vm.mmap_rnd_bits=28 2>/dev/null; then
		# shellcheck disable=SC2064
		trap "sysctl -q -w vm.mmap_rnd_bits=$bits" EXIT
		echo "tsan: vm.mmap_rnd_bits lowered from $bits to 28 for the run"
		if tsan_ok "$bin"; then
			return 0
		fi
	fi
	echo "tsan: cannot start a ThreadSanitizer program: $tsan_out" >&2
	return 1
}

tsan_wrap "$prefix-tsan/fs/tierfs"
read -r -a suites <<<"${TSAN_SUITES:-unit integration}"
for i in "${!suites[@]}"; do
	suites[i]="--suite=${suites[i]}"
done
# the tests that start a service of their own (Slurm, GlusterFS, sshd:
# GROUP services) run in the plain and ASan legs; their threads are the
# same as everywhere else, and each costs tens of seconds a leg
suites+=(--no-suite=integration-services)
# Each test program writes its reports under its own name,
# $tsan_dir/PROGRAM.PID (the last log_path of TSAN_OPTIONS wins; the
# mounted tests set theirs again in lib.sh), so that the expected ones
# below can be told from the rest.
tsan_logwrap=$PWD/$prefix-tsan/tsan-log-by-program
printf '#!/bin/sh\nTSAN_OPTIONS="$TSAN_OPTIONS:log_path=$TSAN_LOG_DIR/${1##*/}" exec "$@"\n' \
	>"$tsan_logwrap"
chmod 755 "$tsan_logwrap"
rc=0
TSAN_LOG_DIR=$tsan_dir "${wrap[@]}" meson test -C "$prefix-tsan" \
	--print-errorlogs --wrapper="$tsan_logwrap" \
	--num-processes 2 "${suites[@]}" || rc=$?
# Only a WARNING (a race, a use after free, a bad mutex call...) fails
# here.  The other kind, "ERROR: ThreadSanitizer: SEGV/BUS", is a process
# killed by a signal, which its test sees anyway.  One of them comes in
# every passing run, once per run of test_tier_pmem (the tests tier_pmem
# and tier_pmem_forced): foreign_sigbus_still_fatal forks a child that
# reads a shared mapping past the end of its truncated file on purpose,
# to show that the pmem tier's SIGBUS guard lets a fault outside a tier
# call kill the process.  TSan's handler reports that SIGBUS as "BUS on
# unknown address" (the child silences stderr, but the report goes to
# log_path), and the child dies as the test wants.  Such a report -- a
# BUS, no WARNING, from test_tier_pmem -- is counted, not printed.  The
# faults that the guard catches inside tier calls (a slab truncated
# behind the tier's back, the tests of reads and writes past its end)
# are handled before TSan would report them and give no report.
tsan_expected=0
for f in "$tsan_dir"/*; do
	[ -f "$f" ] || continue
	if grep -q 'WARNING: ThreadSanitizer' "$f"; then
		echo "--- ThreadSanitizer report ${f##*/} ---"
		cat "$f"
		echo "FAIL: ThreadSanitizer report outside the mounted tests (above)" >&2
		[ "$rc" -ne 0 ] || rc=1
	elif [[ ${f##*/} == test_tier_pmem.* ]] &&
		head -n 1 "$f" | grep -q 'ERROR: ThreadSanitizer: BUS on unknown address'; then
		tsan_expected=$((tsan_expected + 1))
	else
		echo "tsan: ${f##*/}: $(head -n 1 "$f") (a crash: its test decides)"
	fi
done
if [ "$tsan_expected" -gt 0 ]; then
	echo "tsan: $tsan_expected intended SIGBUS of test_tier_pmem's foreign_sigbus_still_fatal (expected, not shown)"
fi
[ "$rc" -eq 0 ] || exit "$rc"

# ---- fuzz smoke run (clang + libFuzzer; .ci/run installs them) ----
if command -v clang >/dev/null; then
	rm -rf "$prefix-fuzz"
	FUZZ_BUILD=$PWD/$prefix-fuzz tests/fuzz/smoke.sh "${FUZZ_SECONDS:-20}"
else
	echo "fuzz: no clang here: the fuzz smoke run is skipped" >&2
fi
