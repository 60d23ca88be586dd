"""`kubectl-terminating ARGS` as a pod runs it: in a mount namespace of its own whose /run is a
fresh tmpfs holding the service account's files (/var/run/secrets/kubernetes.io/serviceaccount:
a real token, the namespace, the cluster's CA), with KUBERNETES_SERVICE_HOST/PORT set and no
kubeconfig: the in-cluster configuration of a pod. Needs Linux, root and unshare.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.harness.controlplane import ControlPlane

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVICE_ACCOUNT_DIR = "/run/secrets/kubernetes.io/serviceaccount"  # /var/run is /run


def in_pod_command(
    cp: ControlPlane,
    directory: Path,
    token: str,
    namespace: str,
    args: Sequence[str],
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """The command line (not run); `environ` adds to or replaces the pod's environment."""
    secrets = directory / "serviceaccount"
    secrets.mkdir(parents=True)
    (secrets / "token").write_text(token)
    (secrets / "namespace").write_text(namespace)
    shutil.copy(cp.ca_file, secrets / "ca.crt")
    host, port = cp.server.removeprefix("https://").rsplit(":", 1)
    pod_environ = {
        "HOME": str(directory),  # no ~/.kube/config: in-cluster
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO_ROOT),
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        **(environ or {}),
    }
    script = (
        'mount -t tmpfs tmpfs /run && mkdir -p "$SA_DIR" && cp "$SA_FILES"/* "$SA_DIR" && '
        'exec env -i "$@"'
    )
    return [
        "env",
        f"SA_DIR={SERVICE_ACCOUNT_DIR}",
        f"SA_FILES={secrets}",
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        *(f"{k}={v}" for k, v in pod_environ.items()),
        sys.executable,
        "-m",
        "kubectl_terminating",
        *args,
    ]
