"""What the framework controllers share: reading a framework's error text, the tool they run.

A framework hands a failed tool call back to its model as text (pydantic-ai's
retry prompt, openai-agents' ``failure_error_function`` output, LangChain's
``ToolMessage``). The scripted model ends the run with that text, and the
controller reads it with :func:`decision_from_text` into the seed-style
decision the harness's model acts on: the error is the failure it is, never
a result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import re
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ...workload.inrun import seat
from ...world.context import CURRENT_CALL

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator, Mapping
    from collections.abc import Set as AbstractSet

    from ...world.context import CallMeta

__all__ = [
    "Executions",
    "FrameworkLayer",
    "current_run",
    "decision_from_text",
    "error_body",
    "framework_run",
    "http_status",
    "plan_prompt",
    "read_output",
    "read_plan",
    "replan_in_run",
    "signature_key",
    "tool_function",
]

ARGUMENT_STATUSES = frozenset({400, 422})

# Where an HTTP status shows in the texts frameworks and clients write:
# httpx's "Client error '422 Unprocessable Entity' for url ...", and the
# "HTTP 422: {...}" the framework tools here hand their framework.
_STATUS = re.compile(r"(?:error '|HTTP |status(?: code)?[ =:]+)([1-5]\d\d)\b")


def http_status(text: str) -> int | None:
    """The HTTP status a framework's error text names, or None when it names none."""
    match = _STATUS.search(text)
    return int(match.group(1)) if match else None


def error_body(text: str) -> dict[str, Any]:
    """The server's ``{"error": {...}}`` object quoted in ``text`` (empty when there is none)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict):
            return error
        start = text.find("{", start + 1)
    return {}


def decision_from_text(text: str) -> dict[str, Any]:
    """Read the error text a framework handed its model as the decision it amounts to.

    A 400/422 is ``model_fix``, carrying the server's ``code``, ``field``,
    ``allowed`` and ``retryable_by_model`` when the text quotes its error
    body; anything else (a permanent 4xx, a transient status the framework
    gave up on, a timeout, a network error) is ``stop``.
    """
    status = http_status(text)
    if status in ARGUMENT_STATUSES:
        error = error_body(text)
        return {
            "ok": False,
            "decision": "model_fix",
            "code": error.get("code"),
            "field": error.get("field"),
            "allowed": error.get("allowed"),
            "retryable_by_model": error.get("retryable_by_model", True),
            "error": text,
        }
    return {"ok": False, "decision": "stop", "error": text}


def read_output(text: str) -> Any:
    """Read a framework run's final output: the tool's result, or the failure handed back.

    The scripted model ends every run with what the framework handed it:
    a result's JSON, or an error. An error is plain text, or JSON of the
    form ``{"error": "..."}`` (pydantic-ai wraps an errored tool return that
    way, ``ToolReturnPart.model_response_str``); both are read with
    :func:`decision_from_text`.
    """
    try:
        value = json.loads(text)
    except ValueError:
        return decision_from_text(text)
    if isinstance(value, dict) and set(value) == {"error"} and isinstance(value["error"], str):
        return decision_from_text(value["error"])
    return value


def tool_function(
    name: str,
    args: Mapping[str, Any],
    body: Callable[[Any, dict[str, Any]], Awaitable[Any]],
    *,
    context: Any,
) -> Callable[..., Awaitable[Any]]:
    """An async tool function named ``name``: a ``context`` parameter, then ``args``' names, types.

    What a developer writes for a tool (``async def book_room(ctx:
    RunContext[Deps], room: str, nights: int)``), made from the call the
    scripted model will send, so the framework builds its usual schema from
    the signature and validates the model's call against it. ``body`` gets
    the framework's run context and the validated arguments.
    """

    async def function(ctx: Any, /, **kwargs: Any) -> Any:
        return await body(ctx, kwargs)

    params = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_ONLY, annotation=context),
        *(
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, annotation=kind)
            for key, kind in signature_key(args)
        ),
    ]
    function.__signature__ = inspect.Signature(params, return_annotation=Any)  # type: ignore[attr-defined]
    function.__annotations__ = {p.name: p.annotation for p in params} | {"return": Any}
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Call the {name} tool."
    return function


def signature_key(args: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The names and types of ``args``: calls with equal keys share one built agent."""
    return tuple((key, _annotation(value)) for key, value in args.items())


def plan_prompt(tool: str, args: Mapping[str, Any]) -> str:
    """The user prompt of one framework run: the call the scripted model is to make, as JSON."""
    return json.dumps({"call": tool, "arguments": dict(args)})


def read_plan(prompt: str) -> tuple[str, dict[str, Any]]:
    """The tool and arguments :func:`plan_prompt` wrote (what the scripted model reads)."""
    plan = json.loads(prompt)
    return plan["call"], plan["arguments"]


def _annotation(value: Any) -> Any:
    # bool before int: True is an int too, and its schema must stay boolean.
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind
    return Any


