"""The catalogue (kubectl_terminating/catalogue/catalogue.yaml): checked at load, complete
against the reasons upstream defines, read lazily, and its reader's answers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_terminating import catalogue
from kubectl_terminating.catalogue import evidence
from kubectl_terminating.errors import ExitStatus
from tests.harness.tiers import skip_or_fail
from tests.unit.builders import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = FIXTURES / "upstream" / "reasons.yaml"


def upstream() -> dict[str, Any]:
    return dict(yaml.safe_load(UPSTREAM.read_text()))


def mapped() -> set[str]:
    """Every reason, status reason and condition type or reason some entry reads."""
    found: set[str] = set()
    for entry in evidence.entries():
        found |= entry.event_reasons | entry.status_reasons
        if entry.condition is not None:
            found.add(str(entry.condition["type"]))
            found |= set(entry.condition.get("reasons", ()))
    return found


def test_every_reason_upstream_defines_is_mapped_or_ignored_with_why() -> None:
    """A new Kubernetes minor: regenerate the vendored list (hack/upstream_reasons.py); this
    names each reason it brings that the catalogue does not know."""
    ignored, reads = evidence.ignored(), mapped()
    unknown = {
        f"{name}: {reason}"
        for name, component in upstream()["components"].items()
        for reason in component["reasons"]
        if reason not in reads and reason not in ignored
    }
    assert not unknown, f"map each in catalogue.yaml evidence, or ignore it with why: {unknown}"
    assert not (reads & set(ignored)), "a reason is mapped and ignored at once"
    assert all(isinstance(why, str) and why.strip() for why in ignored.values())


def test_no_reason_is_ignored_that_upstream_does_not_define() -> None:
    defined = {r for c in upstream()["components"].values() for r in c["reasons"]}
    assert set(evidence.ignored()) <= defined, set(evidence.ignored()) - defined


def test_the_vendored_list_is_what_the_source_defines() -> None:
    """Regenerated from the Go module cache (make control-plane fetches k8s.io/kubernetes),
    the vendored file is unchanged: it holds upstream's strings, not ours."""
    version = upstream()["version"]
    go = shutil.which("go")
    cache = (
        subprocess.run(
            [go, "env", "GOMODCACHE"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if go
        else ""
    )
    if not cache or not (Path(cache) / f"k8s.io/kubernetes@{version}").is_dir():
        skip_or_fail("catalogue", f"k8s.io/kubernetes@{version} is not in the Go module cache")
        return
    check = subprocess.run(
        [sys.executable, "-m", "hack.upstream_reasons", "--version", version, "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "GOMODCACHE": cache},
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_every_entry_names_its_upstream_source_at_a_tag_and_an_existing_reader() -> None:
    for entry in evidence.entries():
        assert entry.source["ref"] not in ("main", "master"), entry.key
        assert "/" in entry.source["repo"], entry.key
        if entry.reader:
            assert (ROOT / "kubectl_terminating" / entry.reader).is_file(), entry.key


def test_each_event_entry_reads_what_it_names() -> None:
    """An event with an entry's first reason and first phrase is read by that entry, or by an
    earlier, more specific one proving the same type (the file's order is the precedence)."""
    entries = evidence.entries()
    for entry in entries:
        if not entry.reads_events:
            continue
        reason = min(entry.event_reasons) if entry.event_reasons else "Whatever"
        message = entry.event_messages[0] if entry.event_messages else "some error"
        reading = evidence.read_event(reason, message, entry.about[0])
        assert reading is not None, entry.key
        earlier = entries[: entries.index(entry) + 1]
        assert reading.entry in earlier, (entry.key, reading.entry.key)


def test_a_reading_fills_in_the_names_its_message_carries() -> None:
    message = (
        'failed to "KillPodSandbox" for "web-0" with KillPodSandboxError: "rpc error: code = '
        'Unknown desc = failed to destroy network for sandbox \\"3f2\\": plugin type=\\"calico\\" '
        'failed (delete): error getting ClusterInformation: connection is unauthorized"'
    )
    reading = evidence.read_event("FailedKillPod", message, "Pod")
    assert reading is not None
    assert (reading.entry.proves, reading.summary()) == (
        "network-teardown",
        "pod network teardown failing (calico)",
    )
    lost = evidence.read_status(
        "NodeLost", "Node worker-3 which was running pod web-0 is unresponsive", "Pod"
    )
    assert lost is not None
    assert lost.names == {"node": "worker-3"}
    # the 1.36 DRA manager's wording (pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go)
    dra = evidence.read_event(
        "FailedPrepareDynamicResources", "DRA driver gpu.example.com is not registered", "Pod"
    )
    assert dra is not None
    assert dra.names == {"driver": "gpu.example.com"}
    assert evidence.read_event("Pulled", "Successfully pulled image", "Pod") is None


GOOD: dict[str, Any] = {
    "meaning": "m",
    "about": ["Pod"],
    "event": {"reasons": ["FailedX"]},
    "proves": "containers-running",
    "confidence": "likely",
    "summary": "held ({thing})",
    "names": {"thing": "thing (\\w+)"},
    "source": {"repo": "a/b", "path": "p.go", "ref": "v1"},
}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"colour": "red"}, "evidence.x.colour: unknown key"),
        ({"proves": "gremlins"}, "evidence.x.proves: not a blocker type: 'gremlins'"),
        ({"confidence": "sure"}, "evidence.x.confidence: one of certain, likely, possible"),
        ({"names": {"thing": "("}}, "evidence.x.names.thing: not a regular expression"),
        ({"names": {"thing": "\\w+"}}, "evidence.x.names.thing: needs a group"),
        ({"summary": "held ({other})"}, "evidence.x.summary: unknown placeholder 'other'"),
        ({"event": {"reasons": "FailedX"}}, "evidence.x.event.reasons: must be a list"),
        ({"event": {}}, "evidence.x.event: needs reasons or messages"),
        ({"source": {"repo": "a/b", "path": "p.go"}}, "evidence.x.source.ref: must be"),
    ],
)
def test_an_entry_that_does_not_fit_is_one_line_naming_file_and_key(
    change: dict[str, Any], says: str
) -> None:
    with pytest.raises(catalogue.CatalogueError) as raised:
        evidence.parse({"evidence": {"x": {**GOOD, **change}}}, "mine.yaml")
    assert str(raised.value).startswith("invalid knowledge file mine.yaml: " + says)
    assert "\n" not in str(raised.value)
    assert raised.value.exit_code == ExitStatus.ERROR


