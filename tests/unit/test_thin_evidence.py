"""Issue 37's classes: what a thin paste proves, and no more. Each file in
tests/fixtures/related is made by hand after what people paste; its `--explain` is a golden in
tests/golden/related. Each case is also run with its evidence thinned, and its confidence must
drop (DESIGN.md "How sure")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.unit.builders import run_captured
from tests.unit.test_related_objects import RELATED, explained, main

JSON = dict[str, Any]


def items_of(data: JSON, tmp_path: Path, kind: str = "pods") -> list[JSON]:
    """`kubectl terminating <kind> -A -o json` of the objects in data (a List)."""
    path = tmp_path / "thinned.json"
    path.write_text(json.dumps(data))
    code, out, err = run_captured(kind, from_file=str(path), output="json", all_namespaces=True)
    assert code == 0, err
    items: list[JSON] = json.loads(out)["items"]
    return items


def fixture(name: str) -> JSON:
    data: JSON = json.loads((RELATED / f"{name}.json").read_text())
    return data


def of_kind(data: JSON, kind: str) -> JSON:
    found: JSON = next(o for o in data["items"] if o["kind"] == kind)
    return found


# -- 1. the catch-all names no step it never saw -----------------------------------------------


def test_containers_exited_and_nothing_else_is_teardown_unfinished_step_unknown() -> None:
    """gVisor pod, containers exited, no event, no volume: the sandbox, the claims, the status
    or the volumes may hang. Said as unknown, with what would tell, not the volume remedies."""
    item = explained("pod-teardown-step-unknown")
    blocker = main(item)
    assert blocker["type"] == "teardown-unfinished"
    assert blocker["summary"] == (
        "containers exited; kubelet's teardown unfinished, which step is unknown "
        "(runtime class gvisor: the sandbox step first)"
    )
    assert blocker["confidence"] == "possible"
    assert "runtimeClassName gvisor" in blocker["confidenceBasis"]
    commands = [r.get("command", "") for r in blocker["remedy"]]
    assert any(c.startswith("crictl pods --label io.kubernetes.pod.uid=") for c in commands)
    assert not any("umount" in c or "lsattr" in c for c in commands)


def test_the_kubelets_final_status_puts_the_hang_at_the_volumes(tmp_path: Path) -> None:
    """With the final status written (phase Failed, observedGeneration current) only the volumes
    follow: volumes-not-reclaimed, likely. Thinned back to the paste: possible, step unknown."""
    data = fixture("pod-teardown-step-unknown")
    pod = of_kind(data, "Pod")
    pod["metadata"]["generation"] = 2
    pod["status"].update(phase="Failed", observedGeneration=2)
    (richer,) = items_of(data, tmp_path)
    assert (main(richer)["type"], main(richer)["confidence"]) == ("volumes-not-reclaimed", "likely")
    thin = main(explained("pod-teardown-step-unknown"))
    assert (thin["type"], thin["confidence"]) == ("teardown-unfinished", "possible")