class Executions:
    """One framework run (one invocation, and the re-plans the model makes inside it).

    ``next()`` is the harness tool for the next execution of the framework's
    tool: the first of an invocation is the controller's attempt, the
    framework's own retries (later executions for the same invocation) are
    marked ``layer: "framework"`` in the trace. When the framework hands a
    failure back to its model, :meth:`handed_back` asks the workload's model
    (seated in the run, :mod:`retrychaos.workload.inrun`) what to do: a
    re-plan starts the next invocation here, with its own tool, arguments
    and count.
    """

    __slots__ = ("_seat", "accepts", "args", "count", "key", "loop", "meta", "sent", "tool")

    def __init__(
        self,
        tool: Any,
        args: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        loop: Any = None,
        accepts: AbstractSet[str] | None = None,
    ) -> None:
        """Count executions of ``tool`` (bound to one invocation) called with ``args``.

        ``key`` is the operation's idempotency key; ``loop`` the run's loop (for
        a sync tool body on a pool thread); ``accepts`` the argument names the
        framework's tool takes (None: any).
        """
        self.tool = tool
        self.args = dict(args or {})
        self.key = key
        self.loop = loop
        self.accepts = accepts
        self.count = 0
        self.sent = 0
        """Requests sent so far for the invocation (:class:`FrameworkLayer`)."""
        self.meta: CallMeta | None = None
        """The invocation's identity once the model re-planned in the run (None: the first's)."""
        self._seat = seat()

    def next(self) -> Any:
        """The tool to call for the next execution."""
        self.count += 1
        return self.tool if self.count == 1 else self.tool._with_layer("framework")  # noqa: SLF001

    def handed_back(self, result: Any) -> dict[str, Any] | None:
        """The model's turn after the framework handed ``result`` back (as the controller reads it).

        Returns the arguments of the re-plan to call the tool with in this
        run (the next invocation has begun), or None: the model ends the run.
        """
        if self._seat is None:
            return None
        reask = self._seat.handed_back(result, self.accepts)
        if reask is None:
            return None
        self.tool, self.args, self.meta = reask.tool, reask.args, reask.meta
        self.count = self.sent = 0
        return dict(reask.args)

    @contextlib.contextmanager
    def attributed(self, layer: str = "controller") -> Iterator[None]:
        """Attribute requests sent in the block to the invocation in progress, as ``layer``.

        For tool bodies that send their own requests (not through the harness
        tool, which knows its invocation): after a re-plan in the run they
        belong to the new invocation.
        """
        current = CURRENT_CALL.get()
        meta = self.meta if self.meta is not None else current
        if meta is not None and meta.layer != layer:
            meta = dataclasses.replace(meta, layer=layer)
        if meta is None or meta is current:
            yield
            return
        token = CURRENT_CALL.set(meta)
        try:
            yield
        finally:
            CURRENT_CALL.reset(token)


_RUN: ContextVar[Executions | None] = ContextVar("retrychaos_framework_run", default=None)
"""The framework run in progress (framework tasks copy the context, so every step sees it)."""


def replan_in_run(result: Any) -> dict[str, Any] | None:
    """The arguments of the model's re-plan after ``result`` was handed back, or None: end the run.

    Outside :func:`framework_run` (a client whose requests the harness counts
    by other means, such as the MCP controllers) the model ends the run at
    the first hand-back, and the workload's model re-plans as a new run.
    """
    run = _RUN.get()
    return None if run is None else run.handed_back(result)


def current_run() -> Executions:
    """The framework run in progress (inside :func:`framework_run`)."""
    run = _RUN.get()
    if run is None:
        msg = "no framework run in progress: wrap the framework's run in framework_run(...)"
        raise RuntimeError(msg)
    return run


class FrameworkLayer:
    """The run's network (an async transport of any family), marking a framework's HTTP retries.

    Wrap ``env.transport`` in it under an HTTP-layer retry transport: the
    first request of an invocation in a framework run (:func:`framework_run`)
    is the controller's attempt, every later one is ``layer: "framework"``.
    """

    def __init__(self, inner: Any) -> None:
        """Wrap the run's transport."""
        self._inner = inner

    async def handle_async_request(self, request: Any) -> Any:
        """Send one request, attributed to the framework layer after an invocation's first."""
        run = _RUN.get()
        meta = CURRENT_CALL.get()
        if run is None or meta is None:
            return await self._inner.handle_async_request(request)
        run.sent += 1
        if run.sent == 1:
            return await self._inner.handle_async_request(request)
        token = CURRENT_CALL.set(dataclasses.replace(meta, layer="framework"))
        try:
            return await self._inner.handle_async_request(request)
        finally:
            CURRENT_CALL.reset(token)

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._inner.aclose()


@contextlib.contextmanager
def framework_run(run: Executions | None = None) -> Iterator[Executions]:
    """Make ``run`` (a new one without a tool if None) the framework run in progress."""
    run = Executions(None) if run is None else run
    token = _RUN.set(run)
    try:
        yield run
    finally:
        _RUN.reset(token)
