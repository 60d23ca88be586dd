"""`kubectl terminating mcp` through the MCP SDK's own client over stdio, on the real control
plane: the tools listed with their schemas and read-only annotations, each called and its
answer compared with the CLI's `-o json` for the same question; an unknown object and a
cluster that goes away are error results from a server that keeps serving; the audit log shows
that no tool writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, TextContent, TextResourceContents

from tests.e2e.test_readonly import READ_ONLY, WRITES, audited
from tests.harness.api import (
    MERGE,
    create_namespace,
    delete,
    get_or_none,
    micro_time,
    namespace_conditions,
    remove_finalizers,
    unique_ns,
    wait_for,
)
from tests.harness.api_extensions import create_crd, create_custom_object
from tests.harness.cli import ROOT, run_cli, run_json
from tests.harness.controlplane import ApiError, ControlPlane
from tests.harness.scenarios import (
    Stuck,
    namespace_with_stuck_pod,
    pod_on_dead_node,
    pod_on_missing_node,
    pod_path,
    pod_with_finalizer,
)
from tests.harness.tiers import skip_or_fail
from tests.harness.users import Users

pytestmark = pytest.mark.e2e

JSON = dict[str, Any]
TOOLS = {
    "terminating_list",
    "terminating_explain",
    "terminating_summary",
    "terminating_types",
    "terminating_fix_plan",
    "terminating_preflight",
}
NO_KIND = ("terminating_types", "terminating_preflight")
Session = Callable[[Client], Awaitable[None]]


def server(kubeconfig: Path, *args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
    env.update(PYTHONPATH=str(ROOT), KUBECONFIG=str(kubeconfig))
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kubectl_terminating", "mcp", *args], env=env
    )


def session(kubeconfig: Path, body: Session, *args: str) -> None:
    """body run against a fresh `kubectl terminating mcp` started by the SDK's stdio client."""

    async def main() -> None:
        with anyio.fail_after(180):
            async with Client(server(kubeconfig, *args)) as client:
                await body(client)

    anyio.run(main)


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def answer(result: CallToolResult) -> JSON:
    """The structured answer, which the text block carries too."""
    assert not result.is_error, text(result)
    assert isinstance(result.structured_content, dict)
    assert json.loads(text(result)) == result.structured_content
    return result.structured_content


