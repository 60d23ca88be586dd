"""Every blocker type has its row in the causes table: the summary names it and groups it
where it happens, and `fix` says why it does not act on it."""

from __future__ import annotations

from dataclasses import replace

from kubectl_terminating import model
from kubectl_terminating.causes import CAUSES, NOT_AUTOMATED, cause_of
from kubectl_terminating.fix.plan import Refusal, plan
from kubectl_terminating.model import NETWORK_TEARDOWN
from kubectl_terminating.summary import group_by_cause
from tests.unit.test_render_pods import network_teardown


def test_every_blocker_type_has_a_row() -> None:
    assert set(model.PRIORITY) <= set(CAUSES)


def test_a_type_from_elsewhere_is_named_after_itself() -> None:
    assert cause_of("new-kind-of-stuck").label == "new kind of stuck"
    assert cause_of("new-kind-of-stuck").refusal == NOT_AUTOMATED


def test_network_teardown_is_grouped_by_node_and_refused_with_its_reason() -> None:
    first = network_teardown()
    second = replace(first, name="dns-1", uid="uid-dns-1", node="worker-2")
    [group] = group_by_cause([first, second])
    assert (group.type, group.cause) == (NETWORK_TEARDOWN, "pod network teardown failing")
    assert (group.subject_kind, group.subjects) == ("Node", ("worker-1", "worker-2"))
    [section, _] = plan([first, second])
    [refused] = [s for s in section.steps if isinstance(s, Refusal)]
    assert "CNI plugin" in refused.reason
