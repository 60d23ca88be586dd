"""Hostile and odd input: every explainer and renderer over generated clusters (hypothesis).

Objects with missing fields or fields of the wrong type, huge finalizer lists, names with
control characters, escape sequences and bidi overrides, timestamps in the future or not
timestamps at all, events in every format, unknown blocker types, kinds that cannot be read.
The explainers must never crash (a read they cannot make is ReadFailed, nothing else), and
everything rendered must be safe in a terminal: no control character but newline, no ESC
other than our own colour codes.
"""

from __future__ import annotations

import copy
import io
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_terminating import resources as res
from kubectl_terminating.commands import run
from kubectl_terminating.explain import pods as pods_module
from kubectl_terminating.explain.finalizers import finalizer_blockers
from kubectl_terminating.explain.namespaces import explain_namespace
from kubectl_terminating.explain.objects import explain_object
from kubectl_terminating.explain.pods import explain_pod
from kubectl_terminating.explain.webhooks import webhook_blockers
from kubectl_terminating.kinds import json_extras
from kubectl_terminating.model import (
    PRIORITY,
    Blocker,
    ContentType,
    Evidence,
    Finding,
    ObjectRef,
    Remedy,
)
from kubectl_terminating.options import Options
from kubectl_terminating.reads import related_kinds
from kubectl_terminating.render import explain, structured, table
from kubectl_terminating.render.style import Style
from kubectl_terminating.render.table import PrintOptions
from kubectl_terminating.resources import Resource
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.timeutil import parse_time
from kubectl_terminating.view import Discovery, ReadFailed
from tests.profiles import examples
from tests.unit.builders import FIXTURES
from tests.unit.builders import NAMESPACES_NOW as NOW

WIDGETS = Resource("example.com", "v1", "widgets", "Widget")
EVENTS_V1 = Resource("events.k8s.io", "v1", "events", "Event")
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap")
# every kind the explainers read, and two they never ask for by name
CLUSTER_TYPES = tuple(r for r in related_kinds() if not r.namespaced)
NAMESPACED_TYPES = (*(r for r in related_kinds() if r.namespaced), CONFIGMAPS, WIDGETS)
ALL_TYPES = CLUSTER_TYPES + NAMESPACED_TYPES
EXAMPLES = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- hostile scalars --------------------------------------------------------------------------

