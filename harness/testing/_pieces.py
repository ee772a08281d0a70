"""The pieces of a generated world in the file format: fault rules, tools, contracts, workloads.

See :mod:`retrychaos.testing.strategies` for the conventions. Every strategy is
built once, outside the draws: building Hypothesis strategies inside a
``@composite`` on every example costs more than running the example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeVar

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ..scenario import scenario_from_dict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..world.spec import ToolSpec

__all__ = [
    "ANY_BOOL",
    "FAULT_TYPES",
    "FEW",
    "KEYS",
    "MODELS",
    "MODEL_CHOICES",
    "SELECTIONS",
    "TRANSIENT_STATUSES",
    "check_at_least",
    "contracts",
    "fault_plans",
    "fault_rules",
    "strategy",
    "tool_specs",
    "tools",
    "workloads",
]

T = TypeVar("T")
Data = dict[str, Any]

FAULT_TYPES: Final[tuple[str, ...]] = (
    "status",
    "connect_error",
    "connect_timeout",
    "read_timeout",
    "timeout_after_commit",
    "reset_after_commit",
    "argument",
    "unparseable",
    "slow",
)
"""Every fault kind of the file format, simplest first (shrinking moves towards the first)."""

SELECTIONS: Final[tuple[str, ...]] = ("attempts", "window", "probability")
"""The ways a fault rule selects the attempts it applies to."""

MODELS: Final[tuple[str, ...]] = ("obedient", "give_up", "stubborn", "mutating")
"""The simulated model's policies, the plainest first."""

TRANSIENT_STATUSES: Final[tuple[int, ...]] = (503, 429, 502, 504, 408)
"""Statuses the seed calls transient."""

ANY_BOOL: Final = st.booleans()
"""Default of the yes-or-no parameters: either, shrinking to no."""
KEYS: Final = st.sampled_from((True, False))
"""Default of ``keys``: either, shrinking to yes (the file format's default)."""
MODEL_CHOICES: Final = st.sampled_from(MODELS)
"""Default of ``models``: any policy, shrinking to ``obedient``."""
FEW: Final = st.integers(0, 2)
"""Default of ``max_replans`` and ``sdk_retries``."""

_STATUSES: Final = (*TRANSIENT_STATUSES, 500, 401, 403, 404, 409, 410, 400, 422)
_ARGS: Final[tuple[Data, ...]] = (
    {},
    {"city": "Lyon"},
    {"date": "2026-02-30", "city": "Lyon"},
    {"email": "someone@example.test", "title": "printer on fire"},
)

_RETRY_AFTER: Final[SearchStrategy[Data]] = st.one_of(
    st.builds(dict, seconds=st.integers(0, 10)),
    st.builds(dict, seconds=st.sampled_from((30, 120))),
    st.builds(dict, date_in_s=st.sampled_from((3.0, -5.0, 30.0))),
    st.builds(dict, raw=st.sampled_from(("soon", "-1"))),
)
_NO_KEYS: Final[SearchStrategy[Data]] = st.just({})
_KIND_KEYS: Final[dict[str, SearchStrategy[Data]]] = {
    "status": st.fixed_dictionaries(
        {"status": st.sampled_from(_STATUSES)}, optional={"retry_after": _RETRY_AFTER}
    ),
    "argument": st.fixed_dictionaries(
        {
            "code": st.sampled_from(("INVALID_VALUE", "MISSING")),
            "field": st.sampled_from(("date", "city", "email")),
        },
        optional={
            "status": st.sampled_from((400, 422)),
            "allowed": st.just(["2026-03-01", "2026-03-02"]),
            "retryable_by_model": st.just(False),  # noqa: FBT003 - the non-default value
        },
    ),
    "unparseable": st.fixed_dictionaries(
        {}, optional={"status": st.sampled_from((502, 503, 500, 429)), "retry_after": _RETRY_AFTER}
    ),
    "slow": st.builds(dict, delay_s=st.sampled_from((0.5, 3.0, 10.0))),
}
"""The keys of each fault kind beyond ``fault`` and the selection keys (none for the others)."""

