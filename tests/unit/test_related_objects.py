"""Files that carry related objects beside the stuck one, or in part (issue 32): a Node pasted
for its taints, a chain namespace -> claim -> pod -> node, the namespace controller's own
words. Each file is made by hand in tests/fixtures/related after what people paste; its
`--explain` text is a golden in tests/golden/related. Run as a user runs them (no `--now`).
"""

from __future__ import annotations

import json
from typing import Any

from tests.unit.builders import FIXTURES, run_captured
from tests.unit.golden import assert_golden

RELATED = FIXTURES / "related"
JSON = dict[str, Any]


def explained(name: str, kind: str = "pods") -> JSON:
    """The file's first listed terminating object as `-o json` gives it, its `--explain` text
    checked against the golden related/<name>.txt."""
    path = str(RELATED / f"{name}.json")
    code, text, err = run_captured(kind, from_file=path, explain=True, all_namespaces=True)
    assert code == 0, err
    assert "Traceback" not in err
    assert "none found" not in text and "Remaining:     nothing" not in text
    assert_golden(f"related/{name}.txt", text)
    code, out, err = run_captured(kind, from_file=path, output="json", all_namespaces=True)
    assert code == 0, err
    item: JSON = json.loads(out)["items"][0]
    assert item["blockers"], "a terminating object always ends with a blocker"
    return item


def main(item: JSON) -> JSON:
    blocker: JSON = item["blockers"][0]
    return blocker


# -- 1. a Node pasted without status -----------------------------------------------------------


def test_node_pasted_without_status_is_unknown_not_never_ready() -> None:
    item = explained("pod-node-without-status")
    assert all(b["type"] != "node-not-ready" for b in item["blockers"])
    assert "never reported Ready" not in json.dumps(item)
    assert (
        "health of node worker-9 unknown: the file has the Node without status"
        in (item["unknowns"])
    )
    assert main(item)["type"] == "volumes-not-reclaimed"
    assert main(item)["summary"] == (
        "containers exited; node worker-9 not checked (the file has the Node without status)"
    )


# -- 5. the volumes a teardown headline waits on -----------------------------------------------


def test_teardown_headline_names_the_volumes_from_the_pod_spec() -> None:
    item = explained("pod-volumes-node-not-checked")
    assert main(item)["type"] == "volumes-not-reclaimed"
    assert main(item)["summary"] == (
        "containers exited; volumes data (PVC data-db-0, block), secrets "
        "(CSI secrets-store.csi.k8s.io) to tear down; node db-node-7 not checked "
        "(not in the snapshot)"
    )
