"""docs/Python.md's peak memory of a 24-layer BERT-large training step is
what `python3 -m sluice.memory examples/bert-large.json --layers 24` prints
now: the test reads the numbers from the doc's table and compares them with
the tool's output, so a change of the memory plan shows up here (re-run the
command and copy its numbers into the doc)."""

import os
import re
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def number(text):
    return int(text.replace(",", ""))


def doc_numbers():
    """(saved, scratch, contexts, total) from docs/Python.md's table."""
    with open(os.path.join(REPO, "docs", "Python.md")) as f:
        text = f.read()
    row = re.search(r"\| 24 contexts × saved region ([\d,]+) \+ one scratch "
                    r"region ([\d,]+) [^|]*\| ([\d,]+) \|", text)
    total = re.search(r"\| \*\*total\*\* \| \*\*([\d,]+)\*\*", text)
    if not row or not total:
        raise AssertionError("docs/Python.md has no 24-layer memory table")
    return tuple(number(g) for g in row.groups()) + (number(total.group(1)),)


def run_memory(layers):
    """`python3 -m sluice.memory examples/bert-large.json --layers N`."""
    return subprocess.run(
        [sys.executable, "-m", "sluice.memory", "examples/bert-large.json",
         "--layers", str(layers)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, cwd=REPO)


class MemoryDoc(unittest.TestCase):
    def test_doc_table_is_the_tools_output(self):
        proc = run_memory(24)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # Nothing on stderr: no warning about how the module was imported.
        self.assertEqual(proc.stderr, "")
        contexts = re.search(
            r"contexts, one shared scratch: 24 x saved ([\d,]+) \+ scratch "
            r"([\d,]+) +([\d,]+)", proc.stdout)
        total = re.search(r"total, shared scratch +([\d,]+)", proc.stdout)
        self.assertTrue(contexts and total, proc.stdout)
        self.assertEqual(
            tuple(number(g) for g in contexts.groups()) +
            (number(total.group(1)),), doc_numbers(), proc.stdout)

    def test_bad_layer_count_is_an_error(self):
        proc = run_memory(0)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stderr.strip(),
                         "error: layers must be at least 1, not 0")


if __name__ == "__main__":
    unittest.main()
