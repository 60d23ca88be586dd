"""Files that hold only part of the evidence (issue 20, "never silent"), made by hand after what
people paste: each still names the blocker its evidence points to and says what it could not
see, never "none found", "nothing" or an age of 0s it cannot know.

Each file is in tests/fixtures/partial; its `--explain` text is a golden in
tests/golden/partial. The files carry no capture time and are run as a user runs them (no
`--now`): ages come from the newest timestamp in the file, or are unknown.
"""

from __future__ import annotations

import json
from typing import Any

from tests.unit.builders import FIXTURES, run_captured
from tests.unit.golden import assert_golden

PARTIAL = FIXTURES / "partial"


def explained(name: str) -> dict[str, Any]:
    """The file's one terminating object as `-o json` gives it, its `--explain` text checked
    against the golden partial/<name>.txt."""
    kind = "namespaces" if name.startswith("namespace-") else "pods" if "pod" in name else "all"
    path = str(PARTIAL / f"{name}.json")
    code, text, err = run_captured(kind, from_file=path, explain=True, all_namespaces=True)
    assert code == 0, err
    assert "none found" not in text and "Remaining:     nothing" not in text
    assert_golden(f"partial/{name}.txt", text)
    code, out, err = run_captured(kind, from_file=path, output="json", all_namespaces=True)
    assert code == 0, err
    (item,) = json.loads(out)["items"]
    assert item["blockers"], "a terminating object always ends with a blocker"
    found: dict[str, Any] = item
    return found


def main(item: dict[str, Any]) -> dict[str, Any]:
    blocker: dict[str, Any] = item["blockers"][0]
    return blocker


# -- 1. no capture time, the deletion is the newest timestamp ----------------------------------


def test_namespace_of_unknown_age_names_its_kubernetes_finalizer() -> None:
    item = explained("namespace-no-capture-time")
    assert item["overdueSeconds"] is None and item["terminatingSeconds"] is None
    assert item["unknowns"] == [
        "age unknown: the file has no capture time",
        "content not in the file",
    ]
    assert "remaining" not in item  # not "nothing": the file lists none of its content
    assert main(item)["type"] == "namespace-finalizer"
    assert main(item)["unchecked"] == "content not in the file"


def test_pod_of_unknown_age_gets_the_answer_it_gets_with_now() -> None:
    item = explained("pod-no-capture-time")
    assert item["overdueSeconds"] is None
    assert item["unknowns"] == ["age unknown: the file has no capture time"]
    assert main(item)["type"] == "teardown-unfinished"
    assert main(item)["summary"] == (
        "containers exited; node worker-1 not checked (not in the snapshot); kubelet's "
        "teardown unfinished, which step is unknown"
    )
    code, out, _ = run_captured(
        "pods", from_file=str(PARTIAL / "pod-no-capture-time.json"), now=True, output="json"
    )
    (with_now,) = json.loads(out)["items"]
    assert main(with_now)["summary"] == main(item)["summary"]  # no flag to know about
    code, table, _ = run_captured("pods", from_file=str(PARTIAL / "pod-no-capture-time.json"))
    assert "<unknown>" in table and "(age unknown: the file has no capture time)" in table
    assert " 0s " not in table


def test_unknown_age_is_never_inside_the_grace_period() -> None:
    item = explained("pod-no-capture-time")
    assert item["blockers"] and all(b["type"] != "grace-period" for b in item["blockers"])


# -- 2. a namespace pasted without spec --------------------------------------------------------


def test_namespace_without_spec_is_explained_by_its_conditions() -> None:
    item = explained("namespace-no-spec")
    assert item["unknowns"] == ["phase unknown: the file has no spec", "content not in the file"]
    assert main(item)["type"] == "finalizer"
    assert main(item)["summary"].startswith("finalizer widgets.example.com/cleanup on 3 objects")
    assert [b["type"] for b in item["blockers"]] == ["finalizer", "content-remaining"]


