#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
modgraph.py -- the module graph of tierfs's C source, from its includes
and from the calls in the built objects, and a check that it is a DAG
(issues 20 and 32).

Modules.  In one directory, a header x.h, its code x.c and its private
header x_i.h are module x.  Every other file is a module of its own: a
.c file without a header of its own (data_move.c, kernel_uring.c,
cmd_tier.c, tierfs_spank.c) and a header without code (fs.h,
ctl_proto.h, tier_ops.h).  A module is named DIR/x.

Arrows.  a -> b when
  - calls: the object of a's .c refers to a function or variable that
    the object of b's .c defines (nm of the objects the build made;
    undefined against defined global symbols).  Every .c file counts;
  - includes: a file of a module with a header (x.c, x.h, x_i.h, or a
    header without code) has #include "..." of a header of b.  The name
    is resolved as the compiler does: the including file's directory
    first, then the -iquote and -I directories of the file's compile
    command (a header is resolved with the path of each file that
    reaches it), so two headers of one name in two directories are two
    modules.  The includes of a .c file without a header of its own
    draw no arrow: no file includes it, so an include cannot put
    anything below it, and what it takes from a header without calling
    it -- the declarations of its own functions in data_i.h or
    tierctl.h, types, constants -- is the interface its family shares,
    not code of the header's .c.  Its calls are arrows like any other,
    so data_move.c -> data.c and data.c -> data_move.c would be a cycle.

What fails the check (exit status 1), each printed with what makes it:
  - a cycle: a strongly connected component of more than one module,
    with the calls and includes behind each of its arrows;
  - an `extern` declaration in a .c file: declarations belong in the
    header of the module that defines the name, where the compiler
    checks them against the definition (-Wmissing-declarations).  The
    object check would still see the call, so this keeps the headers
    true rather than the graph;
  - a global name that two checked files define and a third uses
    (which one it calls depends on the link; rename one);
  - a .c file the build compiles that is neither under a checked
    directory nor under tests/ (a new directory must be checked too);
  - an object older than its source (run ninja first).

  tests/modgraph.py [--dot] [--build BUILDDIR] [DIR...]
      DIRs are walked recursively (default: fs tiers tools contrib), from
      the source root.  BUILDDIR (default: build) is a configured and
      built meson build directory: its compile_commands.json gives each
      .c file's object and include path.  A .c file the build does not
      compile (slurm/spank.h missing, -Dpmem=disabled) is said so on
      stderr: its calls cannot be checked, its includes still are.

