"""The README and docs/ say what the code does: the example, the links, the generated blocks."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from invariants_table import REGENERATE, extract, render_table

from retrychaos.controllers.registry import ControllerRef
from retrychaos.invariants.registry import ALL, BY_ID, LABELS
from retrychaos.report.results import report_meta
from retrychaos.runner import run_case
from retrychaos.scenario import INVARIANT_DEFINITIONS, INVARIANT_IDS, load_paths, load_scenario
from retrychaos.scenario.library import library_path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCUMENTS = [README, ROOT / "controller" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
QUICK_START = (
    "```sh\n"
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && "
    ".venv/bin/retrychaos run --report reports/latest\n"
    "sh scripts/test\n"
    "```\n"
)


def _example(tmp_path: Path) -> ControllerRef:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"Save this as `my_retry.py`:\n\n```python\n(.*?)```", text, re.DOTALL)
    assert match, "README.md lost its example controller"
    path = tmp_path / "my_retry.py"
    path.write_text(match.group(1), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("my_retry", path)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return ControllerRef(name="my_retry:factory", path=str(path), factory=module.factory)


def test_the_example_passes_a_simple_burst_and_fails_the_layered_case(tmp_path: Path) -> None:
    """The example recovers from a 503 burst but lets SDK retries multiply past the budget."""
    ref = _example(tmp_path)
    burst = run_case(load_scenario(ROOT / "scenarios/transient/burst-503-clears.yaml"), ref, 1)
    assert burst.passed, burst.violations
    layered = run_case(
        load_scenario(ROOT / "scenarios/layered/replans-sdk-controller-27.yaml"), ref, 1
    )
    failed = {v["invariant"] for v in layered.violations}
    assert "no_request_amplification" in failed


def test_the_example_fixes_arguments_through_the_model(tmp_path: Path) -> None:
    """A 422 with allowed values goes back to the model, which fixes it, and the task succeeds."""
    ref = _example(tmp_path)
    result = run_case(load_scenario(ROOT / "scenarios/arguments/fixable-422.yaml"), ref, 1)
    assert result.passed, result.violations


def test_quick_start_commands_are_the_two_that_work():
    """The Quick start is exactly the two commands, and names naive as the failure to try."""
    text = README.read_text(encoding="utf-8")
    quick = text[text.index("## Quick start") : text.index("## Test your own controller")]
    assert QUICK_START in quick
    assert quick.count("```sh") == 1
    assert "`.venv/bin/retrychaos run --controller naive`" in quick


def test_readme_fits_on_a_few_screens():
    """The README stays short; reference material lives in docs/."""
    assert len(README.read_bytes()) < 15_000


def test_readme_counts_match_the_library_and_the_registry():
    """The numbers the README quotes are the shipped library's and the registry's."""
    text = " ".join(README.read_text(encoding="utf-8").split())  # line breaks do not count
    scenarios, errors = load_paths([library_path()])
    assert not errors
    suites = {scenario.suite for scenario in scenarios}
    assert f"{len(scenarios)} scenarios in {len(suites)} suites" in text
    assert f"checks {len(ALL)} invariants" in text


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_relative_links_point_at_files_that_exist(document: Path):
    """Every relative Markdown link of the README and docs/ names an existing file."""
    text = document.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        path = target.split("#", 1)[0]
        if not (document.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{document.relative_to(ROOT)} links to missing files: {broken}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_dotted_names_in_docs_exist(document: Path):
    """Every `retrychaos.module.Name` the README and docs/ cite can be imported."""
    cited = set(re.findall(r"`(retrychaos(?:\.\w+)+)", document.read_text(encoding="utf-8")))
    missing = [name for name in sorted(cited) if not _resolves(name)]
    assert missing == [], f"{document.relative_to(ROOT)} cites names that do not exist: {missing}"


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute path inside one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_invariants_table_is_generated_from_the_registry():
    """docs/invariants.md's table is the registry's ids, labels, summaries and triggers, in order."""
    current = extract((ROOT / "docs" / "invariants.md").read_text(encoding="utf-8"))
    assert current is not None, f"docs/invariants.md lost its markers; run: {REGENERATE}"
    assert current == render_table(), f"docs/invariants.md's table is stale; run: {REGENERATE}"
    rows = current.splitlines()[2 : 2 + len(ALL)]
    assert rows == [f"| `{i.id}` | {LABELS[i.id]} | {i.summary} | {i.trigger} |" for i in ALL]
    assert current.splitlines()[2 + len(ALL) :] == [
        "",
        "Each invariant judged on a run gets one verdict:",
        "",
        "- `held`: its trigger happened and no violation was found.",
        "- `violated`: at least one violation was found.",
        "- `not_exercised`: its trigger never happened in the run, so the run did not test it.",
        "",
        (
            "A **vacuous run** tested nothing: a run is vacuous, and fails, when the controller "
            "reached no tool, when the scenario has faults and none of them fired, or when an "
            "event the scenario declares in must_happen never happened; a scenario without "
            "faults is never vacuous for lack of faults."
        ),
    ]


def test_every_copy_of_the_catalogue_matches_the_registry():
    """Scenario ids, definitions, labels and results.json all read the registry's catalogue."""
    ids = [invariant.id for invariant in ALL]
    assert list(BY_ID) == ids
    assert list(INVARIANT_IDS) == ids
    assert dict(INVARIANT_DEFINITIONS) == {i.id: i.summary for i in ALL}
    assert list(LABELS) == ids
    assert len(set(LABELS.values())) == len(ids)
    assert all(invariant.summary and "\n" not in invariant.summary for invariant in ALL)
    document = report_meta([])
    assert document["invariants"] == {i.id: i.summary for i in ALL}
    assert document["invariant_ids"] == ids


def test_retrychaos_list_prints_the_registry_definitions():
    """`retrychaos list` prints each invariant as `id: summary` and its trigger, then the verdicts."""
    done = subprocess.run(
        [sys.executable, "-m", "retrychaos", "list"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "1000"},
    )
    lines = [line.strip() for line in done.stdout.splitlines()]
    for invariant in ALL:
        at = lines.index(f"{invariant.id}: {invariant.summary}")
        assert lines[at + 1] == f"exercised when: {invariant.trigger}"
    verdicts = lines.index("verdicts (per invariant per run)")
    assert lines[verdicts + 1 : verdicts + 5] == [
        "held: its trigger happened and no violation was found",
        "violated: at least one violation was found",
        "not_exercised: its trigger never happened in the run, so the run did not test it",
        (
            "vacuous run: a run is vacuous, and fails, when the controller reached no tool, when "
            "the scenario has faults and none of them fired, or when an event the scenario "
            "declares in must_happen never happened; a scenario without faults is never vacuous "
            "for lack of faults"
        ),
    ]


def test_the_scenario_package_imports_first_without_a_cycle():
    """retrychaos.scenario reads the registry; importing it first, alone, works."""
    done = subprocess.run(
        [sys.executable, "-c", "import retrychaos.scenario as s; print(len(s.INVARIANT_IDS))"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{len(ALL)}\n", "")
