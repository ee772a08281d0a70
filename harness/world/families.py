"""Client families: the HTTP client libraries a controller may speak.

A controller declares the library it catches exceptions from with a
``client_family`` attribute, on its factory (a class attribute when the
factory is the class) or on the controller object the factory returns:

- ``"httpx"`` (the default): ``tool(...)`` raises httpx's exceptions and
  ``env.http`` is an ``httpx.AsyncClient`` (a respx router behind it);
- ``"httpx2"``: the same API under ``import httpx2``, whose classes are
  distinct from httpx's (an ``except httpx.HTTPStatusError`` does not catch
  ``httpx2.HTTPStatusError``); ``env.http`` is an ``httpx2.AsyncClient`` on
  httpx2's own ``MockTransport``.

Either way every attempt ends in :meth:`SimulatedService.serve
<retrychaos.world.service.SimulatedService.serve>`, so the ground truth and
the trace do not depend on the family. A :class:`Family` builds its library's
objects for a failed attempt only, copying a request and a response its library
built once for the same bytes (building them costs more than the rest of an attempt).
"""

from __future__ import annotations

import inspect
import json
import math
from typing import TYPE_CHECKING, Any

import httpx
import httpx2

from .answer import ANSWERED, CONNECT_ERROR, CONNECT_TIMEOUT, READ_ERROR, READ_TIMEOUT
from .context import CURRENT_CALL
from .digests import request_args
from .failure_copies import status_failure
from .service import IDEMPOTENCY_HEADER

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Mapping
    from types import ModuleType

    from .answer import Answer
    from .context import CallMeta
    from .responses import ReadOk, Reply
    from .services import Services
    from .spec import ToolSpec

__all__ = [
    "FAMILY_NAMES",
    "HTTPX",
    "HTTPX2",
    "Family",
    "NotServed",
    "block_on",
    "check_route",
    "declared_family",
    "family",
]

_CACHE_MAX = 512
_new = object.__new__


def headers_for(idempotency_key: str | None) -> dict[str, str]:
    """The headers an attempt carries: its ``Idempotency-Key``, if it has one."""
    return {IDEMPOTENCY_HEADER: idempotency_key} if idempotency_key else {}


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[key] = value


