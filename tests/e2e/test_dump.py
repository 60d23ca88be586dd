"""`dump` on the real control plane when one object cannot be explained: a support bundle must
still be written, with that object in it and a warning, never a traceback."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_terminating.commands import run
from kubectl_terminating.dump import run_dump
from kubectl_terminating.explain import objects as objects_module
from kubectl_terminating.model import Finding
from kubectl_terminating.options import Options
from kubectl_terminating.resources import Resource
from kubectl_terminating.view import ClusterView
from tests.harness import scenarios
from tests.harness.api import create_namespace, remove_finalizers, unique_ns
from tests.harness.controlplane import ControlPlane

pytestmark = pytest.mark.e2e


def test_bundle_written_when_one_object_cannot_be_explained(
    control_plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cp = control_plane
    ns = unique_ns("dump-odd")
    create_namespace(cp, ns)
    odd = scenarios.pod_with_finalizer(cp, ns)
    fine = scenarios.pod_in_grace_period(cp, ns)
    real = objects_module.explain_object

    def flaky(obj: dict[str, Any], resource: Resource, view: ClusterView) -> Finding:
        if obj["metadata"]["name"] == odd.name:
            raise TypeError("unhashable type: 'list'")
        return real(obj, resource, view)

    monkeypatch.setattr(objects_module, "explain_object", flaky)
    bundle, err = tmp_path / "bundle.json", io.StringIO()
    try:
        code = run_dump(
            Options(kind="all", namespace=ns, kubeconfig=str(cp.kubeconfig_path)), str(bundle), err
        )
    finally:
        monkeypatch.undo()
        remove_finalizers(cp, scenarios.pod_path(ns, odd.name))
    assert code == 0, err.getvalue()
    assert "Warning: could not explain it: internal error TypeError" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert "for 2 terminating objects" in err.getvalue()
    # the bundle holds both pods: offline, each is explained as on the cluster
    out = io.StringIO()
    assert run(Options(kind="pods", from_file=str(bundle), output="json"), out, io.StringIO()) == 0
    items = {i["name"]: i for i in json.loads(out.getvalue())["items"]}
    assert set(items) == {odd.name, fine.name}
    assert [b["type"] for b in items[odd.name]["blockers"]] == ["finalizer"]
