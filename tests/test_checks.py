"""check_case on generated worlds: a quiet world is no failure, a controller that does nothing is."""

from __future__ import annotations

from typing import Any

import pytest

from retrychaos.controllers.registry import ControllerRef, resolve
from retrychaos.testing.checks import CaseFailed, check_case, failed
from retrychaos.world.spec import Call, FaultRule, FaultType, Scenario, ToolSpec, Workload, World

QUIET = Scenario(
    name="quiet",
    world=World(
        tools=(
            ToolSpec(
                name="search",
                method="GET",
                faults=(FaultRule(fault=FaultType.STATUS, status=503, attempts=(2,)),),
            ),
        )
    ),
    workload=Workload(calls=(Call(tool="search"),)),
)
"""A world whose only fault waits for a second attempt that a success makes needless."""


class Stops:
    """Stops every call at once, never reaching the tool."""

    def __init__(self, env: Any) -> None:
        """Keep nothing."""
        del env

    def call(self, tool: Any, args: Any, ctx: Any) -> dict[str, Any]:
        """Stop at once."""
        del tool, args, ctx
        return {"ok": False, "decision": "stop"}


def test_a_world_whose_faults_never_fired_is_returned_not_raised():
    """The reference succeeds first time: vacuous, so not passed, yet no failure of the controller."""
    result = check_case(QUIET, "reference")
    assert not result.passed
    assert not failed(result)
    assert result.vacuous == (
        "vacuous run: none of the scenario's faults fired, so nothing was tested; expected at "
        "least one attempt to meet a fault of the fault plan of search"
    )


def test_a_controller_that_reaches_no_tool_fails_the_case():
    """Doing nothing is the controller's failure: CaseFailed names the violation and the vacuity."""
    with pytest.raises(CaseFailed) as raised:
        check_case(QUIET, ControllerRef(name="stops", path="test:Stops", factory=Stops))
    assert str(raised.value).splitlines() == [
        "controller 'stops' violated 1 invariant check on scenario quiet (seed 1):",
        (
            "- succeeds_when_possible: task a0-t0: call a0-t0-c0-i1 of op a0-t0-c0 returned 'stop' "
            "at t=0.000000s; the fault plan of search lets attempt 1 succeed (at once) within the "
            "budget and the deadline, and retrying is safe, so the call should have succeeded"
        ),
        "    expected: decision 'ok' (attempt 1 succeeds); actual: decision 'stop'",
        (
            "run of scenario quiet (seed 1) failed: vacuous run: the controller reached no tool, so "
            "nothing was tested; expected at least one attempt to reach a simulated service"
        ),
    ]
    assert failed(raised.value.result)


def test_a_passing_case_is_no_failure():
    """A fault that fires and a controller that rides it out: passed, and not failed."""
    flaky = QUIET.world.tools[0]
    rule = FaultRule(fault=FaultType.STATUS, status=503, attempts=(1,))
    scenario = Scenario(
        name="flaky",
        world=World(tools=(ToolSpec(name=flaky.name, method="GET", faults=(rule,)),)),
        workload=QUIET.workload,
    )
    result = check_case(scenario, resolve("reference"))
    assert result.passed
    assert not failed(result)
