"""requests for sync controllers: a ``Session`` whose adapter reaches the simulated tools.

:func:`requests_session` gives what ``env.requests_session()`` returns: a
``requests.Session`` with :class:`SimulatedAdapter` mounted on ``http://``
and ``https://``. The adapter is requests' own ``HTTPAdapter``; only the one
network step of its urllib3 connection pools (``_make_request``: connect,
send, read the status line) is the simulated service. Everything above it
runs for real: urllib3's retry loop in ``urlopen``, a ``Retry`` the user
passes (``retries=Retry(...)``: its counters, ``status_forcelist``,
``allowed_methods``, backoff, and ``Retry-After``), requests' translation of
urllib3's errors. urllib3 sleeps with ``time.sleep`` and reads a
``Retry-After`` date with ``time.time``, both on the virtual clock in a run.

The session runs on a baton thread (a sync controller's ``call``): each
attempt blocks there in virtual time, as a ``SyncTool`` does. It ignores the
environment's proxies and ``.netrc`` (``trust_env = False``), so nothing it
sends leaves the run; a request with no timeout gets the contract's
``attempt_timeout_s``, as ``env.http`` does. A host no tool has fails as DNS
would (``ConnectionError``); a method or path no tool serves at a tool's host
raises :class:`~retrychaos.world.families.NotServed`, as respx refuses it.
"""

from __future__ import annotations

