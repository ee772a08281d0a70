"""summary.md: totals, metrics side by side, scenario x invariant cells, top violations."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    """Columns are the invariants checked (I11 is not); ✗ marks exactly the violated ones."""
    lines = _lines(tiny)
    header = (
        "| scenario | runs passed | I1 | I2 | I3 | I4 | I5 | I6 | I7 | I8 | I9 | I10 | I12 | I13 "
        "| I14 |"
    )
    assert lines.count(header) == 2
    naive = lines.index("## naive")
    assert lines[naive + 2] == header
    assert lines[naive + 4] == (
        "| tiny-report | 0 / 1 | · | · | · | ✗ | · | · | · | ✗ | ✗ | ✗ | · | · | · |"
    )
    reference = lines.index("## reference")
    assert lines[reference + 4] == (
        "| tiny-report | 1 / 1 | · | · | · | · | · | · | · | · | · | · | · | · | · |"
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