Exit status: 0 for a DAG, 1 for a failure above, 2 for a usage error or
a build directory that cannot be read.  --dot prints the graph of
modules in Graphviz form instead of checking it (arrows with calls
solid, arrows made only by includes dashed).
"""
import json
import os
import re
import shlex
import subprocess
import sys

DEFAULT_DIRS = ['fs', 'tiers', 'tools', 'contrib']
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
EXTERN = re.compile(r'\bextern\b')


TOKEN = re.compile(r'/\*.*?(?:\*/|\Z)|//[^\n]*|"(?:\\.|[^"\\\n])*"?'
                   r"|'(?:\\.|[^'\\\n])*'?", re.S)


def uncomment(text):
    """@text with comments, string and character literals blanked, line
    breaks kept (so that line numbers stay right)."""
    def blank(m):
        t = m.group(0)
        if t[0] in '"\'' and len(t) > 1:
            return t[0] + re.sub(r'[^\n]', ' ', t[1:-1]) + t[-1]
        return re.sub(r'[^\n]', ' ', t)
    return TOKEN.sub(blank, text)


class Source:
    """The checked files, their modules, includes and externs."""

    def __init__(self, dirs):
        self.files = []
        for d in dirs:
            for root, subdirs, names in os.walk(d):
                subdirs.sort()
                for n in sorted(names):
                    if n.endswith(('.c', '.h')):
                        self.files.append(os.path.normpath(
                            os.path.join(root, n)))
        self.files = sorted(set(self.files))
        self.fileset = set(self.files)
        self.text, self._clean, self._includes = {}, {}, {}
        for f in self.files:
            with open(f, encoding='utf-8', errors='replace') as fh:
                self.text[f] = fh.read()

    def module(self, path):
        d, n = os.path.split(path)
        stem = n[:-2]
        if n.endswith('_i.h') and os.path.join(d, stem[:-2] + '.h') \
                in self.fileset:
            stem = stem[:-2]
        return f'{d}/{stem}'

    def headerless(self, path):
        """A .c file without a header of its own."""
        return path.endswith('.c') and \
            path[:-2] + '.h' not in self.fileset

    def clean(self, path):
        if path not in self._clean:
            self._clean[path] = uncomment(self.text[path])
        return self._clean[path]

    def includes(self, path):
        """[(line number, name)] of the #include "..." lines of @path,
        outside comments."""
        if path in self._includes:
            return self._includes[path]
        raw = self.text[path]
        clean = self.clean(path)
        out = self._includes[path] = []
        for m in INCLUDE.finditer(raw):
            # the '#' must survive uncommenting: not inside a comment
            if clean[m.start() + m.group(0).index('#')] == '#':
                out.append((raw.count('\n', 0, m.start()) + 1,
                            m.group(1)))
        return out

    def externs(self):
        bad = []
        for f in self.files:
            if not f.endswith('.c'):
                continue
            clean = self.clean(f)
            for m in EXTERN.finditer(clean):
                line = clean.count('\n', 0, m.start()) + 1
                text = self.text[f].splitlines()[line - 1].strip()
                bad.append(f'{f}:{line}: {text}')
        return bad


def include_path(entry):
    """The -iquote directories, then the -I ones, of a compile command,
    as absolute paths."""
    args = entry.get('arguments') or shlex.split(entry['command'])
    quote, normal = [], []
    i = 0
    while i < len(args):
        a = args[i]
        for flag, into in (('-iquote', quote), ('-I', normal)):
            if a == flag and i + 1 < len(args):
                into.append(args[i + 1])
                i += 1
                break
            if a.startswith(flag) and len(a) > len(flag):
                into.append(a[len(flag):])
                break
        i += 1
    return tuple(os.path.normpath(os.path.join(entry['directory'], p))
                 for p in quote + normal)


def object_of(entry):
    out = entry.get('output')
    if not out:
        args = entry.get('arguments') or shlex.split(entry['command'])
        out = args[args.index('-o') + 1] if '-o' in args else None
    return os.path.normpath(os.path.join(entry['directory'], out)) \
        if out else None


class Build:
    """What the build says: each compiled file's include path and
    objects (from compile_commands.json), and the objects' symbols."""

    def __init__(self, builddir, root):
        path = os.path.join(builddir, 'compile_commands.json')
        with open(path, encoding='utf-8') as f:
            db = json.load(f)
        self.path = {}    # source (relative to root) -> include path
        self.objects = {}  # source -> [object]
        for e in db:
            src = os.path.relpath(os.path.normpath(
                os.path.join(e['directory'], e['file'])), root)
            ip = self.path.setdefault(src, ())
            self.path[src] = ip + tuple(p for p in include_path(e)
                                        if p not in ip)
            obj = object_of(e)
            if obj and obj not in self.objects.setdefault(src, []):
                self.objects[src].append(obj)

    @staticmethod
    def symbols(objs):
        """{object: (defined, undefined)} global symbol names of each of
        @objs, from one nm; a defined name maps to whether it is code."""
        out = {o: ({}, set()) for o in objs}
        if not objs:
            return out
        r = subprocess.run(['nm', '-P', '-A'] + objs, capture_output=True,
                           text=True, check=False)
        if r.returncode != 0:
            raise OSError(f'nm: {r.stderr.strip()}')
        for line in r.stdout.splitlines():
            obj, sep, rest = line.partition(': ')
            p = rest.split()
            if not sep or obj not in out or len(p) < 2:
                continue
            name, kind = p[0], p[1]
            if kind in 'Uwv':
                out[obj][1].add(name)
            elif kind.isupper() or kind == 'u':
                out[obj][0][name] = kind in 'Ti'
        return out


class Graph:
    def __init__(self, src):
        self.src = src
        self.mods = {src.module(f) for f in src.files}
        # edges[a][b] = {'calls': {(file, file2): {(sym, is_code)}},
        #                'includes': [(file, line, name, resolved)]}
        self.edges = {m: {} for m in self.mods}

    def arrow(self, a, b):
        return self.edges[a].setdefault(b, {'calls': {}, 'includes': []})

    def add_include(self, f, line, name, target):
        a, b = self.src.module(f), self.src.module(target)
        if a == b or self.src.headerless(f):
            return
        inc = self.arrow(a, b)['includes']
        if (f, line, name, target) not in inc:
            inc.append((f, line, name, target))

    def add_call(self, f, sym, is_code, target):
        a, b = self.src.module(f), self.src.module(target)
        if a != b:
            self.arrow(a, b)['calls'].setdefault((f, target), set()).add(
                (sym, is_code))


def resolve(name, including, path, root):
    """The file #include "@name" in @including names (relative to
    @root), or None: @including's directory, then @path, in order."""
    for d in (os.path.dirname(os.path.join(root, including)),) + path:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return os.path.relpath(p, root)
    return None


def add_includes(graph, src, build, root):
    """Follow the includes of every checked file, as its compiles see
    them; a file no compile reaches gets the include path of the
    compiles of its own directory (or only its own directory)."""
    done = set()

    def walk(start, path):
        todo = [start]
        while todo:
            f = todo.pop()
            if (f, path) in done:
                continue
            done.add((f, path))
            for line, name in src.includes(f):
                t = resolve(name, f, path, root)
                if t in src.fileset:
                    graph.add_include(f, line, name, t)
                    todo.append(t)

    for f in src.files:
        if f in build.path:
            walk(f, build.path[f])
    reached = {f for f, _ in done}
    for f in src.files:
        if f in reached:
            continue
        d = os.path.dirname(f)
        path = next((p for s, p in sorted(build.path.items())
                     if os.path.dirname(s) == d), ())
        walk(f, path)


