"""Enum members as module globals, for a call's path.

A member read off its class (`Verdict.OK`) is an attribute of a class whose
metaclass defines `__getattr__`, about 800 instructions a look in this
CPython; a name imported from here is a plain global. `controller.breaker`
keeps its own, as this module imports it.
"""

from __future__ import annotations

from .breaker import BreakerState
from .kinds import FailureKind, Verdict

__all__ = [
    "BREAKER_OPEN",
    "BUDGET_EXHAUSTED",
    "CIRCUIT_OPEN",
    "DEADLINE_EXCEEDED",
    "KIND_ARGUMENT",
    "KIND_PERMANENT",
    "KIND_UNKNOWN",
    "MANUAL_CHECK",
    "MODEL_FIX",
    "OK",
    "STOP",
]

OK = Verdict.OK
STOP = Verdict.STOP
CIRCUIT_OPEN = Verdict.CIRCUIT_OPEN
MANUAL_CHECK = Verdict.MANUAL_CHECK
BUDGET_EXHAUSTED = Verdict.BUDGET_EXHAUSTED
DEADLINE_EXCEEDED = Verdict.DEADLINE_EXCEEDED
MODEL_FIX = Verdict.MODEL_FIX
KIND_ARGUMENT = FailureKind.ARGUMENT
KIND_PERMANENT = FailureKind.PERMANENT
KIND_UNKNOWN = FailureKind.UNKNOWN
BREAKER_OPEN = BreakerState.OPEN
