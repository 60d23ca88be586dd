"""A real node for the harness: containerd + runc + the kubelet, joined to the test control plane.

The incidents this tool explains (a runtime that stopped, a volume the kubelet cannot tear
down, a hook that never returns) happen inside a real kubelet and runtime; what they write
into the API is learned here, from the real ones, not imitated.

Everything lives in the node's own state directory: containerd's root, state and socket, the
CNI configuration (a bridge of its own name, used only by pods without hostNetwork), the
kubelet's root and certificates, logs. A busybox image is built locally from Debian's
busybox-static as an OCI archive and imported (no registry is reachable, none is needed); it
is also the sandbox ("pause") image. `stop` ends only what `start` started, then unmounts
what the kubelet and containerd left under the state directory. A test can run a CSI node
plugin beside the kubelet (`start_csi_driver`: hack/csi-driver, built by
hack/build-csi-driver.sh), which registers itself in the kubelet's plugins_registry.

Needs Linux, root, and the Debian packages in DEBIAN_PACKAGES (`ensure_packages` installs
them where apt-get can). `why_unavailable()` says in one line why a machine cannot run it.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import os
import secrets
import shutil
import signal
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.harness.controlplane import (
    ControlPlane,
    _kill_group,
    _make_leaf,
    _pid_alive,
    _pid_cmdline,
    _Proc,
    free_port,
)

JSON = dict[str, Any]

DEBIAN_PACKAGES = ("containerd", "runc", "containernetworking-plugins", "busybox-static")
CNI_BIN_DIR = Path("/usr/lib/cni")
BUSYBOX = Path("/bin/busybox")
IMAGE = "docker.io/library/busybox:harness"  # what pods name as `busybox:harness`
K8S_NAMESPACE = "k8s.io"  # containerd's namespace for the CRI
START_TIMEOUT = 120.0
# busybox applets the tests use; each is a symlink to /bin/busybox in the image
APPLETS = ("sh", "sleep", "cat", "echo", "ls", "mount", "umount", "touch", "true", "trap")
STATE_FILE = "node.json"  # what a detached node (make demo) records for `stop_recorded`
REPO_ROOT = Path(__file__).resolve().parents[2]
CSI_BUILD_SCRIPT = REPO_ROOT / "hack" / "build-csi-driver.sh"
CSI_DRIVER = "harness.csi.test"  # short: unix socket paths are at most 107 bytes
REGISTERED = "registration by the kubelet: registered=true"  # hack/csi-driver/main.go logs it
SERVED_LOGS = Path("/var/log")  # the kubelet serves it under /logs/
NODE_ADDRESS = "10.213.0.1"  # a test address (NodeNetwork), not loopback: the node proxy dials it


class NodeNetwork:
    """A veth pair made for the test, its peer end in a network namespace of its own, with
    NODE_ADDRESS/30 on the host end: an address the kubelet can serve on that is not loopback
    (the API server's node proxy refuses loopback). Everything stays on this machine and
    `remove` deletes it (the pair goes with either end)."""

    def __init__(self, address: str = NODE_ADDRESS) -> None:
        suffix = secrets.token_hex(3)
        self.address = address
        self.host, self.peer, self.netns = f"ktv{suffix}", f"ktp{suffix}", f"kt-{suffix}"

    def make(self) -> None:
        peer_address = (
            self.address.rsplit(".", 1)[0] + "." + str(int(self.address.rsplit(".", 1)[1]) + 1)
        )
        steps = [
            ["ip", "netns", "add", self.netns],
            ["ip", "link", "add", self.host, "type", "veth", "peer", "name", self.peer],
            ["ip", "link", "set", self.peer, "netns", self.netns],
            ["ip", "addr", "add", f"{self.address}/30", "dev", self.host],
            ["ip", "link", "set", self.host, "up"],
            ["ip", "-n", self.netns, "addr", "add", f"{peer_address}/30", "dev", self.peer],
            ["ip", "-n", self.netns, "link", "set", self.peer, "up"],
        ]
        try:
            for step in steps:
                subprocess.run(step, check=True, capture_output=True, text=True)
        except BaseException:
            self.remove()
            raise

    def remove(self) -> None:
        subprocess.run(["ip", "link", "del", self.host], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", self.netns], capture_output=True, check=False)

    def __enter__(self) -> NodeNetwork:
        self.make()
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def why_unavailable() -> str | None:
    """None when this machine can run a real node, else the reason in one line."""
    if os.uname().sysname != "Linux":
        return "a real node needs Linux"
    if os.geteuid() != 0:
        return "a real node needs root (containerd, runc, mounts)"
    missing = [b for b in ("containerd", "runc", "ctr") if shutil.which(b) is None]
    if missing or not BUSYBOX.exists() or not (CNI_BIN_DIR / "bridge").exists():
        what = ", ".join([*missing, *([] if BUSYBOX.exists() else ["busybox-static"])])
        packages = ", ".join(DEBIAN_PACKAGES)
        return f"a real node needs the Debian packages {packages} ({what or 'CNI plugins'} missing)"
    return None


def ensure_packages() -> None:
    """Install DEBIAN_PACKAGES with apt-get when they are missing and this is root on Debian;
    a policy-rc.d keeps the packages' own services from starting."""
    if why_unavailable() is None or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    policy = Path("/usr/sbin/policy-rc.d")
    created = not policy.exists()
    if created:
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *DEBIAN_PACKAGES]
        if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, check=False)
            subprocess.run(install, env=env, capture_output=True, check=False)
    finally:
        if created:
            policy.unlink(missing_ok=True)


