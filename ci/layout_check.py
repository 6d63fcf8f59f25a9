#!/usr/bin/env python3
"""House rules of the code layout, checked by ci/test.sh:

1. No import cycles between the modules of a crate's src/: a module's `crate::`, `super::`
   and `self::` paths (outside comments and `#[cfg(test)] mod tests`) are its imports; a
   cycle among them fails the check. A parent declaring its children (`mod x;`) is
   containment, not an import.
2. No Rust file in the workspace longer than MAX_LINES (split by what the code models).

Prints what it found; exits 1 on a violation.
"""
import os
import re
import sys

MAX_LINES = 850
CRATES = ["clock", "scheduler", "virtio-devices", "riscv-engine", "vmm", "tests"]


def modules(src):
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "main", "lib"):
                parts = parts[:-1]
            mods["::".join(parts)] = path
    return mods


def resolve(mods, cur, path):
    segs = path.split("::")
    base = cur.split("::") if cur else []
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] == "super":
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
    elif segs[0] == "self":
        segs = segs[1:]
    full = base + segs
    while full:
        key = "::".join(full)
        if key in mods:
            return key
        full = full[:-1]
    return None


def imports(mods):
    edges = {m: set() for m in mods}
    for m, path in mods.items():
        with open(path) as fh:
            text = fh.read()
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
        text = re.sub(r"//[^\n]*", "", text)
        for found in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", text):
            target = resolve(mods, m, found.group(1))
            if target is not None and target != m and not target.startswith(m + "::"):
                edges[m].add(target)
    return edges


def cycles(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
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

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bad = 0
    for crate in CRATES:
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            src = os.path.join(root, crate)
        mods = modules(src)
        edges = imports(mods)
        found = cycles(edges)
        for comp in found:
            bad += 1
            print(f"layout: {crate}: import cycle among {', '.join(comp)}")
            for a in comp:
                for b in sorted(edges[a] & set(comp)):
                    print(f"layout:     {a} -> {b}")
        print(f"layout: {crate}: {len(mods)} modules, {len(found)} import cycles")
    for crate in CRATES:
        for dirpath, _, files in os.walk(os.path.join(root, crate)):
            for f in files:
                if f.endswith(".rs"):
                    path = os.path.join(dirpath, f)
                    with open(path) as fh:
                        n = sum(1 for _ in fh)
                    if n > MAX_LINES:
                        bad += 1
                        print(f"layout: {os.path.relpath(path, root)} has {n} lines (at most {MAX_LINES}): split it by what it models")
    if bad:
        print(f"layout: {bad} violations")
        return 1
    print("layout: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
