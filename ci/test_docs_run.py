#!/usr/bin/env python3
"""Tests of ci/docs_run.py's reading of a page (its directives and commands), without a
wio binary: run by ci/test.sh before the docs' commands run. `python3 ci/test_docs_run.py`."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_run  # noqa: E402


def page(text):
    """The planned steps of a Markdown page with `text`, as docs_run plans them in CI, in a
    repository holding one e2e test, tests/e2e/t.rs::real_test."""
    d = tempfile.mkdtemp()
    name = os.path.join(d, "page.md")
    with open(name, "w", encoding="utf-8") as f:
        f.write(text)
    os.makedirs(os.path.join(d, "tests/e2e"))
    with open(os.path.join(d, "tests/e2e/t.rs"), "w", encoding="utf-8") as f:
        f.write("#[test]\nfn real_test() {}\n")
    root, docs_run.ROOT = docs_run.ROOT, d
    try:
        return [s for dirs, cmds in docs_run.blocks("page.md")
                for s in docs_run.plan("page.md", dirs, cmds, d, False)]
    finally:
        docs_run.ROOT = root


class DocsRun(unittest.TestCase):
    def test_commands_of_indented_and_fenced_blocks_with_continuations(self):
        steps = page("Text.\n\n    wio run --seed 1 \\\n        --until x   # note\n"
                     "    not a command\n\n```\n$ wio snapshot info a.snap\n```\n"
                     "Inline `wio run --seed 2` is a mention.\n")
        self.assertEqual([(s[0], s[1], s[2]) for s in steps],
                         [(3, "wio run --seed 1 --until x", 0),
                          (8, "wio snapshot info a.snap", 0)])

    def test_scale_replaces_whole_numbers_only(self):
        steps = page('<!-- docs-run: scale "0..1000" "0..4" -->\n\n'
                     "    wio explore --seeds 0..1000\n    wio explore --seeds 0..100000\n")
        self.assertEqual([s[1] for s in steps],
                         ["wio explore --seeds 0..4", "wio explore --seeds 0..100000"])

    def test_exit_output_skip_and_slow(self):
        steps = page('<!-- docs-run: exit "explore" 1 -->\n'
                     '<!-- docs-run: output "explore" "first failing seed 0" -->\n'
                     '<!-- docs-run: skip "--gdb" "waits for a debugger" -->\n'
                     '<!-- docs-run: slow "outage" "six minutes" -->\n\n'
                     "    wio explore --from s.snap --seeds 0..2\n    wio run --gdb :1234\n"
                     "    wio sim outage.toml\n")
        self.assertEqual([(s[2], s[3]) for s in steps],
                         [(1, ["first failing seed 0"]), (None, []), (None, [])])

    def test_a_directive_matching_no_command_fails(self):
        with self.assertRaisesRegex(docs_run.PageError, "matches no command"):
            page('<!-- docs-run: scale "0..1000" "0..4" -->\n\n    wio explore --seeds 0..10\n')

    def test_a_directive_with_no_block_after_it_fails(self):
        with self.assertRaisesRegex(docs_run.PageError, "no code block after it"):
            page('    wio run\n\n<!-- docs-run: exit "run" 1 -->\n')

    def test_an_unfilled_placeholder_fails_but_a_quoted_capital_does_not(self):
        with self.assertRaisesRegex(docs_run.PageError, "placeholders"):
            page("    wio run --arch riscv64 ROOTFS.ext4\n")
        steps = page("    wio explore --from w.snap --fail-on 'planted: BUG'\n")
        self.assertEqual(steps[0][2], 0)

    def test_a_covered_command_names_an_existing_test(self):
        covered = '<!-- docs-run: covered "--gdb" tests/e2e/t.rs::{} -->\n\n' \
            "    wio run --gdb :1234\n"
        self.assertEqual(page(covered.format("real_test"))[0][2], None)
        with self.assertRaisesRegex(docs_run.PageError, "names no test"):
            page(covered.format("no_such_test"))


if __name__ == "__main__":
    unittest.main()
