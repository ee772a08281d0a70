"""``breaker_sheds_load``: in a sustained fleet outage, attempts fall to a probe rate.

Applies when the workload has at least 20 agents and some tool has an
*outage*: a fault rule with a ``window`` ``[s, e)`` at least 10 s long,
probability 1.0, no ``attempts`` filter, and a transient fault (status 408,
429, 502, 503 or 504, a read timeout, a connect timeout or a connect error;
see :mod:`retrychaos.invariants.faults` for why a plain 500 is left out).

For each outage of tool ``T``, the *late window* is
``[s + max(5, 0.2 * (e - s)), e)``: by then failures have piled up and a
breaker should be open. ``calls`` counts the ``call_start`` events for ``T``
in the late window, ``attempts`` the requests to ``T`` starting in it
(every layer; reached or not, since during a connect-failure outage no
attempt reaches the server yet each one still costs the fleet and the
network). The invariant is broken when ``calls >= 20`` and
``attempts > 0.25 * calls``. One violation per outage.

It is exercised exactly when it can judge: when some outage's late window
saw at least 20 calls (fewer are too few to tell a breaker from chance).
Counting needs the whole trace, so the trigger is a :class:`_Counts` too
(``trigger_judge``): a trace judged in parts adds up its calls the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .attribution import SDK_RETRY, SENDERS, count_senders
from .base import Violation, fmt_t
from .faults import is_transient
from .index import index_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import Scenario
    from ..world.trace import TraceEvent
    from .base import Shards
    from .index import TraceIndex

__all__ = ["INVARIANT", "BreakerShedsLoad", "Outage", "outages"]

ID = "breaker_sheds_load"
MIN_AGENTS = 20
MIN_OUTAGE_S = 10.0
MIN_CALLS = 20
PROBE_RATIO = 0.25
_PLURALS = {
    "first attempt": "first attempts",
    "model re-plan": "model re-plans",
    "controller retry": "controller retries",
    "SDK-layer retry": "SDK-layer retries",
    "framework retry": "framework retries",
}
"""Each sender's plural, to count the requests each sent."""


def _counted(kind: str, count: int) -> str:
    """Name ``count`` requests sent by ``kind``: ``1 first attempt``, ``3 model re-plans``."""
    return f"1 {kind}" if count == 1 else f"{count} {_PLURALS[kind]}"


def _fix(by_sender: dict[str, int]) -> str:
    """Say who should have shed the load: the controller's breaker (its gate, for SDK retries)."""
    fix = (
        "the controller's breaker must open after repeated failures and refuse calls until a "
        "probe succeeds"
    )
    if by_sender.get(SDK_RETRY):
        fix += ", its gate refusing the SDK layer's retries while open"
    return fix


@dataclass(frozen=True, slots=True, kw_only=True)
class Outage:
    """A sustained transient outage of one tool, and the late part of it that is judged."""

    tool: str
    start: float
    end: float

    @property
    def late_start(self) -> float:
        """When the late window begins."""
        return self.start + max(5.0, 0.2 * (self.end - self.start))


def outages(scenario: Scenario) -> list[Outage]:
    """Return every outage of the scenario's fault plans (see the module docstring)."""
    return [
        Outage(tool=tool.name, start=rule.window[0], end=rule.window[1])
        for tool in scenario.world.tools
        for rule in tool.faults
        if rule.window is not None
        and rule.window[1] - rule.window[0] >= MIN_OUTAGE_S
        and rule.probability >= 1.0
        and rule.attempts is None
        and is_transient(rule)
    ]


class BreakerShedsLoad:
    """During a sustained outage the fleet's attempt rate falls to a small probe rate."""

    __slots__ = ()
    id = ID
    summary = (
        "during a sustained fleet outage, attempts in its late part stay at a probe rate "
        "(at most 0.25 per call started)"
    )
    trigger = (
        f"at least {MIN_CALLS} calls to a tool started in the late part of one of its outage "
        "windows (fewer are too few to judge)"
    )

    def applies(self, scenario: Scenario) -> bool:
        """Apply to fleets of 20 agents or more facing a sustained transient outage."""
        return scenario.workload.agents >= MIN_AGENTS and bool(outages(scenario))

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when some outage's late window saw enough calls to judge."""
        counts = self.trigger_judge(scenario)
        counts.add(events)
        return counts.happened

    def trigger_judge(self, scenario: Scenario) -> _Counts:
        """Tell whether a trace given in parts exercised the rule: the calls add up."""
        return _Counts(outages(scenario))

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Count calls and attempts in each outage's late window."""
        judge = self.shard_judge(scenario)
        judge.add(events)
        return judge.finish()

    def shard_judge(self, scenario: Scenario, shards: Shards | None = None) -> _Counts:
        """Judge a trace given in parts: the counts add up."""
        del shards
        return _Counts(outages(scenario))