def test_namespace_without_spec_keeps_failures_naming_a_group_and_a_webhook() -> None:
    item = explained("namespace-no-spec-failures")
    types = [b["type"] for b in item["blockers"]]
    assert types[0] == "apiservice-unavailable"
    assert "webhook" in types
    said = json.dumps(item["blockers"])
    assert "metrics.k8s.io/v1beta1" in said and "validate.widgets.example.com" in said
    # conditions are all there: no "namespace controller down?" (that needs a whole object)
    assert "namespace-controller" not in types


# -- 3. a proven blocker outranks one that could not be checked --------------------------------


def test_proven_finalizer_outranks_unchecked_foreground_deletion() -> None:
    item = explained("pv-attacher-foreground")
    first, second = item["blockers"]
    assert first["type"] == "finalizer" and "external-attacher" in first["summary"]
    assert "unchecked" not in first
    assert (
        second["summary"]
        == "foregroundDeletion: dependents not checked (cluster-scoped: not listed)"
    )
    assert second["unchecked"] == "cluster-scoped: not listed"


# -- 4. Remaining is not "nothing" when the file lists no content --------------------------------


def test_content_the_file_does_not_list_is_not_nothing() -> None:
    item = explained("namespace-content-not-in-file")
    assert "remaining" not in item and "content not in the file" in item["unknowns"]
    code, table, _ = run_captured(
        "namespaces", from_file=str(PARTIAL / "namespace-content-not-in-file.json")
    )
    assert table.splitlines()[1].split()[2] == "<unknown>"  # REMAINING
    assert main(item)["summary"].startswith("finalizer widgets.example.com/cleanup on 3 objects")


# -- 6. each read stands on what it has ---------------------------------------------------------


def test_webhook_backend_judged_by_its_endpoint_slices_without_the_service() -> None:
    item = explained("webhook-service-not-in-file")
    assert main(item)["type"] == "webhook"
    assert main(item)["summary"] == (
        "webhook validate.widgets.example.com: service widgets-system/widgets-webhook has no "
        "ready endpoints"
    )
    assert "its EndpointSlices say so" in main(item)["evidence"][1]["message"]


def test_dead_apiservice_of_the_group_without_mutating_configurations_or_crds() -> None:
    item = explained("owner-apiservice-only-validating")
    assert (
        main(item)["summary"]
        == "finalizer widgets.example.com/cleanup (owner: unknown, not running)"
    )
    assert "APIService v1alpha1.example.com Available=False" in json.dumps(main(item))


# -- 7, 8, 9: conditions ------------------------------------------------------------------------


def test_remaining_condition_that_names_nothing_is_content_left() -> None:
    item = explained("namespace-condition-names-nothing")
    assert main(item)["type"] == "content-remaining"
    assert main(item)["summary"] == "content left (per the controller; its condition names no type)"
    assert not any("no content" in b["summary"] for b in item["blockers"])


def test_no_kubernetes_finalizer_blocker_while_a_failure_condition_holds() -> None:
    item = explained("namespace-failure-no-content")
    assert main(item)["type"] == "webhook"
    assert not any("controller behind" in b["summary"] for b in item["blockers"])


def test_summaries_cut_between_words_and_never_end_in_a_colon() -> None:
    item = explained("namespace-long-summaries")
    summaries = [b["summary"] for b in item["blockers"]]
    assert summaries[0] == "group-version parsing failed: the condition gives no message"
    content = next(s for s in summaries if "per the controller" in s)
    assert content == "10 objects left (per the controller): daemonsets.apps.k8s.io (5)…"
    assert all(len(s) <= 70 and not s.endswith(":") for s in summaries)


# -- 10. dependents -----------------------------------------------------------------------------


def test_dependents_are_evidence_on_the_finalizer_they_outlive() -> None:
    item = explained("finalizer-with-dependents")
    blocker = main(item)
    said = [e["message"] for e in blocker["evidence"]]
    assert "2 objects name it as owner (ownerReferences)" in " ".join(said)
    assert any("big-config" in m for m in said) and any("big-server" in m for m in said)
    steps = [r["description"] for r in blocker["remedy"]]
    assert steps[0].startswith("FIRST decide about its dependents")
    assert blocker["remedy"][-1]["destructive"]
