#!/usr/bin/env python3
"""Runs the wio commands of the repository's Markdown pages, page by page, in the order a
reader would type them, and fails when one of them fails. Called by ci/test.sh after the
build (ci/docs_commands.py checks beforehand that every command parses).

What runs: every line of a code block (fenced or indented) that starts with `wio `, with
its `\\` continuation lines joined. The pages run in one scratch folder, the README first,
then docs/ in name order, so a page may use what an earlier one wrote (docs/exploration.md
explores the README's start.snap). A repository path in a command (images/...) works
because the scratch folder links the repository's top-level folders. Each command runs
under bash with `wio` meaning the binary under test and must exit 0, or the status its
page's directive names.

Directives: an HTML comment `<!-- docs-run: VERB ARGS -->` (invisible on a rendered page)
applies to the next code block of its page. Arguments are split as a shell would.
  scale OLD NEW       in that block's commands, OLD becomes NEW (a smaller seed range or
                      budget, so CI stays in its time); printed on every run
  replace OLD NEW     the same for what is not a size (an optional flag shown in brackets)
  file NAME KEY       the scratch folder's NAME links the guest artifact that
                      $WIO_CACHE/riscv64-guests.env names KEY (a placeholder the reader
                      fills with their own file)
  exit TEXT CODE      the commands containing TEXT end with CODE (a failing seed found)
  output TEXT LINE    the output of the commands containing TEXT holds LINE (what the
                      page says they print), at the sizes CI runs them
  covered TEXT TEST   the commands containing TEXT are not run here: the e2e test TEST
                      (tests/e2e/FILE.rs::function) runs those steps; the test must exist
  slow TEXT REASON    the commands containing TEXT take longer than CI can give them
                      (REASON says how long): run only with --as-written
  skip TEXT REASON    the commands containing TEXT cannot run here, for REASON (printed)
A directive that matches no command of its block fails the check (the page changed under
it), as does a command with placeholders (`<...>`, an all-capitals word, `$VARIABLE`)
that no directive resolves, scales, covers or skips: every command is run or accounted for.

Usage: ci/docs_run.py [--as-written] WIO_BINARY [PAGE.md ...]   (default: every page)
  --as-written   runs the commands at the sizes the pages show (no `scale`) and the slow
                 ones too: hours, for a release rather than for CI
Environment: WIO_DOCS_TIMEOUT, seconds per command (default 600).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from docs_commands import markdown_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRECTIVE = re.compile(r"<!--\s*docs-run:\s*(.*?)\s*-->")
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…|\$[A-Za-z_{(]|\b[A-Z][A-Z0-9_]*\b|\[-")
VERBS = {"output": 2, "scale": 2, "replace": 2, "file": 2, "exit": 2, "covered": 2, "slow": 2, "skip": 2}


class PageError(Exception):
    """A page whose directives or commands cannot be run as written."""


def pages():
    """The Markdown files docs_commands.py checks, README.md first, then docs/."""
    return sorted(markdown_files(),
                  key=lambda p: (p != "README.md", not p.startswith("docs/"), p))


def blocks(path):
    """(directives, [(line, command)]) of every code block of the page holding a wio
    command; directives are (line, verb, args) of the comments since the previous block."""
    found = []
    pending = []
    current = None
    fenced = False
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        n = i + 1
        i += 1
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            if not fenced:
                current = None
            continue
        in_block = fenced or line.startswith("    ") or line.startswith("\t")
        if not in_block:
            if stripped:
                current = None
            # A directive shown in an inline code span is an example, not a directive.
            for m in DIRECTIVE.finditer(re.sub(r"`[^`]*`", "", line)):
                words = shlex.split(m.group(1))
                if not words or words[0] not in VERBS or len(words) != VERBS[words[0]] + 1:
                    raise PageError(f"{path}:{n}: bad directive: {m.group(0)}")
                pending.append((n, words[0], tuple(words[1:])))
            continue
        text = stripped[2:] if stripped.startswith("$ ") else stripped
        if not text.startswith("wio "):
            continue
        while text.endswith("\\") and i < len(lines):
            text = text[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        if current is None:
            current = (pending, [])
            found.append(current)
            pending = []
        current[1].append((n, text))
    if pending:
        raise PageError(f"{path}:{pending[0][0]}: directive with no code block after it")
    return found


def guest_artifact(key):
    cache = os.environ.get("WIO_CACHE") or os.path.join(os.environ["HOME"], ".cache/wio")
    try:
        with open(os.path.join(cache, "riscv64-guests.env"), encoding="utf-8") as f:
            for line in f:
                name, _, value = line.strip().partition("=")
                if name == key and os.path.isfile(value):
                    return value
    except OSError:
        pass
    return None


def whole(text):
    """A pattern for `text` not followed by more of a word or number (so 0..1000 does not
    match the start of 0..100000)."""
    return re.compile(re.escape(text) + r"(?![0-9A-Za-z_])")


def plan(path, directives, commands, scratch, as_written):
    """What to do with each command of one block: (line, shell text, expected status or
    None to not run, lines its output must hold, a note)."""
    used = set()
    files = {}
    for d in directives:
        n, verb, (a, b) = d
        if verb == "file":
            target = guest_artifact(b)
            if target is None:
                raise PageError(f"{path}:{n}: the guest manifest names no file for {b} "
                                "(run images/build-all-riscv64.sh)")
            files[a] = target
            used.add(d)
    out = []
    for n, text in commands:
        text = re.sub(r"\s+#[^'\"]*$", "", text)
        note = []
        run = True
        want = 0
        expect = []
        for d in directives:
            dn, verb, (a, b) = d
            if verb == "scale" and whole(a).search(text):
                used.add(d)
                if not as_written:
                    text = whole(a).sub(b, text)
                    note.append(f"scaled {a} to {b}")
            elif verb == "replace" and a in text:
                text = text.replace(a, b)
                used.add(d)
            elif verb == "exit" and a in text:
                want = int(b)
                used.add(d)
            elif verb == "output" and a in text:
                expect.append(b)
                used.add(d)
            elif verb == "covered" and a in text:
                file, _, func = b.partition("::")
                try:
                    with open(os.path.join(ROOT, file), encoding="utf-8") as f:
                        found = f"fn {func}(" in f.read()
                except OSError:
                    found = False
                if not found:
                    raise PageError(f"{path}:{dn}: {b} names no test")
                if run:
                    note.append(f"run by {b}")
                run = False
                used.add(d)
            elif verb == "slow" and a in text:
                used.add(d)
                if not as_written:
                    run = False
                    note.append(f"not run in CI: {b}")
            elif verb == "skip" and a in text:
                run = False
                note.append(f"not run: {b}")
                used.add(d)
        for name in files:
            if name in text:
                link = os.path.join(scratch, name)
                if os.path.lexists(link):
                    os.remove(link)
                os.symlink(files[name], link)
        if run:
            rest = text
            for name in files:
                rest = rest.replace(name, "")
            if PLACEHOLDER.search(re.sub(r"'[^']*'", "", rest)):
                raise PageError(f"{path}:{n}: `{text}` has placeholders no directive fills; "
                                "add a docs-run directive (see ci/docs_run.py)")
        out.append((n, text, want if run else None, expect, "; ".join(note)))
    for d in directives:
        if d not in used:
            raise PageError(f"{path}:{d[0]}: directive '{d[1]} {shlex.join(d[2])}' matches "
                            "no command of the code block after it")
    return out


def main():
    args = sys.argv[1:]
    as_written = bool(args) and args[0] == "--as-written"
    args = args[1:] if as_written else args
    if not args:
        sys.exit("usage: ci/docs_run.py [--as-written] WIO_BINARY [PAGE.md ...]")
    wio = os.path.abspath(args[0])
    chosen = args[1:] or pages()
    limit = int(os.environ.get("WIO_DOCS_TIMEOUT", "600"))
    scratch = tempfile.mkdtemp(prefix="wio-docs-run-")
    for entry in os.listdir(ROOT):
        if not entry.startswith(".") and os.path.isdir(os.path.join(ROOT, entry)) \
                and entry != "target":
            os.symlink(os.path.join(ROOT, entry), os.path.join(scratch, entry))
    prelude = f'wio() {{ {shlex.quote(wio)} "$@"; }}\n'
    ran = not_run = 0
    failures = []
    started = time.monotonic()
    for path in chosen:
        try:
            todo = [step for d, c in blocks(path) for step in plan(path, d, c, scratch, as_written)]
        except (PageError, OSError) as e:
            failures.append(str(e))
            continue
        for n, text, want, expect, note in todo:
            tail = f"   ({note})" if note else ""
            if want is None:
                not_run += 1
                print(f"docs-run: {path}:{n}: {text}{tail}", flush=True)
                continue
            t0 = time.monotonic()
            log = os.path.join(scratch, f"{os.path.basename(path)}-{n}.log")
            with open(log, "w", encoding="utf-8") as out:
                try:
                    r = subprocess.run(["bash", "-c", prelude + text], cwd=scratch,
                                       stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, timeout=limit)
                    status = r.returncode
                except subprocess.TimeoutExpired:
                    status = f"timeout after {limit} s"
            ran += 1
            took = time.monotonic() - t0
            print(f"docs-run: {path}:{n}: {text}{tail}: exit {status} in {took:.1f} s",
                  flush=True)
            with open(log, encoding="utf-8", errors="replace") as f:
                output = f.read()
            missing = [e for e in expect if e not in output]
            if status != want or missing:
                last = output.strip().splitlines()[-15:]
                why = f"ended with {status}, not {want}" if status != want else \
                    "printed no line holding " + ", ".join(repr(m) for m in missing)
                failures.append(f"{path}:{n}: `{text}` {why}; its output ends:\n    "
                                + "\n    ".join(last))
    for f in failures:
        print(f"docs-run: FAILED {f}")
    kept = f"; their files are in {scratch}" if failures else ""
    print(f"docs-run: {ran} commands of {len(chosen)} pages run in "
          f"{time.monotonic() - started:.0f} s, {len(failures)} failed; {not_run} not run "
          f"(listed above with the test that runs them or the reason){kept}")
    if not failures:
        shutil.rmtree(scratch)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
