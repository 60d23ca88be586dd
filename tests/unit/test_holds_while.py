"""Every blocker type says, next to its explainer, when it can still hold an object."""

from __future__ import annotations

import importlib

from kubectl_terminating import model

EXPLAINERS = (
    "common",
    "finalizers",
    "namespace_conditions",
    "namespace_content",
    "namespace_evidence",
    "namespace_finalizers",
    "pod_hooks",
    "pod_network",
    "pod_node",
    "pod_volumes",
    "pods",
    "webhooks",
)
MODULES = [importlib.import_module(f"kubectl_terminating.explain.{m}") for m in EXPLAINERS]


def test_every_blocker_type_has_its_condition_written_down() -> None:
    written = {t for module in MODULES for t in module.HOLDS_WHILE}
    types = set(model.PRIORITY)
    assert types - written == set()
    assert written - types == set()  # no line for a type that does not exist
    for module in MODULES:
        for line in module.HOLDS_WHILE.values():
            assert line and "\n" not in line and len(line) <= 120, line