class Family:
    """One client library: its classes, and the objects it gives a failed attempt."""

    __slots__ = (
        "_messages",
        "_requests",
        "_responses",
        "_two_field_headers",
        "errors",
        "hx",
        "name",
        "status_error",
        "transport_error",
    )

    def __init__(self, name: str, module: ModuleType) -> None:
        """Describe the family ``name`` whose module is ``module`` (httpx or httpx2)."""
        self.name = name
        self.hx: Any = module
        self.status_error: Any = status_error_builder(module.HTTPStatusError)  # (see there)
        self.transport_error: type[Exception] = module.TransportError
        self.errors: tuple[type[Exception], ...] = (module.HTTPStatusError, self.transport_error)
        """What a client of this family raises for a failed attempt (what an SDK layer sees)."""
        self._requests: dict[tuple[Any, ...], Any] = {}
        self._responses: dict[tuple[Any, ...], Any] = {}
        self._messages: dict[tuple[int, str], str] = {}
        # Whether the library's Headers hold just these two fields (httpx's and httpx2's do).
        self._two_field_headers = list(module.Headers().__dict__) == ["_list", "_encoding"]

    def __repr__(self) -> str:
        """``Family('httpx2')``."""
        return f"Family({self.name!r})"

    def request(self, method: str, url: str, args: Any, key: str | None) -> Any:
        """A new request of this family, as a client would build it."""
        return self.hx.Request(method, url, json=args, headers=headers_for(key))

    def copy_headers(self, headers: Any) -> Any:
        """A copy of ``headers`` (the family's ``Headers``), without re-parsing them."""
        copy = _new(type(headers))
        if self._two_field_headers:
            # Set as Headers.__init__ sets them, in its order: two stores, no dict made.
            copy._list = list(headers._list)  # noqa: SLF001 (the library's own state)
            copy._encoding = headers._encoding  # noqa: SLF001
            return copy
        state = headers.__dict__
        # One dict display: the same keys in the same order as update() then setattr.
        copy.__dict__ = {**state, "_list": list(state["_list"])}
        return copy

    def request_for(
        self,
        spec: ToolSpec,
        args: Mapping[str, Any],
        key: str | None,
        memo_key: tuple[Any, ...] | None,
    ) -> Any:
        """A new request equal to ``Request(method, url, json=args, headers=...)``."""
        if memo_key is None:  # nested arguments: their JSON bytes are the key
            memo_key = (
                json.dumps(
                    args, ensure_ascii=False, separators=(",", ":"), allow_nan=False
                ).encode(),
            )
        cache_key = (spec.method, spec.url, memo_key, key)
        model = self._requests.get(cache_key)
        if model is None:
            model = self.request(spec.method, spec.url, args, key)
            _remember(self._requests, cache_key, model)
        request = _new(type(model))
        headers = self.copy_headers(model.headers)
        request.__dict__ = {**model.__dict__, "headers": headers, "extensions": {}}
        return request

    def response_for(self, reply: Reply | ReadOk, retry_after: str | None, request: Any) -> Any:
        """A new response equal to the one :meth:`to_response` builds for ``reply``."""
        cache_key = (reply.status, reply.content_type, reply.body, retry_after)
        model = self._responses.get(cache_key)
        if model is None:
            model = self.hx.Response(
                reply.status, headers=_reply_headers(reply, retry_after), content=reply.body
            )
            _remember(self._responses, cache_key, model)
        response = _new(type(model))
        response.__dict__ = {
            **model.__dict__,
            "headers": self.copy_headers(model.headers),
            "extensions": {},
            "history": [],
            "_request": request,
        }
        return response

    def status_message(self, response: Any, url: str) -> str:
        """The message ``raise_for_status()`` gives a 4xx or 5xx (made once per status/URL)."""
        cache_key = (response.status_code, url)
        message = self._messages.get(cache_key)
        if message is None:
            try:
                response.raise_for_status()
            except self.errors[0] as exc:
                message = str(exc)
            else:  # pragma: no cover (4xx and 5xx always raise)
                message = ""
            _remember(self._messages, cache_key, message)
        return message

    def to_response(self, answer: Answer, request: Any) -> Any:
        """The response for ``answer`` to ``request``, or raise what this family's client would."""
        kind, reply, retry_after = answer
        hx = self.hx
        if kind == CONNECT_TIMEOUT:
            raise hx.ConnectTimeout("timed out", request=request)
        if kind == CONNECT_ERROR:
            raise hx.ConnectError("[Errno 111] Connection refused", request=request)
        if kind == READ_ERROR:
            raise hx.ReadError("[Errno 104] Connection reset by peer", request=request)
        if kind == READ_TIMEOUT or reply is None:
            raise hx.ReadTimeout("timed out", request=request)
        return hx.Response(
            reply.status,
            headers=_reply_headers(reply, retry_after),
            content=reply.body,
            request=request,
        )

    def failed(
        self,
        answer: Answer,
        spec: ToolSpec,
        args: Mapping[str, Any],
        key: str | None,
        memo_key: tuple[Any, ...] | None,
    ) -> Any:
        """What a client gives for an attempt that did not answer 2xx: mostly, raise."""
        kind, reply, _ = answer
        if kind != ANSWERED or reply is None:  # no answer: a transport error
            request = self.request_for(spec, args, key, memo_key)
            self.to_response(answer, request)
        assert reply is not None  # noqa: S101 (narrowing for the type checker)
        # request_for, response_for and status_message in one step (see there).
        request, response, message = status_failure(self, spec, args, key, memo_key, answer)
        if message is not None:  # a 4xx or 5xx; this line and the next keep their place
            raise self.status_error(message, request=request, response=response)
        return parse_result(response)

    async def handle(
        self, services: Services, request: Any, meta: CallMeta | None, *, timeout_s: float
    ) -> Any:
        """Serve ``request`` (of this family) at its host; the response, or raise as a client."""
        service = services.at_host(request.url.host)
        if service is None:
            msg = f"[Errno -2] Name or service not known: {request.url.host!r} is no simulated tool"
            raise self.hx.ConnectError(msg, request=request)
        answer = await service.serve(
            json_args(request.content, request.url.query),
            request.headers.get(IDEMPOTENCY_HEADER) or None,
            meta,
            method=request.method,
            path=request.url.path,
            timeout_s=timeout_s,
        )
        return self.to_response(answer, request)

    def async_handler(self, services: Services) -> Callable[[Any], Coroutine[Any, Any, Any]]:
        """A ``MockTransport`` handler serving every tool (the http path, by the caller's call)."""
        if self is HTTPX:
            from .transport import build_router  # noqa: PLC0415 (respx stays httpx's router)

            router = build_router(services)
            handler: Callable[[Any], Coroutine[Any, Any, Any]] = router.async_handler
            return handler

        async def serve(request: Any) -> Any:
            url = request.url
            check_route(services, request.method, url.scheme, url.host, url.path)
            # MockTransport applies no timeout: the service enforces the read
            # timeout the client put on the request, on the virtual clock.
            read = request.extensions.get("timeout", {}).get("read")
            timeout_s = math.inf if read is None else float(read)
            return await self.handle(services, request, CURRENT_CALL.get(), timeout_s=timeout_s)

        return serve

    def async_client(self, services: Services, *, timeout_s: float) -> Any:
        """An ``AsyncClient`` of this family wired to the simulated services."""
        transport = self.hx.MockTransport(self.async_handler(services))
        return self.hx.AsyncClient(transport=transport, timeout=timeout_s)

    def sync_client(self, services: Services, loop: Any, *, timeout_s: float) -> Any:
        """A sync ``Client`` of this family for a baton thread (it waits in virtual time)."""
        handler = self.async_handler(services)

        def serve(request: Any) -> Any:
            return block_on(loop, handler(request), what=f"env.sync_http ({self.name})")

        return self.hx.Client(transport=self.hx.MockTransport(serve), timeout=timeout_s)


