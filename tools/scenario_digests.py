"""Digests of ``simsched run SCENARIO --json`` for every bundled scenario, measured times left out.

Used to hold a refactoring to "behaviour unchanged, bit for bit": record the digests before the change
(``python tools/scenario_digests.py record -o before.json``), then compare after it
(``python tools/scenario_digests.py compare before.json``).  Each scenario runs in its own process with a
time limit; a scenario that fails or times out is recorded as such (and must fail the same way after).

Measured quantities (wall and CPU times of schedulers, decisions, training) vary from run to run and are
dropped: every key whose name ends in ``time_s``, ``_cpu_s``, ``_wall_s`` or is ``wall_s``/``cpu_s``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ("time_s", "_cpu_s", "_wall_s", "wall_s", "cpu_s", "seconds")


def scrub(value):
    """The document with every measured time removed (recursively)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if not k.endswith(MEASURED)}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def digest_of(scenario: Path, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        start = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, "-m", "simsched.cli.main", "run", str(scenario), "--json", str(out)],
                                  capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                                  env={**os.environ, "COLUMNS": "100"})
        except subprocess.TimeoutExpired:
            return {"status": "timeout"}
        took = time.monotonic() - start
        if proc.returncode != 0 or not out.exists():
            return {"status": f"exit {proc.returncode}", "error": proc.stderr.strip().splitlines()[-1:],
                    "wall": round(took, 1)}
        doc = scrub(json.loads(out.read_text()))
        text = json.dumps(doc, sort_keys=True, allow_nan=True)
        return {"status": "ok", "digest": hashlib.sha256(text.encode()).hexdigest()[:32], "wall": round(took, 1)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["record", "compare"])
    p.add_argument("file", nargs="?", default="digests.json")
    p.add_argument("-o", "--output")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--only", nargs="*", help="scenario paths (default: every scenarios/**/*.yaml)")
    a = p.parse_args()
    scenarios = [Path(s) for s in a.only] if a.only else sorted(
        s.relative_to(ROOT) for s in (ROOT / "scenarios").rglob("*.yaml") if "data" not in s.parts)
    before = json.loads(Path(a.file).read_text()) if a.mode == "compare" else {}
    got, bad = {}, 0
    for s in scenarios:
        if a.mode == "compare" and str(s) not in before:
            continue
        got[str(s)] = r = digest_of(ROOT / s, a.timeout)
        same = ""
        if a.mode == "compare":
            b = before[str(s)]
            if isinstance(b, str):  # the pinned form (tests/data/scenario_digests.json): digests only
                b = {"status": "ok", "digest": b}
            ok = (b["status"], b.get("digest")) == (r["status"], r.get("digest"))
            bad += not ok
            same = "same" if ok else f"DIFFERENT (before {b['status']} {b.get('digest')})"
        print(f"{s}: {r['status']} {r.get('digest', '')} {r.get('wall', '')} s {same}", flush=True)
        if a.output:
            Path(a.output).write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    if a.mode == "compare":
        print(f"{len(got) - bad} of {len(got)} unchanged")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
