# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""Rules that span sections of a scenario: tool names, calls against tools and the budget.

They are judged on the raw mapping, each only where the values it needs are
usable, so a file with a bad fault rule still hears about a call to an
undeclared tool in the same report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, TypeGuard

from ..world.spec import Contract

if TYPE_CHECKING:
    from ._fields import Issue

__all__ = ["cross_issues"]

_SEED_CONTRACT: Final = Contract()


def cross_issues(data: Mapping[str, object]) -> list[Issue]:
    """Return every cross-section rule ``data`` breaks (tools unique, calls valid)."""
    tools = data.get("tools")
    workload = data.get("workload")
    calls = workload.get("calls") if isinstance(workload, Mapping) else None
    issues: list[Issue] = []
    names = _tool_names(tools) if _is_list(tools) else None
    if names is not None:
        issues += _duplicate_names(names)
    if _is_list(calls):
        if names:  # with no tools, "tools: expected a non-empty list" says it all
            issues += _undeclared_tools(calls, names)
        issues += _too_many_calls(len(calls), data.get("contract"))
    return issues


def _is_list(value: object) -> TypeGuard[Sequence[object]]:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _tool_names(tools: Sequence[object]) -> list[str] | None:
    """The declared names, or None when one is unusable (then references cannot be judged)."""
    names = [tool.get("name") if isinstance(tool, Mapping) else None for tool in tools]
    usable = [name for name in names if isinstance(name, str)]
    return usable if len(usable) == len(names) else None


def _duplicate_names(names: list[str]) -> list[Issue]:
    first: dict[str, int] = {}
    issues: list[Issue] = []
    for index, name in enumerate(names):
        if name in first:
            expected = f"a tool name not already used (tools[{first[name]}] has it)"
            issues.append((("tools", index, "name"), name, expected, None))
        else:
            first[name] = index
    return issues


def _undeclared_tools(calls: Sequence[object], names: list[str]) -> list[Issue]:
    declared = ", ".join(dict.fromkeys(names))
    issues: list[Issue] = []
    for index, call in enumerate(calls):
        tool = call.get("tool") if isinstance(call, Mapping) else None
        if isinstance(tool, str) and tool not in names:
            expected = f"the name of a declared tool ({declared})"
            issues.append((("workload", "calls", index, "tool"), tool, expected, None))
    return issues


def _too_many_calls(count: int, contract: object) -> list[Issue]:
    limit: object = _SEED_CONTRACT.max_attempts_per_task
    if isinstance(contract, Mapping):
        limit = contract.get("max_attempts_per_task", limit)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1 or count <= limit:
        return []
    expected = (
        f"at most {limit} calls per task (contract.max_attempts_per_task: "
        "every call needs an attempt, so no compliant controller could finish)"
    )
    return [(("workload", "calls"), count, expected, f"{count} calls")]
