"""A failed attempt's request, response and message, copied in one step.

:meth:`Family.failed <retrychaos.world.families.Family.failed>` gives a
4xx or 5xx a request, a response and the message ``raise_for_status()``
would give, each a copy of what the library built once for the same bytes
(:meth:`~retrychaos.world.families.Family.request_for`,
:meth:`~retrychaos.world.families.Family.response_for`,
:meth:`~retrychaos.world.families.Family.status_message`). Two thirds of a
storm's attempts fail, so :func:`status_failure` makes the three with one
look-up instead of three, and without the tool's URL (a property that
builds it on every read): the models are found by the tool spec's identity,
the arguments' flat key, the key and the reply (status, body, content type,
``Retry-After``). The copies are the same objects the three methods give
(``tests/world/test_failure_copies.py``). A failure like the last one (the
same reply object, family, spec, flat key, key and ``Retry-After``: an
outage's run of 503s) skips even that look-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .answer import Answer
    from .families import Family
    from .responses import ReadOk, Reply
    from .spec import ToolSpec

_new = object.__new__
_MODELS: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_MODELS_MAX = 512
# The last failure's family, spec, reply, flat key, key, Retry-After and models (held, so
# that no identity checked is reused): an outage answers every attempt with one reply.
_LAST: list[tuple[Any, ...]] = [(None,) * 7]


def status_failure(  # noqa: PLR0917 (positional: one call per failed attempt)
    family: Family,
    spec: ToolSpec,
    args: Mapping[str, Any],
    key: str | None,
    memo_key: tuple[Any, ...] | None,
    answer: Answer,
) -> tuple[Any, Any, str | None]:
    """The request, the response and the status message (None below 400 or from 600).

    ``answer``: an attempt's answer, with a reply (``ANSWERED``).
    """
    _, reply, retry_after = answer
    assert reply is not None  # noqa: S101 (Family.failed checks it)
    if memo_key is None:  # nested arguments: the long way, keyed by their JSON
        return _long_way(family, spec, args, key, memo_key, reply, retry_after)
    last = _LAST[0]
    if (
        last[2] is reply  # a frozen Reply (a fault's is made once per rule): its bytes too
        and last[0] is family
        and last[1] is spec
        and last[3] == memo_key
        and last[4] == key
        and last[5] == retry_after
    ):
        # The same failure as the last one (an outage's run of 503s): no look-up.
        models = last[6]
    else:
        models = _models(family, spec, args, key, memo_key, reply, retry_after)
        _LAST[0] = (family, spec, reply, memo_key, key, retry_after, models)
    model, answer_model, message = models[2], models[3], models[4]
    request = _new(type(model))
    response = _new(type(answer_model))
    if family._two_field_headers:  # noqa: SLF001 (the family's own knowledge of Headers)
        # Family.copy_headers, inline: two stores, as Headers.__init__ makes them.
        headers = model.headers
        request_headers = _new(type(headers))
        request_headers._list = list(headers._list)  # noqa: SLF001 (the library's own state)
        request_headers._encoding = headers._encoding  # noqa: SLF001
        headers = answer_model.headers
        response_headers = _new(type(headers))
        response_headers._list = list(headers._list)  # noqa: SLF001
        response_headers._encoding = headers._encoding  # noqa: SLF001
    else:
        request_headers = family.copy_headers(model.headers)
        response_headers = family.copy_headers(answer_model.headers)
    # The models' dicts copied whole, then their fields replaced in place (the keys
    # keep their order): cheaper than a dict display, which inserts key by key.
    request.__dict__ = state = model.__dict__.copy()
    state["headers"] = request_headers
    state["extensions"] = {}
    response.__dict__ = state = answer_model.__dict__.copy()
    state["headers"] = response_headers
    state["extensions"] = {}
    state["history"] = []
    state["_request"] = request
    return request, response, message


def _models(  # noqa: PLR0917 (status_failure's arguments)
    family: Family,
    spec: ToolSpec,
    args: Mapping[str, Any],
    key: str | None,
    memo_key: tuple[Any, ...],
    reply: Reply | ReadOk,
    retry_after: str | None,
) -> tuple[Any, ...]:
    """The family's, the spec's, the request's and the response's models and the message."""
    body, content_type = reply.body, reply.content_type
    cache_key = (id(family), id(spec), memo_key, key, reply.status, body, content_type, retry_after)
    models = _MODELS.get(cache_key)
    if models is None or models[0] is not family or models[1] is not spec:
        # Models of the harness's own, never handed out: what the family's methods copy.
        model = family.request_for(spec, args, key, memo_key)
        answer_model = family.response_for(reply, retry_after, model)
        if len(_MODELS) >= _MODELS_MAX:
            _MODELS.clear()
        # The message from a copy of its own, as status_message() reads it from the copy
        # it is given: the models stay as the family's methods made them.
        message = _message(family, family.response_for(reply, retry_after, model), spec)
        models = (family, spec, model, answer_model, message)
        _MODELS[cache_key] = models
    return models


def _message(family: Family, response: Any, spec: ToolSpec) -> str | None:
    if 400 <= response.status_code < 600:  # noqa: PLR2004
        return family.status_message(response, spec.url)
    return None


def _long_way(  # noqa: PLR0917 (status_failure's arguments)
    family: Family,
    spec: ToolSpec,
    args: Mapping[str, Any],
    key: str | None,
    memo_key: tuple[Any, ...] | None,
    reply: Reply | ReadOk,
    retry_after: str | None,
) -> tuple[Any, Any, str | None]:
    request = family.request_for(spec, args, key, memo_key)
    response = family.response_for(reply, retry_after, request)
    return request, response, _message(family, response, spec)
