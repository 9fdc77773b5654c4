#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# GROUP: concurrency
# TIMEOUT: 180
#
# Concurrent writers: threads and processes each writing their own chunks
# of one file (interleaved at unaligned chunk sizes, so neighbours share
# extents and pages), contiguous regions per thread, processes each writing
# their own file while others read, and several processes creating and
# removing names in one directory.  Everything is verified afterwards.
. "$(dirname "$0")/lib.sh"
t_need_progs
P=$PROGS/pattern
D=$PROGS/dirtest
M=1048576

# run_all WHAT CMD-LINES... -- start each (a string run by bash -c) in
# the background, wait for all, fail if any failed
run_all() {
	local what=$1 pids=() p rc=0 cmd
	shift
	for cmd in "$@"; do
		bash -c "$cmd" >"$T/run.$BASHPID.${#pids[@]}" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	if [ $rc -ne 0 ]; then
		cat "$T"/run.* 2>/dev/null
		t_fail "$what"
	fi
	rm -f "$T"/run.*
}

for xs in 1M 64K; do
	t_remount --tier ram=ram:512M --extent-size $xs
	cd "$MNT" || t_fail cd

	# threads, interleaved unaligned chunks over one file
	t_check "$P" -j 8 -b 20011 -s 31 w tf 0 40M >/dev/null
	t_check "$P" -j 2 -s 31 v tf 0 40M >/dev/null
	t_eq "$(t_stat size tf)" $((40 * M)) "size after threaded writes ($xs)"
	# threads, contiguous regions, with an unaligned start
	t_check "$P" -j 6 -R -b 65536 -s 32 w tr 777 30M >/dev/null
	t_check "$P" -s 32 v tr 777 30M >/dev/null
	t_check "$P" z tr 0 777 >/dev/null

	# processes, interleaved chunks over one file
	cmds=()
	for i in 0 1 2 3; do
		cmds+=("'$P' -P $i/4 -j 2 -b 12345 -s 33 w '$MNT/pf' 100 30M")
	done
	run_all "process writers ($xs)" "${cmds[@]}"
	t_check "$P" -j 2 -s 33 v pf 100 30M >/dev/null
	t_check "$P" z pf 0 100 >/dev/null

	# processes each with its own file, readers of an existing file alongside
	t_check "$P" -s 40 w ro 0 20M >/dev/null
	cmds=()
	for i in $(seq 6); do
		cmds+=("'$P' -b 100000 -s $((40 + i)) w '$MNT/own$i' 0 12M")
	done
	for i in 1 2; do
		cmds+=("for k in 1 2 3; do '$P' -s 40 v '$MNT/ro' 0 20M || exit 1; done")
	done
	run_all "own-file writers ($xs)" "${cmds[@]}"
	for i in $(seq 6); do
		t_check "$P" -s $((40 + i)) v "own$i" 0 12M >/dev/null
		t_eq "$(t_stat size "own$i")" $((12 * M)) "size of own$i ($xs)"
	done

	# several processes creating and removing in one directory
	mkdir names || t_fail mkdir
	cmds=()
	for p in a b c d; do
		cmds+=("'$D' mk '$MNT/names' 1500 $p && '$D' rm '$MNT/names' 1500 $p 3")
	done
	run_all "concurrent create/unlink ($xs)" "${cmds[@]}"
	for p in a b c d; do
		t_eq "$(ls names | grep -c "^$p")" 1000 "entries of $p left ($xs)"
	done
	t_eq "$(ls -f names | wc -l)" 4002 "total entries ($xs)"
	cd /
done

t_pass
