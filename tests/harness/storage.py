"""Volumes as a CSI driver, its provisioner and the attach/detach controller leave them, with
plain JSON dicts: CSIDriver objects, bound PersistentVolumes and claims, VolumeAttachments.
(The node's side, CSINode and volumesInUse, is the kubelet's: tests/harness/kubelet.py.)
"""

from __future__ import annotations

import hashlib

from tests.harness.api import JSON, MERGE, get, ref, rfc3339
from tests.harness.controlplane import ControlPlane


def create_csidriver(cp: ControlPlane, name: str, attach_required: bool = True) -> JSON:
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": {"attachRequired": attach_required, "podInfoOnMount": False},
    }
    return cp.api("POST", "/apis/storage.k8s.io/v1/csidrivers", body)


def create_pv(
    cp: ControlPlane,
    name: str,
    driver: str,
    handle: str | None = None,
    claim: JSON | None = None,
    storage: str = "1Gi",
) -> JSON:
    """A CSI PersistentVolume; with `claim` (a PVC object) it is Bound to it."""
    spec: JSON = {
        "capacity": {"storage": storage},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Delete",
        "storageClassName": "",
        "csi": {"driver": driver, "volumeHandle": handle or f"vol-{name}"},
    }
    if claim is not None:
        spec["claimRef"] = {**ref(claim), "kind": "PersistentVolumeClaim"}
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
    }
    cp.api("POST", "/api/v1/persistentvolumes", body)
    phase = "Bound" if claim is not None else "Available"
    return cp.api(
        "PATCH", f"/api/v1/persistentvolumes/{name}/status", {"status": {"phase": phase}}, MERGE
    )


def create_pvc(
    cp: ControlPlane, ns: str, name: str, volume_name: str | None = None, storage: str = "1Gi"
) -> JSON:
    """A PVC (storageClassName "" so no default class); with `volume_name` it is Bound."""
    spec: JSON = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": storage}},
        "storageClassName": "",
    }
    if volume_name:
        spec["volumeName"] = volume_name
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": spec,
    }
    cp.api("POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims", body)
    if not volume_name:
        return get(cp, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}")
    status = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": storage}}
    return cp.api(
        "PATCH",
        f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}/status",
        {"status": status},
        MERGE,
    )


def create_bound_volume(
    cp: ControlPlane, ns: str, pvc: str, pv: str, driver: str, handle: str | None = None
) -> tuple[JSON, JSON]:
    """A PVC and a CSI PV bound to each other; returns (pvc, pv)."""
    claim = create_pvc(cp, ns, pvc, volume_name=pv)
    volume = create_pv(cp, pv, driver, handle, claim=claim)
    return claim, volume


def volume_attachment_name(handle: str, attacher: str, node: str) -> str:
    """The name the attach/detach controller gives a CSI VolumeAttachment."""
    return "csi-" + hashlib.sha256(f"{handle}{attacher}{node}".encode()).hexdigest()


def create_volume_attachment(
    cp: ControlPlane,
    name: str | None,
    node: str,
    pv: str,
    attacher: str,
    attached: bool = True,
    detach_error: str | None = None,
) -> JSON:
    """A VolumeAttachment for PV `pv` on `node`; name None derives it as the controller does."""
    if name is None:
        handle = get(cp, f"/api/v1/persistentvolumes/{pv}")["spec"]["csi"]["volumeHandle"]
        name = volume_attachment_name(handle, attacher, node)
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {"attacher": attacher, "nodeName": node, "source": {"persistentVolumeName": pv}},
    }
    cp.api("POST", "/apis/storage.k8s.io/v1/volumeattachments", body)
    status: JSON = {"attached": attached}
    if detach_error:
        status["detachError"] = {"time": rfc3339(), "message": detach_error}
    return cp.api(
        "PATCH",
        f"/apis/storage.k8s.io/v1/volumeattachments/{name}/status",
        {"status": status},
        MERGE,
    )
