# Copyright 2026 the retrychaos authors. Licensed under the MIT License.
"""The file format of a tool's fault plan: one model per kind of fault.

A fault rule is a mapping whose ``fault`` key picks the kind; each kind accepts
only the keys that mean something for it (``delay_s`` on a ``status`` fault is
an unknown key, not a silently ignored one). Every kind accepts the selection
keys ``attempts``, ``window`` and ``probability`` (see ``retrychaos.world.spec``).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, field_validator, model_validator

from ._fields import MAX_ATTEMPT_NUMBER, MAX_SECONDS, Expect, FileModel, fail

__all__ = [
    "FAULT_MODELS",
    "ArgumentFault",
    "FaultModel",
    "RetryAfterModel",
    "SlowFault",
    "StatusFault",
    "TransportFault",
    "UnparseableFault",
]

HTTP_ERROR_STATUS: Final = "an HTTP status from 400 to 599"
WINDOW: Final = f"a window [start, end) in seconds with 0 <= start < end <= {MAX_SECONDS:,.0f}"
RETRY_AFTER_FORMS: Final = "exactly one of seconds, date_in_s or raw"


class RetryAfterModel(FileModel):
    """A ``Retry-After`` header sent with the fault response: exactly one form."""

    seconds: Annotated[
        int | None,
        Field(ge=0, le=int(MAX_SECONDS)),
        Expect(f"a whole number of seconds from 0 to {MAX_SECONDS:,.0f}"),
    ] = None
    """Delta-seconds, sent as an integer."""
    date_in_s: Annotated[
        float | None,
        Field(ge=-MAX_SECONDS, le=MAX_SECONDS),
        Expect(
            f"a number of seconds from -{MAX_SECONDS:,.0f} to {MAX_SECONDS:,.0f} "
            "(negative: in the past)"
        ),
    ] = None
    """An HTTP-date this many seconds after the response is sent (negative: in the past)."""
    raw: Annotated[str | None, Expect("a header value (text sent verbatim)")] = None
    """Sent verbatim, to test garbage values such as ``soon``."""

    @model_validator(mode="after")
    def _one_form(self) -> RetryAfterModel:
        forms = [self.seconds, self.date_in_s, self.raw]
        if sum(form is not None for form in forms) != 1:
            fail(RETRY_AFTER_FORMS)
        return self


class _Selection(FileModel):
    """The keys every fault kind accepts: when the rule applies (all stated must hold)."""

    attempts: Annotated[
        list[
            Annotated[
                int,
                Field(ge=1, le=MAX_ATTEMPT_NUMBER),
                Expect(f"an attempt number from 1 to {MAX_ATTEMPT_NUMBER:,}"),
            ]
        ]
        | None,
        Field(min_length=1),
        Expect("a non-empty list of attempt numbers (1 is the first)"),
    ] = None
    """Attempt numbers of the logical operation the rule applies to (1 is its
    first attempt; every layer counted, attempts that never reached the server
    too); default: all."""
    window: Annotated[tuple[float, float] | None, Expect(WINDOW)] = None
    """``[start, end)`` in virtual seconds, by the attempt's start time; default: always."""
    probability: Annotated[
        float, Field(gt=0, le=1), Expect("a probability greater than 0 and at most 1")
    ] = 1.0
    """Chance the rule applies (drawn from the agent's seeded fault RNG)."""

    @field_validator("window")
    @classmethod
    def _window_ordered(cls, window: tuple[float, float] | None) -> tuple[float, float] | None:
        if window is not None and not 0 <= window[0] < window[1] <= MAX_SECONDS:
            fail(WINDOW)
        return window


class TransportFault(_Selection):
    """A failure on the wire: no HTTP response reaches the caller."""

    fault: Literal[
        "connect_timeout",
        "connect_error",
        "read_timeout",
        "timeout_after_commit",
        "reset_after_commit",
    ]
    """``connect_timeout``/``connect_error``: the server never sees the request;
    ``read_timeout``: it sees it but never commits or answers;
    ``timeout_after_commit``/``reset_after_commit``: it commits, then the answer is lost
    (ambiguous success)."""


class StatusFault(_Selection):
    """The service answers with an HTTP error status (429, 5xx, 401, 403, 404, ...)."""

    fault: Literal["status"]
    """An HTTP error response."""
    status: Annotated[int, Field(ge=400, le=599), Expect(HTTP_ERROR_STATUS)]
    """The status the service answers with."""
    retry_after: Annotated[
        RetryAfterModel | None, Expect(f"a Retry-After with {RETRY_AFTER_FORMS}")
    ] = None
    """A ``Retry-After`` header to send; default: none."""
    message: Annotated[str | None, Expect("a text")] = None
    """The ``message`` of the JSON error body; default: a standard text for the status."""


class ArgumentFault(_Selection):
    """The service rejects an argument: 400/422 with a structured body the model can fix."""

    fault: Literal["argument"]
    """An argument error with ``code``, ``field`` and allowed values."""
    status: Annotated[Literal[400, 422], Expect("400 or 422")] = 422
    """The status of the rejection."""
    code: Annotated[str, Field(min_length=1), Expect("an error code such as INVALID_DATE")]
    """The machine-readable error code in the body."""
    field: Annotated[str, Field(min_length=1), Expect("the name of the rejected argument")]
    """The argument the error is about (the model corrects this one)."""
    allowed: Annotated[
        list[Annotated[str, Expect("a text")]] | None, Expect("a list of allowed values")
    ] = None
    """Allowed values the body lists for the field; default: none listed."""
    retryable_by_model: Annotated[bool, Field(strict=True), Expect("true or false")] = True
    """The body says the model may fix the argument and call again."""
    message: Annotated[str | None, Expect("a text")] = None
    """The ``message`` of the JSON error body; default: a standard text."""


class UnparseableFault(_Selection):
    """The service answers an error status with a body that is not JSON."""

    fault: Literal["unparseable"]
    """An error response whose body cannot be parsed."""
    status: Annotated[int, Field(ge=400, le=599), Expect(HTTP_ERROR_STATUS)] = 500
    """The status the service answers with."""
    retry_after: Annotated[
        RetryAfterModel | None, Expect(f"a Retry-After with {RETRY_AFTER_FORMS}")
    ] = None
    """A ``Retry-After`` header to send; default: none."""
    message: Annotated[str | None, Expect("a text")] = None
    """The raw (non-JSON) body text; default: an HTML error page."""


class SlowFault(_Selection):
    """The service commits and answers late; past the client timeout the answer is lost."""

    fault: Literal["slow"]
    """A slow response."""
    delay_s: Annotated[
        float,
        Field(gt=0, le=MAX_SECONDS),
        Expect(f"a delay in seconds > 0 and at most {MAX_SECONDS:,.0f}"),
    ]
    """Extra seconds before the answer."""


FaultModel = Annotated[
    TransportFault | StatusFault | ArgumentFault | UnparseableFault | SlowFault,
    Field(discriminator="fault"),
]
"""One fault rule of the file format, its kind chosen by ``fault``."""

FAULT_MODELS: Final[tuple[type[_Selection], ...]] = (
    TransportFault,
    StatusFault,
    ArgumentFault,
    UnparseableFault,
    SlowFault,
)
"""Every fault model, in the order of ``FaultModel``."""