def steady(value: Any) -> Any:
    """value without what moves between two runs a second apart: ages and durations."""
    if isinstance(value, dict):
        return {
            k: steady(v)
            for k, v in value.items()
            if k not in ("overdueSeconds", "terminatingSeconds", "ageSeconds")
        }
    if isinstance(value, list):
        return [steady(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"\d+(\.\d+)?", "N", value)
    return value


def release(cp: ControlPlane, *pods: Stuck) -> None:
    """The pods gone (finalizers off, forced), so no later test counts them as stuck."""
    for pod in pods:
        path = pod_path(pod.namespace, pod.name)
        with contextlib.suppress(ApiError):
            remove_finalizers(cp, path)
            delete(cp, path, grace_period=0)


@pytest.fixture(scope="module")
def stuck(control_plane: ControlPlane) -> Iterator[tuple[Stuck, Stuck, Stuck]]:
    """A pod on a dead node and one held by a finalizer in one namespace; a namespace held by
    a pod whose node is gone."""
    ns = unique_ns("mcp-pods")
    create_namespace(control_plane, ns)
    dead = pod_on_dead_node(control_plane, ns, grace_period=1)
    held = pod_with_finalizer(control_plane, ns)
    namespace = namespace_with_stuck_pod(control_plane, unique_ns("mcp-ns"), grace_period=1)
    time.sleep(2)  # past their deadlines
    # the controller's pass done, so the CLI and the tools see the same conditions
    wait_for(
        lambda: namespace_conditions(control_plane, namespace.namespace),
        message="the namespace controller's conditions",
    )
    yield dead, held, namespace
    release(control_plane, dead, held, namespace)


def test_tools_answer_as_the_cli(
    control_plane: ControlPlane, stuck: tuple[Stuck, Stuck, Stuck]
) -> None:
    dead, held, namespace = stuck
    config = control_plane.kubeconfig_path
    answers: dict[str, JSON] = {}

    async def body(client: Client) -> None:
        listed = await client.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        for tool in listed.tools:
            assert tool.annotations is not None and tool.annotations.read_only_hint is True
            assert tool.annotations.destructive_hint is False
            assert tool.description and len(tool.description) > 100  # written for a model
            assert tool.input_schema["type"] == "object"
            if tool.name not in NO_KIND:
                assert tool.input_schema["properties"]["kind"]["enum"] == [
                    "pods",
                    "namespaces",
                    "all",
                ]
        calls: dict[str, tuple[str, JSON]] = {
            "pods": ("terminating_list", {"kind": "pods", "namespace": dead.namespace}),
            "pods-A": ("terminating_list", {"kind": "pods", "all_namespaces": True}),
            "ns": ("terminating_list", {"kind": "namespaces"}),
            "explain-pod": (
                "terminating_explain",
                {"kind": "pods", "name": dead.name, "namespace": dead.namespace},
            ),
            "explain-ns": (
                "terminating_explain",
                {"kind": "namespaces", "name": namespace.namespace},
            ),
            "summary": ("terminating_summary", {"kind": "pods", "namespace": dead.namespace}),
            "types": ("terminating_types", {}),
        }
        for key, (name, arguments) in calls.items():
            answers[key] = answer(await client.call_tool(name, arguments))
        resource = await client.read_resource("terminating://types")
        [contents] = resource.contents
        assert isinstance(contents, TextResourceContents)
        answers["resource"] = json.loads(contents.text)
        prompt = await client.get_prompt("diagnose-stuck-namespace", {"namespace": "shop"})
        answers["prompt"] = {"text": str(prompt.messages[0].content)}

    session(config, body)

    ours = {namespace.namespace}
    cli = {
        "pods": run_json("pods", "-n", dead.namespace, kubeconfig=config),
        "ns": run_json("ns", kubeconfig=config),
        "explain-pod": run_json("pods", "-n", dead.namespace, dead.name, kubeconfig=config),
        "explain-ns": run_json("ns", namespace.namespace, kubeconfig=config),
    }
    for key, document in cli.items():
        if key == "ns":  # every terminating namespace: other tests' may move meanwhile
            answers[key]["items"] = [i for i in answers[key]["items"] if i["name"] in ours]
            document["items"] = [i for i in document["items"] if i["name"] in ours]
            assert answers[key]["items"]
        assert steady(answers[key]) == steady(document), key
    names = {(i["namespace"], i["name"]) for i in answers["pods"]["items"]}
    assert names == {(dead.namespace, dead.name), (held.namespace, held.name)}
    main = {i["name"]: i["blockers"][0]["type"] for i in answers["pods"]["items"]}
    assert main == {dead.name: "node-not-ready", held.name: "finalizer"}
    assert {(i["namespace"], i["name"]) for i in answers["pods-A"]["items"]} >= names
    [ns_item] = answers["explain-ns"]["items"]
    assert ns_item["name"] == namespace.namespace and ns_item["pods"]
    summary = answers["summary"]
    assert "items" not in summary and summary["total"] == 2
    assert steady(summary["summary"]) == steady(cli["pods"]["summary"])
    types = run_cli("types", "-o", "json")
    assert answers["types"] == json.loads(types.stdout) == answers["resource"]
    assert "terminating_explain" in answers["prompt"]["text"]


def test_fix_plan_is_the_dry_run_and_never_applied(control_plane: ControlPlane) -> None:
    ns = unique_ns("mcp-fix")
    create_namespace(control_plane, ns)
    orphan = pod_on_missing_node(control_plane, ns, grace_period=1)
    time.sleep(2)
    config = control_plane.kubeconfig_path
    plans: list[JSON] = []

    async def body(client: Client) -> None:
        arguments = {"kind": "pods", "name": orphan.name, "namespace": ns}
        plans.append(answer(await client.call_tool("terminating_fix_plan", arguments)))

    session(config, body)
    [plan] = plans
    dry_run = run_cli("fix", "pods", "-n", ns, orphan.name, "-o", "json", kubeconfig=config)
    assert dry_run.returncode == 0, dry_run.stderr
    expected = json.loads(dry_run.stdout)
    assert plan["digest"] == expected["digest"] and plan["dryRun"] is True
    assert {k: v for k, v in plan.items() if k != "apply"} == expected
    [section] = plan["objects"]
    assert [a["action"] for a in section["actions"]] == ["force-delete-pod"]
    apply = plan["apply"]
    assert apply["by"] == "a human"
    assert apply["command"].endswith(f"--apply --confirm {plan['digest']}")
    assert apply["command"].startswith("kubectl terminating fix pods")
    assert "nothing was written" in apply["note"]
    assert get_or_none(control_plane, pod_path(ns, orphan.name)) is not None  # still there
    release(control_plane, orphan)


def test_unknown_object_and_bounded_answers(
    control_plane: ControlPlane, stuck: tuple[Stuck, Stuck, Stuck]
) -> None:
    dead = stuck[0]
    config = control_plane.kubeconfig_path
    seen: dict[str, CallToolResult] = {}

    async def body(client: Client) -> None:
        missing = {"kind": "pods", "name": "no-such-pod", "namespace": dead.namespace}
        seen["missing"] = await client.call_tool("terminating_explain", missing)
        seen["bad"] = await client.call_tool(
            "terminating_list", {"kind": "all", "label_selector": "a in"}
        )
        seen["after"] = await client.call_tool(
            "terminating_list", {"kind": "pods", "namespace": dead.namespace}
        )

    session(config, body, "--max-items", "1")
    cli = run_cli("pods", "-n", dead.namespace, "no-such-pod", "-o", "json", kubeconfig=config)
    assert cli.returncode == 1
    assert seen["missing"].is_error
    assert text(seen["missing"]) == cli.stderr.strip()
    assert text(seen["missing"]) == 'Error from server (NotFound): pods "no-such-pod" not found'
    assert seen["bad"].is_error and "Traceback" not in text(seen["bad"])
    after = answer(seen["after"])  # still serving, and bounded
    assert len(after["items"]) == 1
    assert after["truncated"]["shown"] == 1 and after["truncated"]["total"] == 2
    assert "Narrow the question" in after["truncated"]["note"]
    assert sum(g["count"] for g in after["summary"]) == 2  # the summary counts them all


def test_cluster_gone_mid_session_is_an_error_result(
    control_plane: ControlPlane, stuck: tuple[Stuck, Stuck, Stuck]
) -> None:
    dead = stuck[0]
    arguments = {"kind": "pods", "namespace": dead.namespace}
    seen: list[CallToolResult] = []

    async def body(client: Client) -> None:
        seen.append(await client.call_tool("terminating_list", arguments))
        control_plane.stop_apiserver()
        try:
            with anyio.fail_after(60):  # one clear answer, not a hang on retries
                seen.append(await client.call_tool("terminating_list", arguments))
            seen.append(await client.call_tool("terminating_types", {}))
        finally:
            control_plane.start_apiserver()
        seen.append(await client.call_tool("terminating_list", arguments))

    session(control_plane.kubeconfig_path, body)
    before, gone, offline, back = seen
    assert len(answer(before)["items"]) == 2
    assert gone.is_error
    [line] = text(gone).splitlines()
    assert line.startswith("error: unable to connect to the server https://127.0.0.1:"), line
    assert answer(offline)["items"]  # tools that need no cluster still answer
    assert steady(answer(back)) == steady(answer(before))  # and the cluster is read again


@pytest.fixture(scope="module")
def doomed(control_plane: ControlPlane) -> Iterator[tuple[str, str]]:
    """A namespace holding a CR whose finalizer only a dead operator removes (its Lease long
    expired), and a plain namespace; neither is deleted."""
    cp = control_plane
    group = f"dead-{secrets.token_hex(3)}.mcp.test"
    create_crd(cp, group, "Widget", "widgets")
    held = create_namespace(cp, unique_ns("mcp-pf-held"))["metadata"]["name"]
    create_custom_object(cp, group, "v1", "widgets", "Widget", "w1", held, [f"{group}/cleanup"])
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{held}/leases"
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": f"abc.{group}"},
        "spec": {"holderIdentity": "gone_1", "leaseDurationSeconds": 15, "renewTime": micro_time()},
    }
    cp.api("POST", leases, lease)
    stale = {"spec": {"renewTime": "2020-01-01T00:00:00.000000Z"}}
    cp.api("PATCH", f"{leases}/abc.{group}", stale, MERGE)
    plain = create_namespace(cp, unique_ns("mcp-pf-plain"))["metadata"]["name"]
    cp.api(
        "POST",
        f"/api/v1/namespaces/{plain}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}},
    )
    yield held, plain
    with contextlib.suppress(ApiError):
        remove_finalizers(cp, f"/apis/{group}/v1/namespaces/{held}/widgets/w1")
    for path in (
        f"/api/v1/namespaces/{held}",
        f"/api/v1/namespaces/{plain}",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}",
    ):
        with contextlib.suppress(ApiError):
            delete(cp, path)