def add_calls(graph, src, build):
    """Arrows from the objects; returns the problems found."""
    problems = []
    objs = {}
    for f in src.files:
        for obj in build.objects.get(f, []):
            if not os.path.isfile(obj):
                problems.append(f'{obj}: not built (run ninja first)')
                continue
            if os.path.getmtime(obj) < os.path.getmtime(f):
                problems.append(f'{obj}: older than {f} (run ninja first)')
            objs[obj] = f
    defined, code, undefined = {}, {}, {}
    for obj, (d, u) in build.symbols(sorted(objs)).items():
        f = objs[obj]
        for s, is_code in d.items():
            defined.setdefault(s, set()).add(f)
            code[s] = is_code
        undefined.setdefault(f, set()).update(u)
    for f, syms in sorted(undefined.items()):
        for s in sorted(syms):
            by = sorted(defined.get(s, set()) - {f})
            if len(by) == 1:
                graph.add_call(f, s, code[s], by[0])
            elif len(by) > 1:
                problems.append(f'{f} uses {s}, which {" and ".join(by)} '
                                'all define: rename one')
    return problems


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


def why(arrow):
    """The lines that say what makes one arrow."""
    lines = []
    for (f, t), syms in sorted(arrow['calls'].items()):
        funcs = sorted(n for n, is_code in syms if is_code)
        data = sorted(n for n, is_code in syms if not is_code)
        what = [f'calls {", ".join(funcs)}'] if funcs else []
        what += [f'uses {", ".join(data)}'] if data else []
        lines.append(f'{"; ".join(what)}  ({f} -> {t})')
    for f, line, name, t in arrow['includes']:
        lines.append(f'includes "{name}" = {t}  ({f}:{line})')
    return lines


def unchecked(build, dirs, builddir):
    """Compiled .c files of the source tree outside @dirs, tests/ and
    the build directory (generated sources)."""
    out = []
    gen = os.path.relpath(os.path.abspath(builddir)) + '/'
    for s in sorted(build.path):
        if s.startswith(('..', '/', 'tests/', gen)) or not s.endswith('.c'):
            continue
        if not any(s == d or s.startswith(d.rstrip('/') + '/')
                   for d in dirs):
            out.append(s)
    return out


def main(argv):
    dot = False
    builddir = 'build'
    dirs = []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == '--dot':
            dot = True
        elif a == '--build' and args:
            builddir = args.pop(0)
        elif a.startswith('--build='):
            builddir = a[len('--build='):]
        elif a.startswith('-'):
            print(f'modgraph: unknown option {a}', file=sys.stderr)
            return 2
        else:
            dirs.append(os.path.normpath(a))
    dirs = dirs or DEFAULT_DIRS
    for d in dirs:
        if not os.path.isdir(d):
            print(f'modgraph: {d}: not a directory', file=sys.stderr)
            return 2
    root = os.getcwd()
    try:
        build = Build(builddir, root)
    except (OSError, ValueError, KeyError) as e:
        print(f'modgraph: {builddir}: not a built meson build directory '
              f'({e})', file=sys.stderr)
        return 2
    src = Source(dirs)
    graph = Graph(src)
    add_includes(graph, src, build, root)
    try:
        problems = add_calls(graph, src, build)
    except OSError as e:
        print(f'modgraph: {e}', file=sys.stderr)
        return 2
    for f in src.files:
        if f.endswith('.c') and f not in build.objects:
            print(f'modgraph: {f} is not compiled by {builddir}: its '
                  'calls are not checked', file=sys.stderr)
    edges = graph.edges
    if dot:
        print('digraph modules {')
        for a in sorted(edges):
            for b in sorted(edges[a]):
                style = '' if edges[a][b]['calls'] else ' [style=dashed]'
                print(f'  "{a}" -> "{b}"{style};')
        print('}')
        return 0
    bad = cycles(edges)
    for comp in bad:
        print(f'cycle of {len(comp)} modules: {" ".join(comp)}')
        members = set(comp)
        for a in comp:
            for b in sorted(edges[a]):
                if b in members:
                    print(f'  {a} -> {b}')
                    for line in why(edges[a][b]):
                        print(f'      {line}')
    ext = src.externs()
    for e in ext:
        print(f'extern declaration in a .c file (put it in the header '
              f'of the module that defines it): {e}')
    for s in unchecked(build, dirs, builddir):
        problems.append(f'{s}: compiled, but not under a checked '
                        f'directory ({" ".join(dirs)})')
    for p in problems:
        print(p)
    if bad or ext or problems:
        return 1
    ncalls = sum(1 for a in edges.values() for e in a.values() if e['calls'])
    nall = sum(len(a) for a in edges.values())
    print(f'module graph: {len(edges)} modules, {nall} dependencies '
          f'({ncalls} with calls, {nall - ncalls} by includes only), '
          'no cycle')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
