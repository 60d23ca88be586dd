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

# a version of a group the v1.36 server serves (v1), and a group it has not at all
NO_VERSION = Resource("resource.k8s.io", "v9", "resourceclaims", "ResourceClaim")
NO_GROUP = Resource("nothere.example.com", "v1", "widgets", "Widget", namespaced=False)
SERVED = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")


@pytest.fixture
def view(control_plane: ControlPlane) -> LiveView:
    options = Options("pods", kubeconfig=str(control_plane.kubeconfig_path))
    return LiveView(connect(options, io.StringIO(), interactive=False))


@pytest.mark.parametrize("resource", [NO_VERSION, NO_GROUP], ids=["version", "group"])
def test_a_type_not_served_is_a_check_not_possible(view: LiveView, resource: Resource) -> None:
    for read in (lambda: view.get(resource, "default", "x"), lambda: view.list(resource)):
        with pytest.raises(ReadFailed) as failed:
            read()
        assert failed.value.reason == "not served by this server (v1.36)"
        assert str(failed.value) == (
            f"could not read {resource.qualified}: not served by this server (v1.36)"
        )


def test_an_absent_object_of_a_served_type_is_absent(view: LiveView) -> None:
    assert view.get(SERVED, "default", "no-such-claim") is None
    assert view.list(SERVED, "default") == []
