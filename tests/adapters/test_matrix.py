"""The compatibility matrix: generated, deterministic, and the committed one is current."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from retrychaos import matrix
from retrychaos.invariants.registry import ALL, LABELS
from retrychaos.runner import CaseResult
from retrychaos.scenario import load_scenario
from retrychaos.scenario.override import LIBRARY_ALONE
from retrychaos.world.spec import ModelPolicy, Workload

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "compatibility.md"
SCENARIOS = Path(__file__).parent / "scenarios"


def _result(
    scenario: str,
    controller: str,
    invariants: list[str],
    held: tuple[str, ...] = (),
    **metrics: float,
) -> CaseResult:
    """A case result with one violation per invariant named, and ``held`` held."""
    return CaseResult(
        scenario=scenario,
        suite="scenarios",
        controller=controller,
        seed=1,
        passed=not invariants,
        violations=[{"invariant": i, "message": "m"} for i in invariants],
        metrics={"amplification": 1.0, "duplicate_side_effects": 0, **metrics},
        verdicts={
            **dict.fromkeys(held, "held"),
            **dict.fromkeys(invariants, "violated"),
        },
        wall_s=12.5,
    )


def _cells(text: str, controller: str) -> dict[str, str]:
    """The cells of a controller's row, by column label, with both runs-passed columns."""
    row = next(line for line in text.splitlines() if line.startswith(f"| `{controller}` | "))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    labels = ["controller", "stack", "alone", *(LABELS[invariant.id] for invariant in ALL)]
    return dict(zip(labels, cells, strict=True))


# A golden file: the whole library x every adapter x the seed set. The
# matrix's own code is tested below on small inputs; under coverage this run
# alone held a worker for minutes, so it runs in the second, unmeasured step.
@pytest.mark.slow
def test_committed_matrix_matches_a_fresh_run(library_run):
    """The block in docs/compatibility.md is what the generator produces for its seed set."""
    committed = matrix.extract_block(DOC.read_text(encoding="utf-8"))
    assert committed is not None, f"{DOC} lacks the matrix markers"
    scenarios, seeds, results = library_run
    assert f"--seeds {len(seeds)}`" in committed.splitlines()[0]
    computed = matrix.build_matrix(results, scenarios, seeds)
    fresh = matrix.render(computed, DOC.parent)
    assert committed == fresh, "docs/compatibility.md is stale: run `python -m retrychaos.matrix`"


def test_the_matrix_has_one_home():
    """Only docs/compatibility.md carries the generated matrix; the README links to it."""
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    homes = [path.name for path in documents if matrix.START in path.read_text(encoding="utf-8")]
    assert homes == ["compatibility.md"]
    assert "(docs/compatibility.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_columns_are_the_registry_labels_in_catalogue_order():
    """The committed matrix's columns and legend are the registry's labels and ids."""
    committed = matrix.extract_block(DOC.read_text(encoding="utf-8"))
    assert committed is not None
    lines = committed.splitlines()
    header = (
        "| controller | runs passed (stack) | runs passed (alone) | "
        + " | ".join(LABELS[i.id] for i in ALL)
        + " |"
    )
    assert lines[2] == header
    legend = "Columns: " + "; ".join(f"{LABELS[i.id]} = `{i.id}`" for i in ALL) + "."
    assert legend in lines


def test_cells_count_failing_runs_and_mark_what_does_not_apply():
    """A cell reads a count of failing runs, held, not exercised or n/a; wall times never show."""
    post = load_scenario(SCENARIOS / "post-timeout-after-commit.yaml")
    read = load_scenario(SCENARIOS / "read-503-twice.yaml")
    results = [
        _result(post.name, "x", ["no_duplicate_side_effects"], duplicate_side_effects=1),
        _result(read.name, "x", [], ("deadline_adherence",), deadline_overrun_max=0.25),
    ]
    text = matrix.render(matrix.build_matrix(results, [post, read], [1]), SCENARIOS.parent)
    cells = _cells(text, "x")
    assert (cells["stack"], cells["alone"]) == ("1/2", "1/2")
    assert cells["duplicates"] == "✗ 1 / ✗ 1"
    assert cells["deadline"] == "✓ / ✓"
    assert cells["permanent"] == "○ / ○"
    assert cells["breaker"] == "n/a / n/a"
    assert "| `x` | 1.00 | 1.00 | 1 | 0.250 | 0 |" in text
    assert (
        "| `x` | `no_duplicate_side_effects` | [scenarios/adapters-post-timeout-after-commit]"
        "(scenarios/post-timeout-after-commit.yaml) | [scenarios/adapters-post-timeout-after-"
        "commit](scenarios/post-timeout-after-commit.yaml) |"
    ) in text
    assert "12.5" not in text


def test_the_library_alone_is_shown_beside_the_stack():
    """A scenario the override changes counts its overridden run on the alone side only."""
    stubborn = replace(
        load_scenario(SCENARIOS / "read-503-twice.yaml"),
        workload=Workload(model=ModelPolicy.STUBBORN, max_replans=2, sdk_retries=2),
    )
    alone = LIBRARY_ALONE.apply(stubborn).name
    results = [
        _result(stubborn.name, "x", ["no_request_amplification"]),
        _result(alone, "x", [], ("no_request_amplification",)),
    ]
    text = matrix.render(matrix.build_matrix(results, [stubborn], [1]), SCENARIOS.parent)
    cells = _cells(text, "x")
    assert (cells["stack"], cells["alone"], cells["amplification"]) == ("0/1", "1/1", "✗ 1 / ✓")
    assert (
        "| `x` | `no_request_amplification` | [scenarios/adapters-read-503-twice]"
        "(scenarios/read-503-twice.yaml) | - |"
    ) in text
    assert "which changes 1 of the scenarios" in text


def test_block_replacement_keeps_the_prose_around_it():
    """Only the text between the markers changes; extract_block reads it back."""
    text = f"intro\n{matrix.START}\nold\n{matrix.END}\noutro\n"
    new = matrix.replace_block(text, "fresh\n")
    assert new == f"intro\n{matrix.START}\nfresh\n{matrix.END}\noutro\n"
    assert matrix.extract_block(new) == "fresh\n"
    assert matrix.extract_block("no markers") is None


# Slow: every built-in controller on one scenario, twice (15 s without coverage); the main
# step tests the matrix's cells and rendering above, and the golden test runs it whole.
@pytest.mark.slow
def test_command_writes_then_checks_a_file(tmp_path):
    """`python -m retrychaos.matrix` fills a new file, and --check then finds it current."""
    library = tmp_path / "library" / "transient"
    library.mkdir(parents=True)
    shutil.copy(SCENARIOS / "read-503-twice.yaml", library)
    out = tmp_path / "docs" / "compat.md"
    args = ["--scenarios", str(library.parent), "--out", str(out), "--seeds", "1", "--jobs", "1"]
    assert matrix.main(args) == 0
    first = out.read_text(encoding="utf-8")
    assert "(../library/transient/read-503-twice.yaml)" in first
    assert matrix.main([*args, "--check"]) == 0
    assert out.read_text(encoding="utf-8") == first
    out.write_text(first.replace("✗", "?"), encoding="utf-8")
    assert matrix.main([*args, "--check"]) == 1
