#!/usr/bin/env python3
"""House rules of the code layout, checked by ci/test.sh:

1. No import cycles between the modules of a crate's src/: a module's `crate::`, `super::`
   and `self::` paths (outside comments and `#[cfg(test)] mod tests`) are its imports; a
   cycle among them fails the check. A parent declaring its children (`mod x;`) is
   containment, not an import.
2. No Rust file in the workspace longer than MAX_LINES (split by what the code models).
3. Every repository path a Markdown file of the repository names exists. Checked: the
   relative targets of its links and images (`[text](target)`, resolved against the
   Markdown file's folder; http(s) and mailto links and the `#anchor` part are left out),
   and the tokens of its code (`inline code`, indented and fenced blocks) that start with
   a top-level entry of the repository and a `/` (`vmm/src/cli.rs`, `images/flight/`,
   resolved against the repository's root, or else against the Markdown file's folder)
   or with `./` or `../` (resolved against the Markdown file's folder). Left out: tokens
   with wildcards, `...`, `<placeholders>`, `$VARIABLES` or an all-capitals segment
   (`fuzz/artifacts/TARGET/`; `NAME.pcap` when no such file exists), and paths under
   `target/`. The walk skips `target/`
   folders and `.git`. A missing path prints `layout: FILE:LINE names PATH, which does not
   exist`.
4. One module layout: a module with submodules is a folder with its `mod.rs`
   (`csr/mod.rs`, `csr/access.rs`), never a `csr.rs` beside a `csr/` folder.

Prints what it found; exits 1 on a violation.
"""
import os
import re
import sys

MAX_LINES = 850
CRATES = ["clock", "scheduler", "virtio-devices", "riscv-engine", "vmm", "vmm/machines", "vmm/world", "vmm/search", "vmm/images", "tests"]


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


SKIP_DIRS = {"target", ".git"}
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"`+([^`]+)`+")
FENCE = re.compile(r"^\s*(```|~~~)")
PLACEHOLDER_SEGMENT = re.compile(r"^[A-Z][A-Z0-9_]+$")
PLACEHOLDER_FILE = re.compile(r"^[A-Z][A-Z0-9_]+\.[a-z0-9]+$")
LEAD = "\"'([{"
TRAIL = "\"'()[]{},;:.!?"


def markdown_files(root):
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(dirpath, f)


def placeholder(token):
    """A token that names no particular path: wildcards, ellipses, <...>, $VARS, CAPS."""
    if any(c in token for c in "*?<>{}$|~\u2026") or "..." in token:
        return True
    if token.startswith("target/") or "/target/" in token:
        return True
    return any(PLACEHOLDER_SEGMENT.match(s) for s in token.split("/") if s not in ("", ".", ".."))


def path_tokens(text, tops):
    """The tokens of code text that look like repository paths."""
    for raw in text.split():
        token = raw.lstrip(LEAD).rstrip(TRAIL)
        token = re.sub(r":\d+$", "", token)
        if "/" not in token or placeholder(token):
            continue
        if token.startswith(("./", "../")) or token.split("/", 1)[0] in tops:
            yield token


def named_paths(lines, tops):
    """(line number, path, relative to the file's folder only) for each path named."""
    in_fence = open_span = False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or (line.startswith(("    ", "\t")) and not open_span):
            for token in path_tokens(line, tops):
                yield n, token, token.startswith(("./", "../"))
            continue
        if not line.strip():
            open_span = False  # a code span ends with its paragraph
        # A code span may go on over a line break: close it here, reopen it on the next line.
        line = ("`" if open_span else "") + line
        open_span = line.count("`") % 2 == 1
        if open_span:
            line += "`"
        for span in CODE_SPAN.findall(line):
            for token in path_tokens(span, tops):
                yield n, token, token.startswith(("./", "../"))
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            target = target.split("#", 1)[0].split("?", 1)[0]
            if target and not placeholder(target):
                yield n, target, True


def doc_paths(root):
    """Rule 3: the repository paths Markdown files name exist. Returns the violations."""
    root = os.path.normpath(root)
    tops = {e for e in os.listdir(root) if e not in SKIP_DIRS}
    bad = files = checked = 0
    for md in markdown_files(root):
        files += 1
        here = os.path.dirname(md)
        rel = os.path.relpath(md, root)
        with open(md, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for n, path, local in named_paths(lines, tops):
            checked += 1
            if path.startswith("/"):
                candidates = [os.path.join(root, path.lstrip("/"))]
            elif local:
                candidates = [os.path.join(here, path)]
            else:
                candidates = [os.path.join(root, path), os.path.join(here, path)]
            if not any(os.path.exists(c) for c in candidates):
                if any(PLACEHOLDER_FILE.match(s) for s in path.split("/")):
                    continue  # `DIR/NAME.pcap`: a placeholder (`vmm/README.md` is checked)
                bad += 1
                print(f"layout: {rel}:{n} names {path}, which does not exist")
    print(f"layout: docs: {files} Markdown files, {checked} repository paths named, {bad} missing")
    return bad


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
                    if f not in ("mod.rs", "lib.rs", "main.rs") and os.path.isdir(path[:-3]):
                        bad += 1
                        rel = os.path.relpath(path, root)
                        print(f"layout: {rel} sits beside its folder {rel[:-3]}/: move it to {rel[:-3]}/mod.rs")
    bad += doc_paths(root)
    if bad:
        print(f"layout: {bad} violations")
        return 1
    print("layout: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
