"""``succeeds_when_possible``: a task that can succeed within the budget does.

(A) Scenario expectation: when ``scenario.expect.min_task_success_rate`` is
set, the task success rate (``task_end`` with ``ok`` true, over the tasks
started) is at least that. One violation for the run.

(B) Per call, a deterministic recoverability test from the fault plan. A call
is *recoverable* when all of these hold:

- the workload's model is obedient and has no SDK layer (``sdk_retries`` 0:
  an SDK's own waits cannot be estimated here);
- the call's tool has no rate limit and every fault rule of it has an
  ``attempts`` filter, probability 1.0 and no window (so the plan is a
  deterministic function of the attempt number);
- with ``m`` the op's requests before the call, reached or not (a rule's
  ``attempts`` match the op's attempt number counting every attempt, those
  that never reached the server included: see ``retrychaos.world.spec``),
  ``k`` is the smallest attempt number above ``m`` that no rule matches, and
  the rules deciding attempts ``m+1 .. k-1`` are all transient (status 408,
  429, 502, 503 or 504, a read timeout, or a connect fault: a connect fault
  on attempts ``m+1 .. k-1`` clears at attempt ``k``, and retrying after it
  is always safe since the request never reached the server);
- retrying is safe: the tool is read-only, or its service deduplicates and
  the agent gave a key (``call_start.data.key``). A side effect without that
  guarantee is not demanded even when only connect faults come first: the
  seed forbids retrying it automatically at all;
- the attempts fit the budget: ``k <= max_attempts_per_call``; the task's
  requests before the call plus ``k - m`` stay within
  ``max_attempts_per_task``; and the task's requests to the same tool before
  the call plus ``k - m`` stay within ``max_attempts_per_call`` (the seed
  also reads that limit as "at most 3 per tool");
- a conservative time estimate fits in the time left until the task's
  deadline at the call's start: each failed attempt lasts the client timeout
  for timeouts, else the tool's ``latency_s + latency_jitter_s`` (plus any
  ``delay_s`` of the rule); the successful one ``latency_s +
  latency_jitter_s``; the ``i``-th wait (``i`` from 1) lasts
  ``max(1.2 * min(max_delay_s, base_delay_s * 2**(i-1)), retry_after)``
  where ``retry_after`` is what the failure's rule names (delta seconds; an
  HTTP-date's seconds plus 1 for its whole-second rounding; ``max_delay_s``
  for a garbage value). A tool whose ``latency_s + latency_jitter_s`` exceeds
  the client's ``attempt_timeout_s`` may never answer in time: not demanded.

A recoverable call must end with decision ``ok``, unless its decision is
``circuit_open`` and its tool had at least 3 failed responses (any caller) in
the 10 s before the decision. A call without a recorded decision is not
judged. One violation per call. Applies to every scenario.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..world.spec import FaultType, ModelPolicy
from .base import EPS, Found, Violation, fmt_t, violation_at
from .faults import is_transient
from .index import OK_OUTCOMES, TaskInfo, index_of, tools_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..world.spec import Contract, FaultRule, Scenario, ToolSpec
    from ..world.trace import TraceEvent
    from .base import Shards

__all__ = ["INVARIANT", "SucceedsWhenPossible"]

ID = "succeeds_when_possible"
BREAKER_FAILURES = 3
"""Failed responses of a tool within ``BREAKER_WINDOW_S`` that excuse ``circuit_open``."""
BREAKER_WINDOW_S = 10.0
JITTER_ALLOWANCE = 1.2
TIMEOUT_FAULTS = frozenset({FaultType.READ_TIMEOUT, FaultType.CONNECT_TIMEOUT})


@dataclass(frozen=True, slots=True, kw_only=True)
class _Demand:
    """A recoverable call: the attempt number that succeeds and the failures before it."""

    start: TraceEvent
    k: int
    failures: int


def _deciding(rules: Sequence[FaultRule], n: int) -> FaultRule | None:
    """Return the rule that decides attempt ``n`` (the first matching one), if any."""
    for rule in rules:
        if rule.attempts is not None and n in rule.attempts:
            return rule
    return None


def _deterministic(tool: ToolSpec) -> bool:
    """Return whether the tool's plan depends on the attempt number alone."""
    return tool.rate_limit is None and all(
        rule.attempts is not None and rule.probability >= 1.0 and rule.window is None
        for rule in tool.faults
    )


def _named_wait(rule: FaultRule, contract: Contract) -> float:
    """Return the seconds the rule's Retry-After names (0 without one)."""
    header = rule.retry_after
    if header is None:
        return 0.0
    if header.seconds is not None:
        return float(header.seconds)
    if header.date_in_s is not None:
        return header.date_in_s + 1.0
    return contract.max_delay_s


