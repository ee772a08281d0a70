"""How every format shows the verdicts: not exercised apart from held, and vacuous runs."""

from __future__ import annotations

from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from retrychaos.invariants.registry import ALL

if TYPE_CHECKING:
    from report_runs import RunDir

NO_TOOL = (
    "vacuous run: the controller reached no tool, so nothing was tested; expected at least one "
    "attempt to reach a simulated service"
)
UNEXERCISED = {"no_retry_on_permanent", "argument_errors_to_model", "unknown_retried_at_most_once"}


def _cases(run_dir: RunDir) -> dict[str, ET.Element]:
    root = ET.fromstring(run_dir.text("junit.xml"))  # noqa: S314 (our own output)
    return {f"{case.get('classname')}:{case.get('name')}": case for case in root.iter("testcase")}


def test_results_record_each_invariants_verdict(tiny: RunDir) -> None:
    """Each run lists a verdict per checked invariant; triggers come with the definitions."""
    reference = tiny.run("reference")
    checked = tiny.document["scenarios"]["tiny-report"]["invariants"]
    assert reference["verdicts"] == {
        invariant: "not_exercised" if invariant in UNEXERCISED else "held" for invariant in checked
    }
    assert reference["vacuous"] is None
    naive = tiny.run("naive")["verdicts"]
    assert {i for i, v in naive.items() if v == "violated"} == {
        v["invariant"] for v in tiny.run("naive")["violations"]
    }
    assert tiny.document["triggers"] == {i.id: i.trigger for i in ALL}


def test_junit_skips_what_a_run_did_not_exercise(tiny: RunDir) -> None:
    """An unexercised invariant is a skipped case naming its trigger; a held one has no child."""
    cases = _cases(tiny)
    skipped = cases["reference.tiny-report:seed1.no_retry_on_permanent"]
    assert [(child.tag, child.get("message")) for child in skipped] == [
        (
            "skipped",
            (
                "not exercised: its trigger never happened in this run: a response was a "
                "permanent rejection (401, 403, 404, 409 or 410)"
            ),
        )
    ]
    assert list(cases["reference.tiny-report:seed1.retry_after_respected"]) == []
    suite = next(
        s
        for s in ET.fromstring(tiny.text("junit.xml")).iter("testsuite")  # noqa: S314
        if s.get("name") == "reference.report"
    )
    assert suite.get("skipped") == str(len(UNEXERCISED))


def test_junit_fails_a_vacuous_run_with_its_message(vacuous: RunDir) -> None:
    """A vacuous run gets a seedN.run case: a failure of type vacuous, with the replay command."""
    run = _cases(vacuous)["stops.tiny-report:seed1.run"]
    (failure,) = list(run)
    assert (failure.tag, failure.get("type"), failure.get("message")) == (
        "failure",
        "vacuous",
        NO_TOOL,
    )
    assert failure.text == (
        f"{NO_TOOL}\nreplay: retrychaos replay --scenario tiny-report --controller stops --seed 1"
    )


def test_summary_marks_not_exercised_and_counts_vacuous_runs(vacuous: RunDir) -> None:
    """○ marks an invariant no run exercised; the totals, the row and the top list name vacuity."""
    lines = vacuous.text("summary.md").splitlines()
    assert lines[2] == (
        "**0 of 1 runs passed** · 1 failing (1 vacuous: tested nothing) · 1 scenario · "
        "controllers: stops"
    )
    assert (
        "| tiny-report | 0 / 1 (1 vacuous) | ○ | ○ | ○ | ○ | ○ | ○ | ○ | ○ | ○ | ○ | ✗ | · | ○ |"
    ) in lines
    assert (
        "Cells: `·` held in every run, `○` not exercised in any run (its trigger never happened, "
        "so it was not tested), `✗N` violated in N runs, `\u2013` not checked. A vacuous run tested "
        "nothing (no tool reached, none of the scenario's faults fired, or a declared "
        "must_happen event never happened) and fails."
    ) in lines
    assert f"1. **stops · tiny-report · `(vacuous run)`** (1 of 1 runs): {NO_TOOL}" in lines


def test_page_marks_not_exercised_and_says_a_vacuous_run_tested_nothing(vacuous: RunDir) -> None:
    """The overview has a distinct ○ cell; the failing run says it tested nothing, and why."""
    html = vacuous.text("index.html")
    assert (
        '<td class="cell not-exercised" title="deadline_adherence: not exercised in any run '
        '(its trigger never happened)">&#x25CB;</td>'
    ) in html
    assert '<td class="bad">0 / 1 <span class="muted">(1 vacuous)</span></td>' in html
    assert f'<div class="error"><strong>The run tested nothing:</strong> {NO_TOOL}</div>' in html
    assert "&#x25CB; not exercised in any run (its trigger never happened" in html
