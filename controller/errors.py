"""The controller's exceptions, all under one root.

```
ControllerError
├── ConfigurationError      (also a ValueError: a setting is out of range)
├── IdempotencyConflict     (one key, two different requests)
├── LedgerError             (the idempotency ledger cannot store a result)
└── BudgetExhausted         (the HTTP layer refused a request the budget cannot pay for)
```

Failures of the tools themselves are never raised from a controlled call: they
become decision dicts. These exceptions signal misuse or an unsafe request.
"""

from __future__ import annotations

__all__ = [
    "BudgetExhausted",
    "ConfigurationError",
    "ControllerError",
    "IdempotencyConflict",
    "LedgerError",
]


class ControllerError(Exception):
    """Root of every exception raised by the `controller` package."""


class ConfigurationError(ControllerError, ValueError):
    """A setting is outside its allowed range; the message names field, value and range."""


class IdempotencyConflict(ControllerError):
    """One idempotency key was reused for a request with a different fingerprint.

    Replaying the recorded result would answer a different request, and sending
    the new one under the old key would let the service silently return the old
    result: both are wrong, so the call is refused.
    """

    def __init__(self, *, key_digest: str, recorded: str, attempted: str) -> None:
        """Build the error from the key's digest and both fingerprints' prefixes."""
        super().__init__(
            f"idempotency key {key_digest} was first used for a request with fingerprint "
            f"{recorded[:16]}, now for {attempted[:16]}; derive a new key for a new "
            "operation (operation_key(task_id, operation, args))"
        )
        self.key_digest = key_digest
        self.recorded = recorded
        self.attempted = attempted


class LedgerError(ControllerError):
    """The idempotency ledger could not record a result (e.g. it is not JSON)."""


class BudgetExhausted(ControllerError):
    """An HTTP-layer request was refused because the task budget cannot pay for it.

    `verdict` is "budget_exhausted" or "deadline_exceeded"; a controller that
    sees this exception returns that decision.
    """

    def __init__(self, message: str, *, verdict: str = "budget_exhausted") -> None:
        """Build the error from the refusal's message and verdict."""
        super().__init__(message)
        self.verdict = verdict
