#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The module-graph check can fail, in each way it claims (issue 32).  A
# small tree laid out like tierfs's (fs tiers tools contrib/slurm) is
# compiled with the real compiler, with a compile_commands.json like
# meson's, and checked with the default directories: the clean tree
# passes, and each case adds one defect that must fail the check with
# the line that names it:
#   include    a header includes a header of a module that includes it
#   call       a call cycle behind one-way includes (the callee's
#              prototype sits in the caller's header)
#   x_y.c      mid.c and mid_part.c, a header-less x_y.c, call each other
#   basename   tools/x.c includes "h.h": the compiler takes tools/h.h,
#              its own directory, over fs/h.h, which comes first on the
#              include path; only then does h <-> x close a cycle
#   extern     an extern declaration in a .c file
#   contrib    a call cycle in contrib/slurm
#   unchecked  a compiled .c file outside every checked directory
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/modgraph.py
cc=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# The clean tree, in $1.
base() {
	mkdir -p "$1"/fs "$1"/tiers "$1"/tools "$1"/contrib/slurm
	cd "$1"
	printf 'int low_fn(void);\n' >fs/low.h
	printf '#include "low.h"\nint low_fn(void) { return 1; }\n' >fs/low.c
	printf 'int mid_fn(void);\n' >fs/mid.h
	printf '#include "mid.h"\nint mid_part_fn(void);\n' >fs/mid_i.h
	printf '#include "mid_i.h"\n#include "low.h"\nint mid_fn(void) { return low_fn() + mid_part_fn(); }\n' >fs/mid.c
	printf '#include "mid_i.h"\n#include "low.h"\nint mid_part_fn(void) { return low_fn(); }\n' >fs/mid_part.c
	printf '#include "mid.h"\nint main(void) { return mid_fn(); }\n' >fs/main.c
	printf '#define H_FS 1\n' >fs/h.h
	printf 'int t_fn(void);\n' >tiers/t.h
	printf '#include "t.h"\nint t_fn(void) { return 0; }\n' >tiers/t.c
	printf '#define H_TOOLS 3\nint h_fn(void);\n' >tools/h.h
	printf '#include "h.h"\nint h_fn(void) { return H_TOOLS; }\n' >tools/h.c
	printf 'int x_fn(void);\n' >tools/x.h
	printf '#include "x.h"\n#include "h.h"\nint x_fn(void) { return H_TOOLS; }\n' >tools/x.c
	printf '#include "x.h"\n#include "h.h"\nint main(void) { return x_fn() + h_fn(); }\n' >tools/tool.c
	printf 'int plug_fn(void);\nint plug_rm(void);\n' >contrib/slurm/plug.h
	printf '#include "plug.h"\nint plug_fn(void) { return plug_rm(); }\n' >contrib/slurm/plug.c
	printf '#include "plug.h"\nint plug_rm(void) { return 0; }\n' >contrib/slurm/plug_rm.c
	cd - >/dev/null
}

# Compile every .c of tree $1 into $1/build as meson would lay it out
# (each file that has no object yet),
# and write $1/build/compile_commands.json.  tools/ has fs/ first on its
# include path, as the real tools/ build has ../fs for ctl_proto.h.
compile() {
	local root=$1 c d obj sep=''
	local -a inc
	mkdir -p "$root/build"
	cd "$root/build"
	printf '[\n' >compile_commands.json
	for c in $(cd .. && find . -name '*.c' -not -path './build/*' | sort); do
		c=${c#./}
		d=$(dirname "$c")
		case $d in
		tools) inc=(-I../fs -I../tools) ;;
		*) inc=("-I../$d") ;;
		esac
		obj=${c//\//_}.o
		# a case is a copy of the clean tree: only what it changed
		[ -e "$obj" ] || "$cc" "${inc[@]}" -c "../$c" -o "$obj"
		printf '%s{"directory": "%s", "file": "../%s", "output": "%s",\n  "command": "%s %s -c ../%s -o %s"}\n' \
			"$sep" "$PWD" "$c" "$obj" "$cc" "${inc[*]}" "$c" "$obj" \
			>>compile_commands.json
		sep=','
	done
	printf ']\n' >>compile_commands.json
	cd - >/dev/null
}

