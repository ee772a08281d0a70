"""Which fault rule, if any, decides one attempt (see :mod:`retrychaos.world.spec`).

Selection is a pure function of the attempt (its server-side number, its start
time, its arguments) and one RNG. The RNG is drawn from only for a rule whose
other conditions all hold and whose probability is strictly between 0 and 1,
so adding a rule for attempt 3 does not shift the draws of attempts 1 and 2,
and certain rules (``probability: 1``) never consume a draw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .spec import FaultRule, FaultType

if TYPE_CHECKING:
    import random
    from collections.abc import Iterable, Mapping


def conditions_hold(rule: FaultRule, *, n: int, at_s: float, args: Mapping[str, Any]) -> bool:
    """Whether every deterministic condition of ``rule`` holds for this attempt.

    Args:
        rule: the rule.
        n: the server-side attempt number of the operation (the number the
            attempt has, or would have if it reached the server).
        at_s: the virtual time the attempt started, in seconds.
        args: the attempt's JSON arguments.
    """
    if rule.attempts is not None and n not in rule.attempts:
        return False
    if rule.window is not None and not rule.window[0] <= at_s < rule.window[1]:
        return False
    if rule.fault is FaultType.ARGUMENT and rule.allowed is not None and rule.field is not None:
        # A model that fixes the field gets through: only a bad value matches.
        value = args.get(rule.field)
        return value is None or str(value) not in rule.allowed
    return True


def draw(rule: FaultRule, rng: random.Random) -> bool:
    """Whether ``rule``'s probability fires (consumes a draw only when it is uncertain)."""
    if rule.probability >= 1.0:
        return True
    if rule.probability <= 0.0:
        return False
    return rng.random() < rule.probability


def select_rule(
    rules: Iterable[FaultRule],
    *,
    n: int,
    at_s: float,
    args: Mapping[str, Any],
    rng: random.Random,
) -> FaultRule | None:
    """Return the first rule that applies to this attempt, or ``None``."""
    for rule in rules:
        if conditions_hold(rule, n=n, at_s=at_s, args=args) and draw(rule, rng):
            return rule
    return None


Compiled = tuple[
    FaultRule,
    "tuple[int, ...] | None",
    "tuple[float, float] | None",
    "str | None",
    "tuple[str, ...] | None",
    float,
]
"""One rule as :func:`select_compiled` reads it: the rule, then its conditions, flat."""


def compile_rules(rules: Iterable[FaultRule]) -> tuple[Compiled, ...]:
    """``rules`` flattened for :func:`select_compiled` (made once per tool: the hot path)."""
    compiled: list[Compiled] = []
    for rule in rules:
        # Only an argument rule with both a field and its allowed values reads the arguments.
        reads = rule.fault is FaultType.ARGUMENT and rule.allowed is not None
        field = rule.field if reads else None
        compiled.append((rule, rule.attempts, rule.window, field, rule.allowed, rule.probability))
    return tuple(compiled)


def select_compiled(
    rules: tuple[Compiled, ...],
    n: int,
    at_s: float,
    args: Mapping[str, Any],
    rng: random.Random,
) -> FaultRule | None:
    """:func:`select_rule` on compiled rules: the same rule, the same draws from ``rng``."""
    for rule, attempts, window, field, allowed, probability in rules:
        if attempts is not None and n not in attempts:
            continue
        if window is not None and not window[0] <= at_s < window[1]:
            continue
        if field is not None:
            value = args.get(field)
            if value is not None and str(value) in allowed:  # type: ignore[operator]
                continue
        if probability >= 1.0:
            return rule
        if probability > 0.0 and rng.random() < probability:
            return rule
    return None
