"""`-w/--watch` on the real control plane: objects that get stuck, change blocker (a webhook's
Service appears, the node comes back) and go, and the watch going on after the API server
restarts. Lines are awaited in order with generous deadlines, never timed."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import api
from tests.harness.cli import ROOT
from tests.harness.controlplane import ControlPlane
from tests.harness.kubelet import (
    create_node,
    create_pod,
    renew_lease,
    set_node_ready,
    set_pod_status,
)
from tests.harness.scenarios import pod_blocked_by_webhook, pod_on_dead_node, pod_webhook_name

pytestmark = pytest.mark.e2e

AGENT = "kubectl-terminating/"
LINE_DEADLINE = 90.0  # seconds to wait for one line (a loaded machine, an API server restart)


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watching:
    """`kubectl terminating ... -w` in its own process; its stdout read line by line."""

    def __init__(self, kubeconfig: Path, *args: str) -> None:
        environ = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NO_COLOR")}
        environ.update(PYTHONPATH=str(ROOT), KUBECONFIG=str(kubeconfig))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kubectl_terminating", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
            # Ctrl-C as at a terminal: a runner started in the background by a shell without
            # job control (`.ci/run &`) ignores SIGINT, and its children would inherit that.
            # Only a signal() call between fork and exec: safe despite PLW1509's warning.
            preexec_fn=_sigint_default,  # noqa: PLW1509
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def expect(self, pattern: str) -> str:
        """The next line that matches pattern (lines before it are kept in seen)."""
        while True:
            try:
                line = self.lines.get(timeout=LINE_DEADLINE)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r}; seen: {self.seen}") from None
            self.seen.append(line)
            if re.search(pattern, line):
                return line

    def close(self) -> None:
        """Killed if still running, and its pipes closed (an open one is a ResourceWarning
        in whichever later test the garbage collector runs)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: the exit code and stderr."""
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=60)
        return self.process.returncode, err


@pytest.fixture
def watching(control_plane: ControlPlane) -> Iterator[list[Watching]]:
    started: list[Watching] = []
    yield started
    for watch in started:
        watch.close()


def wait_watching(cp: ControlPlane, ns: str, mark: int) -> None:
    """Until the plugin's watch of the pods of ns has started (the API server's audit log
    records it), so that what the test does next is a change, not the first list."""

    def started() -> bool:
        return any(
            e["verb"] == "watch"
            and e.get("objectRef", {}).get("namespace") == ns
            and e.get("userAgent", "").startswith(AGENT)
            for e in cp.audit_events(mark)
        )

    api.wait_for(started, timeout=LINE_DEADLINE, message=f"the watch of pods in {ns}")


def held_pod(cp: ControlPlane, ns: str, name: str, node: str) -> None:
    create_pod(cp, ns, name, node=node, finalizers=["example.com/hold"])
    set_pod_status(cp, ns, name, "Succeeded", {"app": "terminated:0"})
    api.delete(cp, f"/api/v1/namespaces/{ns}/pods/{name}", grace_period=0)


def test_watch_follows_blockers_as_they_change_and_survives_a_restart(
    control_plane: ControlPlane, watching: list[Watching]
) -> None:
    cp = control_plane
    ns = api.unique_ns("watch")
    api.create_namespace(cp, ns)
    web = pod_on_dead_node(cp, ns, "web-0", grace_period=1)
    assert web.node is not None
    watch = Watching(cp.kubeconfig_path, "pods", "-n", ns, "-w")
    watching.append(watch)
    # the table first
    watch.expect(r"^NAME\s+NODE")
    assert "NotReady" in watch.expect(r"^web-0\s")
    # a pod starts terminating; the webhook that blocks its finalizer's removal has no Service
    pod_blocked_by_webhook(cp, ns, "guarded-0")
    watch.expect(rf"^{ns}/guarded-0 (terminating|now): .*service {ns}/pod-guard missing")
    # the webhook's Service appears: what holds the pod changes
    cp.api(
        "POST",
        f"/api/v1/namespaces/{ns}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "pod-guard"},
            "spec": {"ports": [{"port": 443}], "selector": {"app": "pod-guard"}},
        },
    )
    watch.expect(rf"^{ns}/guarded-0 now: .*service {ns}/pod-guard has no ready endpoints")
    # the node comes back: web-0 is no longer held by it
    set_node_ready(cp, web.node, "True")
    renew_lease(cp, web.node)
    line = watch.expect(rf"^{ns}/web-0 now: ")
    assert "NotReady" not in line
    # the webhook goes, then the finalizer: the pod is gone
    api.delete(
        cp,
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
        + pod_webhook_name(ns),
    )
    watch.expect(rf"^{ns}/guarded-0 now: finalizer example.com/audit")
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/pods/guarded-0")
    watch.expect(rf"^{ns}/guarded-0 gone after \d+")
    # the API server restarts: the watch reconnects and goes on
    mark = cp.audit_offset()
    cp.restart_apiserver()
    node = f"{ns}-ok"
    create_node(cp, node)
    held_pod(cp, ns, "late-0", node)
    watch.expect(rf"^{ns}/late-0 terminating: finalizer example.com/hold")
    # the restarted server's watch cache no longer has the old resourceVersion (410 Gone): the
    # pods were listed again, and watched from there. A v1.30 server takes the old
    # resourceVersion back (seen on v1.30.14): the watch goes on from it, no list needed.
    ours = [e for e in cp.audit_events(mark) if e.get("userAgent", "").startswith(AGENT)]
    pods = [e for e in ours if e.get("objectRef", {}).get("resource") == "pods"]
    verbs = {e["verb"] for e in pods}
    assert ("list" if cp.version >= (1, 36) else "watch") in verbs, [e["requestURI"] for e in ours]
    # forced (grace 0): deletionTimestamp moves to now, yet it was terminating all along
    api.delete(cp, f"/api/v1/namespaces/{ns}/pods/web-0", grace_period=0)
    watch.expect(rf"^{ns}/web-0 gone after (?!0s)\d+")
    # Ctrl-C ends it as kubectl's: exit 130, no traceback
    code, err = watch.interrupt()
    assert code == 130, err
    assert "Traceback" not in err
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/pods/late-0")
    api.delete(cp, f"/api/v1/namespaces/{ns}")


def test_watch_only_json_events(control_plane: ControlPlane, watching: list[Watching]) -> None:
    """--watch-only -o json --output-watch-events: no table, one JSON event a line."""
    cp = control_plane
    ns = api.unique_ns("watch-json")
    api.create_namespace(cp, ns)
    node = f"{ns}-ok"
    create_node(cp, node)
    held_pod(cp, ns, "before-0", node)  # terminating before the watch: not listed
    mark = cp.audit_offset()
    watch = Watching(
        cp.kubeconfig_path, "pods", "-n", ns, "--watch-only", "-o", "json", "--output-watch-events"
    )
    watching.append(watch)
    wait_watching(cp, ns, mark)
    renew_lease(cp, node)
    held_pod(cp, ns, "after-0", node)
    added = json.loads(watch.expect(r'"after-0"'))
    assert added["type"] == "ADDED"
    assert added["object"]["name"] == "after-0"
    assert added["object"]["blockers"][0]["type"] == "finalizer"
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/pods/before-0")
    deleted = json.loads(watch.expect(r'"before-0"'))
    assert (deleted["type"], deleted["object"]["name"]) == ("DELETED", "before-0")
    assert not any('"after-0"' in line and "ADDED" not in line for line in watch.seen)
    code, _ = watch.interrupt()
    assert code == 130
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/pods/after-0")
    api.delete(cp, f"/api/v1/namespaces/{ns}")


def test_watch_all_follows_any_kind(control_plane: ControlPlane, watching: list[Watching]) -> None:
    """`all -w`: every listable type is watched; each line names the object's kind."""
    cp = control_plane
    ns = api.unique_ns("watch-all")
    api.create_namespace(cp, ns)
    api.create_configmap(cp, ns, "cm-0", finalizers=["example.com/keep"])
    api.delete(cp, f"/api/v1/namespaces/{ns}/configmaps/cm-0")
    watch = Watching(cp.kubeconfig_path, "all", "-n", ns, "-w")
    watching.append(watch)
    watch.expect(r"^KIND\s+NAME")
    watch.expect(r"^ConfigMap\s+cm-0\s")
    api.create_configmap(cp, ns, "cm-1", finalizers=["example.com/keep"])
    api.delete(cp, f"/api/v1/namespaces/{ns}/configmaps/cm-1")
    watch.expect(rf"^ConfigMap {ns}/cm-1 terminating: finalizer example.com/keep")
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/configmaps/cm-0")
    watch.expect(rf"^ConfigMap {ns}/cm-0 gone after \d+")
    code, err = watch.interrupt()
    assert code == 130, err
    api.remove_finalizers(cp, f"/api/v1/namespaces/{ns}/configmaps/cm-1")
    api.delete(cp, f"/api/v1/namespaces/{ns}")


def test_watch_says_when_a_grace_period_ends(
    control_plane: ControlPlane, watching: list[Watching]
) -> None:
    """Nothing is written to a pod when its grace period ends (here no kubelet acts on it):
    the watch still prints that it is now overdue, from a timer of its own."""
    cp = control_plane
    ns = api.unique_ns("watch-grace")
    api.create_namespace(cp, ns)
    node = f"{ns}-ok"
    create_node(cp, node)
    renew_lease(cp, node)
    create_pod(cp, ns, "slow-0", node=node, grace_period=15)
    set_pod_status(cp, ns, "slow-0", "Running", {"app": "running"})
    mark = cp.audit_offset()
    watch = Watching(cp.kubeconfig_path, "pods", "-n", ns, "-w")
    watching.append(watch)
    wait_watching(cp, ns, mark)
    api.delete(cp, f"/api/v1/namespaces/{ns}/pods/slow-0")
    first = watch.expect(rf"^{ns}/slow-0 terminating: ")
    later = watch.expect(rf"^{ns}/slow-0 now: ")
    # a second past it, not at it: at 0s the explainers see nothing that holds it ("unknown")
    assert "inside its grace period" in first and "past deadline" in later, watch.seen
    code, err = watch.interrupt()
    assert code == 130, err
