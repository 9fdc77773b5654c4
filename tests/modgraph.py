#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
modgraph.py -- the module graph of tierfs's C source, and a check that it
is a DAG (issue 20).

A module is a name x in one source directory: x.c, x.h and x_i.h fold
into it, and so does a .c file without a header of its own whose name
starts with "x_" (data_extent.c, data_move.c and data_lost.c into data,
ctl_action.c into ctl, kernel_uring.c into kernel).  Module a depends on
module b when a file of a includes a header of b with #include "...";
headers are found by name in every directory given, as the build's flat
include path finds them.  A cycle (a strongly connected component of more
than one module) fails the check, which prints each one with the
includes that make it.

  tests/modgraph.py [--dot] DIR...    (default: fs fs/util tiers tools)

Exit status: 0 for a DAG, 1 for a cycle, 2 for a usage error.  --dot
prints the graph of modules in Graphviz form instead of checking it.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def stem(path):
    base = os.path.basename(path)
    return re.sub(r'\.(c|h)$', '', base)


def modules_of(dirs):
    """{file path: module name}; a module name is DIR/x."""
    files = {}
    for d in dirs:
        names = sorted(n for n in os.listdir(d) if n.endswith(('.c', '.h')))
        headers = {stem(n) for n in names if n.endswith('.h')}
        for n in names:
            s = stem(n)
            if s.endswith('_i'):
                s = s[:-2]
            elif n.endswith('.c') and s not in headers:
                # the longest x with x.h such that the name starts x_
                best = None
                for h in headers:
                    if s.startswith(h + '_') and (not best or len(h) > len(best)):
                        best = h
                s = best or s
            files[os.path.join(d, n)] = d.rstrip('/') + '/' + s
    return files


def edges_of(files):
    by_name = {}
    for path, mod in files.items():
        if path.endswith('.h'):
            by_name.setdefault(os.path.basename(path), mod)
    edges = {m: {} for m in files.values()}
    for path, mod in sorted(files.items()):
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = by_name.get(os.path.basename(m.group(1)))
                if target and target != mod:
                    paths = edges[mod].setdefault(target, [])
                    if path not in paths:
                        paths.append(path)
    return edges


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan's,
    without recursion)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv):
    dot = '--dot' in argv
    dirs = [a for a in argv if a != '--dot'] or ['fs', 'fs/util', 'tiers',
                                                  'tools']
    for d in dirs:
        if not os.path.isdir(d):
            print(f'modgraph: {d}: not a directory', file=sys.stderr)
            return 2
    files = modules_of(dirs)
    edges = edges_of(files)
    if dot:
        print('digraph modules {')
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f'  "{a}" -> "{b}";')
        print('}')
        return 0
    bad = cycles(edges)
    for comp in bad:
        print(f'cycle of {len(comp)} modules: {" ".join(comp)}')
        members = set(comp)
        for a in comp:
            for b in sorted(edges[a]):
                if b in members:
                    print(f'  {a} -> {b}  ({", ".join(edges[a][b])})')
    if bad:
        return 1
    print(f'module graph: {len(edges)} modules, '
          f'{sum(len(e) for e in edges.values())} dependencies, no cycle')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