# --- the image ---------------------------------------------------------------------------------


def _tar_member(tar: tarfile.TarFile, name: str, data: bytes | None = None, **attrs: Any) -> None:
    info = tarfile.TarInfo(name)
    info.mtime = 0
    for key, value in attrs.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if data is not None else None)


def _layer() -> bytes:
    """The root filesystem: /bin/busybox, its applets as symlinks, and the usual dirs."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in ("bin", "tmp", "proc", "sys", "dev", "etc", "mnt", "data"):
            _tar_member(
                tar, directory, type=tarfile.DIRTYPE, mode=0o1777 if directory == "tmp" else 0o755
            )
        busybox = BUSYBOX.read_bytes()
        _tar_member(tar, "bin/busybox", busybox, size=len(busybox), mode=0o755)
        for applet in APPLETS:
            _tar_member(tar, f"bin/{applet}", type=tarfile.SYMTYPE, linkname="busybox")
        passwd = b"root:x:0:0:root:/:/bin/sh\n"
        _tar_member(tar, "etc/passwd", passwd, size=len(passwd), mode=0o644)
    return raw.getvalue()


def oci_archive() -> bytes:
    """An OCI image layout (as a tar) holding IMAGE: busybox, entrypoint `sleep infinity`."""
    layer = _layer()
    compressed = gzip.compress(layer, mtime=0)
    config = json.dumps(
        {
            "architecture": "amd64" if os.uname().machine == "x86_64" else "arm64",
            "os": "linux",
            "config": {"Env": ["PATH=/bin"], "Entrypoint": ["/bin/sleep", "infinity"]},
            "rootfs": {
                "type": "layers",
                "diff_ids": [f"sha256:{hashlib.sha256(layer).hexdigest()}"],
            },
        }
    ).encode()

    def descriptor(media: str, blob: bytes) -> JSON:
        return {
            "mediaType": media,
            "digest": f"sha256:{hashlib.sha256(blob).hexdigest()}",
            "size": len(blob),
        }

    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptor("application/vnd.oci.image.config.v1+json", config),
            "layers": [descriptor("application/vnd.oci.image.layer.v1.tar+gzip", compressed)],
        }
    ).encode()
    index = {
        "schemaVersion": 2,
        "manifests": [
            dict(
                descriptor("application/vnd.oci.image.manifest.v1+json", manifest),
                annotations={
                    "io.containerd.image.name": IMAGE,
                    "org.opencontainers.image.ref.name": "harness",
                },
            )
        ],
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        layout = b'{"imageLayoutVersion":"1.0.0"}'
        _tar_member(tar, "oci-layout", layout, size=len(layout))
        data = json.dumps(index).encode()
        _tar_member(tar, "index.json", data, size=len(data))
        for blob in (config, manifest, compressed):
            name = f"blobs/sha256/{hashlib.sha256(blob).hexdigest()}"
            _tar_member(tar, name, blob, size=len(blob))
    return out.getvalue()


def busybox_pod(
    node_name: str,
    name: str,
    command: str,
    grace: int = 2,
    volume: bool = False,
    post_start: str | None = None,
    pre_stop: str | None = None,
    host_pid: bool = False,
    csi_driver: str | None = None,
) -> JSON:
    """A pod on the real node running `sh -c command` in IMAGE with hostNetwork (no pod
    network needed); `volume` adds an emptyDir `scratch` on /data, `csi_driver` an inline CSI
    volume `csi` of that driver on /csi; the hooks are `sh -c`."""
    container: JSON = {
        "name": "app",
        "image": IMAGE,
        "imagePullPolicy": "Never",
        "command": ["sh", "-c", command],
    }
    lifecycle = {
        key: {"exec": {"command": ["sh", "-c", hook]}}
        for key, hook in (("postStart", post_start), ("preStop", pre_stop))
        if hook
    }
    if lifecycle:
        container["lifecycle"] = lifecycle
    spec: JSON = {
        "nodeName": node_name,
        "hostNetwork": True,
        "hostPID": host_pid,
        "terminationGracePeriodSeconds": grace,
        "containers": [container],
    }
    volumes = [
        *([{"name": "scratch", "emptyDir": {}}] if volume else []),
        *([csi_inline_volume("csi", csi_driver)] if csi_driver else []),
    ]
    if volumes:
        spec["volumes"] = volumes
        container["volumeMounts"] = [
            {"name": v["name"], "mountPath": "/data" if v["name"] == "scratch" else "/csi"}
            for v in volumes
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def build_csi_driver(script: Path = CSI_BUILD_SCRIPT) -> Path:
    """The harness's CSI node plugin (hack/csi-driver), built from the Go module proxy and
    cached; RuntimeError with the build's last lines when it cannot be built."""
    with open(os.devnull, "rb") as devnull:
        proc = subprocess.run(
            ["bash", str(script)], stdin=devnull, capture_output=True, text=True, check=False
        )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines or not Path(lines[-1]).is_file():
        tail = proc.stderr.strip().splitlines()[-20:] or [f"exit code {proc.returncode}"]
        # the last line of the build's output is its error: the one line a skip shows
        raise RuntimeError("\n".join([f"hack/{script.name} failed: {tail[-1]}", *tail[:-1]]))
    return Path(lines[-1])


