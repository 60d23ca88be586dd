"""How to prove a finalizer's owner is gone: the names its installation gives its objects.

A finalizer is removed only when its owner is in the knowledge table (explain/knowledge.py)
AND the owner's Lease, Deployment and webhook configuration are all absent from the whole
cluster. This table adds what the knowledge table does not say: the names the owner's
Deployments and webhook configurations get from its standard installation (fnmatch patterns;
`{group0}` is the first DNS label of the object's API group). An owner without an entry here
cannot be proven gone, so its finalizers are never removed.

The patterns are deliberately broad: any Deployment or webhook configuration whose name
contains the project's name counts as a sign of life, so a Helm release with another name
(`my-release-cert-manager-webhook`) is still seen. Sources: cert-manager's Helm chart
(Deployments cert-manager, cert-manager-cainjector, cert-manager-webhook; webhook
configurations cert-manager-webhook; Lease kube-system/cert-manager-controller), Flux's
install manifests (source-, kustomize-, helm-, notification-, image-*-controller; Leases
<name>-leader-election), Crossplane's Helm chart (Deployments crossplane,
crossplane-rbac-manager; Lease crossplane-leader-election-core).
"""

from __future__ import annotations

from kubectl_terminating.explain.knowledge import FinalizerOwner

# knowledge-table pattern of the finalizer -> names of the owner's Deployments and webhooks
INSTALLED_NAMES: dict[str, tuple[str, ...]] = {
    "acme.cert-manager.io/finalizer": ("*cert-manager*",),
    "finalizer.acme.cert-manager.io": ("*cert-manager*",),
    "finalizers.fluxcd.io": ("*{group0}*-controller*",),
    "composite.apiextensions.crossplane.io": ("*crossplane*",),
}


def installed_names(owner: FinalizerOwner, group: str) -> tuple[str, ...]:
    """Deployment and webhook configuration names of owner's installation; () when unknown."""
    group0 = group.split(".")[0]
    return tuple(p.replace("{group0}", group0) for p in INSTALLED_NAMES.get(owner.pattern, ()))