class _Counts:
    """Calls and attempts in each outage's late window, summed over parts of a trace."""

    __slots__ = ("attempts", "calls", "judged", "senders")

    def __init__(self, judged: list[Outage]) -> None:
        self.judged = judged
        self.calls = [0] * len(judged)
        self.attempts = [0] * len(judged)
        self.senders: list[dict[str, int]] = [{} for _ in judged]

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Count one part (``shared``: count the events without an agent)."""
        judged = self.judged
        if not judged:
            return
        index = index_of(events)
        # The checker and the trigger count the same trace: the second reuses the first's.
        key = (ID, tuple(judged), shared)
        counted = index.memo.get(key)
        if counted is None:
            counted = index.memo[key] = _count(judged, index, shared=shared)
        calls, attempts, senders = counted
        for i in range(len(judged)):
            self.calls[i] += calls[i]
            self.attempts[i] += attempts[i]
            mine = self.senders[i]
            for kind, n in senders[i].items():
                mine[kind] = mine.get(kind, 0) + n

    @property
    def happened(self) -> bool:
        """Whether some outage's late window saw enough calls to judge (the trigger)."""
        return any(n_calls >= MIN_CALLS for n_calls in self.calls)

    @property
    def total(self) -> int:
        """How many violations :meth:`finish` finds (one per outage at most)."""
        return len(self.finish())

    def finish(self) -> list[Violation]:
        """Return one violation per outage whose late window kept the fleet's attempts up."""
        violations: list[Violation] = []
        for outage, n_calls, n_attempts, by_sender in zip(
            self.judged, self.calls, self.attempts, self.senders, strict=True
        ):
            if n_calls < MIN_CALLS or n_attempts <= PROBE_RATIO * n_calls:
                continue
            senders = ", ".join(
                _counted(kind, by_sender[kind]) for kind in SENDERS if by_sender.get(kind)
            )
            violations.append(
                Violation(
                    invariant=ID,
                    message=(
                        f"during the outage of {outage.tool} from {fmt_t(outage.start)} to "
                        f"{fmt_t(outage.end)}, from {fmt_t(outage.late_start)} on, the fleet "
                        f"kept sending {n_attempts} attempts for {n_calls} calls "
                        f"({n_attempts / n_calls:.2f} per call: {senders}); a breaker should cut "
                        f"this to a probe rate (at most {PROBE_RATIO:g} attempts per call): "
                        f"{_fix(by_sender)}"
                    ),
                    task=None,
                    attempt=None,
                    at=outage.late_start,
                    expected=f"at most {int(PROBE_RATIO * n_calls)} attempts",
                    actual=f"{n_attempts} attempts for {n_calls} calls",
                )
            )
        return violations


def _count(
    judged: list[Outage], index: TraceIndex, *, shared: bool
) -> tuple[list[int], list[int], list[dict[str, int]]]:
    """Calls and attempts (by sender) in each outage's late window, for :meth:`_Counts.add`.

    One pass over the calls and one over the attempts per outage (a scenario has one or
    two): the window's test is then a few comparisons per event, and the attempts in the
    window are counted by sender by :func:`.attribution.count_senders`.
    """
    calls = [0] * len(judged)
    attempts = [0] * len(judged)
    senders: list[dict[str, int]] = [{} for _ in judged]
    call_starts = index.of_kind("call_start")
    for i, outage in enumerate(judged):
        tool, start, end = outage.tool, outage.late_start, outage.end
        calls[i] = len(
            [
                event
                for event in call_starts
                if event.tool == tool
                and start <= event.at < end
                and (shared or event.agent is not None)
            ]
        )
        inside = [
            attempt
            for attempt in index.attempts
            if (event := attempt.request).tool == tool
            and start <= event.at < end
            and (shared or event.agent is not None)
        ]
        attempts[i] = len(inside)
        senders[i] = count_senders(inside, index)
    return calls, attempts, senders


INVARIANT = BreakerShedsLoad()
