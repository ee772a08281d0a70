"""Case ids: one short, stable digest per case, the same on every machine.

A case is a scenario, a controller and a seed (:class:`retrychaos.suite.Case`).
Its id is the first 16 hex digits of a SHA-256 over a canonical JSON text of

- the scenario's name and its content digest (:func:`scenario_digest`): every
  field of the scenario but ``source``, the path it was read from, which
  differs between machines and working folders;
- the controller as named (``reference``, ``mypkg.retry:factory``);
- the seed;
- the trace mode the run records in (``keep``, ``parts`` or ``count``).

``--model`` and ``--no-sdk-layer`` change the scenario (its workload, and its
name gains a suffix), so they change the id; so does any edit of the file.
Nothing else goes in: not the order of files or controllers on the command
line, not the machine, the folder or the time. A field at its default value
is left out of the digest, so a field a later version adds keeps the ids of
scenarios that do not use it.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from typing import TYPE_CHECKING, Any, Final

from .trace_modes import trace_mode

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .suite import Case
    from .world.spec import Scenario

__all__ = ["ID_LENGTH", "case_id", "plan_digest", "scenario_digest"]

ID_LENGTH: Final = 16
"""Hex digits of a case id (64 bits: a collision among a million cases is far below 1e-7)."""
_FORM: Final = 1
"""The canonical form's version: part of every digest, changed only with the form."""


def _canonical(value: object) -> Any:
    """``value`` as plain JSON data, the same for equal values whatever their history."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data: dict[str, Any] = {"type": type(value).__name__}
        for item in dataclasses.fields(value):
            current = getattr(value, item.name)
            if item.name == "source" or current == _default(item):
                continue
            data[item.name] = _canonical(current)
        return data
    if isinstance(value, enum.Enum):
        return _canonical(value.value)
    if isinstance(value, dict):
        # Keys may be any scalar; a text form keeps them apart and sortable.
        return {json.dumps(_canonical(k)): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=json.dumps)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def _default(item: dataclasses.Field[Any]) -> object:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return dataclasses.MISSING


def _digest(data: object, length: int = ID_LENGTH) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:length]


def scenario_digest(scenario: Scenario) -> str:
    """A digest of everything a scenario says (not where it was read from): 64 hex digits."""
    return _digest([_FORM, _canonical(scenario)], 64)


def case_id(case: Case) -> str:
    """The case's id: 16 hex digits, the same for the same case on any machine.

    It digests the scenario's name and content (:func:`scenario_digest`), the
    controller as named, the seed and the trace mode; see the module docstring.
    """
    scenario = case.scenario
    return _digest(
        {
            "form": _FORM,
            "scenario": scenario.name,
            "content": scenario_digest(scenario),
            "controller": case.controller,
            "seed": case.seed,
            "trace": trace_mode(scenario),
        }
    )


def plan_digest(ids: Iterable[str]) -> str:
    """A digest of a whole plan: its case ids in plan order (16 hex digits).

    Shards of one command share it; shards of different commands (other
    scenarios, controllers, seeds or options, or another order) do not.
    """
    return _digest([_FORM, list(ids)])
