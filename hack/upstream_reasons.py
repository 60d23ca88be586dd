"""The reasons each upstream component defines, read from its source in the Go module cache.

Writes tests/fixtures/upstream/reasons.yaml: per component, the event reasons, status reasons
and condition types and reasons it writes, with the repository, path and tag they were read
from. Facts only (the strings), never code. tests/unit/test_catalogue.py fails for a reason that
the catalogue neither maps nor ignores with why; a new Kubernetes minor is: build its control
plane (the module lands in the cache), run this, read what the test names.

    python -m hack.upstream_reasons [--version v1.36.3] [--check]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "upstream" / "reasons.yaml"

# `Name = "Value"` or `Name Type = "Value"` inside a const block
CONSTANT = re.compile(r'^\s*(\w+)\s*(?:\w+\s*)?=\s*"([A-Za-z][\w-]*)"\s*(?://.*)?$', re.M)
# a reason literal passed to an event recorder, a node status change, or a condition's Reason
EVENT_LITERAL = re.compile(r'v1\.EventType(?:Normal|Warning),\s*"([A-Za-z]\w*)"')
STATUS_CHANGE = re.compile(r'RecordNodeStatusChange\([^)]*"([A-Za-z]\w*)"\)')
REASON_FIELD = re.compile(r'Reason:\s*"([A-Za-z]\w*)"')


@dataclass(frozen=True)
class Component:
    key: str
    module: str  # the Go module: its source is <cache>/<module>@<version>
    path: str
    read: tuple[re.Pattern[str], ...]
    names: str = ""  # for constants: the constant names to keep (a regular expression)


def _components() -> tuple[Component, ...]:
    return (
        Component(
            "kubelet-events", "k8s.io/kubernetes", "pkg/kubelet/events/event.go", (CONSTANT,)
        ),
        Component(
            "volume-controller-events",
            "k8s.io/kubernetes",
            "pkg/controller/volume/events/event.go",
            (CONSTANT,),
        ),
        Component(
            "service-controller-events",
            "k8s.io/cloud-provider",
            "controllers/service/controller.go",
            (EVENT_LITERAL,),
        ),
        Component(
            "taint-eviction-events",
            "k8s.io/kubernetes",
            "pkg/controller/tainteviction/taint_eviction.go",
            (EVENT_LITERAL,),
        ),
        Component(
            "node-lifecycle",
            "k8s.io/kubernetes",
            "pkg/controller/nodelifecycle/node_lifecycle_controller.go",
            (EVENT_LITERAL, STATUS_CHANGE, REASON_FIELD),
        ),
        Component(
            "node-lifecycle-events",
            "k8s.io/kubernetes",
            "pkg/controller/util/node/controller_utils.go",
            (EVENT_LITERAL, STATUS_CHANGE),
        ),
        Component(
            "pod-status-reasons",
            "k8s.io/kubernetes",
            "pkg/util/node/node.go",
            (CONSTANT,),
            names=r"NodeUnreachablePodReason",
        ),
        Component(
            "pod-condition-reasons",
            "k8s.io/api",
            "core/v1/types.go",
            (CONSTANT,),
            names=r"PodReason\w+",
        ),
        Component(
            "namespace-condition-types",
            "k8s.io/api",
            "core/v1/types.go",
            (CONSTANT,),
            names=r"Namespace(Deletion\w+|ContentRemaining|FinalizersRemaining)",
        ),
        Component(
            "namespace-condition-reasons",
            "k8s.io/kubernetes",
            "pkg/controller/namespace/deletion/status_condition_utils.go",
            (REASON_FIELD, re.compile(r':\s*"([A-Za-z]\w*)",\s*$', re.M)),
        ),
    )


def _repo(module: str) -> str:
    return {
        "k8s.io/kubernetes": "kubernetes/kubernetes",
        "k8s.io/cloud-provider": "kubernetes/cloud-provider",
        "k8s.io/api": "kubernetes/api",
    }[module]


def _tag(module: str, version: str) -> str:
    """The module's tag for a Kubernetes version: staging modules are v0.<minor>.<patch>."""
    return version if module == "k8s.io/kubernetes" else "v0." + version.removeprefix("v1.")


def _cache() -> Path:
    found = (
        os.environ.get("GOMODCACHE")
        or subprocess.run(
            ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    return Path(found)


def reasons(component: Component, version: str, cache: Path) -> list[str]:
    source = cache / f"{component.module}@{_tag(component.module, version)}" / component.path
    text = source.read_text()
    found: set[str] = set()
    for pattern in component.read:
        for match in pattern.finditer(text):
            if pattern is CONSTANT:
                name, value = match.group(1), match.group(2)
                if not component.names or re.fullmatch(component.names, name):
                    found.add(value)
            else:
                found.add(match.group(1))
    return sorted(found)


def render(version: str, cache: Path) -> str:
    lines = [
        "# Generated by hack/upstream_reasons.py from the Go module cache: the reasons each",
        "# upstream component defines (strings only). tests/unit/test_catalogue.py checks that the",
        "# catalogue maps or ignores each one. Regenerate for a new Kubernetes minor.",
        f"version: {version}",
        "components:",
    ]
    for component in _components():
        tag = _tag(component.module, version)
        lines += [
            f"  {component.key}:",
            f"    source: {{repo: {_repo(component.module)}, path: {component.path}, ref: {tag}}}",
            "    reasons: [" + ", ".join(reasons(component, version, cache)) + "]",
        ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="v1.36.3")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs")
    args = parser.parse_args()
    made = render(args.version, _cache())
    if args.check:
        same = OUT.read_text() == made
        print("up to date" if same else f"{OUT} differs from the source: regenerate it")
        return 0 if same else 1
    OUT.write_text(made)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
