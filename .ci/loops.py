"""Import loops in a crate: `python3 .ci/loops.py CRATE/src`.

Builds the module graph of the crate from its `use crate::...`, `crate::a::b` and `super::` paths
and prints every pair of modules on a cycle, of which neither contains the other (a module may
use its parent's items and the other way round). Exits 1 if there is one. A text scan, not a
resolver: a path in a string counts too (comments are skipped)."""
import os, re, sys, itertools
root = sys.argv[1]
def modname(path):
    rel = os.path.relpath(path, root)[:-3]
    parts = rel.split('/')
    if parts[-1] in ('mod', 'lib'): parts = parts[:-1]
    return tuple(parts)
mods = {}
for dp, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            mods[modname(os.path.join(dp, f))] = os.path.join(dp, f)
known = set(mods)
def resolve(segs):
    # longest prefix that is a module
    for n in range(len(segs), 0, -1):
        if tuple(segs[:n]) in known: return tuple(segs[:n])
    return None
edges = {m: set() for m in mods}
for m, p in mods.items():
    src = open(p).read()
    src = re.sub(r'//[^\n]*', '', src)
    # use crate::{a, b::c} and crate::a::b paths
    for mt in re.finditer(r'crate::((?:\w+::)*\w+)', src):
        t = resolve(mt.group(1).split('::'))
        if t and t != m: edges[m].add(t)
    for mt in re.finditer(r'use crate::\{([^;]*)\};', src, re.S):
        for item in re.split(r'[,\s]+', mt.group(1)):
            item = item.strip('{} ')
            if not item: continue
            t = resolve(item.split('::'))
            if t and t != m: edges[m].add(t)
    for mt in re.finditer(r'super::((?:\w+::)*\w+|\{)', src):
        base = m[:-1]
        segs = list(base) + (mt.group(1).split('::') if mt.group(1) != '{' else [])
        t = resolve(segs) or base
        if t != m: edges[m].add(t)
def contains(a, b): return b[:len(a)] == a
cycles = set()
for a in mods:
    for b in edges[a]:
        if contains(a, b) or contains(b, a): continue
        # is there a path b -> a ?
        seen, stack = set(), [b]
        while stack:
            x = stack.pop()
            if x == a:
                cycles.add(tuple(sorted(['::'.join(a), '::'.join(b)]))); break
            if x in seen: continue
            seen.add(x)
            stack.extend(y for y in edges[x] if not (contains(y, x) or contains(x, y)) or y == a)
for c in sorted(cycles): print('cycle through', c[0], '<->', c[1])
print(f'{len(mods)} modules, {sum(len(v) for v in edges.values())} edges, {len(cycles)} pairs on a cycle')
sys.exit(1 if cycles else 0)
