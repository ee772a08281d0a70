"""Enum members as module globals, for a call's path.

A member read off its class (`Verdict.OK`) is an attribute of a class whose
metaclass defines `__getattr__`, about 800 instructions a look in this
CPython; a name imported from here is a plain global. `controller.breaker`
and `controller.decision` keep their own, as this module imports them.
"""

from __future__ import annotations

from .breaker import BreakerState
from .kinds import FailureKind, Verdict

__all__ = ["BREAKER_OPEN", "CIRCUIT_OPEN", "KIND_UNKNOWN", "MANUAL_CHECK", "OK", "STOP"]

OK = Verdict.OK
STOP = Verdict.STOP
CIRCUIT_OPEN = Verdict.CIRCUIT_OPEN
MANUAL_CHECK = Verdict.MANUAL_CHECK
KIND_UNKNOWN = FailureKind.UNKNOWN
BREAKER_OPEN = BreakerState.OPEN