import http
import io
import math
import socket
from typing import TYPE_CHECKING, Any

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPResponse, HTTPSConnectionPool
from urllib3._collections import HTTPHeaderDict
from urllib3.exceptions import (
    ConnectTimeoutError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

from .answer import CONNECT_ERROR, CONNECT_TIMEOUT, READ_ERROR, READ_TIMEOUT
from .context import CURRENT_CALL
from .families import block_on, check_route, json_args
from .service import IDEMPOTENCY_HEADER

if TYPE_CHECKING:
    from collections.abc import Callable

    from urllib3.util.retry import Retry

    from .answer import Answer
    from .services import Services

__all__ = ["SimulatedAdapter", "requests_session"]


def requests_session(
    services: Services, loop: Any, *, timeout_s: float, retries: Retry | int | None = None
) -> requests.Session:
    """A ``requests.Session`` whose every request reaches the simulated services.

    ``retries`` is what ``HTTPAdapter(max_retries=...)`` takes: a urllib3
    ``Retry`` (or a number of retries); ``None`` is requests' default (none).
    """
    session = requests.Session()
    session.trust_env = False  # no proxy from the environment: requests must not leave the run
    adapter = SimulatedAdapter(services, loop, timeout_s=timeout_s, max_retries=retries)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class SimulatedAdapter(HTTPAdapter):
    """requests' ``HTTPAdapter``, with connection pools whose network is the simulated services."""

    def __init__(
        self,
        services: Services,
        loop: Any,
        *,
        timeout_s: float,
        max_retries: Retry | int | None = None,
    ) -> None:
        """Serve ``services`` from the run's ``loop``; ``max_retries`` as ``HTTPAdapter`` has it."""
        self._services = services
        self._loop = loop
        self._timeout_s = timeout_s
        super().__init__(max_retries=0 if max_retries is None else max_retries)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """Build requests' pool manager, then give it this adapter's pool classes."""
        super().init_poolmanager(*args, **kwargs)
        services, loop = self._services, self._loop

        class HttpPool(_SimulatedPool, HTTPConnectionPool):
            """A plain-HTTP pool of this session."""

        class HttpsPool(_SimulatedPool, HTTPSConnectionPool):
            """An HTTPS pool of this session."""

        for pool in (HttpPool, HttpsPool):
            pool.services, pool.loop = services, loop
        self.poolmanager.pool_classes_by_scheme = {"http": HttpPool, "https": HttpsPool}

    def send(  # noqa: PLR0917 (requests' own signature)
        self,
        request: requests.PreparedRequest,
        stream: bool = False,  # noqa: FBT001, FBT002 (requests' own signature)
        timeout: Any = None,
        verify: Any = True,  # noqa: FBT002
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        """Send as ``HTTPAdapter`` does; a request with no timeout gets the contract's."""
        if timeout is None:
            timeout = None if math.isinf(self._timeout_s) else self._timeout_s
        return super().send(
            request, stream=stream, timeout=timeout, verify=verify, cert=cert, proxies=proxies
        )


class _SimulatedPool:
    """The network step of a urllib3 pool, served by the simulated service at the pool's host."""

    services: Services
    loop: Any
    host: str
    num_requests: int
    _get_timeout: Callable[[Any], Any]  # urllib3's own, from the pool class this is mixed into

    def _make_request(  # noqa: PLR0917 (urllib3's own signature)
        self,
        conn: Any,
        method: str,
        url: str,
        body: Any = None,
        headers: Any = None,
        retries: Any = None,
        timeout: Any = None,
        chunked: bool = False,  # noqa: ARG002, FBT001, FBT002
        response_conn: Any = None,
        preload_content: bool = True,  # noqa: FBT001, FBT002
        decode_content: bool = True,  # noqa: FBT001, FBT002
        enforce_content_length: bool = True,  # noqa: FBT001, FBT002
    ) -> HTTPResponse:
        """One attempt: the response, or the error urllib3's connection would raise."""
        self.num_requests += 1
        timeout_obj = self._get_timeout(timeout)
        timeout_obj.start_connect()
        read = timeout_obj.read_timeout
        timeout_s = math.inf if read is None else float(read)
        service = self.services.at_host(self.host)
        if service is None:
            reason = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            raise NameResolutionError(self.host, conn, reason)
        path = url.partition("?")[0] or "/"
        scheme = getattr(self, "scheme", None) or "http"  # the pool class's own ("http"/"https")
        check_route(self.services, method, scheme, self.host, path)
        raw = body.encode() if isinstance(body, str) else bytes(body or b"")
        key = (headers or {}).get(IDEMPOTENCY_HEADER) or None
        coro = service.serve(
            json_args(raw),
            key,
            CURRENT_CALL.get(),
            method=method.upper(),
            path=path,
            timeout_s=timeout_s,
        )
        answer: Answer = block_on(self.loop, coro, what="env.requests_session()")
        kind, reply, retry_after = answer
        if kind == CONNECT_TIMEOUT:
            msg = f"Connection to {self.host} timed out. (connect timeout={read})"
            raise ConnectTimeoutError(conn, msg)
        if kind == CONNECT_ERROR:
            msg = "Failed to establish a new connection: [Errno 111] Connection refused"
            raise NewConnectionError(conn, msg)
        if kind == READ_ERROR:
            raise ProtocolError(
                "Connection aborted.", ConnectionResetError(104, "Connection reset by peer")
            )
        if kind == READ_TIMEOUT or reply is None:
            raise ReadTimeoutError(self, url, f"Read timed out. (read timeout={read})")  # type: ignore[arg-type]
        fields = {"Content-Type": reply.content_type, "Content-Length": str(len(reply.body))}
        if retry_after is not None:
            fields["Retry-After"] = retry_after
        try:
            reason_phrase = http.HTTPStatus(reply.status).phrase
        except ValueError:
            reason_phrase = ""
        return HTTPResponse(
            body=io.BytesIO(reply.body),
            headers=HTTPHeaderDict(fields),
            status=reply.status,
            version=11,
            version_string="HTTP/1.1",
            reason=reason_phrase,
            preload_content=preload_content,
            decode_content=decode_content,
            original_response=None,
            pool=self,  # type: ignore[arg-type]
            connection=response_conn,
            retries=retries,
            enforce_content_length=enforce_content_length,
            request_method=method,
            request_url=url,
        )