_LATENCY: Final = st.fixed_dictionaries(
    {},
    optional={
        "latency_s": st.sampled_from((0.0, 0.5, 2.5)),
        "latency_jitter_s": st.sampled_from((0.1, 1.0)),
    },
)
_RATE_LIMIT: Final[SearchStrategy[Data]] = st.builds(
    dict, rate_per_s=st.sampled_from((1.0, 0.2, 5.0)), burst=st.integers(1, 3)
)
_SPREAD: Final = st.fixed_dictionaries(
    {},
    optional={
        "start_spread_s": st.sampled_from((1.0, 5.0)),
        "think_time_s": st.sampled_from((0.5, (0.0, 2.0))).map(
            lambda t: list(t) if isinstance(t, tuple) else t
        ),
        "max_fixes": st.integers(0, 1),
    },
)
# Every base delay on the menu is below every cap on it, as the schema demands.
_CONTRACTS: Final[SearchStrategy[Data]] = st.one_of(
    st.just({}),
    st.fixed_dictionaries(
        {},
        optional={
            "max_attempts_per_task": st.integers(1, 8),
            "max_attempts_per_call": st.integers(1, 5),
            "deadline_s": st.sampled_from((2.0, 30.0, 0.5)),
            "base_delay_s": st.sampled_from((0.1, 1.0)),
            "max_delay_s": st.sampled_from((1.0, 10.0)),
            "attempt_timeout_s": st.sampled_from((0.5, 5.0)),
        },
    ),
)


def strategy(value: SearchStrategy[T] | T) -> SearchStrategy[T]:
    """A strategy as given, or a plain value as the strategy that always draws it."""
    return value if isinstance(value, SearchStrategy) else st.just(value)


def check_at_least(name: str, value: int, low: int) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value >= low``."""
    if value < low:
        msg = f"Expected {name} >= {low} but got {name}={value!r}"
        raise ValueError(msg)


def _check_choices(name: str, chosen: Sequence[str], known: Sequence[str]) -> None:
    unknown = [value for value in chosen if value not in known]
    if unknown or isinstance(chosen, str):
        msg = f"Expected {name} to be a selection of {', '.join(known)} but got {name}={chosen!r}"
        raise ValueError(msg)


def _selection(selections: Sequence[str], max_attempt: int) -> SearchStrategy[Data]:
    optional: dict[str, SearchStrategy[Any]] = {}
    if "attempts" in selections:
        optional["attempts"] = st.lists(
            st.integers(1, max_attempt), min_size=1, max_size=3, unique=True
        ).map(sorted)
    if "window" in selections:
        optional["window"] = st.tuples(
            st.sampled_from((0.0, 1.0, 3.0)), st.sampled_from((1.0, 4.0, 30.0))
        ).map(lambda w: [w[0], w[0] + w[1]])
    if "probability" in selections:
        optional["probability"] = st.sampled_from((0.5, 0.2, 0.9))
    return st.fixed_dictionaries({}, optional=optional)


def _rule(parts: tuple[str, Data, Data]) -> Data:
    kind, keys, selection = parts
    return {"fault": kind, **keys, **selection}


def fault_rules(
    *,
    fault_types: Sequence[str] = FAULT_TYPES,
    selections: Sequence[str] = SELECTIONS,
    max_attempt: int = 4,
) -> SearchStrategy[Data]:
    """A fault rule (file format) of one of ``fault_types``.

    It applies to every attempt, or selects them by number (``1..max_attempt``),
    by time window and/or by probability, as ``selections`` allow (empty: the
    rule applies to every attempt).
    """
    _check_choices("fault_types", fault_types, FAULT_TYPES)
    _check_choices("selections", selections, SELECTIONS)
    if not fault_types:
        msg = "Expected at least one fault type but got fault_types=[]"
        raise ValueError(msg)
    check_at_least("max_attempt", max_attempt, 1)
    selection = _selection(selections, max_attempt)
    return st.one_of(
        [
            st.tuples(st.just(kind), _KIND_KEYS.get(kind, _NO_KEYS), selection).map(_rule)
            for kind in fault_types
        ]
    )


def fault_plans(
    *,
    max_rules: int = 2,
    fault_types: Sequence[str] = FAULT_TYPES,
    selections: Sequence[str] = SELECTIONS,
) -> SearchStrategy[list[Data]]:
    """A tool's fault plan: up to ``max_rules`` rules (the first that applies decides)."""
    check_at_least("max_rules", max_rules, 0)
    if max_rules == 0:
        return st.just([]).map(list)
    rules = fault_rules(fault_types=fault_types, selections=selections)
    return st.lists(rules, max_size=max_rules)


