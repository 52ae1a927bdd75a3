"""Checks that a report names the sources the binary was built from.

check_version.py SOURCE_DIR REPORT_JSON REPORT_MD

report.json's "sluice" object and report.md's line carry the version and
the source commit; in a git checkout the commit is HEAD's (git describe
--dirty), so a binary left over from other sources fails here.
"""
import json
import re
import subprocess
import sys

source_dir, report_json, report_md = sys.argv[1:4]
sluice = json.load(open(report_json))["sluice"]
version, commit = sluice["version"], sluice["commit"]
assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"version {version!r}"
line = f"Sluice {version}, source {commit}."
assert line in open(report_md).read(), f"report.md lacks {line!r}"
try:
    head = subprocess.run(["git", "-C", source_dir, "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout
except (OSError, subprocess.CalledProcessError):
    head = None
if head:
    sha = commit.removesuffix("-dirty")
    assert re.fullmatch(r"[0-9a-f]{12,}", sha), f"commit {commit!r}"
    assert head.strip().startswith(sha), \
        f"built from {commit}, but the sources are at {head.strip()}: rebuild"
else:
    assert commit == "unknown", f"commit {commit!r} outside a git checkout"
print(f"ok: Sluice {version}, source {commit}")
