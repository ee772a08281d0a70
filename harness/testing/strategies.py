"""Hypothesis strategies for small, runnable retrychaos worlds.

Every piece builds the scenario *file format* (plain mappings, the same keys a
YAML file holds), so the pieces compose: a user can take :func:`tools` or
:func:`fault_rules`, change a key, and put them together again. Only
:func:`scenarios`, :func:`recoverable_scenarios` and :func:`tool_specs`
validate, through ``retrychaos.scenario.scenario_from_dict``, so what they
produce is valid by the schema and not merely by construction.

Defaults keep a world small (1-2 tools, 1-3 agents, 1-2 tasks per agent, 1-2
calls per task, at most 4 fault rules in all) so one run takes milliseconds.
Values are drawn from short menus rather than from every float: they shrink
to readable files, and the menus hold the values that matter to a retry
controller (client timeouts crossed, deadlines shorter than a Retry-After).
A tool no call uses is left out, and the tools are named ``tool1``,
``tool2``, ... in order.

Every parameter that says "a strategy" also takes a plain value, which means
"always this": ``scenarios(side_effects=True)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from hypothesis import strategies as st

from ..scenario import INVARIANT_IDS, scenario_from_dict
from ._pieces import (
    ANY_BOOL,
    FAULT_TYPES,
    FEW,
    KEYS,
    MODEL_CHOICES,
    MODELS,
    SELECTIONS,
    TRANSIENT_STATUSES,
    check_at_least,
    contracts,
    fault_plans,
    fault_rules,
    strategy,
    tool_specs,
    tools,
    workloads,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from hypothesis.strategies import SearchStrategy

    from ..world.spec import Scenario

__all__ = [
    "FAULT_TYPES",
    "MODELS",
    "SAFETY_INVARIANTS",
    "SELECTIONS",
    "TRANSIENT_STATUSES",
    "contracts",
    "fault_plans",
    "fault_rules",
    "recoverable_scenarios",
    "scenario_dicts",
    "scenarios",
    "tool_specs",
    "tools",
    "workloads",
]

Data = dict[str, Any]

# Every invariant but the two liveness ones, which only hold where the
# generated faults let them (breaker_sheds_load needs a fleet outage).
SAFETY_INVARIANTS: Final[tuple[str, ...]] = tuple(
    i for i in INVARIANT_IDS if i not in {"breaker_sheds_load", "succeeds_when_possible"}
)
"""Every invariant that must hold whatever the faults (all but the liveness ones:
``succeeds_when_possible`` and ``breaker_sheds_load``)."""

_TRANSPORTS: Final = st.sampled_from(("direct", "http"))
_TRANSIENT: Final[SearchStrategy[Data]] = st.one_of(
    st.builds(dict, fault=st.just("status"), status=st.sampled_from(TRANSIENT_STATUSES)),
    st.builds(
        dict,
        fault=st.just("status"),
        status=st.sampled_from((429, 503)),
        retry_after=st.builds(dict, seconds=st.integers(0, 1)),
    ),
    st.just({"fault": "read_timeout"}).map(dict),
)


def scenario_dicts(
    *,
    max_tools: int = 2,
    max_agents: int = 3,
    max_tasks: int = 2,
    max_calls: int = 2,
    max_faults: int = 4,
    side_effects: SearchStrategy[bool] | bool = ANY_BOOL,
    idempotency: SearchStrategy[bool] | bool = ANY_BOOL,
    fault_types: Sequence[str] = FAULT_TYPES,
    selections: Sequence[str] = SELECTIONS,
    rate_limits: SearchStrategy[bool] | bool = ANY_BOOL,
    contract: SearchStrategy[Data] | Mapping[str, Any] | None = None,
    models: SearchStrategy[str] | str = MODEL_CHOICES,
    keys: SearchStrategy[bool] | bool = KEYS,
    max_replans: SearchStrategy[int] | int = FEW,
    sdk_retries: SearchStrategy[int] | int = FEW,
    secrets: SearchStrategy[bool] | bool = ANY_BOOL,
    transports: SearchStrategy[str] | str = _TRANSPORTS,
    invariants: Sequence[str] | None = None,
    name: str = "generated",
) -> SearchStrategy[Data]:
    """A whole scenario in the file format (see :func:`scenarios` for the parameters)."""
    check_at_least("max_tools", max_tools, 1)
    check_at_least("max_faults", max_faults, 0)
    fault_rules(fault_types=fault_types, selections=selections)  # check them now, not at a draw
    terms_ = contracts() if contract is None else strategy(contract)
    transports_ = strategy(transports)
    counts, budgets = st.integers(1, max_tools), st.integers(0, max_faults)
    shares = [st.integers(0, n) for n in range(max_faults + 1)]
    # Built on first use and kept: one per (tool, rules) and per (tools, calls) pair.
    tool_menu: dict[tuple[int, int], SearchStrategy[Data]] = {}
    work_menu: dict[tuple[int, int], SearchStrategy[Data]] = {}

    def tool_of(index: int, rules: int) -> SearchStrategy[Data]:
        if (index, rules) not in tool_menu:
            plan = fault_plans(max_rules=rules, fault_types=fault_types, selections=selections)
            tool_menu[index, rules] = tools(
                f"tool{index + 1}",
                side_effect=side_effects,
                idempotency=idempotency,
                faults=plan,
                rate_limit=rate_limits,
            )
        return tool_menu[index, rules]

    def work_of(count: int, calls: int) -> SearchStrategy[Data]:
        if (count, calls) not in work_menu:
            work_menu[count, calls] = workloads(
                [f"tool{index + 1}" for index in range(count)],
                max_agents=max_agents,
                max_tasks=max_tasks,
                max_calls=calls,
                models=models,
                keys=keys,
                max_replans=max_replans,
                sdk_retries=sdk_retries,
                secrets=secrets,
            )
        return work_menu[count, calls]

    @st.composite
    def scenario(draw: st.DrawFn) -> Data:
        count = draw(counts)
        budget = draw(budgets)
        tools_: list[Data] = []
        for index in range(count):
            rules = draw(shares[budget]) if index < count - 1 else budget
            budget -= rules
            tools_.append(draw(tool_of(index, rules)))
        terms = dict(draw(terms_))
        per_task = terms.get("max_attempts_per_task", 5)
        tools_, workload = _called_only(
            tools_, draw(work_of(count, max(1, min(max_calls, per_task))))
        )
        data: Data = {
            "name": name,
            "description": "Generated by retrychaos.testing.strategies.",
            "tools": tools_,
            "workload": workload,
        }
        if terms:
            data["contract"] = terms
        if invariants is not None:
            data["invariants"] = list(invariants)
        transport = draw(transports_)
        if transport != "direct":
            data["transport"] = transport
        return data

    return scenario()


def _called_only(tools_: list[Data], workload: Data) -> tuple[list[Data], Data]:
    """Keep the tools some call uses, renamed ``tool1``, ``tool2``, ... in order (calls too).

    A tool nobody calls changes nothing in a run; dropping it keeps shrunk
    counterexamples down to the tools that matter. New mappings are returned,
    so what Hypothesis drew (and prints for a failing example) stays as drawn.
    """
    called = {call["tool"] for call in workload["calls"]}
    kept = [tool for tool in tools_ if tool["name"] in called]
    names = {tool["name"]: f"tool{index}" for index, tool in enumerate(kept, start=1)}
    calls = [{**call, "tool": names[call["tool"]]} for call in workload["calls"]]
    renamed = [{**tool, "name": names[tool["name"]]} for tool in kept]
    return renamed, {**workload, "calls": calls}


def scenarios(
    *,
    max_tools: int = 2,
    max_agents: int = 3,
    max_tasks: int = 2,
    max_calls: int = 2,
    max_faults: int = 4,
    side_effects: SearchStrategy[bool] | bool = ANY_BOOL,
    idempotency: SearchStrategy[bool] | bool = ANY_BOOL,
    fault_types: Sequence[str] = FAULT_TYPES,
    selections: Sequence[str] = SELECTIONS,
    rate_limits: SearchStrategy[bool] | bool = ANY_BOOL,
    contract: SearchStrategy[Data] | Mapping[str, Any] | None = None,
    models: SearchStrategy[str] | str = MODEL_CHOICES,
    keys: SearchStrategy[bool] | bool = KEYS,
    max_replans: SearchStrategy[int] | int = FEW,
    sdk_retries: SearchStrategy[int] | int = FEW,
    secrets: SearchStrategy[bool] | bool = ANY_BOOL,
    transports: SearchStrategy[str] | str = _TRANSPORTS,
    invariants: Sequence[str] | None = None,
    name: str = "generated",
) -> SearchStrategy[Scenario]:
    """A small, valid, runnable ``Scenario`` (validated by ``scenario_from_dict``).

    Args:
        max_tools: tools in the world (``tool1``, ``tool2``, ...), at least 1.
        max_agents: concurrent agents.
        max_tasks: tasks per agent.
        max_calls: calls per task (also capped by the contract's task budget).
        max_faults: fault rules over all tools.
        side_effects: whether a tool has side effects (drawn per tool).
        idempotency: whether a tool's service deduplicates by key (per tool).
        fault_types: the fault kinds to use (see :data:`FAULT_TYPES`).
        selections: how rules select attempts (see :data:`SELECTIONS`); empty:
            every rule applies to every attempt.
        rate_limits: whether a tool may get a server-side rate limit.
        contract: the contract mapping, or a strategy of them (default:
            :func:`contracts`).
        models: the simulated model's policy (see :data:`MODELS`).
        keys: whether agents send idempotency keys.
        max_replans: how often the model re-invokes a failed operation.
        sdk_retries: extra attempts of an SDK layer under the tool.
        secrets: whether to plant token canaries in the arguments.
        transports: ``direct`` and/or ``http``.
        invariants: the invariant ids the scenario lists (default: every one
            that applies).
        name: the scenario's name.
    """
    return scenario_dicts(
        max_tools=max_tools,
        max_agents=max_agents,
        max_tasks=max_tasks,
        max_calls=max_calls,
        max_faults=max_faults,
        side_effects=side_effects,
        idempotency=idempotency,
        fault_types=fault_types,
        selections=selections,
        rate_limits=rate_limits,
        contract=contract,
        models=models,
        keys=keys,
        max_replans=max_replans,
        sdk_retries=sdk_retries,
        secrets=secrets,
        transports=transports,
        invariants=invariants,
        name=name,
    ).map(scenario_from_dict)


def recoverable_scenarios(
    *,
    max_tools: int = 2,
    max_agents: int = 3,
    max_tasks: int = 2,
    max_calls: int = 2,
    transports: SearchStrategy[str] | str = _TRANSPORTS,
    name: str = "recoverable",
) -> SearchStrategy[Scenario]:
    """A scenario whose faults clear within the budget on calls that are safe to retry.

    Every tool is read-only, or deduplicates by key (and agents send keys);
    its faults are transient (503, 429, 502, 504, 408 with at most a short
    ``Retry-After``, or a read timeout) on attempts ``1..k`` with ``k`` below
    the contract's per-call limit; the model is obedient, there is no SDK layer
    and no rate limit. ``succeeds_when_possible`` judges such calls: a correct
    controller makes them succeed.
    """
    check_at_least("max_tools", max_tools, 1)
    check_at_least("max_calls", max_calls, 1)
    transports_ = strategy(transports)
    counts, effects = st.integers(1, max_tools), st.booleans()
    # attempts 1..k fail, k from 0 to per_call - 1, with per_call 2 or 3
    failures = {per_call: st.integers(0, per_call - 1) for per_call in (2, 3)}
    works = {
        count: workloads(
            [f"tool{index + 1}" for index in range(count)],
            max_agents=max_agents,
            max_tasks=max_tasks,
            max_calls=max_calls,
            models="obedient",
            keys=True,
            max_replans=0,
            sdk_retries=0,
        )
        for count in range(1, max_tools + 1)
    }

    @st.composite
    def scenario(draw: st.DrawFn) -> Data:
        per_call = draw(st.sampled_from((2, 3)))
        count = draw(counts)
        tools_ = []
        for index in range(count):
            tool: Data = {"name": f"tool{index + 1}", "method": "GET"}
            if draw(effects):
                tool |= {"method": "POST", "side_effect": True, "idempotency": True}
            failing = draw(failures[per_call])
            if failing:
                tool["faults"] = [
                    {**draw(_TRANSIENT), "attempts": [attempt]} for attempt in range(1, failing + 1)
                ]
            tools_.append(tool)
        tools_, workload = _called_only(tools_, draw(works[count]))
        data: Data = {
            "name": name,
            "description": "Generated by retrychaos.testing: the faults clear in budget.",
            "contract": {
                "max_attempts_per_call": per_call,
                "max_attempts_per_task": per_call * max_calls,
                "deadline_s": 30.0,
            },
            "tools": tools_,
            "workload": workload,
            "invariants": ["succeeds_when_possible"],
        }
        transport = draw(transports_)
        if transport != "direct":
            data["transport"] = transport
        return data

    return scenario().map(scenario_from_dict)
