"""A type the real server does not serve is a check not possible, `not served by this server
(vX.Y)`, never an absent object; an object of a served type that is absent stays absent."""

from __future__ import annotations

import io

import pytest

from kubectl_terminating.connection import connect
from kubectl_terminating.live import LiveView
from kubectl_terminating.options import Options
from kubectl_terminating.resources import Resource
from kubectl_terminating.view import ReadFailed
from tests.harness.controlplane import ControlPlane

# a version of a group no server serves, and a group it has not at all
NO_VERSION = Resource("coordination.k8s.io", "v9", "leases", "Lease")
NO_GROUP = Resource("nothere.example.com", "v1", "widgets", "Widget", namespaced=False)
SERVED = Resource("coordination.k8s.io", "v1", "leases", "Lease")  # every version tested
# DRA's v1 API: served from 1.34 on (GA), so not served by the oldest of the matrix
DRA_CLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")
DRA_GA_MINOR = 34


@pytest.fixture
def view(control_plane: ControlPlane) -> LiveView:
    options = Options("pods", kubeconfig=str(control_plane.kubeconfig_path))
    return LiveView(connect(options, io.StringIO(), interactive=False))


@pytest.mark.parametrize("resource", [NO_VERSION, NO_GROUP], ids=["version", "group"])
def test_a_type_not_served_is_a_check_not_possible(
    view: LiveView, resource: Resource, control_plane: ControlPlane
) -> None:
    assert_not_served(view, resource, control_plane.version)


def assert_not_served(view: LiveView, resource: Resource, version: tuple[int, int]) -> None:
    served_by = f"not served by this server (v{version[0]}.{version[1]})"
    for read in (lambda: view.get(resource, "default", "x"), lambda: view.list(resource)):
        with pytest.raises(ReadFailed) as failed:
            read()
        assert failed.value.reason == served_by
        assert str(failed.value) == f"could not read {resource.qualified}: {served_by}"


def test_an_absent_object_of_a_served_type_is_absent(view: LiveView) -> None:
    assert view.get(SERVED, "default", "no-such-claim") is None
    assert view.list(SERVED, "default") == []


def test_dra_claims_are_not_served_before_1_34_and_absent_after(
    view: LiveView, control_plane: ControlPlane
) -> None:
    if control_plane.version[1] < DRA_GA_MINOR:
        assert_not_served(view, DRA_CLAIMS, control_plane.version)
    else:
        assert view.get(DRA_CLAIMS, "default", "no-such-claim") is None