def _estimate(failures: Sequence[FaultRule], tool: ToolSpec, contract: Contract) -> float:
    """Return a conservative duration of ``failures`` then one successful attempt."""
    latency = tool.latency_s + tool.latency_jitter_s
    if latency > contract.attempt_timeout_s:
        # The answer may come after the client has given up: no attempt is sure to succeed.
        return math.inf
    total = latency
    for i, rule in enumerate(failures, start=1):
        lasts = contract.attempt_timeout_s if rule.fault in TIMEOUT_FAULTS else latency
        total += lasts + rule.delay_s
        backoff = min(contract.max_delay_s, contract.base_delay_s * 2 ** (i - 1))
        total += max(JITTER_ALLOWANCE * backoff, _named_wait(rule, contract))
    return total


@dataclass(slots=True, kw_only=True)
class _Counts:
    """Requests seen so far, by op, task and task-and-tool."""

    by_op: dict[str | None, int]
    """Every request of the op, reached or not (the attempt numbers fault plans match)."""
    by_task: dict[str | None, int]
    by_task_tool: dict[tuple[str | None, str | None], int]

    def add(self, request: TraceEvent) -> None:
        """Count one request."""
        self.by_op[request.op] = self.by_op.get(request.op, 0) + 1
        self.by_task[request.task] = self.by_task.get(request.task, 0) + 1
        where = (request.task, request.tool)
        self.by_task_tool[where] = self.by_task_tool.get(where, 0) + 1


def _demand(
    start: TraceEvent,
    tool: ToolSpec,
    scenario: Scenario,
    counts: _Counts,
    time_left: float,
) -> _Demand | None:
    """Return the demand on a call if it is recoverable (see the module docstring)."""
    contract = scenario.world.contract
    m = counts.by_op.get(start.op, 0)
    failures: list[FaultRule] = []
    k = m + 1
    while (rule := _deciding(tool.faults, k)) is not None:
        if k >= contract.max_attempts_per_call or not is_transient(rule):
            return None
        failures.append(rule)
        k += 1
    needed = k - m
    if k > contract.max_attempts_per_call:
        return None
    if counts.by_task.get(start.task, 0) + needed > contract.max_attempts_per_task:
        return None
    if counts.by_task_tool.get((start.task, start.tool), 0) + needed > (
        contract.max_attempts_per_call
    ):
        return None
    safe = not tool.side_effect or (tool.idempotency and start.data.get("key") is not None)
    if not safe or _estimate(failures, tool, contract) > time_left + EPS:
        return None
    return _Demand(start=start, k=k, failures=len(failures))


def _rate_violation(index_tasks: int, ok: int, wanted: float) -> Violation:
    """Report a task success rate below the scenario's expectation (part A)."""
    rate = ok / index_tasks
    return Violation(
        invariant=ID,
        message=(
            f"the task success rate was {rate:.3f} ({ok} of {index_tasks} tasks succeeded); "
            f"the scenario expects at least {wanted:.2f}"
        ),
        task=None,
        attempt=None,
        at=None,
        expected=f"task success rate >= {wanted:.2f}",
        actual=f"{rate:.2f}",
    )


class SucceedsWhenPossible:
    """When the faults clear within the budget and a retry is safe, the task succeeds."""

    __slots__ = ()
    id = ID
    summary = (
        "when the faults clear within the budget and a retry is safe, the call succeeds, and "
        "the task success rate meets the scenario's expectation"
    )
    trigger = (
        "a call was recoverable (its fault plan lets a safe retry succeed within the budget), "
        "or the scenario expects a task success rate and a task started"
    )

    def applies(self, scenario: Scenario) -> bool:
        """Apply to every scenario."""
        del scenario
        return True

    def exercised(self, events: Sequence[TraceEvent], scenario: Scenario) -> bool:
        """Exercised when a call was recoverable, or a success rate is expected of tasks."""
        judge = self.shard_judge(scenario)
        judge.add(events)
        wanted = scenario.expect.min_task_success_rate
        return judge.demanded > 0 or (wanted is not None and judge.started > 0)

    def check(self, events: Sequence[TraceEvent], scenario: Scenario) -> list[Violation]:
        """Check the expected success rate, then every recoverable call's decision."""
        judge = self.shard_judge(scenario)
        judge.add(events)
        return judge.finish()

    def shard_judge(self, scenario: Scenario, shards: Shards | None = None) -> _Parts:
        """Judge a trace given in parts: counts and recent failures are gathered across parts."""
        return _Parts(scenario, None if shards is None else shards.limit)


