"""``retrychaos replay --case ID``: a case found by its id in a report folder.

A report of ``retrychaos run`` gives each run its ``case`` id
(:func:`retrychaos.case_ids.case_id`). ``replay --case ID --report DIR``
looks the id up there (its first digits are enough when only one run has
them), takes the run's scenario, controller, seed and file, and before
replaying checks that the case found now has that id: a scenario edited
since, or other options, would replay another case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..case_ids import ID_LENGTH, case_id
from ..report.errors import ReportInputError
from ..report.results import load_results
from ..suite import Case
from .output import usage_error

if TYPE_CHECKING:
    import typer

    from ..world.spec import Scenario

__all__ = ["CASE_HELP", "CaseRef", "find_case"]

CASE_HELP: Final = (
    "Replay the run with this case id (its `case` in results.json; the first digits do) "
    "from the report folder --report, instead of --scenario, --controller and --seed."
)
MIN_DIGITS: Final = 6
"""The fewest leading digits of an id ``--case`` takes."""
_HEX: Final = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseRef:
    """A run of a report, found by its case id (``case`` None: replay names the case itself)."""

    case: str | None = None
    scenario: str = ""
    controller: str = ""
    seed: int = 0
    paths: list[Path] = field(default_factory=list)
    """The scenario's file, when it is still where the run read it; else empty."""

    def pick(self, scenario: str | None, controller: str, seed: int) -> tuple[str, str, int]:
        """The scenario, controller and seed to replay: the run's, or those given."""
        if self.case is not None:
            return self.scenario, self.controller, self.seed
        if scenario is None:
            usage_error("give --scenario NAME (or --case ID --report DIR: a run of a report)")
        return scenario, controller, seed

    def check(self, scenario: Scenario) -> None:
        """Exit 2 unless ``scenario`` with the run's controller and seed is still this case."""
        if self.case is None:
            return
        now = case_id(Case(scenario=scenario, controller=self.controller, seed=self.seed))
        if now != self.case:
            usage_error(
                f"--case {self.case}: scenario {scenario.name!r} as found now makes case {now}, "
                "not this one: its file changed since the report, or the run had other options "
                "(--invariant); expected the scenario the run read"
            )


def find_case(ctx: typer.Context, case: str | None, report: Path | None) -> CaseRef:
    """The run of ``report`` whose case id is (or starts with) ``case``; exit 2 if none or several.

    ``--scenario``, ``--controller`` and ``--seed`` given with ``--case`` are
    refused: the id names all three. No ``case``: a reference to nothing.
    """
    if case is None:
        return CaseRef()
    given = [
        f"--{name}"
        for name in ("scenario", "controller", "seed")
        if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"
    ]
    if given:
        usage_error(
            f"--case names the scenario, controller and seed; give it without {', '.join(given)}"
        )
    if not (MIN_DIGITS <= len(case) <= ID_LENGTH and _HEX.fullmatch(case)):
        usage_error(
            f"--case expects a case id ({ID_LENGTH} hex digits, or its first {MIN_DIGITS} "
            f"or more), got {case!r}"
        )
    if report is None:
        usage_error(
            "--case needs the report folder the id comes from: --report DIR "
            "(or report in [tool.retrychaos])"
        )
    try:
        runs = load_results(report)["runs"]
    except ReportInputError as exc:
        usage_error(str(exc))
    found = [run for run in runs if str(run.get("case", "")).startswith(case)]
    if not found:
        usage_error(
            f"--case {case}: no run in {report / 'results.json'} has this id; "
            "expected the `case` of one of its runs"
        )
    if len(found) > 1:
        ids = ", ".join(str(run["case"]) for run in found[:5])
        usage_error(
            f"--case {case}: {len(found)} runs have ids starting so ({ids}); give more digits"
        )
    run = found[0]
    source = run.get("source")
    return CaseRef(
        case=str(run["case"]),
        scenario=str(run["scenario"]),
        controller=str(run["controller"]),
        seed=int(run["seed"]),
        paths=[Path(source)] if isinstance(source, str) and Path(source).is_file() else [],
    )