class NotServed(AssertionError):
    """A request to a simulated tool's host that none of its endpoints serves (method, path)."""


def check_route(services: Services, method: str, scheme: str, host: str, path: str) -> None:
    """Refuse loudly, as the httpx family's respx router does, what no tool's endpoint serves.

    A host no tool has is left to the caller, which answers as DNS would.

    Raises:
        NotServed: the host is a tool's, the method, scheme or path is not.
    """
    service = services.at_host(host)
    if service is None:
        return
    url = service.url
    if url is not None and (service.method, url.scheme, url.path) == (method.upper(), scheme, path):
        return
    msg = (
        f"no simulated tool serves {method.upper()} {scheme}://{host}{path}; "
        f"expected {service.method} {service.spec.url} (tool {service.spec.name!r})"
    )
    raise NotServed(msg)


def _reply_headers(reply: Reply | ReadOk, retry_after: str | None) -> dict[str, str]:
    headers = {"Content-Type": reply.content_type}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    return headers


def parse_result(response: Any) -> Any:
    """Return the JSON result of a 2xx, or raise ``HTTPStatusError`` as the client does.

    The error's ``.response`` carries the status, the headers (``Retry-After``)
    and the body (JSON error, or HTML for an unparseable answer).
    """
    response.raise_for_status()
    return response.json()


def json_args(body: bytes, query: bytes | str = b"") -> dict[str, Any]:
    """A request's arguments: its JSON object body, else its query string, else ``{}``."""
    return request_args(body, query)


def block_on(loop: Any, coro: Coroutine[Any, Any, Any], *, what: str) -> Any:
    """From a baton thread, run ``coro`` on the run's loop and return what it returns.

    Sync clients block like this in virtual time; called anywhere else (the
    loop's own thread, a thread the run does not know) they cannot, and say so.
    """
    try:
        if loop is None:
            msg = "no run is going on"
            raise RuntimeError(msg)  # noqa: TRY301 (one message for both ways of being outside)
        if loop.baton.current() is None:
            msg = "wait_from_thread() called outside a baton thread"
            raise RuntimeError(msg)  # noqa: TRY301
        return loop.wait_from_thread(coro)
    except RuntimeError as exc:
        if inspect.getcoroutinestate(coro) != inspect.CORO_CREATED:
            raise
        coro.close()
        msg = (
            f"{what} blocks, so it works only in a sync controller's call (a plain "
            f"'def call', which runs on a thread of the run) ({exc}); from async code "
            "use env.http"
        )
        raise RuntimeError(msg) from None


def status_error_builder(cls: type[Exception]) -> Callable[..., Exception]:
    """``cls``, or a cheaper builder of the same ``cls(message, request=, response=)``.

    Three ``__init__`` levels store three things; the builder stores them itself, if a
    probe built both ways has the same args, state and text (placed after Family).
    """

    def build(message: str, *, request: Any, response: Any) -> Exception:
        exc = cls.__new__(cls, message)
        exc._request, exc.response = request, response  # type: ignore[attr-defined]  # noqa: SLF001
        return exc

    one, two = object(), object()
    made, built = cls("p", request=one, response=two), build("p", request=one, response=two)  # type: ignore[call-arg]
    same = made.args == built.args and list(vars(made).items()) == list(vars(built).items())
    return build if same and str(made) == str(built) else cls


HTTPX = Family("httpx", httpx)
HTTPX2 = Family("httpx2", httpx2)
_FAMILIES = {family.name: family for family in (HTTPX, HTTPX2)}
FAMILY_NAMES = tuple(_FAMILIES)
"""The families a controller may declare, default first."""


def family(name: str) -> Family:
    """The family called ``name``.

    Raises:
        ValueError: ``name`` is no family (the message names the families).
    """
    found = _FAMILIES.get(name) if isinstance(name, str) else None
    if found is None:
        msg = f"client_family={name!r} is no client family; expected one of: " + ", ".join(
            FAMILY_NAMES
        )
        raise ValueError(msg)
    return found


def declared_family(*declarers: Any) -> Family | None:
    """The family the first of ``declarers`` with a ``client_family`` declares (None: none does).

    Raises:
        ValueError: a declared name is no family.
    """
    for declarer in declarers:
        try:
            name = getattr(declarer, "client_family", None)
        except Exception as exc:  # a controller's own __getattr__ may raise anything
            msg = f"reading client_family raised {type(exc).__name__}"
            raise ValueError(msg) from exc
        if name is not None:
            return family(name)
    return None