def test_preflight_answers_as_the_cli(control_plane: ControlPlane, doomed: tuple[str, str]) -> None:
    """Blocked and clear are both answers, each the CLI's `preflight -o json` document; a
    target that does not exist is an error result with kubectl's line."""
    held, plain = doomed
    config = control_plane.kubeconfig_path
    seen: dict[str, CallToolResult] = {}

    async def body(client: Client) -> None:
        calls: dict[str, JSON] = {
            "held": {"target": ["ns", held]},
            "plain": {"target": ["ns", plain], "fail_on": "possible"},
            "missing": {"target": ["deployment/no-such-operator"], "namespace": plain},
            "file": {"target": ["-f", "chart.yaml"]},
        }
        for key, arguments in calls.items():
            seen[key] = await client.call_tool("terminating_preflight", arguments)

    session(config, body)
    cli = {
        "held": run_cli("preflight", "ns", held, "-o", "json", kubeconfig=config),
        "plain": run_cli(
            "preflight", "ns", plain, "--fail-on", "possible", "-o", "json", kubeconfig=config
        ),
    }
    assert cli["held"].returncode == 3, cli["held"].stderr
    assert cli["plain"].returncode == 0, cli["plain"].stderr
    for key, done in cli.items():
        assert steady(answer(seen[key])) == steady(json.loads(done.stdout)), key
    report = answer(seen["held"])
    assert report["kind"] == "PreflightReport" and report["verdict"] == "blocked"
    [prediction] = [p for p in report["predictions"] if p["object"]["name"] == "w1"]
    assert prediction["type"] == "finalizer" and prediction["confidence"] == "likely"
    assert prediction["object"]["kind"] == "Widget" and prediction["prevent"]
    assert answer(seen["plain"])["verdict"] == "clear"
    missing = run_cli(
        "preflight", "deployment/no-such-operator", "-n", plain, "-o", "json", kubeconfig=config
    )
    assert missing.returncode == 1 and seen["missing"].is_error
    assert text(seen["missing"]) == missing.stderr.strip()
    assert "NotFound" in text(seen["missing"])
    assert seen["file"].is_error and "target names what would be deleted" in text(seen["file"])
    assert get_or_none(control_plane, f"/api/v1/namespaces/{held}") is not None  # only read


