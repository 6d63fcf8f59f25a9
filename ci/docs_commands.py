#!/usr/bin/env python3
"""Checks every wio command the Markdown files of the repository show against the wio
binary's command line, so the docs cannot name a flag that no longer exists or a value of
the wrong form. Called by ci/test.sh after the build.

Commands: the lines of code blocks (indented or fenced) that start with `wio ` (or
`$ wio `), and inline code spans that do. Each is split as a shell would (up to a pipe,
a redirection, `&&` or `;`, without its trailing `# comment`) and run with
WIO_PARSE_ONLY=1, which makes wio parse its command line and exit 0, running nothing; a
command wio refuses fails the check with its file, line and wio's message. An inline
span may be a mention in prose (`wio sim --from`): it passes when clap finds it only
incomplete (a required argument or a flag's value missing), not when it names a
subcommand or flag that does not exist or a value of the wrong form.

Not checked, and counted: commands with placeholders (`<...>`, `...`, an all-capitals
word such as FILE or N, `$VARIABLES`), whose values are the reader's to choose.

Usage: ci/docs_commands.py WIO_BINARY
"""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INLINE = re.compile(r"`(\$ )?(wio [^`]+)`")
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…|\$[A-Za-z_{]|\b[A-Z][A-Z0-9_]*\b|\[-")
# What clap says when a command is only incomplete: an inline mention (`wio sim --from`)
# names a subcommand or a flag without all it needs, which is fine in prose.
INCOMPLETE = ("the following required arguments were not provided", "a value is required for")


def markdown_files():
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [f for f in out.split() if not f.startswith("fuzz/")]


def commands(path):
    """(line number, command text, whether it is a whole command) of every wio command in
    the Markdown file: a code block's line is a whole command, an inline span may be a
    mention (`wio explore`, `wio sim --from`)."""
    fenced = False
    found = []
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            stripped = line.strip()
            if stripped.startswith("```"):
                fenced = not fenced
                continue
            in_block = fenced or line.startswith("    ") or line.startswith("\t")
            if in_block:
                text = stripped[2:] if stripped.startswith("$ ") else stripped
                if text.startswith("wio "):
                    found.append((n, text, True))
                    continue
            for m in INLINE.finditer(line):
                found.append((n, m.group(2), False))
    return found


def argv(text):
    """The arguments after `wio`, or None when the command has placeholders."""
    text = re.sub(r"\s+#.*$", "", text)
    if PLACEHOLDER.search(text):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    args = []
    for w in words[1:]:
        if w in ("|", "&&", ";", "||") or w.startswith(">") or w.startswith("2>") or w.startswith("<"):
            break
        args.append(w)
    return args


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ci/docs_commands.py WIO_BINARY")
    wio = sys.argv[1]
    env = dict(os.environ, WIO_PARSE_ONLY="1")
    checked = skipped = 0
    failures = []
    for path in markdown_files():
        for n, text, whole in commands(path):
            args = argv(text)
            if args is None:
                skipped += 1
                continue
            r = subprocess.run([wio] + args, env=env, capture_output=True, text=True)
            checked += 1
            first = (r.stderr.strip().splitlines() or ["(no message)"])[0]
            if r.returncode != 0 and (whole or not any(i in first for i in INCOMPLETE)):
                failures.append(f"{path}:{n}: `{text}`: wio says: {first}")
    for f in failures:
        print(f"docs: {f}")
    print(f"docs: {checked} wio commands of the Markdown files parsed by {wio}, "
          f"{len(failures)} refused; {skipped} with placeholders not checked")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