def test_a_missing_key_is_named() -> None:
    broken = {k: v for k, v in GOOD.items() if k != "proves"}
    with pytest.raises(catalogue.CatalogueError, match=r"evidence\.x\.proves: missing"):
        evidence.parse({"evidence": {"x": broken}}, "mine.yaml")


def test_a_file_that_is_not_yaml_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("evidence: [\n")
    with pytest.raises(catalogue.CatalogueError, match=r"^error loading knowledge file .*line"):
        catalogue.read_document(bad)


def test_help_never_reads_the_catalogue() -> None:
    """Loaded on first use: `--help` and the import of the CLI never parse it."""
    probe = (
        "import sys; from click.testing import CliRunner; "
        "from kubectl_terminating import cli, catalogue; "
        "r = CliRunner().invoke(cli.cli, ['--help']); assert r.exit_code == 0, r.output; "
        "print(catalogue.builtin.cache_info().currsize, 'yaml' in sys.modules)"
    )
    said = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert said.stdout.split() == ["0", "False"], said.stderr


def test_the_structural_finalizers_are_one_documented_list() -> None:
    """Only the finalizers the cluster's structure holds have code of their own; every other
    word is catalogue data. docs/catalogue.md's table is that list."""
    from kubectl_terminating.explain.finalizers import SPECIAL, STRUCTURAL

    assert [s.finalizer for s in STRUCTURAL] == [
        "foregroundDeletion",
        "kubernetes.io/pvc-protection",
        "kubernetes.io/pv-protection",
        "customresourcecleanup.apiextensions.k8s.io",
        "kubernetes.io/vac-protection",
        "scheduling.k8s.io/podgroup-protection",
    ]
    assert set(SPECIAL) == {s.finalizer for s in STRUCTURAL}
    docs = (ROOT / "docs" / "catalogue.md").read_text()
    for structural in STRUCTURAL:
        assert f"| `{structural.finalizer}` | {structural.waits_for} |" in docs


def test_every_reader_reads_its_entries_from_the_catalogue() -> None:
    """An entry's `reader` takes its reasons and phrases from the catalogue (it names the
    entry's key), so editing the entry changes what that module reads: one fact, one place."""
    for entry in evidence.entries():
        if entry.reader:
            source = (ROOT / "kubectl_terminating" / entry.reader).read_text()
            assert f'"{entry.key}"' in source, (entry.key, entry.reader)


def test_the_namespace_conditions_are_the_ones_the_code_knows() -> None:
    """The API's condition types (resources.py) and the catalogue's ns-* entries agree."""
    from kubectl_terminating.resources import NAMESPACE_DELETION_CONDITIONS

    read = {
        str(e.condition["type"])
        for e in evidence.entries()
        if e.condition is not None and "Namespace" in e.about
    }
    assert read == set(NAMESPACE_DELETION_CONDITIONS)
