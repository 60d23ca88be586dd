"""Offline diagnosis: snapshot loading (bundles, kubectl get -o json, cluster-info dump)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kubectl_terminating.errors import ConfigError, UsageError
from kubectl_terminating.resources import Resource
from kubectl_terminating.selectors import escape_field_value, parse_field_selector, parse_selector
from kubectl_terminating.snapshot import Capture, RecordingView, load, scrub
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import ContentListing
from tests.unit.builders import FIXTURES as ALL_FIXTURES
from tests.unit.builders import NAMESPACES_NOW, run_captured
from tests.unit.golden import assert_golden

FIXTURES = ALL_FIXTURES / "snapshots"
KUBECTL_GET = FIXTURES / "kubectl-get-pods-nodes.json"
CLUSTER_INFO_DUMP = FIXTURES / "cluster-info-dump"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
SECRETS = Resource("", "v1", "secrets", "Secret")


def test_kubectl_get_json_is_explained_like_a_live_cluster() -> None:
    code, out, err = run_captured(from_file=str(KUBECTL_GET), output="json")
    assert code == 0, err
    items = {i["name"]: i for i in json.loads(out)["items"]}
    assert [b["type"] for b in items["web-1"]["blockers"]] == ["node-missing"]
    assert items["web-0"]["blockers"][0]["type"] == "node-not-ready"
    assert_golden("snapshots/kubectl-get-pods.json", out)


def test_missing_kinds_are_checks_not_possible_never_absent() -> None:
    code, _, err = run_captured(from_file=str(KUBECTL_GET))
    assert code == 0
    assert "checks not possible, kinds not in the file:" in err
    assert "Lease" in err and "Event" in err
    # a pod whose node IS in the file is judged by it; lease/event checks are reported as not made
    assert "could not read" in err and "not in the snapshot" in err


def test_cluster_info_dump_folder() -> None:
    code, out, err = run_captured(from_file=str(CLUSTER_INFO_DUMP), explain=True)
    assert code == 0, err
    assert "Pod shop/web-1" in out and "[node-missing]" in out
    assert_golden("snapshots/cluster-info-dump-explain.txt", out)


def test_ages_come_from_the_newest_timestamp_unless_now(tmp_path: Path) -> None:
    _, out, err = run_captured(from_file=str(KUBECTL_GET), output="json")
    assert "ages are computed from its newest timestamp" in err
    items = json.loads(out)["items"]
    # the pods' deletion is the file's newest timestamp: their age is unknown, never 0s
    assert [i["overdueSeconds"] for i in items] == [None, None]
    assert all(i["unknowns"] == ["age unknown: the file has no capture time"] for i in items)
    _, out_now, _ = run_captured(from_file=str(KUBECTL_GET), output="json", now=True)
    overdue_now = [i["overdueSeconds"] for i in json.loads(out_now)["items"]]
    assert len(overdue_now) == 2 and all(isinstance(o, int) and o > 0 for o in overdue_now)


def test_concatenated_documents_and_namespace_filter(tmp_path: Path) -> None:
    data = json.loads(KUBECTL_GET.read_text())
    pods = {
        "kind": "List",
        "apiVersion": "v1",
        "items": [i for i in data["items"] if i["kind"] == "Pod"],
    }
    nodes = {
        "kind": "NodeList",
        "apiVersion": "v1",
        "items": [
            {k: v for k, v in i.items() if k != "kind"}
            for i in data["items"]
            if i["kind"] == "Node"
        ],
    }
    path = tmp_path / "two.json"
    path.write_text(json.dumps(pods, indent=2) + "\n" + json.dumps(nodes))
    assert {o["kind"] for o in load(str(path)).objects} == {"Pod", "Node"}
    code, out, _ = run_captured(from_file=str(path), namespace="shop", output="name")
    assert code == 0 and out.splitlines() == ["pod/web-0", "pod/web-1"]
    code, out, err = run_captured(from_file=str(path), namespace="elsewhere")
    assert code == 0 and out == "" and "No resources found in elsewhere namespace." in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b'{"kind": "List", "items": [', "not valid JSON at line 1"),
        (b'{"hello": "world"}', "no Kubernetes objects in it"),
        (
            b'{"apiVersion": "terminating.kubectl.io/v9", "kind": "Snapshot"}',
            "unknown snapshot version",
        ),
        # mtime=0: the bytes are the test's id, which each pytest-xdist worker must collect alike
        (
            gzip.compress(b'{"kind": "List", "items": []}', mtime=0)[:-6],
            "gzip data is truncated or corrupt",
        ),
        (
            b'{"apiVersion": "terminating.kubectl.io/v1", "kind": "Snapshot",'
            b' "discovery": {"resources": [1]}}',
            "malformed snapshot",
        ),
    ],
)
def test_bad_files_give_one_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bundle"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load(str(path))
    code, out, err = run_captured(from_file=str(path))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: cannot read") and "Traceback" not in err


def test_missing_file_and_empty_folder(tmp_path: Path) -> None:
    code, _, err = run_captured(from_file=str(tmp_path / "absent.json"))
    assert code == 1 and err.startswith("error: cannot read") and "No such file" in err
    code, _, err = run_captured(from_file=str(tmp_path))
    assert code == 1 and "no .json files" in err


def test_secret_and_configmap_payloads_are_never_kept() -> None:
    secret = {
        "kind": "Secret",
        "metadata": {
            "name": "s",
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"k":"c2VjcmV0"}}',
                "a": "b",
            },
        },
        "data": {"k": "c2VjcmV0"},
        "stringData": {"k": "secret"},
    }
    cleaned = scrub(secret)
    assert "data" not in cleaned and "stringData" not in cleaned
    assert cleaned["metadata"]["annotations"] == {"a": "b"}
    assert "binaryData" not in scrub(
        {"kind": "ConfigMap", "metadata": {}, "binaryData": {"x": "eA=="}}
    )


def test_a_terminating_namespaces_secrets_are_recorded_without_their_data() -> None:
    """`dump` lists what is left in a terminating namespace (metadata only): a Secret applied
    with kubectl keeps its data in clear in the last-applied-configuration annotation."""
    applied = '{"apiVersion":"v1","data":{"password":"c2VjcmV0"},"kind":"Secret"}'
    secret = {
        "metadata": {
            "name": "db-password",
            "namespace": "vault",
            "finalizers": ["example.com/keep"],
            "annotations": {LAST_APPLIED: applied, "team": "db"},
        },
    }
    capture = Capture()
    inner = StaticView([], NAMESPACES_NOW, content={"vault": [ContentListing(SECRETS, (secret,))]})
    RecordingView(inner, capture).namespace_content("vault")
    [listing] = capture.content["vault"]
    [kept] = listing.items
    assert kept["kind"] == "Secret" and kept["metadata"]["annotations"] == {"team": "db"}
    assert "c2VjcmV0" not in json.dumps(kept)


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web,tier!=db", {"app": "web", "tier": "db"}, False),
        ("app in (web, api),!legacy", {"app": "api"}, True),
        ("app notin (web)", {"app": "web"}, False),
        ("team", {"team": "x"}, True),
        ("!team", {"team": "x"}, False),
    ],
)
def test_label_selectors(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(selector)(labels) is expected


@pytest.mark.parametrize("value", ["uid-1", "\x00\t\x00", "a,b=c\\d", " x ", ""])
def test_any_field_value_round_trips_through_a_field_selector(value: str) -> None:
    """A snapshot's uid may hold anything: escaped as the API server expects, it matches
    itself and nothing else."""
    match = parse_field_selector(f"involvedObject.uid={escape_field_value(value)}")
    assert match({"involvedObject.uid": value})
    assert not match({"involvedObject.uid": value + "x"})


def test_field_selector_terms() -> None:
    match = parse_field_selector("metadata.namespace!=kube-node-lease,spec.nodeName==n\\,1")
    assert match({"metadata.namespace": "shop", "spec.nodeName": "n,1"})
    assert not match({"metadata.namespace": "kube-node-lease", "spec.nodeName": "n,1"})
    with pytest.raises(UsageError):
        parse_field_selector("spec.nodeName")


def test_bad_selector_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unable to parse requirement"):
        parse_selector("app in web")