def tools(
    name: str = "tool1",
    *,
    side_effect: SearchStrategy[bool] | bool = ANY_BOOL,
    idempotency: SearchStrategy[bool] | bool = ANY_BOOL,
    faults: SearchStrategy[list[Data]] | list[Data] | None = None,
    rate_limit: SearchStrategy[bool] | bool = ANY_BOOL,
) -> SearchStrategy[Data]:
    """A tool called ``name`` (file format): a read or a side effect, a latency, a fault plan.

    ``faults`` defaults to :func:`fault_plans`; ``rate_limit`` says whether the
    tool may get a server-side token bucket.
    """
    effects = strategy(side_effect)
    dedups = strategy(idempotency)
    limited = strategy(rate_limit)
    plans = fault_plans() if faults is None else strategy(faults)

    @st.composite
    def tool(draw: st.DrawFn) -> Data:
        effect = draw(effects)
        data: Data = {"name": name, "method": "POST" if effect else "GET"}
        if effect:
            data["side_effect"] = True
        if draw(dedups):
            data["idempotency"] = True
        data |= draw(_LATENCY)
        if draw(limited):
            data["rate_limit"] = draw(_RATE_LIMIT)
        plan = draw(plans)
        if plan:
            data["faults"] = plan
        return data

    return tool()


def tool_specs(**kwargs: Any) -> SearchStrategy[ToolSpec]:
    """A validated ``ToolSpec``: :func:`tools` (same keywords) checked by the scenario schema."""
    return tools(**kwargs).map(_validated_tool)


def _validated_tool(data: Data) -> ToolSpec:
    scenario = scenario_from_dict(
        {
            "name": "tool-spec",
            "description": "Wraps one generated tool for validation.",
            "tools": [data],
            "workload": {"calls": [{"tool": data["name"]}]},
        }
    )
    return scenario.world.tools[0]


def contracts() -> SearchStrategy[Data]:
    """A contract (file format): usually the seed's defaults, sometimes tighter or looser."""
    return _CONTRACTS


def _call(tool: str, args: Data) -> Data:
    """A call of the file format (a fresh mapping: callers may change it)."""
    return {"tool": tool, "args": dict(args)} if args else {"tool": tool}


def workloads(
    tool_names: Sequence[str],
    *,
    max_agents: int = 3,
    max_tasks: int = 2,
    max_calls: int = 2,
    models: SearchStrategy[str] | str = MODEL_CHOICES,
    keys: SearchStrategy[bool] | bool = KEYS,
    max_replans: SearchStrategy[int] | int = FEW,
    sdk_retries: SearchStrategy[int] | int = FEW,
    secrets: SearchStrategy[bool] | bool = ANY_BOOL,
    spread: bool = True,
) -> SearchStrategy[Data]:
    """A workload (file format) whose tasks call the named tools.

    ``max_calls`` bounds the calls of one task (keep it at most the contract's
    ``max_attempts_per_task``); ``spread`` allows start spreads and think times.
    """
    if not tool_names:
        msg = "Expected at least one tool name but got tool_names=[]"
        raise ValueError(msg)
    check_at_least("max_agents", max_agents, 1)
    check_at_least("max_tasks", max_tasks, 1)
    check_at_least("max_calls", max_calls, 1)
    calls = st.lists(
        st.builds(_call, st.sampled_from(tuple(tool_names)), st.sampled_from(_ARGS)),
        min_size=1,
        max_size=max_calls,
    )
    agents, tasks = st.integers(1, max_agents), st.integers(1, max_tasks)
    keyed, policies, secret = strategy(keys), strategy(models), strategy(secrets)
    counts = (("max_replans", strategy(max_replans)), ("sdk_retries", strategy(sdk_retries)))
    extra = _SPREAD if spread else _NO_KEYS

    @st.composite
    def workload(draw: st.DrawFn) -> Data:
        data: Data = {"agents": draw(agents), "tasks_per_agent": draw(tasks), "calls": draw(calls)}
        if not draw(keyed):
            data["keys"] = False
        model = draw(policies)
        if model != "obedient":
            data["model"] = model
        for key, values in counts:
            if count := draw(values):
                data[key] = count
        if draw(secret):
            data["secrets"] = True
        data |= draw(extra)
        return data

    return workload()
