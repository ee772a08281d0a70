"""A fast constructor of the :class:`Ctx` each invocation gets (one per call, on the hot path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..contract import Ctx

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["new_ctx"]

_CTX_FIELDS = (
    "task_id",
    "call_id",
    "tool",
    "side_effect",
    "idempotency_key",
    "idempotency_supported",
    "deadline",
    "agent_id",
    "operation_id",
    "invocation",
)


class _UnfrozenCtx:
    """:class:`Ctx`'s layout, not frozen: plain stores, then ``__class__ = Ctx``.

    Setting a frozen object's slots through their descriptors is one method
    call a field; Python lets an object switch between two classes of the same
    slots and base, and the switched object is the very one ``Ctx(...)`` makes
    (as :class:`~retrychaos.world.trace.UnfrozenEvent` does for trace events).
    """

    __slots__ = _CTX_FIELDS


def _refreezes() -> bool:
    """Whether a filled :class:`_UnfrozenCtx` becomes a ``Ctx`` equal to the constructed one."""
    probe: Any = object.__new__(_UnfrozenCtx)
    for name in _CTX_FIELDS:
        setattr(probe, name, name)
    try:
        probe.__class__ = Ctx
    except TypeError:  # pragma: no cover (a layout Python refuses to switch)
        return False
    return type(probe) is Ctx and probe == Ctx(**{name: name for name in _CTX_FIELDS})  # type: ignore[arg-type]


def _ctx_factory() -> Callable[..., Ctx]:
    """A positional constructor of :class:`Ctx` that skips the frozen dataclass's ``__init__``.

    The same object as ``Ctx(...)``, at a fraction of the cost (one per invocation):
    filled as a :class:`_UnfrozenCtx`, else through the slots' setters; if ``Ctx``
    ever changes shape, the ordinary constructor.
    """
    if tuple(getattr(Ctx, "__slots__", ())) != _CTX_FIELDS:

        def make(*values: Any) -> Ctx:
            return Ctx(**dict(zip(_CTX_FIELDS, values, strict=True)))

        return make
    new = object.__new__
    if _refreezes():
        # Named parameters, not *values: no tuple built and indexed for every invocation.
        def refrozen(  # noqa: PLR0917 (Ctx's fields, positional: the hot path)
            task_id: str,
            call_id: str,
            tool: str,
            side_effect: bool,  # noqa: FBT001
            idempotency_key: str | None,
            idempotency_supported: bool,  # noqa: FBT001
            deadline: float,
            agent_id: int,
            operation_id: str,
            invocation: int,
        ) -> Ctx:
            ctx: Any = new(_UnfrozenCtx)
            ctx.task_id = task_id
            ctx.call_id = call_id
            ctx.tool = tool
            ctx.side_effect = side_effect
            ctx.idempotency_key = idempotency_key
            ctx.idempotency_supported = idempotency_supported
            ctx.deadline = deadline
            ctx.agent_id = agent_id
            ctx.operation_id = operation_id
            ctx.invocation = invocation
            ctx.__class__ = Ctx
            made: Ctx = ctx
            return made

        return refrozen
    setters = tuple(Ctx.__dict__[name].__set__ for name in _CTX_FIELDS)
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9 = setters

    def fast(*values: Any) -> Ctx:
        ctx: Ctx = new(Ctx)
        s0(ctx, values[0])
        s1(ctx, values[1])
        s2(ctx, values[2])
        s3(ctx, values[3])
        s4(ctx, values[4])
        s5(ctx, values[5])
        s6(ctx, values[6])
        s7(ctx, values[7])
        s8(ctx, values[8])
        s9(ctx, values[9])
        return ctx

    return fast


new_ctx = _ctx_factory()
"""``new_ctx(task_id, call_id, tool, side_effect, key, idempotency_supported, deadline,
agent_id, operation_id, invocation)``."""
