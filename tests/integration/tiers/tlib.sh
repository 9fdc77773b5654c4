#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tlib.sh -- helpers shared by the tier tests.  Source it after lib.sh:
#
#     . "$(dirname "$0")/../lib.sh"
#     . "$(dirname "$0")/tlib.sh"
#
#   t_xattr PATH NAME       value of an attribute (virtual ones included);
#                           "(getfattr NAME failed: ...)" if there is none
#   layout PATH             user.tierfs.layout
#   extents PATH            user.tierfs.extents (one "START LENGTH TIER"
#                           line per run)
#   stats                   user.tierfs.stats of the mount root
#   tstat TIER KEY          one key of the "tier TIER" stats record
#   mstat KEY               one key of the "migrator" stats record
#   on_tier TIER PATH       bytes of PATH on TIER, from its layout
#   drop_caches             write back and drop the page cache, so that the
#                           next buffered read reaches the daemon
#   wait_for SECS MSG CMD...  poll CMD (bounded); t_fail MSG on timeout.
#                           MSG is expanded (eval) only then: give it in
#                           single quotes so that $(...) shows the state
#                           at the timeout, not at the call
#   pat_v ARGS...           pattern v ARGS... and t_fail with its output
#   pat_w ARGS...           pattern w ARGS... likewise
#   wait_passes N           let the migrator run N more passes (bounded)
#   wait_idle               wait until the migrator moved nothing for three
#                           passes in a row (bounded): a move holds a slot
#                           on both tiers until it switches, so counters
#                           are compared only on an idle mount
#   clock_step MS           move the test clock of a mount started with
#                           --test-clock (fs/options.h; the heat and the
#                           migrator's schedule follow it) MS milliseconds
#                           on; returns once the migrator pass that made
#                           due, if any, has ended
#   clock_pass              clock_step 500: exactly one migrator pass
#                           (MIGRATE_INTERVAL_MS), checked, and a new pass
#                           of the heat model (more than HEAT_PASS_GAP)
#   t_soft_fail MSG         report a failure now but go on, so that one run
#                           shows every independent problem; t_done fails
#                           the test at the end
#   t_done                  t_pass, or t_fail if t_soft_fail was called
#   tier_dirs DIR           the private directories tierfs made in DIR
#   slab_of DIR             the slab file of the tier whose path is DIR: a
#                           /proc/PID/fd/N path of the daemon (it is unlinked)
#   read_err FILE OFF LEN   the first word of a read's outcome: OK or the
#                           errno name
#   alive WHAT              t_fail unless the mount still makes, lists and
#                           removes a directory (after WHAT went wrong)
#   flip FILE OFFSET        invert one byte of FILE in place (corruption)
# Variables: M (1 MiB), K (1 KiB), P (pattern), SC (sc).

t_need_progs
M=1048576
U=4096 # the allocation unit of tiers with extents up to 1M (tiers/tier.h)
K=1024
P=$PROGS/pattern
SC=$PROGS/sc
: "${TIERS_PROGS:=$(dirname "$TIERFS_BIN")/../tests/integration/tiers}"

t_xattr() {
	local out
	if out=$(getfattr --absolute-names --only-values -n "$2" -- "$1" 2>&1); then
		printf '%s' "$out"
	else
		printf '(getfattr %s failed: %s)' "$2" "$out"
	fi
}

layout() { t_xattr "$1" user.tierfs.layout; }
extents() { t_xattr "$1" user.tierfs.extents; }
# The counters change while getfattr asks for their size and then reads
# them: a counter that gains a digit in between makes the read fail with
# ERANGE (getfattr does not ask again), so a failed read is made again.
stats() {
	local i out
	for i in 1 2 3 4 5 6 7 8; do
		if out=$(getfattr --absolute-names --only-values \
			-n user.tierfs.stats -- "$MNT" 2>&1); then
			printf '%s' "$out"
			return 0
		fi
	done
	printf '(getfattr user.tierfs.stats failed: %s)' "$out"
}

# _rec_key RECORD-TYPE NAME KEY: from stats, e.g. _rec_key tier ram used
_rec_key() {
	stats | awk -v r="$1" -v t="$2" -v k="$3" '
		$1 == r && (t == "" || $2 == t) {
			for (i = 2; i <= NF; i++) {
				n = index($i, "=")
				if (n && substr($i, 1, n - 1) == k) {
					print substr($i, n + 1); f = 1
				}
			}
		}
		END { exit !f }'
}

