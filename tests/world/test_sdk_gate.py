"""The SDK layer under a tool asks its gate, and names its planned wait to gates that take one."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from world_fakes import meta, world

from retrychaos.world.runtime import run_virtual
from retrychaos.world.sdk import SdkLayer, ask_gate, takes_wait
from retrychaos.world.spec import Contract, FaultRule, FaultType, ToolSpec
from retrychaos.world.tool import Tool

if TYPE_CHECKING:
    from retrychaos.world.clock import VirtualClock

ERROR = httpx.ReadError("reset")


class Unreadable:
    """A gate whose signature cannot be read (as for some C callables)."""

    @property
    def __signature__(self) -> Any:
        """Refuse to say, as ``inspect.signature`` does for a builtin without one."""
        msg = "no signature found"
        raise ValueError(msg)

    def __call__(self, attempt_number: int, error: BaseException | None) -> bool:
        """Approve every retry."""
        del attempt_number, error
        return True


def test_gates_that_take_the_wait_are_recognised() -> None:
    """A ``wait_s`` keyword (with a default or keyword-only) or ``**kwargs`` means the gate takes it."""

    def keyword_only(n: int, e: BaseException | None, *, wait_s: float | None = None) -> bool:
        return True

    def positional(n: int, e: BaseException | None, wait_s: float | None = None) -> bool:
        return True

    def anything(n: int, e: BaseException | None, **kwargs: Any) -> bool:
        return True

    def two(n: int, e: BaseException | None) -> bool:
        return True

    def only_positional(n: int, e: BaseException | None, wait_s: float = 0.0, /) -> bool:
        return True

    assert [takes_wait(g) for g in (keyword_only, positional, anything)] == [True] * 3
    assert [takes_wait(g) for g in (two, only_positional, Unreadable())] == [False] * 3
    assert takes_wait(lambda _n, _error: True) is False


def test_a_gate_taking_the_wait_is_told_it() -> None:
    """``ask_gate`` passes ``wait_s`` to a gate that accepts it, and returns its answer."""
    seen: list[tuple[int, BaseException | None, float | None]] = []

    def gate(n: int, e: BaseException | None, *, wait_s: float | None = None) -> bool:
        seen.append((n, e, wait_s))
        return False

    assert ask_gate(gate, 2, ERROR, wait_s=0.25) is False
    assert seen == [(2, ERROR, 0.25)]


def test_a_two_argument_gate_is_asked_the_old_way() -> None:
    """Gates written for ``gate(attempt_number, error)`` keep working, unreadable ones too."""
    seen: list[tuple[int, BaseException | None]] = []
    assert ask_gate(lambda n, e: seen.append((n, e)) is None, 3, ERROR, wait_s=1.0) is True
    assert ask_gate(Unreadable(), 2, None, wait_s=1.0) is True
    assert seen == [(3, ERROR)]


def failing_tool(clock: VirtualClock, retries: int) -> Tool:
    """A read that always answers 503, with an SDK layer of ``retries`` under it."""
    spec = ToolSpec(name="search", faults=(FaultRule(fault=FaultType.STATUS, status=503),))
    _recorder, services = world(clock, spec)
    return Tool(
        spec=spec,
        services=services,
        meta=meta(seed=3),
        contract=Contract(),
        sdk=SdkLayer(retries=retries),
        transport="direct",
        http=lambda: pytest.fail("the direct transport needs no HTTP client"),
    )


def test_the_sdk_layer_names_the_wait_it_then_sleeps() -> None:
    """The wait the gate is told is the one the layer sleeps before its retry."""
    asked: list[tuple[int, float, float]] = []

    async def main(clock: VirtualClock) -> tuple[float, float]:
        tool = failing_tool(clock, retries=1)

        def gate(n: int, e: BaseException | None, *, wait_s: float | None = None) -> bool:
            assert wait_s is not None
            asked.append((n, clock.now(), wait_s))
            return True

        with pytest.raises(httpx.HTTPStatusError):
            await tool({"q": "x"}, gate=gate)
        return clock.now(), random.Random(3).random()

    end, draw = run_virtual(main)
    ((number, at, wait_s),) = asked
    assert number == 2
    assert wait_s == pytest.approx(0.5 * (1 - 0.25 * draw))
    # The second attempt started after the named wait and took the tool's latency.
    assert end == pytest.approx(at + wait_s + ToolSpec(name="search").latency_s)


@pytest.mark.parametrize("answer", [True, False])
def test_the_sdk_layer_asks_a_two_argument_gate(answer: bool) -> None:
    """A two-argument gate is asked before each retry, and a refusal stops the layer."""
    asked: list[int] = []

    async def main(clock: VirtualClock) -> None:
        tool = failing_tool(clock, retries=2)

        def gate(n: int, e: BaseException | None) -> bool:
            asked.append(n)
            return answer

        with pytest.raises(httpx.HTTPStatusError):
            await tool({"q": "x"}, gate=gate)

    run_virtual(main)
    assert asked == ([2, 3] if answer else [2])
