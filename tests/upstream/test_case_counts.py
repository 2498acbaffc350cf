"""Every translated upstream case is collected: a case silently dropped from a table fails here.

Each ``tests/upstream/test_*.py`` file translates one kube test file and declares, at module level,
``UPSTREAM`` (the kube path), ``UPSTREAM_VERSION`` (the version read) and ``UPSTREAM_CASES`` (how many of its
cases were translated). Every test item collected from the file is one upstream case (skipped drift cases
included), so the collected count must equal ``UPSTREAM_CASES``.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def declared(path: Path) -> dict[str, object]:
    """The module-level UPSTREAM* constants of one translated file, read without importing it."""
    values: dict[str, object] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.startswith("UPSTREAM"):
                values[name] = ast.literal_eval(node.value)
    return values


def collected_counts() -> Counter:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(HERE),
         f"--ignore={Path(__file__).resolve()}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 5), out.stdout[-3000:] + out.stderr[-3000:]
    counts: Counter = Counter()
    for line in out.stdout.splitlines():
        if "::" in line:
            counts[Path(line.split("::", 1)[0]).name] += 1
    return counts


def test_every_translated_file_keeps_its_declared_case_count():
    files = sorted(p for p in HERE.glob("test_*.py") if p.name != Path(__file__).name)
    counts = collected_counts()
    problems = []
    for path in files:
        meta = declared(path)
        missing = {"UPSTREAM", "UPSTREAM_VERSION", "UPSTREAM_CASES"} - meta.keys()
        if missing:
            problems.append(f"{path.name}: does not declare {sorted(missing)}")
            continue
        if counts[path.name] != meta["UPSTREAM_CASES"]:
            problems.append(f"{path.name}: {counts[path.name]} cases collected, {meta['UPSTREAM_CASES']} declared "
                            f"(from {meta['UPSTREAM']})")
    assert not problems, "\n".join(problems)
