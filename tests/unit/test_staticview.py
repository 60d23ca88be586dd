"""The unit tests' view lists namespace content as the live one does: metadata only
(live.LiveView.namespace_content asks for PartialObjectMetadata). A spec read there is nothing
on a live cluster, so it must be nothing here too, or unit tests pass code that fails live."""

from __future__ import annotations

from kubectl_terminating.resources import PODS
from kubectl_terminating.staticview import StaticView
from kubectl_terminating.view import ContentListing
from tests.unit.builders import PODS_NOW, healthy_cluster, pod_fixture


def test_namespace_content_is_metadata_only_like_the_live_view() -> None:
    pod = pod_fixture("pod-web-0")
    view = StaticView([pod, *healthy_cluster()], PODS_NOW)
    listed = {c.resource.kind: c.items for c in view.namespace_content("shop")}
    [item] = listed["Pod"]
    assert set(item) == {"kind", "apiVersion", "metadata"}
    assert (item["kind"], item["apiVersion"], item["metadata"]) == ("Pod", "v1", pod["metadata"])
    assert all(
        set(i) == {"kind", "apiVersion", "metadata"} for items in listed.values() for i in items
    )
    # a get or a list of the type still returns the whole object, as live
    assert view.list(PODS, "shop")[0]["spec"] == pod["spec"]


def test_content_given_as_captured_is_metadata_only_too() -> None:
    pod = pod_fixture("pod-web-0")
    view = StaticView([], PODS_NOW, content={"shop": [ContentListing(PODS, (pod,))]})
    [listing] = view.namespace_content("shop")
    assert [set(i) for i in listing.items] == [{"kind", "apiVersion", "metadata"}]