CONTROL = [chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\x9b", "\u202e", "\u2066", "\u200f"]
ESCAPES = [
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b]0;pwned\x07",  # set the window title
    "\x1b]52;c;cm0gLXJmIH4=\x07",  # write to the clipboard
    "\x1b[31mred\x1b[0m",
    "\x9b31m",  # 8-bit CSI
    "line\rover",
    "tab\there",
    "\u202eevil.exe",
]
text = st.text(
    alphabet=st.sampled_from(CONTROL) | st.characters(exclude_categories=["Cs"]), max_size=24
)
hostile = st.sampled_from(ESCAPES) | text
# A small pool, so that references meet (a pod's node, its claim, an event's object), with odd
# names in it that are then used consistently; sometimes anything at all.
NAMES = ["web-0", "worker-1", "shop", "data", "\x1b[2J\x1b]0;pwned\x07", "名前", "a b;rm -rf ~"]
pool = st.sampled_from(NAMES)
name = st.one_of(pool, pool, pool, pool, hostile)
TIMES = [
    "2026-03-01T11:00:00Z",
    "2026-03-01T11:59:59Z",
    "2026-03-01T12:00:30Z",  # a little in the future
    "2999-01-01T00:00:00Z",  # far in the future
    "0001-01-01T00:00:00Z",
    "1970-01-01T00:00:00Z",
    "2026-03-01T11:00:00.123456Z",
    "2026-03-01T13:00:00+02:00",
    "2026-03-01T11:00:00",  # no zone
    "2026-13-45T99:99:99Z",
    "yesterday",
    "",
]
timestamp = st.sampled_from(TIMES) | st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
FINALIZERS = [
    "kubernetes",
    "kubernetes.io/pvc-protection",
    "kubernetes.io/pv-protection",
    "foregroundDeletion",
    "orphan",
    "batch.kubernetes.io/job-tracking",
    "customresourcecleanup.apiextensions.k8s.io",
    "external-attacher/ebs-csi-aws-com",
    "resources-finalizer.argocd.argoproj.io",
    "example.com/cleanup",
    "\x1b]52;c;Zm9v\x07/finalizer",
]
finalizer = st.one_of(st.sampled_from(FINALIZERS), st.sampled_from(FINALIZERS), hostile)
huge_finalizers = st.integers(100, 300).map(lambda n: [f"example.com/f{i}" for i in range(n)])
some_finalizers = st.lists(finalizer, max_size=4)
finalizers = st.one_of(some_finalizers, some_finalizers, some_finalizers, huge_finalizers)
scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=True, allow_infinity=True)
    | hostile
    | timestamp
)
anything = st.recursive(
    scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(name, inner, max_size=3),
    max_leaves=8,
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually the right shape, sometimes anything at all."""
    return st.one_of(strategy, strategy, strategy, anything)


def obj(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object in which every field may be missing or of another type."""
    return st.fixed_dictionaries({}, optional={k: maybe(v) for k, v in fields.items()})


def condition(types: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return obj(
        {
            "type": st.sampled_from(types) | hostile,
            "status": st.sampled_from(["True", "False", "Unknown"]) | hostile,
            "reason": hostile | st.sampled_from(["Passed", "ServiceNotFound", "NodeNotReady"]),
            "message": hostile,
            "lastTransitionTime": timestamp,
            "lastHeartbeatTime": timestamp,
        }
    )


def conditions(types: list[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(maybe(condition(types)), max_size=4)


def metadata(namespaced: bool) -> st.SearchStrategy[dict[str, Any]]:
    owner = obj({"kind": hostile, "name": name, "uid": name, "blockOwnerDeletion": st.booleans()})
    fields: dict[str, st.SearchStrategy[Any]] = {
        "name": name,
        "uid": name,
        "deletionTimestamp": timestamp,
        "deletionGracePeriodSeconds": st.integers(-10, 10**9),
        "creationTimestamp": timestamp,
        "finalizers": finalizers,
        "labels": st.dictionaries(name, name, max_size=3),
        "annotations": st.dictionaries(name, hostile, max_size=2),
        "ownerReferences": st.lists(owner, max_size=3),
    }
    if namespaced:
        fields["namespace"] = name
    return obj(fields)


def typed(resource: Resource, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """An object of resource with the given top-level fields (kind and apiVersion are set:
    StaticView sorts objects by kind)."""
    return st.fixed_dictionaries(
        {
            "kind": st.just(resource.kind),
            "apiVersion": st.just(resource.api_version) | hostile,
            "metadata": maybe(metadata(resource.namespaced)),
        },
        optional={k: maybe(v) for k, v in fields.items()},
    )


# -- objects of each kind ---------------------------------------------------------------------

state = st.fixed_dictionaries(
    {},
    optional={
        "running": obj({"startedAt": timestamp}),
        "terminated": obj({"exitCode": st.integers(), "reason": hostile, "finishedAt": timestamp}),
        "waiting": obj({"reason": hostile, "message": hostile}),
    },
)
container_status = obj(
    {"name": name, "state": state, "lastState": state, "ready": st.booleans(), "image": hostile}
)
volume = obj(
    {
        "name": name,
        "persistentVolumeClaim": obj({"claimName": name}),
        "csi": obj({"driver": name}),
        "emptyDir": st.just({}),
    }
)
container = obj(
    {
        "name": name,
        "lifecycle": obj({"postStart": anything, "preStop": anything}),
        "volumeMounts": st.lists(obj({"name": name, "mountPath": hostile}), max_size=2),
    }
)
pod = typed(
    res.PODS,
    spec=obj(
        {
            "nodeName": name,
            "volumes": st.lists(volume, max_size=3),
            "containers": st.lists(container, max_size=2),
            "hostPID": st.booleans(),
            "shareProcessNamespace": st.booleans(),
            "terminationGracePeriodSeconds": st.integers(-5, 10**6),
        }
    ),
    status=obj(
        {
            "phase": st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown"])
            | hostile,
            "reason": hostile,
            "containerStatuses": st.lists(container_status, max_size=3),
            "initContainerStatuses": st.lists(container_status, max_size=1),
            "conditions": conditions(["Ready", "DisruptionTarget", "PodScheduled"]),
        }
    ),
)
taint = obj({"key": name | st.just("node.kubernetes.io/out-of-service"), "effect": hostile})
node = typed(
    res.NODES,
    spec=obj({"taints": st.lists(taint, max_size=2), "unschedulable": st.booleans()}),
    status=obj(
        {
            "conditions": conditions(["Ready", "DiskPressure", "MemoryPressure"]),
            "volumesInUse": st.lists(hostile | st.just("kubernetes.io/csi/ebs^vol-1"), max_size=2),
            "volumesAttached": st.lists(obj({"name": hostile, "devicePath": hostile}), max_size=2),
        }
    ),
)
lease = typed(
    res.LEASES,
    spec=obj(
        {
            "holderIdentity": hostile,
            "renewTime": timestamp,
            "leaseDurationSeconds": st.integers(-5, 10**6),
        }
    ),
)
involved = obj({"kind": st.just("Pod") | hostile, "name": name, "namespace": name, "uid": name})
core_event = typed(
    res.EVENTS,
    involvedObject=involved,
    reason=st.sampled_from(["FailedKillPod", "FailedUnMount", "FailedMount", "Killing"]) | hostile,
    message=hostile
    | st.sampled_from(
        [
            "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            "no space left on device",
            "unlinkat /var/lib/x: operation not permitted",
            "device or resource busy",
        ]
    ),
    type=st.sampled_from(["Warning", "Normal"]) | hostile,
    count=st.integers(-1, 10**9),
    firstTimestamp=timestamp,
    lastTimestamp=timestamp,
    eventTime=timestamp,
    series=obj({"count": st.integers(), "lastObservedTime": timestamp}),
    source=obj({"component": hostile, "host": name}),
    reportingComponent=hostile,
    regarding=involved,  # events.k8s.io/v1 shape, served as core events by some proxies
    note=hostile,
)
pvc = typed(
    res.PVCS,
    spec=obj({"volumeName": name, "storageClassName": name}),
    status=obj({"phase": st.sampled_from(["Bound", "Lost", "Pending"]) | hostile}),
)
pv = typed(
    res.PVS,
    spec=obj(
        {
            "csi": obj({"driver": name, "volumeHandle": name}),
            "claimRef": obj({"namespace": name, "name": name, "uid": name}),
            "persistentVolumeReclaimPolicy": hostile,
        }
    ),
    status=obj({"phase": hostile}),
)
csi_driver = typed(res.CSI_DRIVERS, spec=obj({"attachRequired": st.booleans()}))
csi_node = typed(
    res.CSI_NODES,
    spec=obj({"drivers": st.lists(obj({"name": name, "nodeID": name}), max_size=2)}),
)
attachment = typed(
    res.VOLUME_ATTACHMENTS,
    spec=obj(
        {
            "attacher": name,
            "nodeName": name,
            "source": obj({"persistentVolumeName": name}),
        }
    ),
    status=obj(
        {
            "attached": st.booleans(),
            "detachError": obj({"message": hostile, "time": timestamp}),
            "attachError": obj({"message": hostile, "time": timestamp}),
        }
    ),
)
rule = obj(
    {
        "operations": st.lists(st.sampled_from(["*", "UPDATE", "DELETE", "CREATE"]) | hostile),
        "apiGroups": st.lists(st.sampled_from(["*", "", "example.com"]) | hostile, max_size=2),
        "apiVersions": st.lists(st.sampled_from(["*", "v1"]) | hostile, max_size=2),
        "resources": st.lists(
            st.sampled_from(["*", "*/*", "pods", "widgets", "namespaces", "pods/status"]) | hostile,
            max_size=3,
        ),
        "scope": st.sampled_from(["*", "Namespaced", "Cluster"]) | hostile,
    }
)
selector = obj(
    {
        "matchLabels": st.dictionaries(name, name, max_size=2),
        "matchExpressions": st.lists(
            obj(
                {
                    "key": name,
                    "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"])
                    | hostile,
                    "values": st.lists(name, max_size=2),
                }
            ),
            max_size=2,
        ),
    }
)
client_config = obj(
    {
        "service": obj({"namespace": name, "name": name, "port": st.integers(), "path": hostile}),
        "url": hostile,
    }
)
webhook = obj(
    {
        "name": name,
        "clientConfig": client_config,
        "rules": st.lists(rule, max_size=2),
        "failurePolicy": st.sampled_from(["Fail", "Ignore"]) | hostile,
        "namespaceSelector": selector,
        "objectSelector": selector,
        "matchConditions": st.lists(anything, max_size=1),
        "timeoutSeconds": st.integers(),
    }
)
webhooks = {"webhooks": st.lists(webhook, max_size=2)}
validating = typed(res.VALIDATING_WEBHOOKS, **webhooks)
mutating = typed(res.MUTATING_WEBHOOKS, **webhooks)
apiservice = typed(
    res.APISERVICES,
    spec=obj(
        {
            "group": name,
            "version": name,
            "service": obj({"namespace": name, "name": name, "port": st.integers()}),
        }
    ),
    status=obj({"conditions": conditions(["Available"])}),
)
crd = typed(
    res.CRDS,
    spec=obj(
        {
            "group": st.just("example.com") | name,
            "names": obj({"plural": st.just("widgets") | name, "kind": name}),
            "scope": st.sampled_from(["Namespaced", "Cluster"]) | hostile,
            "versions": st.lists(obj({"name": name, "served": st.booleans()}), max_size=2),
            "conversion": obj(
                {
                    "strategy": st.sampled_from(["None", "Webhook"]) | hostile,
                    "webhook": obj({"clientConfig": client_config}),
                    "webhookClientConfig": client_config,
                }
            ),
        }
    ),
    status=obj({"conditions": conditions(["Established", "Terminating"])}),
)
service = typed(res.SERVICES, spec=obj({"selector": st.dictionaries(name, name, max_size=2)}))
endpoint = obj(
    {
        "addresses": st.lists(hostile, max_size=2),
        "conditions": obj({"ready": st.booleans(), "serving": st.booleans()}),
    }
)
slice_labels = st.fixed_dictionaries({"kubernetes.io/service-name": name})
endpoint_slice = st.builds(
    lambda base, labels: {**base, "metadata": {**(base.get("metadata") or {}), "labels": labels}}
    if isinstance(base.get("metadata"), dict)
    else base,
    typed(res.ENDPOINT_SLICES, endpoints=st.lists(endpoint, max_size=2)),
    slice_labels,
)
namespace = typed(
    res.NAMESPACES,
    spec=obj({"finalizers": finalizers}),
    status=obj(
        {
            "phase": st.sampled_from(["Active", "Terminating"]) | hostile,
            "conditions": conditions(
                [
                    "NamespaceDeletionDiscoveryFailure",
                    "NamespaceDeletionGroupVersionParsingFailure",
                    "NamespaceDeletionContentFailure",
                    "NamespaceContentRemaining",
                    "NamespaceFinalizersRemaining",
                ]
            ),
        }
    ),
)
configmap = typed(CONFIGMAPS, data=st.dictionaries(name, hostile, max_size=2))
widget = typed(WIDGETS, spec=anything, status=anything)

STRATEGIES: dict[Resource, st.SearchStrategy[Any]] = {
    res.PODS: pod,
    res.NODES: node,
    res.LEASES: lease,
    res.EVENTS: core_event,
    res.PVCS: pvc,
    res.PVS: pv,
    res.CSI_DRIVERS: csi_driver,
    res.CSI_NODES: csi_node,
    res.VOLUME_ATTACHMENTS: attachment,
    res.VALIDATING_WEBHOOKS: validating,
    res.MUTATING_WEBHOOKS: mutating,
    res.APISERVICES: apiservice,
    res.CRDS: crd,
    res.SERVICES: service,
    res.ENDPOINT_SLICES: endpoint_slice,
    res.NAMESPACES: namespace,
    CONFIGMAPS: configmap,
    WIDGETS: widget,
}


@dataclass
class World:
    objects: list[dict[str, Any]]
    view: StaticView
    types: dict[str, Resource]  # kind -> resource, for the objects' own kinds

    def resource_of(self, target: Any) -> Resource:
        kind = target.get("kind") if isinstance(target, dict) else None
        return self.types.get(kind, WIDGETS) if isinstance(kind, str) else WIDGETS


def unreadable_kinds() -> st.SearchStrategy[dict[str, str]]:
    """Kinds whose reads fail (RBAC, a slow API), with the reason the view reports."""
    return st.dictionaries(
        st.sampled_from([r.kind for r in ALL_TYPES]),
        st.sampled_from(["forbidden", "no answer within 10s"]) | hostile,
        max_size=3,
    )


@st.composite
def random_world(draw: st.DrawFn) -> World:
    """A cluster of odd objects, drawn from nothing."""
    objects = draw(st.lists(st.one_of(*STRATEGIES.values()), max_size=10))
    failed = draw(st.dictionaries(hostile, hostile, max_size=2))
    discovery = Discovery([r for r in ALL_TYPES if r.namespaced], failed)
    view = StaticView(objects, NOW, discovery, draw(unreadable_kinds()))
    return World(objects, view, {r.kind: r for r in ALL_TYPES})


@dataclass(frozen=True)
class Fixture:
    objects: list[dict[str, Any]]
    now: datetime
    types: tuple[Resource, ...]


def load_fixtures() -> list[Fixture]:
    """The realistic clusters of the explainer tests: every blocker type is reachable."""
    found = []
    pods: list[dict[str, Any]] = []
    for path in sorted((FIXTURES / "pods").glob("*.json")):
        data = json.loads(path.read_text())
        pods.extend(data.get("items", [data]))
    found.append(Fixture(pods, datetime(2026, 1, 1, 12, tzinfo=timezone.utc), ()))
    for path in sorted((FIXTURES / "namespaces").glob("*.json")):
        data = json.loads(path.read_text())
        extra = tuple(
            Resource(r["group"], r["version"], r["plural"], r["kind"], r.get("namespaced", True))
            for r in data.get("resources", [])
        )
        now = parse_time(data["now"])
        assert now is not None
        found.append(Fixture(data["objects"], now, extra))
    return found


FIXTURE_CLUSTERS = load_fixtures()


def slots(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a JSON tree: the places a mutation can hit."""
    found: list[tuple[Any, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        found.append((value, key))
        if isinstance(child, dict | list):
            found.extend(slots(child))
    return found


mutation = st.one_of(
    st.tuples(st.just("delete"), st.none()),
    st.tuples(st.just("set"), anything),
    st.tuples(st.just("set"), hostile),
    st.tuples(st.just("set"), st.sampled_from(["2999-01-01T00:00:00Z", "not a time", ""])),
    st.tuples(st.just("set"), huge_finalizers),
    st.tuples(st.just("set"), st.sampled_from(["False", "Unknown", "Fail", "*", "Running", 0])),
)


@st.composite
def mutated_world(draw: st.DrawFn) -> World:
    """A realistic cluster with a few fields deleted or replaced by something odd."""
    fixture = draw(st.sampled_from(FIXTURE_CLUSTERS))
    objects = copy.deepcopy(fixture.objects)
    for index in sorted(draw(st.sets(st.integers(0, len(objects) - 1), max_size=2)), reverse=True):
        del objects[index]  # a node, a driver, a service... gone
    places = [place for obj in objects for place in slots(obj)]  # objects stay objects
    for _ in range(draw(st.integers(0, 6)) if places else 0):
        container, key = places[draw(st.integers(0, len(places) - 1))]
        action, value = draw(mutation)
        try:
            if action == "delete":
                del container[key]
            else:
                container[key] = value
        except (IndexError, KeyError):  # an earlier mutation removed it already
            pass
    objects.extend(draw(st.lists(st.one_of(*STRATEGIES.values()), max_size=2)))
    types = (*(r for r in ALL_TYPES if r.namespaced), *fixture.types)
    failed = draw(st.dictionaries(hostile, hostile, max_size=1))
    view = StaticView(
        objects, fixture.now, Discovery(list(types), failed), draw(unreadable_kinds())
    )
    return World(objects, view, {r.kind: r for r in (*ALL_TYPES, *fixture.types)})


world = st.one_of(random_world(), mutated_world(), mutated_world())


def target(kind: str, strategy: st.SearchStrategy[Any]) -> Any:
    """An object of the world (most often one of kind) or a generated one."""

    @st.composite
    def pick(draw: st.DrawFn, cluster: World) -> Any:
        same = [o for o in cluster.objects if isinstance(o, dict) and o.get("kind") == kind]
        choices = [st.sampled_from(same)] * 3 if same else []
        if cluster.objects:
            choices.append(st.sampled_from(cluster.objects))
        return draw(st.one_of(*choices, strategy))

    return pick


# -- what every output must satisfy -----------------------------------------------------------

OUR_COLOURS = re.compile(r"\x1b\[(?:0|1|2|31|33)m")
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_terminal_safe(output: str, color: bool) -> None:
    """No control character but newline; with colour, no ESC but our own SGR codes."""
    visible = OUR_COLOURS.sub("", output) if color else output
    bad = UNSAFE.findall(visible)
    assert not bad, (bad[:5], output[:500])


def render_everything(findings: list[Finding]) -> None:
    warnings = [w for f in findings for w in f.warnings]
    for color in (False, True):
        style = Style(color=color)
        outputs = [
            explain.explain_text(findings, style, json_extras),
            table.pods_table(findings, PrintOptions(all_namespaces=True, wide=True, style=style)),
            table.pods_table(findings, PrintOptions(no_headers=True, style=style)),
            table.namespaces_table(findings, PrintOptions(wide=True, style=style)),
            table.objects_table(findings, PrintOptions(all_namespaces=True, style=style)),
        ]
        for output in outputs:
            assert_terminal_safe(output, color)
    as_json = structured.to_json(findings, warnings, json_extras)
    assert_terminal_safe(as_json, False)
    items = [f.to_json(json_extras) for f in findings]
    assert json.loads(as_json)["items"] == json.loads(json.dumps(items))
    as_yaml = structured.to_yaml(findings, warnings, json_extras)
    assert_terminal_safe(as_yaml, False)
    assert len(yaml.safe_load(as_yaml)["items"]) == len(findings)
    names = structured.to_names(findings)
    assert_terminal_safe(names, False)
    assert names.count("\n") == len(findings)


def check_finding(finding: Finding) -> None:
    assert isinstance(finding, Finding)
    assert all(isinstance(b, Blocker) for b in finding.blockers)
    assert all(isinstance(w, str) for w in finding.warnings)
    json.dumps(finding.to_json(json_extras))  # serialisable, whatever the input held
    for child in finding.children:
        check_finding(child)


# -- explainers -------------------------------------------------------------------------------


@EXAMPLES
@given(world, st.data())
def test_explain_pod_never_crashes(cluster: World, data: st.DataObject) -> None:
    finding = explain_pod(data.draw(target("Pod", pod)(cluster)), cluster.view)
    check_finding(finding)
    render_everything([finding])


@EXAMPLES
@given(world, st.booleans(), st.data())
def test_explain_namespace_never_crashes(
    cluster: World, explain_pods: bool, data: st.DataObject
) -> None:
    ns = data.draw(target("Namespace", namespace)(cluster))
    finding = explain_namespace(ns, cluster.view, explain_pods=explain_pods)
    check_finding(finding)
    render_everything([finding])


@EXAMPLES
@given(world, st.booleans(), st.data())
def test_explain_object_never_crashes(
    cluster: World, metadata_only: bool, data: st.DataObject
) -> None:
    obj = data.draw(target("Widget", widget)(cluster))
    resource = cluster.resource_of(obj)
    if metadata_only and isinstance(obj, dict):  # `all` lists metadata only
        obj = {k: v for k, v in obj.items() if k in ("kind", "apiVersion", "metadata")}
    finding = explain_object(obj, resource, cluster.view)
    check_finding(finding)
    render_everything([finding])


@EXAMPLES
@given(world, st.data())
def test_finalizer_blockers_never_crash(cluster: World, data: st.DataObject) -> None:
    obj = data.draw(target("PersistentVolumeClaim", pvc)(cluster))
    try:
        blockers = finalizer_blockers(obj, cluster.resource_of(obj), cluster.view)
    except ReadFailed as failed:  # the one exception explainers may raise: a check not possible
        assert_refused_by_the_view(failed, cluster)
        return
    assert all(isinstance(b, Blocker) for b in blockers)


@EXAMPLES
@given(
    world,
    st.sampled_from(ALL_TYPES),
    st.lists(st.sampled_from(["UPDATE", "DELETE", "CREATE"]) | hostile, max_size=3),
    st.none() | name,
    st.none() | st.dictionaries(name, name, max_size=3),
)
def test_webhook_blockers_never_crash(
    cluster: World,
    resource: Resource,
    operations: list[str],
    in_namespace: str | None,
    labels: dict[str, str] | None,
) -> None:
    try:
        blockers = webhook_blockers(resource, operations, in_namespace, cluster.view, labels=labels)
    except ReadFailed as failed:
        assert_refused_by_the_view(failed, cluster)
        return
    assert all(isinstance(b, Blocker) for b in blockers)


def assert_refused_by_the_view(failed: ReadFailed, cluster: World) -> None:
    """An example that ends in ReadFailed still asserts: it is a read the view refuses (a
    kind it cannot read), passed on as the view said it, never one an explainer made up."""
    [resource] = [r for r in ALL_TYPES if r.qualified == failed.what]
    with pytest.raises(ReadFailed) as again:
        cluster.view.list(resource)
    assert str(again.value) == str(failed)


# -- renderers over findings nobody would write ----------------------------------------------

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | hostile,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile, inner, max_size=3),
    max_leaves=6,
)
ref = st.builds(ObjectRef, hostile, hostile, st.none() | hostile, st.none() | hostile)
evidence = st.builds(
    Evidence, hostile, st.none() | ref, st.dictionaries(hostile, json_value, max_size=2)
)
remedy = st.builds(Remedy, hostile, st.none() | hostile, st.booleans(), st.none() | hostile)
blocker = st.builds(
    Blocker,
    st.sampled_from(PRIORITY) | hostile,  # unknown blocker sources too
    hostile,
    st.lists(evidence, max_size=2).map(tuple),
    st.lists(remedy, max_size=2).map(tuple),
)
content = st.builds(
    ContentType,
    hostile,
    hostile,
    st.integers(0, 10**6),
    st.lists(
        st.fixed_dictionaries(
            {"name": hostile},
            optional={"finalizers": st.lists(hostile, max_size=2), "deletionTimestamp": hostile},
        ),
        max_size=2,
    ).map(tuple),
    st.none() | hostile,
)
seconds = st.none() | st.integers(-(10**10), 10**10)


@st.composite
def finding(draw: st.DrawFn, depth: int = 0) -> Finding:
    result = Finding(
        kind=draw(st.sampled_from(["Pod", "Namespace", "Widget"]) | hostile),
        api_version=draw(st.sampled_from(["v1", "example.com/v1"]) | hostile),
        name=draw(hostile),
        namespace=draw(st.none() | hostile),
        uid=draw(hostile),
        deletion_timestamp=draw(hostile | timestamp),
        overdue_seconds=draw(seconds),
        terminating_seconds=draw(seconds),
        finalizers=draw(st.lists(hostile, max_size=3)),
        blockers=draw(st.lists(blocker, max_size=3)),
        warnings=draw(st.lists(hostile, max_size=2)),
        node=draw(st.none() | hostile),
        phase=draw(st.none() | hostile),
        containers=draw(
            st.lists(st.fixed_dictionaries({"name": hostile, "state": hostile}), max_size=2)
        ),
        conditions=draw(st.none() | st.lists(st.dictionaries(hostile, hostile), max_size=2)),
        remaining=draw(st.none() | st.lists(content, max_size=2)),
    )
    if depth == 0:
        result.children = draw(st.lists(finding(depth=1), max_size=1))
    return result


@EXAMPLES
@given(st.lists(finding(), max_size=3))
def test_renderers_are_terminal_safe(findings: list[Finding]) -> None:
    render_everything(findings)


def test_known_escape_sequences_are_escaped_not_sent() -> None:
    """One explicit case, readable when it fails: a pod named with a screen-clearing escape."""
    evil = "\x1b[2J\x1b]0;pwned\x07web-0\r\x9b31m\u202e"
    found = Finding(
        "Pod", "v1", evil, evil, "uid", evil, 60, 90, [evil], warnings=[f"could not {evil}"]
    )
    found.blockers.append(Blocker("unknown-source", evil, (Evidence(evil),), (Remedy(evil),)))
    text = explain.explain_text([found], Style(color=False), json_extras)
    assert "\\x1b[2J\\x1b]0;pwned\\x07web-0\\x0d\\x9b31m\\u202e" in text
    render_everything([found])


def test_condition_fields_of_any_type() -> None:
    """Found by the properties above: a condition whose type or reason is a list or an object
    (a hand-edited or corrupted object, a foreign controller) crashed the namespace explainer
    (`TypeError: unhashable type`)."""
    ns = {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": "odd", "deletionTimestamp": "2026-03-01T11:00:00Z"},
        "status": {
            "phase": "Terminating",
            "conditions": [
                {"type": [], "status": "True", "reason": {"x": 1}, "message": ["m"]},
                {"type": {"y": 2}, "status": "True", "reason": ["SomeResourcesRemain"]},
            ],
        },
    }
    view = StaticView([ns], NOW)
    finding = explain_namespace(ns, view)
    check_finding(finding)
    render_everything([finding])


def test_an_explainer_bug_costs_one_warning_not_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If an explainer ever crashes on an object nobody foresaw, the run still answers for
    every other object, lists that one bare with a warning, and prints no traceback."""
    pods = [
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {
                "name": n,
                "namespace": "shop",
                "deletionTimestamp": "2026-03-01T11:00:00Z",
            },
        }
        for n in ("good-0", "odd-0")
    ]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": pods}))
    real = pods_module.explain_pod

    def flaky(pod: dict[str, Any], view: Any) -> Finding:
        if pod["metadata"]["name"] == "odd-0":
            raise TypeError("unhashable type: 'list'")
        return real(pod, view)

    monkeypatch.setattr(pods_module, "explain_pod", flaky)
    out, err = io.StringIO(), io.StringIO()
    code = run(Options(kind="pods", from_file=str(path), output="json"), out, err)
    assert code == 0, err.getvalue()
    items = {i["name"]: i for i in json.loads(out.getvalue())["items"]}
    assert not any("could not explain" in w for w in items["good-0"]["warnings"])
    assert items["odd-0"]["warnings"] == [
        "could not explain it: internal error TypeError: unhashable type: 'list' "
        "(a bug in kubectl-terminating: please report it)"
    ]
    assert "Warning: could not explain it: internal error TypeError" in err.getvalue()
    assert "Traceback" not in err.getvalue()