class _Parts:
    """Both parts over a trace given in parts (or whole, as one part).

    Tasks and calls belong to one agent, so each call is judged within its
    part, except a ``circuit_open`` decision: whether the tool had failed
    recently depends on every caller, so it is judged once every part's
    failed responses are known.
    """

    __slots__ = ("demanded", "failed", "found", "ok", "scenario", "started", "tools", "waiting")

    def __init__(self, scenario: Scenario, limit: int | None) -> None:
        self.scenario = scenario
        self.started = 0
        self.ok = 0
        self.demanded = 0
        """Recoverable calls seen (what makes part B exercised)."""
        workload = scenario.workload
        judged = workload.model == ModelPolicy.OBEDIENT and not workload.sdk_retries
        self.tools = {
            name: tool
            for name, tool in tools_of(scenario).items()
            if judged and _deterministic(tool)
        }
        self.failed: dict[str | None, list[tuple[int, float]]] = {}
        self.waiting: list[tuple[_Demand, TraceEvent]] = []
        self.found = Found(limit)

    def add(self, events: Sequence[TraceEvent], *, shared: bool = True) -> None:
        """Count the part's tasks, judge its calls (see the class docstring)."""
        index = index_of(events)
        # The trigger and the check count the same trace: the second reuses the first's.
        key = (ID, "tasks", shared)
        counted = index.memo.get(key)
        if counted is None:
            counted = index.memo[key] = _tasks_ok(index.tasks.values(), shared=shared)
        self.started += counted[0]
        self.ok += counted[1]
        if self.tools:
            self._calls(events, index.tasks, shared=shared)

    def _calls(
        self, events: Sequence[TraceEvent], tasks: dict[str, TaskInfo], *, shared: bool
    ) -> None:
        """Judge every recoverable call of one part (part B) in one pass."""
        tools, scenario = self.tools, self.scenario
        counts = _Counts(by_op={}, by_task={}, by_task_tool={})
        demands: dict[str | None, _Demand] = {}
        for event in events:
            kind = event.kind
            if kind == "request":
                counts.add(event)
            elif kind == "response":
                if event.tool in tools and (shared or event.agent is not None):
                    self._failure(event)
            elif kind == "call_start":
                tool = tools.get(event.tool or "")
                info = tasks.get(event.task or "")
                deadline = None if info is None else info.deadline
                if tool is not None and deadline is not None:
                    demand = _demand(event, tool, scenario, counts, deadline - event.at)
                    if demand is not None:
                        demands[event.call] = demand
                        self.demanded += 1
            elif kind == "decision" and event.call in demands:
                demand = demands.pop(event.call)
                if shared or event.agent is not None:
                    self._decided(demand, event)

    def _decided(self, demand: _Demand, decision: TraceEvent) -> None:
        """Judge a recoverable call's decision now, or at the end if it is ``circuit_open``."""
        if decision.data.get("decision") == "circuit_open":
            self.waiting.append((demand, decision))
        elif (violation := _judge(demand, decision, 0)) is not None:
            self.found.append(violation)

    def _failure(self, response: TraceEvent) -> None:
        """Remember a failed response of a judged tool (for ``circuit_open`` decisions)."""
        if response.data.get("outcome") not in OK_OUTCOMES:
            self.failed.setdefault(response.tool, []).append((response.seq, response.at))

    def finish(self) -> list[Violation]:
        """Return the rate violation, if any, and every call's, in trace order."""
        wanted = self.scenario.expect.min_task_success_rate
        if wanted is not None and self.started and self.ok / self.started < wanted - EPS:
            self.found.append(_rate_violation(self.started, self.ok, wanted))
        timelines = {tool: sorted(failures) for tool, failures in self.failed.items()}
        for demand, decision in self.waiting:
            failures = timelines.get(demand.start.tool, [])
            before = bisect.bisect_left(failures, (decision.seq,))
            since = decision.at - BREAKER_WINDOW_S - EPS
            recent = before - bisect.bisect_left(failures, since, 0, before, key=_at)
            if (violation := _judge(demand, decision, recent)) is not None:
                self.found.append(violation)
        self.waiting.clear()
        return self.found.listed()

    @property
    def total(self) -> int:
        """How many violations :meth:`finish` found, listed or not."""
        return self.found.total


def _tasks_ok(tasks: Iterable[TaskInfo], *, shared: bool) -> tuple[int, int]:
    """The tasks started and those that ended ok (``shared``: count the agent-less ones)."""
    started = ok = 0
    for info in tasks:
        start = info.start
        if start is None or (start.agent is None and not shared):
            continue
        started += 1
        if info.ok:
            ok += 1
    return started, ok


def _at(failure: tuple[int, float]) -> float:
    return failure[1]


def _judge(demand: _Demand, decision: TraceEvent, recent_failures: int) -> Violation | None:
    """Judge the decision of a recoverable call."""
    verdict = decision.data.get("decision")
    if verdict == "ok":
        return None
    if verdict == "circuit_open" and recent_failures >= BREAKER_FAILURES:
        return None
    start = demand.start
    after = (
        "at once"
        if demand.failures == 0
        else f"after {demand.failures} transient failure{'s' * (demand.failures > 1)}"
    )
    return violation_at(
        ID,
        decision,
        attempt=demand.k,
        message=(
            f"task {decision.task}: call {decision.call} of op {start.op} returned {verdict!r} "
            f"at {fmt_t(decision.at)}; the fault plan of {start.tool} lets attempt {demand.k} "
            f"succeed ({after}) within the budget and the deadline, and retrying is safe, so "
            "the call should have succeeded"
        ),
        expected=f"decision 'ok' (attempt {demand.k} succeeds)",
        actual=f"decision {verdict!r}",
    )


INVARIANT = SucceedsWhenPossible()
