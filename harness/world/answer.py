"""How one attempt ended, whichever transport carried it.

:meth:`SimulatedService.serve <retrychaos.world.service.SimulatedService.serve>`
returns an :data:`Answer`; the http transport turns it into an
``httpx.Response`` or the exception httpx would raise (:func:`to_response`),
and the direct transport builds httpx objects only when the attempt failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from .responses import ReadOk, Reply

# How an attempt ended (the first item of an ``Answer``).
ANSWERED = 0
"""The server's answer arrived: ``(ANSWERED, reply, Retry-After header or None)``."""
CONNECT_TIMEOUT = 1
"""``httpx.ConnectTimeout``: the server never saw the request."""
CONNECT_ERROR = 2
"""``httpx.ConnectError``: the server never saw the request."""
READ_TIMEOUT = 3
"""``httpx.ReadTimeout``: no answer within the client's timeout."""
READ_ERROR = 4
"""``httpx.ReadError``: the connection was reset after the server committed."""

Answer = tuple[int, "Reply | ReadOk | None", str | None]
"""How one attempt ended: ``(kind, reply, retry_after)`` (see ``ANSWERED``...``READ_ERROR``)."""


def to_response(answer: Answer, request: httpx.Request) -> httpx.Response:
    """The ``httpx.Response`` for ``answer`` to ``request``, or raise what httpx would."""
    kind, reply, retry_after = answer
    if kind == CONNECT_TIMEOUT:
        raise httpx.ConnectTimeout("timed out", request=request)
    if kind == CONNECT_ERROR:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
    if kind == READ_ERROR:
        raise httpx.ReadError("[Errno 104] Connection reset by peer", request=request)
    if kind == READ_TIMEOUT or reply is None:
        raise httpx.ReadTimeout("timed out", request=request)
    headers = {"Content-Type": reply.content_type}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    return httpx.Response(reply.status, headers=headers, content=reply.body, request=request)