def csi_inline_volume(name: str = "csi", driver: str = CSI_DRIVER) -> JSON:
    """An inline (ephemeral) CSI volume of `driver`."""
    return {"name": name, "csi": {"driver": driver}}


def csi_driver_object(driver: str = CSI_DRIVER) -> JSON:
    """The CSIDriver object a driver's install creates: no attach, inline ephemeral volumes."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": driver},
        "spec": {
            "attachRequired": False,
            "podInfoOnMount": True,
            "volumeLifecycleModes": ["Ephemeral"],
        },
    }


# --- the node ----------------------------------------------------------------------------------


class RealNode:
    """containerd + kubelet in `state_dir`, registered as node `name` with the control plane."""

    def __init__(
        self,
        cp: ControlPlane,
        state_dir: Path | str,
        name: str = "",
        die_with_parent: bool = True,
        node_ip: str = "",
    ) -> None:
        """node_ip: the address the kubelet serves on and reports as InternalIP (a
        NodeNetwork's): the API server's node proxy refuses loopback."""
        self.cp = cp
        self.node_ip = node_ip
        self.state_dir = Path(state_dir).resolve()
        suffix = secrets.token_hex(3)
        self.name = name or f"real-{suffix}"
        self.bridge = f"ktb{suffix}"  # 15 characters at most: an interface name
        self.socket = self.state_dir / "containerd.sock"
        self.kubelet_root = self.state_dir / "kubelet"
        # die_with_parent=False for `make demo`: the node outlives the command that started it
        # and is stopped later from what `record` wrote (`stop_recorded`).
        logs = self.state_dir
        self.containerd = _Proc("containerd", [], logs / "containerd.log", die_with_parent)
        self.kubelet = _Proc("kubelet", [], logs / "kubelet.log", die_with_parent)
        self.csi_driver = _Proc("csi-driver", [], logs / "csi-driver.log", die_with_parent)
        self._served_logs: list[Path] = []
        self.kubelet_overrides: dict[str, Any] = {}  # KubeletConfiguration fields, next start

    # -- lifecycle --

    def start(self, timeout: float = START_TIMEOUT) -> None:
        reason = why_unavailable()
        if reason:
            raise RuntimeError(reason)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + timeout
        try:
            self.start_containerd(deadline)
            self.import_image()
            self.start_kubelet()
            self.wait_ready(deadline)
        except BaseException:
            self.stop()
            raise

    def start_containerd(self, deadline: float | None = None) -> None:
        config = self._containerd_config()
        self.containerd.args = ["containerd", "--config", str(config)]
        self.containerd.start()
        self._wait(
            deadline or time.monotonic() + START_TIMEOUT, "containerd socket", self.socket.exists
        )

    def stop_containerd(self) -> None:
        """The runtime goes down; the containers (and their shims) keep running, as on a node
        whose containerd crashed."""
        self.containerd.stop()

    def start_kubelet(self) -> None:
        config = self._kubelet_config()
        self.kubelet.args = [
            str(Path(self.cp.binaries_dir) / "kubelet"),
            f"--config={config}",
            f"--kubeconfig={self.cp.kubeconfig_path}",
            f"--hostname-override={self.name}",
            f"--root-dir={self.kubelet_root}",
            f"--cert-dir={self.state_dir / 'pki'}",
            *([f"--node-ip={self.node_ip}"] if self.node_ip else []),
            "--v=2",
        ]
        self.kubelet.start()

    def serve_log_files(self) -> list[str]:
        """The kubelet's and containerd's logs also as /var/log/kubelet.log and
        /var/log/containerd.log (links), which the kubelet's /logs/ handler serves; returns
        the names made (a name already taken on this machine is left alone)."""
        for name, log in (("kubelet.log", self.kubelet), ("containerd.log", self.containerd)):
            served = SERVED_LOGS / name
            if not served.exists() and not served.is_symlink():
                served.symlink_to(log.log_path)
                self._served_logs.append(served)
        return [p.name for p in self._served_logs]

    def _unserve_log_files(self) -> None:
        for served in self._served_logs:
            if served.is_symlink():
                served.unlink()
        self._served_logs.clear()

    def stop_kubelet(self) -> None:
        self.kubelet.stop()

    def authorizing(self) -> dict[str, Any]:
        """KubeletConfiguration fields for a kubelet that checks each request as a production
        one does: bearer tokens checked with a TokenReview, each request authorized with a
        SubjectAccessReview (authorization mode Webhook; no caching, so a test sees each
        decision), no anonymous requests; serving on the port it serves on now, with a
        certificate the cluster's CA signed for the node's address (as serverTLSBootstrap
        gives). KubeletFineGrainedAuthz is GA and locked on in the kubelet v1.36 (kubernetes
        pkg/features/kube_features.go): no gate to set. The API server presents no client
        certificate here, so its node proxy is refused by such a kubelet."""
        name = f"kubelet-serving-{self.name}"
        pki = self.cp.pki_dir
        address = self.node_ip or "127.0.0.1"
        _make_leaf(
            pki, "ca", name, self.name,
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
            f"extendedKeyUsage=serverAuth\nsubjectAltName=IP:{address},DNS:{self.name}\n",
        )  # fmt: skip
        node = self.node_object() or {}
        port = node.get("status", {}).get("daemonEndpoints", {}).get("kubeletEndpoint", {})
        return {
            "port": port.get("Port") or free_port(),
            "tlsCertFile": str(pki / f"{name}.crt"),
            "tlsPrivateKeyFile": str(pki / f"{name}.key"),
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True, "cacheTTL": "0s"},
                "x509": {"clientCAFile": str(self.cp.ca_file)},
            },
            "authorization": {
                "mode": "Webhook",
                "webhook": {"cacheAuthorizedTTL": "0s", "cacheUnauthorizedTTL": "0s"},
            },
        }

    def start_csi_driver(self, binary: Path, driver: str = CSI_DRIVER) -> None:
        """The CSI node plugin beside the kubelet, registering itself in the kubelet's
        plugins_registry (as node-driver-registrar would); returns once the kubelet has told
        it the registration succeeded and CSINode lists it."""
        log = self.csi_driver.log_path
        seen = log.read_text().count(REGISTERED) if log.exists() else 0
        self.csi_driver.args = [
            str(binary),
            f"--drivername={driver}",
            f"--nodeid={self.name}",
            f"--endpoint={self.state_dir / 'csi.sock'}",
            f"--registration-dir={self.kubelet_root / 'plugins_registry'}",
        ]
        self.csi_driver.start()
        self._wait(
            time.monotonic() + START_TIMEOUT,
            f"CSINode {self.name} to list {driver}",
            lambda: log.read_text().count(REGISTERED) > seen and driver in self.csi_drivers(),
        )

    def stop_csi_driver(self, crash: bool = False, driver: str = CSI_DRIVER) -> None:
        """SIGTERM: the driver removes its sockets and the kubelet deregisters it, as when a
        driver's node plugin is stopped or uninstalled. crash: SIGKILL, the sockets stay behind
        and the kubelet still lists the driver, as after a crash."""
        if crash and self.csi_driver.running() and self.csi_driver.pid:
            os.killpg(self.csi_driver.pid, signal.SIGKILL)
        self.csi_driver.stop()
        if not crash:
            self._wait(
                time.monotonic() + START_TIMEOUT,
                f"the kubelet to deregister {driver} (CSINode {self.name})",
                lambda: driver not in self.csi_drivers(),
            )

    def csi_drivers(self) -> list[str]:
        """The drivers the node's CSINode object lists (what the kubelet registered)."""
        try:
            csi_node = self.cp.api("GET", f"/apis/storage.k8s.io/v1/csinodes/{self.name}")
        except Exception:
            return []
        return [str(d.get("name")) for d in csi_node.get("spec", {}).get("drivers") or []]

    def stop(self) -> None:
        """Stop the kubelet, every container of this node, containerd and its shims; unmount."""
        try:
            self.csi_driver.stop()
            self.kubelet.stop()
            if self.containerd.running() and self.socket.exists():
                _remove_containers(self.socket)
            self.containerd.stop()
        finally:
            self._unserve_log_files()
            _kill_leftovers(self.state_dir, self.socket)
            _unmount_all(self.state_dir)

    def record(self) -> None:
        """Write what `stop_recorded` needs to stop this node from another process."""
        pids = {p.name: p.pid for p in (self.containerd, self.kubelet) if p.pid and p.running()}
        state = {"name": self.name, "socket": str(self.socket), "pids": pids}
        (self.state_dir / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")

    def __enter__(self) -> RealNode:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers for tests --

    def ctr(self, *args: str, check: bool = True) -> str:
        return _ctr(self.socket, *args, check=check)

    def import_image(self) -> None:
        archive = self.state_dir / "busybox-oci.tar"
        archive.write_bytes(oci_archive())
        self.ctr("images", "import", "--no-unpack", str(archive))
        self.ctr("images", "import", str(archive))

    def processes(self, argv: list[str]) -> list[int]:
        """Pids running exactly argv inside this node's containers (a hook's process too)."""
        prefix = f"{self.state_dir}/"
        return [
            int(entry.name)
            for entry in Path("/proc").iterdir()
            if entry.name.isdigit()
            and _pid_cmdline(int(entry.name)) == argv
            and _root_under(int(entry.name), prefix)
        ]

    def pod_dir(self, uid: str) -> Path:
        return self.kubelet_root / "pods" / uid

    def node_object(self) -> JSON | None:
        try:
            return self.cp.api("GET", f"/api/v1/nodes/{self.name}")
        except Exception:
            return None

    def ready(self) -> bool:
        node = self.node_object() or {}
        for condition in (node.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "Ready":
                return bool(condition.get("status") == "True")
        return False

    def wait_ready(self, deadline: float | None = None) -> None:
        self._wait(
            deadline or time.monotonic() + START_TIMEOUT, f"node {self.name} Ready", self.ready
        )

    def kubelet_log(self) -> str:
        return (
            self.kubelet.log_path.read_text(errors="replace")
            if self.kubelet.log_path.exists()
            else ""
        )

    # -- internals --

    def _wait(self, deadline: float, what: str, done: Callable[[], bool]) -> None:
        while time.monotonic() < deadline:
            if done():
                return
            for proc in (self.containerd, self.kubelet, self.csi_driver):
                if proc.args and proc.popen is not None and not proc.running():
                    raise proc.failure(f"exited while waiting for {what}")
            time.sleep(0.5)
        raise RuntimeError(f"real node: timed out waiting for {what}\n{self.kubelet_log()[-3000:]}")

    def _containerd_config(self) -> Path:
        cni_dir = self.state_dir / "cni"
        cni_dir.mkdir(parents=True, exist_ok=True)
        (cni_dir / "10-harness.conflist").write_text(
            json.dumps(
                {
                    "cniVersion": "1.0.0",
                    "name": self.bridge,
                    "plugins": [
                        {
                            "type": "bridge",
                            "bridge": self.bridge,
                            "isGateway": False,
                            "ipMasq": False,
                            "ipam": {
                                "type": "host-local",
                                "ranges": [[{"subnet": "10.244.250.0/24"}]],
                                "dataDir": str(self.state_dir / "cni-ipam"),
                            },
                        },
                        {"type": "loopback"},
                    ],
                },
                indent=2,
            )
        )
        config = self.state_dir / "containerd.toml"
        config.write_text(
            f"""version = 2
root = "{self.state_dir / 'containerd-root'}"
state = "{self.state_dir / 'containerd-state'}"
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
]

[grpc]
  address = "{self.socket}"

[ttrpc]
  address = "{self.state_dir / 'containerd-ttrpc.sock'}"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{IMAGE}"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_BIN_DIR}"
    conf_dir = "{cni_dir}"
"""
        )
        return config

    def _kubelet_config(self) -> Path:
        config = self.state_dir / "kubelet.yaml"
        settings = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "address": self.node_ip or "127.0.0.1",
            "port": free_port(),
            # the node log query (logs/?query=kubelet...): journald where it runs, else the
            # file /var/log/kubelet.log (serve_log_file)
            "enableSystemLogHandler": True,
            "enableSystemLogQuery": True,
            "featureGates": {"NodeLogQuery": True},
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": free_port(),
            "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
            "authorization": {"mode": "AlwaysAllow"},
            "containerRuntimeEndpoint": f"unix://{self.socket}",
            "cgroupDriver": "cgroupfs",
            "failCgroupV1": False,
            "cgroupsPerQOS": False,
            "enforceNodeAllocatable": [],
            "evictionHard": {},
            "localStorageCapacityIsolation": False,
            "failSwapOn": False,
            "resolvConf": "",
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": False,
            "makeIPTablesUtilChains": False,
            "registerNode": True,
            "shutdownGracePeriod": "0s",
            "volumePluginDir": str(self.state_dir / "volume-plugins"),
            **self.kubelet_overrides,
        }
        config.write_text(json.dumps(settings, indent=2))
        return config


# --- stopping (also from a recorded state, for make demo-down) ----------------------------------


def _ctr(socket: Path, *args: str, check: bool = True) -> str:
    result = subprocess.run(
        ["ctr", "--address", str(socket), "--namespace", K8S_NAMESPACE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"ctr {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def _remove_containers(socket: Path) -> None:
    for task in _ctr(socket, "tasks", "ls", "-q", check=False).split():
        _ctr(socket, "tasks", "kill", "--signal", "SIGKILL", "--all", task, check=False)
    time.sleep(0.5)
    for task in _ctr(socket, "tasks", "ls", "-q", check=False).split():
        _ctr(socket, "tasks", "delete", "--force", task, check=False)
    for container in _ctr(socket, "containers", "ls", "-q", check=False).split():
        _ctr(socket, "containers", "delete", container, check=False)


def _root_under(pid: int, prefix: str) -> bool:
    """True if the process's root filesystem (a container's rootfs: a snapshot of this node's
    containerd) lies under prefix. /proc/PID/root reads `/` across mount namespaces; the
    mountinfo line of the mount on `/` names its source directory."""
    try:
        lines = Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and fields[4] == "/":
            return fields[3].startswith(prefix)
    return False


def _kill_leftovers(state_dir: Path, socket: Path) -> None:
    """The shims of this node's containerd (they outlive it by design) and their children, and
    any process running in one of its containers' root filesystems: a container's, or a hook's
    exec'd into one (a postStart hook in a hostPID pod outlives its container)."""
    marker, prefix = str(socket), f"{state_dir}/"
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        cmdline = " ".join(_pid_cmdline(pid))
        shim = "containerd-shim" in cmdline and marker in cmdline
        if shim:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        if shim or _root_under(pid, prefix):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    deadline = time.monotonic() + 10.0  # gone when this returns, not only signalled
    while any(_pid_alive(pid) for pid in killed) and time.monotonic() < deadline:
        time.sleep(0.05)


def _unmount_all(state_dir: Path) -> None:
    prefix = str(state_dir) + "/"
    for _ in range(3):
        mounts = [
            line.split()[1].encode().decode("unicode_escape")
            for line in Path("/proc/self/mounts").read_text().splitlines()
            if line.split()[1].startswith(prefix)
        ]
        if not mounts:
            return
        for path in sorted(mounts, key=len, reverse=True):
            subprocess.run(["umount", "-l", path], capture_output=True, check=False)


def _recorded(state_dir: Path) -> dict[str, Any]:
    try:
        state: dict[str, Any] = json.loads((state_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return state


def recorded_pids(state_dir: Path) -> dict[str, int]:
    """The recorded pids that still run their program on this state dir (not a reused pid)."""
    state_dir = state_dir.resolve()
    return {
        name: int(pid)
        for name, pid in (_recorded(state_dir).get("pids") or {}).items()
        if _pid_alive(int(pid))
        and any(a.endswith(name) for a in _pid_cmdline(int(pid))[:1])
        and any(str(state_dir) in a for a in _pid_cmdline(int(pid)))
    }


def recorded_name(state_dir: Path) -> str | None:
    name = _recorded(state_dir.resolve()).get("name")
    return str(name) if name else None


def stop_recorded(state_dir: Path) -> list[int]:
    """Stop the node `record` wrote into state_dir, from any process: the kubelet, the
    containers, containerd, the shims and what runs in the containers; then unmount everything
    under state_dir. Returns the recorded pids stopped."""
    state_dir = state_dir.resolve()
    state, pids = _recorded(state_dir), recorded_pids(state_dir)
    socket = Path(state.get("socket") or state_dir / "containerd.sock")
    if "kubelet" in pids:
        _kill_group(pids["kubelet"])
    if "containerd" in pids and socket.exists():
        _remove_containers(socket)
    if "containerd" in pids:
        _kill_group(pids["containerd"])
    _kill_leftovers(state_dir, socket)
    _unmount_all(state_dir)
    with contextlib.suppress(FileNotFoundError):
        (state_dir / STATE_FILE).unlink()
    return list(pids.values())


@contextlib.contextmanager
def real_node(cp: ControlPlane, state_dir: Path) -> Iterator[RealNode]:
    node = RealNode(cp, state_dir)
    node.start()
    try:
        yield node
    finally:
        node.stop()


def main() -> None:
    """`python -m tests.harness.node --state-dir DIR --kubeconfig-of CP_STATE`: a manual try."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", required=True)
    args = parser.parse_args()
    state = Path(args.state_dir)
    with ControlPlane(state / "cp") as cp, real_node(cp, state / "node") as node:
        print(f"node {node.name} Ready; KUBECONFIG={cp.kubeconfig_path}; Ctrl-C stops", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)


if __name__ == "__main__":
    main()
