"""The simulated model above the controller: what it does after a failed call.

A policy looks at the controller's answer and says whether to call again and
with which arguments. Re-plans are a retry layer like any other: the attempts
they cause count against the task's budget, and they reuse the operation's
idempotency key (only the call id changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..world.spec import ModelPolicy

if TYPE_CHECKING:
    import random

    from faker import Faker

    from ..world.spec import Workload

_STOPS = frozenset({"stop", "manual_check"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What the controller returned for one invocation, as the model reads it."""

    ok: bool
    decision: str
    field: str | None = None
    allowed: tuple[Any, ...] | None = None
    retryable_by_model: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Next:
    """The model's move: call again with ``args``, or stop."""

    again: bool
    args: dict[str, Any] | None = None
    action: str = "give_up"
    detail: str = ""


_OK = Outcome(ok=True, decision="ok")
"""What every success reads as (an outcome is immutable: one serves every call)."""

RAISED = Outcome(ok=False, decision="raised")
"""What every controller's raise reads as."""

# A frozen dataclass's __init__ stores each field through object.__setattr__: a
# microsecond for each failed call of a fleet, whose controller gives up with the
# same few decisions. Outcomes and stops are immutable and compared by value, so
# one made for each distinct value serves every call (bounded; str keys only).
_OUTCOMES: dict[tuple[str, str | None, bool], Outcome] = {}
_STOPS_MADE: dict[str, Next] = {}
_MEMO_MAX = 256


def read_result(result: Any) -> Outcome:
    """Interpret a controller's return value (a result, or a seed-style decision dict)."""
    if isinstance(result, dict) and result.get("ok") is False and "decision" in result:
        allowed = result.get("allowed")
        if type(result) is dict and allowed is None:  # a plain dict: reads do nothing else
            decision = str(result["decision"])
            field = result.get("field")
            if not isinstance(field, str):
                field = None
            retryable = result.get("retryable_by_model") is not False
            if type(decision) is str and (field is None or type(field) is str):
                key = (decision, field, retryable)
                found = _OUTCOMES.get(key)
                if found is None:
                    if len(_OUTCOMES) >= _MEMO_MAX:
                        _OUTCOMES.clear()
                    found = _OUTCOMES[key] = Outcome(
                        ok=False, decision=decision, field=field, retryable_by_model=retryable
                    )
                return found
            return Outcome(ok=False, decision=decision, field=field, retryable_by_model=retryable)
        return Outcome(
            ok=False,
            decision=str(result["decision"]),
            field=result.get("field") if isinstance(result.get("field"), str) else None,
            allowed=tuple(allowed) if isinstance(allowed, list | tuple) and allowed else None,
            retryable_by_model=result.get("retryable_by_model") is not False,
        )
    return _OK


def _stop(detail: str) -> Next:
    """``Next(again=False, detail=detail)``, one for each detail (see ``_OUTCOMES``)."""
    found = _STOPS_MADE.get(detail) if type(detail) is str else None
    if found is None:
        found = Next(again=False, detail=detail)
        if type(detail) is str:
            if len(_STOPS_MADE) >= _MEMO_MAX:
                _STOPS_MADE.clear()
            _STOPS_MADE[detail] = found
    return found


class Model:
    """One agent's model, following the scenario's policy."""

    def __init__(self, workload: Workload, rng: random.Random, faker: Faker) -> None:
        """Create the model of one agent (its own RNG; a shared, reseeded faker)."""
        self.policy = workload.model
        self.max_replans = workload.max_replans
        self.max_fixes = workload.max_fixes
        self.rng = rng
        self.faker = faker

    def react(self, outcome: Outcome, args: dict[str, Any], *, replans: int, fixes: int) -> Next:
        """Decide what to do after ``outcome`` (``replans``/``fixes`` made so far)."""
        policy = self.policy
        if policy is ModelPolicy.GIVE_UP:
            return _stop(outcome.decision)
        if outcome.decision == "model_fix" and policy is not ModelPolicy.STUBBORN:
            if outcome.field and outcome.retryable_by_model and fixes < self.max_fixes:
                fixed = dict(args)
                fixed[outcome.field] = self._fix_value(outcome.field, outcome.allowed)
                return Next(again=True, args=fixed, action="fix", detail=outcome.field)
            return _stop("cannot fix")
        if replans >= self.max_replans:
            return _stop(outcome.decision)
        if policy is ModelPolicy.STUBBORN:
            return Next(again=True, args=dict(args), action="replan", detail="same call")
        if policy is ModelPolicy.MUTATING:
            mutated = dict(args)
            self.faker.seed_instance(self.rng.getrandbits(32))  # shared faker: seed each use
            mutated["note"] = f"retry {replans + 1}: {self.faker.sentence(nb_words=4)}"
            return Next(again=True, args=mutated, action="replan", detail="mutated note")
        if outcome.decision in _STOPS:
            return _stop(outcome.decision)
        return Next(again=True, args=dict(args), action="replan", detail=outcome.decision)

    def _fix_value(self, field: str, allowed: tuple[Any, ...] | None) -> Any:
        if allowed:
            return allowed[self.rng.randrange(len(allowed))]
        self.faker.seed_instance(self.rng.getrandbits(32))
        name = field.lower()
        if "date" in name:
            return self.faker.date()
        if "email" in name:
            return self.faker.email()
        if "city" in name:
            return self.faker.city()
        if "name" in name:
            return self.faker.name()
        if "phone" in name:
            return self.faker.phone_number()
        return self.faker.word()