@pytest.fixture(scope="module")
def users(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    with Users(control_plane, tmp_path_factory.mktemp("users"), "mcp-users") as made:
        yield made


def test_no_tool_writes(
    control_plane: ControlPlane,
    users: Users,
    stuck: tuple[Stuck, Stuck, Stuck],
    doomed: tuple[str, str],
) -> None:
    """Every tool called as a read-only user: the audit log holds only get and list."""
    dead, _, namespace = stuck
    auditor = users.user("mcp-auditor", cluster_rules=READ_ONLY)
    offset = control_plane.audit_offset()
    results: list[CallToolResult] = []

    async def body(client: Client) -> None:
        calls: tuple[tuple[str, JSON], ...] = (
            ("terminating_list", {"kind": "all", "all_namespaces": True}),
            (
                "terminating_explain",
                {"kind": "pods", "name": dead.name, "namespace": dead.namespace},
            ),
            ("terminating_explain", {"kind": "namespaces", "name": namespace.namespace}),
            ("terminating_summary", {"kind": "pods", "all_namespaces": True}),
            ("terminating_types", {}),
            ("terminating_fix_plan", {"kind": "pods", "namespace": dead.namespace}),
            ("terminating_fix_plan", {"kind": "namespaces", "name": namespace.namespace}),
            ("terminating_preflight", {"target": ["ns", doomed[0]]}),
            ("terminating_preflight", {"target": ["ns", namespace.namespace, doomed[1]]}),
        )
        for tool, arguments in calls:
            results.append(await client.call_tool(tool, arguments))

    session(auditor.kubeconfig, body)
    for result in results:
        answer(result)
    events = audited(control_plane, offset, auditor)
    verbs = Counter(e["verb"] for e in events)
    assert len(events) >= 30, verbs  # the tools really read as this user
    assert [(e["verb"], e["requestURI"]) for e in events if e["verb"] in WRITES] == []
    assert set(verbs) <= {"get", "list"}, verbs


NODE_CLIENT = ROOT / "tests" / "mcp_node_client"


@pytest.fixture(scope="module")
def node_client() -> Path:
    """The TypeScript SDK's client (npm, pinned by its package-lock.json), installed once."""
    if not (NODE_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        if shutil.which("npm") is None:
            skip_or_fail("second MCP client", "npm is not installed")
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
            cwd=NODE_CLIENT,
            check=True,
            capture_output=True,
            timeout=600,
        )
    return NODE_CLIENT / "session.mjs"


def test_a_second_independent_client_agrees(
    control_plane: ControlPlane, stuck: tuple[Stuck, Stuck, Stuck], node_client: Path
) -> None:
    """The TypeScript SDK's client (another implementation of the protocol than the Python
    SDK's) negotiates, lists, pings and calls; its answers are the CLI's."""
    dead, _, _ = stuck
    config = control_plane.kubeconfig_path
    calls = [
        ["terminating_explain", {"kind": "pods", "name": dead.name, "namespace": dead.namespace}],
        ["terminating_list", {"kind": "bogus"}],
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
    env.update(PYTHONPATH=str(ROOT), KUBECONFIG=str(config), MCP_CALLS=json.dumps(calls))
    done = subprocess.run(
        ["node", str(node_client), sys.executable, "-m", "kubectl_terminating", "mcp"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["server"]["name"] == "kubectl-terminating"
    assert {tool["name"] for tool in seen["tools"]} == TOOLS
    assert seen["ping"] == {}
    assert [r["uri"] for r in seen["resources"]] == ["terminating://types"]
    explained = seen["calls"]["terminating_explain"]
    assert explained["isError"] is False
    cli = run_json("pods", "-n", dead.namespace, dead.name, kubeconfig=config)
    assert steady(explained["structuredContent"]) == steady(cli)
    wrong = seen["calls"]["terminating_list"]
    assert wrong["isError"] is True
    assert wrong["content"][0]["text"] == (
        "error: terminating_list: kind must be one of pods, namespaces, all"
    )
