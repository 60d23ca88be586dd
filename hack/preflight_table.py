"""The prediction-vs-outcome table of docs/preflight.md, from the e2e run's rows.

.venv/bin/pytest -q tests/e2e/test_preflight.py tests/e2e/test_preflight_helm.py
.venv/bin/python -m hack.preflight_table
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    rows = json.loads((ROOT / ".preflight-outcomes.json").read_text())
    print("| scenario | preflight | verdict | predicted type | confidence | after the deletion |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        command = re.sub(r"-[0-9a-f]{6}\b", "-…", row["command"])  # unique suffixes
        print(
            f"| {row['scenario']} | `{command}` | {row['verdict']} | {row['type'] or '-'} "
            f"| {row['confidence'] or '-'} | {row['outcome']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
