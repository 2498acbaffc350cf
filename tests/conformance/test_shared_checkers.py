"""The product owner's own checkers (../shared/tools) over the golden vectors copied into tests/golden.

golden-loop-check and golden-ext-check drive `python -m scheduler_core run` as a subprocess (the ext checker also
plays a scripted HTTP extender on a local port), so these tests exercise the CLI end to end.
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(os.path.dirname(ROOT), "shared", "tools")
GOLDEN = os.path.join(ROOT, "tests", "golden")

CHECKS = [
    ("golden-check", "core", "golden: "),
    ("golden-check", "config", "golden: "),
    ("golden-loop-check", "loop", "golden-loop: "),
    ("golden-ext-check", "ext", ""),
]


@pytest.mark.skipif(not os.path.isdir(TOOLS), reason="../shared/tools is not beside this checkout")
@pytest.mark.parametrize("tool,subdir,summary", CHECKS, ids=[f"{t}-{d}" for t, d, _ in CHECKS])
def test_shared_checker(tool, subdir, summary):
    proc = subprocess.run([sys.executable, os.path.join(TOOLS, tool), "--python", sys.executable,
                           os.path.join(GOLDEN, subdir)], capture_output=True, text=True, cwd=ROOT, timeout=1800)
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert last.startswith(summary), last