run() { # TREE: the check's output in $dir/out, its status in $rc
	set +e
	(cd "$1" && python3 "$check" --build build) >"$dir/out" 2>&1
	rc=$?
	set -e
}

# CASE: a copy of the clean tree and its objects, in $dir/CASE.
copy() {
	cp -a "$dir/clean" "$dir/$1"
	case=$1
}
# FILE CONTENT: the case's FILE (printf format) without its object, so
# that compile makes it anew.  The objects of the files that include a
# changed header stay: no case changes what they define or call.
put() {
	# shellcheck disable=SC2059
	printf "$2" >"$dir/$case/$1"
	rm -f "$dir/$case/build/${1//\//_}.o"
}

fails=0
# CASE WHAT-TO-SEE...: tree $dir/CASE, built after the caller changed it
expect() {
	local name=$1 want
	shift
	compile "$dir/$name"
	run "$dir/$name"
	for want in "$@"; do
		if [ $rc -ne 1 ] || ! grep -qF -- "$want" "$dir/out"; then
			echo "case $name: expected status 1 and the line '$want', got status $rc:" >&2
			cat "$dir/out" >&2
			fails=$((fails + 1))
			return
		fi
	done
	echo "case $name: caught"
}

base "$dir/clean"
compile "$dir/clean"
run "$dir/clean"
if [ $rc -ne 0 ] || ! grep -q 'no cycle' "$dir/out"; then
	echo "the clean tree must pass, got status $rc:" >&2
	cat "$dir/out" >&2
	exit 1
fi
echo "clean tree: passes"

copy include
put fs/low.h '#include "mid.h"\nint low_fn(void);\n'
expect include 'cycle of 3 modules: fs/low fs/mid fs/mid_part' \
	'includes "mid.h" = fs/mid.h  (fs/low.h:1)'

copy call
put fs/low.h 'int low_fn(void);\nint mid_hook(void);\n'
put fs/low.c '#include "low.h"\nint low_fn(void) { return mid_hook(); }\n'
put fs/mid.c '#include "mid_i.h"\n#include "low.h"\nint mid_fn(void) { return low_fn() + mid_part_fn(); }\nint mid_hook(void) { return 0; }\n'
expect call 'cycle of 3 modules: fs/low fs/mid fs/mid_part' \
	'calls mid_hook  (fs/low.c -> fs/mid.c)'

copy x_y
put fs/mid_part.c '#include "mid_i.h"\nint mid_part_fn(void) { return mid_fn(); }\n'
expect x_y 'cycle of 2 modules: fs/mid fs/mid_part' \
	'calls mid_fn  (fs/mid_part.c -> fs/mid.c)'

copy basename
put tools/h.c '#include "h.h"\n#include "x.h"\nint h_fn(void) { return x_fn(); }\n'
expect basename 'cycle of 2 modules: tools/h tools/x' \
	'includes "h.h" = tools/h.h  (tools/x.c:2)'

copy extern
put fs/low.c '#include "low.h"\nextern int mid_fn(void);\nint low_fn(void) { return 1; }\n'
expect extern 'extern declaration in a .c file' 'fs/low.c:2: extern int mid_fn(void);'

copy contrib
put contrib/slurm/plug_rm.c '#include "plug.h"\nint plug_rm(void) { return plug_fn(); }\n'
expect contrib 'cycle of 2 modules: contrib/slurm/plug contrib/slurm/plug_rm' \
	'calls plug_fn  (contrib/slurm/plug_rm.c -> contrib/slurm/plug.c)'

copy unchecked
mkdir "$dir/unchecked/extra"
put extra/e.c 'int extra_fn(void) { return 0; }\n'
expect unchecked 'extra/e.c: compiled, but not under a checked directory'

if [ $fails -ne 0 ]; then
	echo "$fails case(s) not caught" >&2
	exit 1
fi
echo "module-graph check: passes the clean tree, catches every case"
