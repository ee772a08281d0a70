"""Running one case and failing a test readably when an invariant breaks.

Property tests, the pytest plugin and ``retrychaos fuzz`` all need the same
thing: run a scenario against a controller and, when it fails, say which
invariant broke, where, what was expected, and how to replay it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..controllers.registry import ControllerRef, resolve
from ..invariants.verdicts import NO_TOOL_REACHED
from ..runner import CaseResult, run_case

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..invariants.base import ViolationRecord
    from ..world.spec import Scenario

__all__ = ["CaseFailed", "check_case", "describe_failure", "failed", "judge_case", "run_command"]


class CaseFailed(AssertionError):
    """A case broke an invariant, or the controller raised, hung or blocked.

    An ``AssertionError``, so test runners show it as a test failure; the
    message is :func:`describe_failure`; ``result`` holds the whole case.
    """

    def __init__(self, message: str, result: CaseResult) -> None:
        """Carry ``message`` and the failing ``result``."""
        super().__init__(message)
        self.result = result


def failed(result: CaseResult) -> bool:
    """Return whether a case on a generated world is a failure of its controller.

    Every case that did not pass is one, except a vacuous run only because
    none of the world's faults fired (it reached a tool, broke nothing and
    ended without an error): a generated world whose faults the run never
    met is a weak example, not a broken controller. A run that reached no
    tool at all is the controller's failure, and counts.
    """
    if result.passed:
        return False
    quiet_world = result.vacuous is not None and result.vacuous != NO_TOOL_REACHED
    return not (quiet_world and not result.violations and result.error is None)


def run_command(result: CaseResult) -> str | None:
    """The command that re-runs ``result`` from its scenario file (None without a file)."""
    if not result.source:
        return None
    return f"retrychaos run {result.source} --controller {result.controller} --seed {result.seed}"


def describe_failure(result: CaseResult, *, limit: int = 10, replay: bool = True) -> str:
    """Explain a failed case in plain lines: each violation, the run error, the replay command.

    At most ``limit`` violations are listed; ``replay`` adds the command line
    that re-runs the case (when it came from a file).
    """
    where = f"{result.scenario} (seed {result.seed})"
    lines: list[str] = []
    violations = result.violations
    if violations:
        count = len(violations)
        lines.append(
            f"controller {result.controller!r} violated {count} invariant check"
            f"{'s' * (count != 1)} on scenario {where}:"
        )
        lines.extend(_violation_lines(violations[:limit]))
        if count > limit:
            lines.append(f"  ... and {count - limit} more")
    if result.error:
        head = result.error if result.error_kind == "internal" else result.error.splitlines()[0]
        lines.append(f"run of scenario {where} failed ({result.error_kind}): {head}")
    if result.vacuous:
        lines.append(f"run of scenario {where} failed: {result.vacuous}")
    command = run_command(result) if replay else None
    if command is not None:
        lines.append(f"replay: {command}")
    return "\n".join(lines) if lines else f"scenario {where} passed"


def _violation_lines(violations: Iterable[ViolationRecord]) -> list[str]:
    lines = []
    for v in violations:
        lines.append(f"- {v['invariant']}: {v['message']}")
        lines.append(f"    expected: {v['expected']}; actual: {v['actual']}")
    return lines


def check_case(
    scenario: Scenario,
    controller: str | ControllerRef,
    seed: int = 1,
    *,
    invariants: Iterable[str] | None = None,
    watchdog_s: float = 5.0,
) -> CaseResult:
    """Run one case and return it; raise :class:`CaseFailed` if it :func:`failed`.

    With ``invariants``, only violations of those ids fail the case (the
    scenario's own ``invariants`` list, if any, already limits what runs).
    A scenario is often a generated world: a run that met none of its faults
    but broke nothing is returned, not raised (see :func:`failed`).

    Raises:
        CaseFailed: a violation (of ``invariants``, when given), the run failed, or the
            controller reached no tool.
        ControllerLoadError: ``controller`` names nothing loadable.
    """
    __tracebackhide__ = True  # pytest: the failure is the case's, not this helper's
    ref = resolve(controller) if isinstance(controller, str) else controller
    return judge_case(run_case(scenario, ref, seed, watchdog_s=watchdog_s), invariants=invariants)


def judge_case(result: CaseResult, *, invariants: Iterable[str] | None = None) -> CaseResult:
    """What :func:`check_case` does with a case that ran: return it, or raise :class:`CaseFailed`.

    Raises:
        CaseFailed: as :func:`check_case` says.
    """
    __tracebackhide__ = True
    if invariants is not None:
        wanted = set(invariants)
        kept = [v for v in result.violations if v["invariant"] in wanted]
        if len(kept) != len(result.violations):
            result = _with_violations(result, kept)
    if failed(result):
        raise CaseFailed(describe_failure(result), result)
    return result


def _with_violations(result: CaseResult, violations: list[ViolationRecord]) -> CaseResult:
    passed = result.error is None and not violations and result.vacuous is None
    return dataclasses.replace(result, violations=violations, passed=passed)
