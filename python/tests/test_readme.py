"""README.md's "Use from PyTorch" example, run unchanged: the first python
block after the `pytorch-example` marker is executed as a script in a fresh
interpreter (its own asserts compare the gradients with PyTorch's). The
package comes from PYTHONPATH: the source tree, or a `pip install --target`
directory (python/CMakeLists.txt runs both)."""

import os
import re
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def example():
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    match = re.search(r"<!-- pytorch-example[^>]*-->\s*```python\n(.*?)```",
                      text, re.S)
    if not match:
        raise AssertionError("README.md has no pytorch-example block")
    return match.group(1)


class ReadmeExample(unittest.TestCase):
    def test_runs_unchanged_and_matches_torch(self):
        proc = subprocess.run([sys.executable, "-c", example()],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, cwd=REPO)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"max \|d_x - torch\|: [0-9.e-]+")
        self.assertRegex(proc.stdout, r"bytes moved per training step: \d+")
        expected = os.environ.get("SLUICE_EXPECT_PACKAGE_DIR")
        if expected:  # the pip-installed copy, not the source tree
            probe = subprocess.run(
                [sys.executable, "-c", "import sluice; print(sluice.__file__)"],
                stdout=subprocess.PIPE, universal_newlines=True, cwd="/")
            self.assertTrue(probe.stdout.strip().startswith(expected),
                            probe.stdout)


if __name__ == "__main__":
    unittest.main()