tstat() { _rec_key tier "$1" "$2"; }
mstat() { _rec_key migrator "" "$1"; }

on_tier() {
	layout "$2" | tr ' ' '\n' | awk -F= -v t="$1" '$1 == t { print $2; f = 1 } END { exit !f }'
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

wait_for() {
	local secs=$1 msg=$2
	shift 2
	t_wait_until "$secs" "$@" || t_fail "$(eval "echo \"$msg\"")"
}

pat_v() {
	local out
	out=$("$P" v "$@" 2>&1) || t_fail "verify $*: $out"
}

pat_w() {
	local out
	out=$("$P" w "$@" 2>&1) || t_fail "write $*: $out"
}

_passes_at_least() { [ "$(mstat passes)" -ge "$1" ]; }

wait_passes() {
	local want=$(($(mstat passes) + $1))
	wait_for 15 'migrator passes stuck at $(mstat passes), wanted $want' _passes_at_least "$want"
}

wait_idle() {
	local i m quiet=0
	for ((i = 0; i < 40 && quiet < 3; i++)); do
		m=$(mstat moved)
		wait_passes 1
		if [ "$(mstat moved)" = "$m" ]; then
			quiet=$((quiet + 1))
		else
			quiet=0
		fi
	done
	[ "$quiet" -ge 3 ] || t_fail "the migrator did not go idle: moved $(mstat moved)"
}

clock_step() {
	setfattr -n user.tierfs.ctl.clock -v "$1" "$MNT" ||
		t_fail "cannot move the test clock $1 ms on"
}

clock_pass() {
	local p
	p=$(mstat passes)
	clock_step 500
	t_eq "$(mstat passes)" $((p + 1)) "migrator passes after 500 ms of test time"
}

T_SOFT=()
t_soft_fail() {
	echo "FAIL: $*" >&2
	T_SOFT+=("$*")
}

t_done() {
	if [ ${#T_SOFT[@]} -gt 0 ]; then
		t_fail "${#T_SOFT[@]} check(s) failed (see above)"
	fi
	t_pass
}

tier_dirs() {
	find "$1" -mindepth 1 -maxdepth 1 -name 'tierfs-*' 2>/dev/null
}

# The slab has no name (tiers/tier_backing.c tier_backing_open(): an unlinked
# file, so that a killed daemon leaves no data): reach it through the
# daemon's fd, /proc/$T_PID/fd/N, whose link reads
# "DIR/tierfs-NAME-XXXXXX/#INO (deleted)" (or ".../slab (deleted)" where
# the filesystem has no O_TMPFILE).  Reads, writes and truncate through
# that path reach the file itself.
slab_of() {
	local real fd link found=
	real=$(realpath "$1") || t_fail "slab_of: no directory $1"
	for fd in /proc/"$T_PID"/fd/*; do
		link=$(readlink "$fd") || continue
		case $link in
		"$real"/tierfs-*" (deleted)")
			! t_fd_direct "$fd" || continue
			[ -z "$found" ] || t_fail "more than one slab of a tier in $1 open in the daemon"
			found=$fd ;;
		esac
	done
	[ -n "$found" ] || t_fail "no slab of a tier in $1 open in the daemon (pid $T_PID)"
	echo "$found"
}

# read_err FILE OFF LEN -- the first word of a read's outcome (OK or errno)
read_err() {
	local out
	out=$("$SC" read "$1" "$2" "$3" 2>&1)
	echo "${out%% *}" | head -n 1
}
alive() {
	mkdir "$MNT/alive.$1" && [ -d "$MNT/alive.$1" ] && ls "$MNT" >/dev/null &&
		rmdir "$MNT/alive.$1" || t_fail "mount not usable after $1"
}

# flip FILE OFFSET -- invert one byte of FILE in place
flip() {
	local b
	b=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	[ -n "$b" ] || t_fail "cannot read byte $2 of $1"
	printf "\\$(printf '%03o' $((b ^ 0xff)))" |
		dd of="$1" bs=1 seek="$2" count=1 conv=notrunc 2>/dev/null ||
		t_fail "cannot write byte $2 of $1"
}
