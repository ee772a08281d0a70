"""summary.md: totals, metrics side by side, scenario x invariant cells, top violations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrychaos.report.summary import render_summary

if TYPE_CHECKING:
    from report_runs import RunDir


def _lines(run_dir: RunDir) -> list[str]:
    return run_dir.text("summary.md").splitlines()


def test_totals_line(tiny: RunDir) -> None:
    """The second paragraph counts runs, failures, scenarios and names the controllers."""
    assert _lines(tiny)[2] == (
        "**1 of 2 runs passed** · 1 failing · 1 scenario · controllers: naive, reference"
    )


def test_scenario_by_invariant_table_cells(tiny: RunDir) -> None:
    """Columns are the invariants checked (I11 is not); ✗ marks the violated ones, ○ the unexercised."""
    lines = _lines(tiny)
    header = (
        "| scenario | runs passed | I1 | I2 | I3 | I4 | I5 | I6 | I7 | I8 | I9 | I10 | I12 | I13 "
        "| I14 |"
    )
    assert lines.count(header) == 2
    naive = lines.index("## naive")
    assert lines[naive + 2] == header
    assert lines[naive + 4] == (
        "| tiny-report | 0 / 1 | · | · | · | ✗ | ○ | ○ | ○ | ✗ | ✗ | ✗ | · | · | ○ |"
    )
    reference = lines.index("## reference")
    assert lines[reference + 4] == (
        "| tiny-report | 1 / 1 | · | · | · | · | ○ | ○ | ○ | · | · | · | · | · | · |"
    )
    assert "I11 = " not in tiny.text("summary.md")


def test_health_metrics_side_by_side(tiny: RunDir) -> None:
    """One column per controller, with the same numbers as results.json."""
    lines = _lines(tiny)
    assert "| metric | naive | reference |" in lines
    assert "| runs passed | 0 / 1 | 1 / 1 |" in lines
    naive = tiny.run("naive")["metrics"]
    reference = tiny.run("reference")["metrics"]
    assert (
        f"| amplification, mean | {naive['amplification']:.3f} | {reference['amplification']:.3f} |"
    ) in lines
    assert "| breaker opens, total | n/a | 0 |" in lines


def test_top_violations_come_with_their_replay_command(tiny: RunDir) -> None:
    """Groups with more violations first; each names the run, the first message and the replay."""
    text = tiny.text("summary.md")
    top = text[text.index("## Top violations") :].splitlines()
    naive = tiny.run("naive")
    first = next(v for v in naive["violations"] if v["invariant"] == "idempotency_key_stable")
    assert top[2] == (
        "1. **naive · tiny-report · `idempotency_key_stable`** (1 of 1 runs, 2 violations): "
        + first["message"]
    )
    assert (
        top[3]
        == "   replay: `retrychaos replay --scenario tiny-report --controller naive --seed 1`"
    )
    assert len([line for line in top if line.startswith("1. ")]) == 4


TASK_SUCCESS = (
    "- **task success**: share of tasks that ended well. Below 100% is expected in a passing "
    "run: many scenarios make some tasks impossible on purpose (a 403, a side effect that must "
    "not be replayed, an outage longer than the deadline). A task that could have succeeded "
    "and did not fails `succeeds_when_possible`."
)
DEADLINE_OVERRUN = (
    "- **deadline overrun**: how long after its deadline a task still started an attempt or "
    "got its decision, in virtual seconds, in the worst run. `deadline_adherence` lets the "
    "decision come up to one attempt's client timeout late (`attempt_timeout_s`, 2 s by "
    "default) while an attempt started in time is under way, so a passing run can show up to "
    "that."
)
VERDICT = (
    "**Runs passed** is the verdict: a run passes when every invariant that applies to its "
    "scenario held and the run was not vacuous (it reached a tool and, when the scenario has "
    "faults, met one, and every must_happen event it declares happened). The other figures describe how the runs went; none of them fails a run "
    "by itself."
)
NAIVE = (
    "Every run passed. To see what a failure looks like, run the shipped anti-pattern: "
    "`retrychaos run --controller naive`."
)


def test_each_health_figure_is_explained_under_the_table(tiny: RunDir) -> None:
    """The verdict line, then one note per metric shown, in the table's order."""
    lines = _lines(tiny)
    table_end = lines.index("| deadline overrun (s), worst run | 0.000 | 0.000 |")
    assert lines[table_end + 2] == VERDICT
    notes = lines[table_end + 4 : lines.index("## naive") - 1]
    assert [note.split("**")[1] for note in notes] == [
        "amplification",
        "attempts sent per call",
        "first-attempt success",
        "task success",
        "budget exhaustion",
        "duplicate side effects",
        "breaker opens",
        "task latency p99",
        "deadline overrun",
    ]
    assert TASK_SUCCESS in notes
    assert DEADLINE_OVERRUN in notes


def _passing(controller: str) -> dict[str, object]:
    """A results.json document with one passing run of ``controller``."""
    run = {
        "controller": controller,
        "scenario": "s",
        "seed": 1,
        "passed": True,
        "violations": [],
        "metrics": {"task_success_rate": 0.49},
    }
    return {"runs": [run], "scenarios": {}}


def test_a_passing_reference_run_names_naive_as_the_next_step() -> None:
    """Only when every run passed and the reference controller ran does summary.md say so."""
    passing = render_summary(_passing("reference"), ["succeeds_when_possible"]).splitlines()
    assert passing[4] == NAIVE
    assert "| task success, mean | 49.0% |" in passing
    assert TASK_SUCCESS in passing
    other = render_summary(_passing("tenacity-good"), ["succeeds_when_possible"])
    assert "--controller naive" not in other


def test_a_failing_run_does_not_suggest_naive(tiny: RunDir) -> None:
    """A run with failures already shows one: the hint stays out."""
    assert NAIVE not in tiny.text("summary.md")
    failing = _passing("reference")
    failing["runs"][0]["passed"] = False  # type: ignore[index]
    assert NAIVE not in render_summary(failing, ["succeeds_when_possible"])


LEFTOVER = (
    "the controller left 2 process(es) running after the case, killed by the harness: "
    "sleep 600, sleep 601; a controller must wait for the processes it starts"
)


def test_the_harness_notes_on_cases_are_listed_passing_runs_too() -> None:
    """Each note of a run (a passing one too) is a line naming the run; no notes, no section."""
    document = _passing("reference")
    document["runs"][0]["notes"] = [LEFTOVER]  # type: ignore[index]
    lines = render_summary(document, ["succeeds_when_possible"]).splitlines()
    at = lines.index("## Harness notes")
    assert lines[at:] == [
        "## Harness notes",
        "",
        "What the harness did after a case that its verdict does not show:",
        "",
        f"- **reference · s · seed 1**: {LEFTOVER}",
    ]
    assert "## Harness notes" not in render_summary(_passing("reference"), [])


def test_harness_notes_list_the_first_ten_runs_and_count_the_rest() -> None:
    """Past ten runs with notes, the rest are counted and results.json named."""
    document = _passing("reference")
    run = {**document["runs"][0], "notes": [LEFTOVER]}  # type: ignore[index]
    document["runs"] = [{**run, "seed": seed} for seed in range(1, 13)]
    lines = render_summary(document, ["succeeds_when_possible"]).splitlines()
    noted = [line for line in lines if line.startswith("- **reference · s · seed ")]
    assert [line.split(":")[0] for line in noted] == [
        f"- **reference · s · seed {seed}**" for seed in range(1, 11)
    ]
    assert lines[-2:] == ["", "… and 2 more runs with notes (see results.json)"]
