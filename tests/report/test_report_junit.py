"""junit.xml: one case per scenario x controller x seed x checked invariant, valid JUnit XML."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from report_xsd import read_schema, validate

from retrychaos.report.junit import render_junit

if TYPE_CHECKING:
    from report_runs import RunDir

SCHEMA = read_schema(Path(__file__).with_name("junit.xsd"))


def _junit(run_dir: RunDir) -> ET.Element:
    return ET.parse(run_dir.path / "junit.xml").getroot()  # noqa: S314 (a file we just wrote)


IDS = ["no_request_amplification", "retry_after_respected", "breaker_sheds_load"]


def test_counts_follow_the_checked_invariants(tiny: RunDir) -> None:
    """13 checked invariants x 2 runs = 26 cases; naive fails 4 of them, nothing errors."""
    root = _junit(tiny)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("26", "4", "0")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert {name: (s.get("tests"), s.get("failures")) for name, s in suites.items()} == {
        "naive.report": ("13", "4"),
        "reference.report": ("13", "0"),
    }
    names = [c.get("name") for c in suites["naive.report"].iter("testcase")]
    assert "seed1.breaker_sheds_load" not in names
    assert names[0] == "seed1.no_request_amplification"
    assert {c.get("classname") for c in suites["naive.report"]} == {"naive.tiny-report"}


def test_failures_carry_the_violation_messages_and_the_replay_command(tiny: RunDir) -> None:
    """A failing case's message is its first violation; its text lists all and how to replay."""
    root = _junit(tiny)
    failing = {
        case.get("name"): case.find("failure")
        for case in root.iter("testcase")
        if case.find("failure") is not None
    }
    assert sorted(failing) == [
        "seed1.backoff_bounded_and_jittered",
        "seed1.idempotency_key_stable",
        "seed1.retry_after_respected",
        "seed1.unsafe_side_effects_not_replayed",
    ]
    naive = tiny.run("naive")
    keys = [v for v in naive["violations"] if v["invariant"] == "idempotency_key_stable"]
    failure = failing["seed1.idempotency_key_stable"]
    assert failure is not None
    assert failure.get("type") == "idempotency_key_stable"
    assert failure.get("message") == keys[0]["message"]
    assert failure.text == (
        f"{keys[0]['message']}\n{keys[1]['message']}\n"
        "replay: retrychaos replay --scenario tiny-report --controller naive --seed 1"
    )


def test_junit_xml_is_valid_against_the_common_junit_schema(tiny: RunDir) -> None:
    """The file validates against tests/report/junit.xsd (checked structurally, no lxml here)."""
    root = _junit(tiny)
    assert validate(root, SCHEMA) == []


def test_the_schema_check_catches_broken_documents(tiny: RunDir) -> None:
    """The validator is real: a missing name, a bad count and a misplaced child are reported."""
    root = copy.deepcopy(_junit(tiny))
    suite = root.find("testsuite")
    assert suite is not None
    case = suite.find("testcase")
    assert case is not None
    del case.attrib["name"]
    suite.set("tests", "many")
    ET.SubElement(suite, "failure")
    assert validate(root, SCHEMA) == [
        "testsuites/testsuite[0]: attribute tests='many' is not xs:nonNegativeInteger",
        "testsuites/testsuite[0]: children " + "<testcase>" * 13 + "<failure> do not match "
        "the content model",
        "testsuites/testsuite[0]/testcase[0]: required attribute 'name' is missing",
    ]


def test_a_run_that_did_not_finish_gets_its_own_case() -> None:
    """A controller that hung is a failure of ``seedN.run``; a harness bug is an error."""
    runs = [
        {
            "scenario": "s",
            "controller": controller,
            "seed": 3,
            "passed": False,
            "violations": [],
            "metrics": {},
            "error": f"{kind} went wrong\ndetails",
            "error_kind": kind,
            "replay": "retrychaos replay ...",
        }
        for controller, kind in (("hangs", "controller"), ("buggy", "internal"))
    ]
    document = {"version": 1, "runs": runs, "scenarios": {"s": {"invariants": IDS[:1]}}}
    root = render_junit(document, IDS)
    assert validate(root, SCHEMA) == []
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")
    outcome = {
        (c.get("classname"), c.get("name")): [(x.tag, x.get("message")) for x in c]
        for c in root.iter("testcase")
    }
    assert outcome == {
        ("hangs.s", "seed3.run"): [("failure", "controller went wrong")],
        ("hangs.s", "seed3.no_request_amplification"): [],
        ("buggy.s", "seed3.run"): [("error", "internal went wrong")],
        ("buggy.s", "seed3.no_request_amplification"): [],
    }
