"""Each client family: tool() raises its classes, env hands out its clients, requests retries."""

from __future__ import annotations

import pickle
import time
from typing import Any

import httpx
import httpx2
import pytest
import requests
from urllib3.util.retry import Retry

from retrychaos.testing import VirtualWorld
from retrychaos.world.families import (
    HTTPX,
    HTTPX2,
    NotServed,
    declared_family,
    family,
    status_error_builder,
)
from retrychaos.world.sdk import SdkLayer
from retrychaos.world.tool import Tool

MODULES = {"httpx": httpx, "httpx2": httpx2}
OTHER = {"httpx": httpx2, "httpx2": httpx}

FAULTS = {
    "status": (
        {"fault": "status", "status": 503, "retry_after": {"seconds": 4}},
        "HTTPStatusError",
    ),
    "connect_error": ({"fault": "connect_error"}, "ConnectError"),
    "connect_timeout": ({"fault": "connect_timeout"}, "ConnectTimeout"),
    "read_timeout": ({"fault": "read_timeout"}, "ReadTimeout"),
    "reset_after_commit": ({"fault": "reset_after_commit"}, "ReadError"),
}


def world_with(*faults: dict[str, Any], method: str = "GET", **tool: Any) -> VirtualWorld:
    """A world of one tool, ``weather`` (answering at once), failing as ``faults`` say."""
    spec = {"name": "weather", "method": method, "path": "/v1/weather", "faults": list(faults)}
    return VirtualWorld([{**spec, "latency_s": 0, **tool}], contract={"attempt_timeout_s": 5})


class Catches:
    """A controller of one family: one attempt, returning what it raised."""

    def __init__(self, name: str) -> None:
        self.client_family = name

    async def call(self, tool: Any, args: Any, ctx: Any) -> Any:
        try:
            return await tool(args)
        except Exception as exc:
            return exc


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_tool_raises_the_declared_familys_classes(name: str, fault: str) -> None:
    """Every failure is the family's exception, carrying the family's request."""
    rule, expected = FAULTS[fault]
    hx = MODULES[name]

    async def main(session: Any) -> Any:
        return await session.call(Catches(name), "weather", {"city": "Lyon"})

    exc = world_with(rule).run(main)
    assert type(exc) is getattr(hx, expected)
    assert not isinstance(exc, OTHER[name].HTTPError)
    assert type(exc.request) is hx.Request
    assert str(exc.request.url) == "http://weather.tools.test/v1/weather"


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
def test_a_status_error_carries_the_familys_response(name: str) -> None:
    """Status, Retry-After, JSON body and the message raise_for_status() gives."""
    hx = MODULES[name]

    async def main(session: Any) -> Any:
        return await session.call(Catches(name), "weather", {"city": "Lyon"})

    exc = world_with(FAULTS["status"][0]).run(main)
    assert type(exc.response) is hx.Response
    assert exc.response.status_code == 503
    assert exc.response.headers["Retry-After"] == "4"
    assert exc.response.request is exc.request
    assert exc.response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert str(exc) == (
        "Server error '503 Service Unavailable' for url 'http://weather.tools.test/v1/weather'\n"
        "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503"
    )


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
def test_unusual_arguments_take_the_long_way_in_the_family(name: str) -> None:
    """Non-ASCII arguments are encoded by the family's own Request; the error is its own."""
    hx = MODULES[name]

    async def main(session: Any) -> Any:
        return await session.call(Catches(name), "weather", {"city": "Zürich"})

    exc = world_with({"fault": "status", "status": 500}).run(main)
    assert type(exc) is hx.HTTPStatusError
    assert type(exc.response) is hx.Response
    assert exc.request.content == '{"city":"Zürich"}'.encode()


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
def test_build_request_gives_the_familys_request(name: str) -> None:
    """tool.build_request() and tool.client_family follow the declaration."""

    async def main(session: Any) -> Any:
        tool = session.tool("weather", client_family=name)
        return tool.client_family, tool.build_request({"city": "Lyon"}, "ik-1")

    declared, request = world_with().run(main)
    assert declared == name
    assert type(request) is MODULES[name].Request
    assert request.headers["Idempotency-Key"] == "ik-1"


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
def test_the_sdk_layer_retries_either_familys_errors(name: str) -> None:
    """Under an httpx2 controller too, the layer retries a 503 and raises the last one."""
    hx = MODULES[name]

    async def main(session: Any) -> Any:
        spec = session.services.by_name["weather"].spec
        model = session.tool("weather", client_family=name)
        tool = Tool(
            spec=spec,
            services=session.services,
            meta=model._meta,
            contract=session.world.contract,
            sdk=SdkLayer(retries=2),
            transport="direct",
            http=lambda: session.env.http,
            family=family(name),
        )
        try:
            await tool({"city": "Lyon"})
        except Exception as exc:
            return exc
        return None

    world = world_with({"fault": "status", "status": 503})
    exc = world.run(main)
    assert type(exc) is hx.HTTPStatusError
    assert [e.data["layer"] for e in world.requests()] == ["controller", "sdk", "sdk"]


class HttpLayer:
    """A controller sending through env.http, or through its own client on env.transport."""

    def __init__(self, env: Any, name: str, *, own_client: bool) -> None:
        self.env = env
        self.client_family = name
        self.own_client = own_client

    async def call(self, tool: Any, args: Any, ctx: Any) -> Any:
        hx = MODULES[self.client_family]
        if self.own_client:
            async with hx.AsyncClient(transport=self.env.transport) as client:
                response = await client.get(tool.url, params=args)
        else:
            response = await self.env.http.get(tool.url, params=args)
        return type(self.env.http), type(self.env.transport), response.status_code


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
@pytest.mark.parametrize("own_client", [False, True])
def test_env_http_and_transport_are_the_familys(name: str, own_client: bool) -> None:
    """env.http is the family's AsyncClient; a client built on env.transport reaches the tool."""
    hx = MODULES[name]

    async def main(session: Any) -> Any:
        return await session.call(
            HttpLayer(session.env, name, own_client=own_client), "weather", {"city": "Lyon"}
        )

    world = world_with({"fault": "status", "status": 502})
    assert world.run(main) == (hx.AsyncClient, hx.MockTransport, 502)
    assert len(world.requests("weather")) == 1


class SyncHttp:
    """A sync controller sending through env.sync_http."""

    def __init__(self, env: Any, name: str) -> None:
        self.env = env
        self.client_family = name

    def call(self, tool: Any, args: Any, ctx: Any) -> Any:
        hx = MODULES[self.client_family]
        with hx.Client(transport=self.env.sync_transport) as own:
            first = own.get(tool.url, params=args).status_code
        started = time.monotonic()
        second = self.env.sync_http.get(tool.url, params=args).status_code
        return type(self.env.sync_http), first, second, round(time.monotonic() - started, 3)


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
def test_env_sync_http_blocks_in_virtual_time(name: str) -> None:
    """The sync client and transport are the family's; an attempt takes the tool's latency."""
    hx = MODULES[name]

    async def main(session: Any) -> Any:
        return await session.call(SyncHttp(session.env, name), "weather", {"city": "Lyon"})

    world = world_with({"fault": "status", "status": 503, "attempts": [1]}, latency_s=0.25)
    assert world.run(main) == (hx.Client, 503, 200, 0.25)


def test_env_sync_http_from_async_code_says_where_it_works() -> None:
    """On the loop's own thread it cannot block: the message names env.http instead."""

    async def main(session: Any) -> Any:
        with pytest.raises(RuntimeError) as caught:
            session.env.sync_http.get("http://weather.tools.test/v1/weather")
        return str(caught.value)

    assert world_with().run(main) == (
        "env.sync_http (httpx) blocks, so it works only in a sync controller's call (a plain "
        "'def call', which runs on a thread of the run) (wait_from_thread() called outside a "
        "baton thread); from async code use env.http"
    )


class Urllib3Retry:
    """A sync controller whose retries are urllib3's own, as its documentation configures them."""

    def __init__(self, env: Any, retry: Retry | None, method: str = "get") -> None:
        self.session = env.requests_session(retries=retry)
        self.method = method

    def call(self, tool: Any, args: Any, ctx: Any) -> Any:
        started = time.monotonic()
        try:
            response = self.session.request(self.method, tool.url, json=args, timeout=5)
        except requests.RequestException as exc:
            return type(exc).__name__, round(time.monotonic() - started, 3)
        return response.status_code, round(time.monotonic() - started, 3)


RETRY = Retry(
    total=3,
    backoff_factor=0.5,
    status_forcelist=[429, 500, 502, 503, 504],
    respect_retry_after_header=True,
)


def run_sync(world: VirtualWorld, retry: Retry | None, method: str = "get") -> Any:
    """Call ``weather`` once through :class:`Urllib3Retry`."""

    async def main(session: Any) -> Any:
        controller = Urllib3Retry(session.env, retry, method)
        return await session.call(controller, "weather", {"city": "Lyon"})

    return world.run(main)


def test_a_session_without_retries_makes_one_attempt() -> None:
    """A session without retries (requests' default) makes one attempt: the 503 comes back."""
    world = world_with({"fault": "status", "status": 503})
    assert run_sync(world, None) == (503, 0.0)
    assert len(world.requests("weather")) == 1


def test_urllib3_retry_sleeps_retry_after_on_the_virtual_clock() -> None:
    """Two 503s with Retry-After: 30 s: urllib3 waits 30 s twice, in no real time."""
    world = world_with(
        {"fault": "status", "status": 503, "retry_after": {"seconds": 30}, "attempts": [1, 2]}
    )
    assert run_sync(world, RETRY) == (200, 60.0)
    assert [e.at for e in world.requests("weather")] == [0.0, 30.0, 60.0]


def test_urllib3_retry_reads_a_retry_after_date_with_the_run_s_wall_clock() -> None:
    """An HTTP-date 20 s ahead is a 20 s wait (whole seconds, as the header has them)."""
    world = world_with(
        {"fault": "status", "status": 429, "retry_after": {"date_in_s": 20}, "attempts": [1]}
    )
    assert run_sync(world, RETRY) == (200, 20.0)


def test_urllib3_retry_backs_off_and_gives_up_with_its_own_error() -> None:
    """No Retry-After: urllib3 2 waits 0 s, 1 s, 2 s, then requests raises RetryError."""
    world = world_with({"fault": "status", "status": 502})
    assert run_sync(world, RETRY) == ("RetryError", 3.0)
    assert [e.at for e in world.requests("weather")] == [0.0, 0.0, 1.0, 3.0]


def test_urllib3_does_not_retry_a_post_by_default() -> None:
    """POST is not in Retry's allowed_methods: one attempt, whatever the forcelist says."""
    world = world_with({"fault": "status", "status": 503}, method="POST")
    assert run_sync(world, RETRY, "post") == (503, 0.0)


def test_urllib3_retries_connection_errors_and_timeouts() -> None:
    """A refused connection, then a 5 s read timeout, each retried; the third attempt answers."""
    world = world_with(
        {"fault": "connect_error", "attempts": [1]}, {"fault": "read_timeout", "attempts": [2]}
    )
    assert run_sync(world, RETRY) == (200, 6.0)
    reached = [e.data["reached"] for e in world.events if e.kind == "request"]
    assert reached == [False, True, True]


def test_a_session_reaching_no_tool_fails_as_dns_would() -> None:
    """An unknown host is a ConnectionError, and nothing leaves the run."""

    class Elsewhere:
        def __init__(self, env: Any) -> None:
            self.session = env.requests_session()

        def call(self, tool: Any, args: Any, ctx: Any) -> Any:
            try:
                self.session.get("https://example.com/")
            except requests.ConnectionError as exc:
                return str(exc)
            return None

    async def main(session: Any) -> Any:
        return await session.call(Elsewhere(session.env), "weather", {})

    message = world_with().run(main)
    assert "Failed to resolve 'example.com'" in message


def test_a_declared_family_is_read_from_the_first_declarer() -> None:
    """The factory's declaration wins over the object's; none declared is None."""

    class Factory:
        client_family = "httpx2"

    class Plain:
        pass

    assert declared_family(Factory, Plain()) is HTTPX2
    assert declared_family(Plain(), Factory) is HTTPX2
    assert declared_family(Plain) is None
    assert family("httpx") is HTTPX


@pytest.mark.parametrize("value", ["requests", "HTTPX", 2])
def test_an_unknown_family_names_the_families(value: Any) -> None:
    """The message says what was declared and what is expected."""
    with pytest.raises(ValueError, match="expected one of: httpx, httpx2") as caught:
        family(value)
    assert str(caught.value) == (
        f"client_family={value!r} is no client family; expected one of: httpx, httpx2"
    )


def test_a_raising_client_family_attribute_is_reported() -> None:
    """A __getattr__ that raises is a ValueError naming what it raised."""

    class Odd:
        def __getattr__(self, name: str) -> Any:
            raise KeyError(name)

    with pytest.raises(ValueError, match="client_family") as caught:
        declared_family(Odd())
    assert str(caught.value) == "reading client_family raised KeyError"


NOT_SERVED = (
    "no simulated tool serves POST http://weather.tools.test/v2/other; "
    "expected GET http://weather.tools.test/v1/weather (tool 'weather')"
)


def test_httpx2s_transport_refuses_what_no_tool_serves() -> None:
    """A wrong path at a tool's host is not silently answered (as respx refuses it for httpx)."""

    async def main(session: Any) -> Any:
        session.env._adopt_family(HTTPX2)
        with pytest.raises(NotServed) as caught:
            await session.env.http.post("http://weather.tools.test/v2/other")
        return str(caught.value)

    world = world_with()
    assert world.run(main) == NOT_SERVED
    assert world.requests() == []


def test_a_session_refuses_what_no_tool_serves() -> None:
    """The same refusal from a requests session; nothing reaches the service."""

    class WrongPath:
        def __init__(self, env: Any) -> None:
            self.session = env.requests_session(retries=RETRY)

        def call(self, tool: Any, args: Any, ctx: Any) -> Any:
            try:
                self.session.post("http://weather.tools.test/v2/other")
            except NotServed as exc:
                return str(exc)
            return None

    async def main(session: Any) -> Any:
        return await session.call(WrongPath(session.env), "weather", {})

    world = world_with()
    assert world.run(main) == NOT_SERVED
    assert world.requests() == []


@pytest.mark.parametrize("name", ["httpx", "httpx2"])
def test_a_built_status_error_is_the_one_the_class_makes(name: str) -> None:
    """Same type, args, state (in order), text, traceback-free pickle; the builder is in use."""
    hx = MODULES[name]
    built_by = family(name).status_error
    assert built_by is not hx.HTTPStatusError  # the library's __init__ only stores: built
    request = hx.Request("GET", "http://weather.tools.test/v1/weather")
    response = hx.Response(503, request=request)
    made = hx.HTTPStatusError("Server error", request=request, response=response)
    built = built_by("Server error", request=request, response=response)
    assert type(built) is hx.HTTPStatusError
    assert built.args == made.args == ("Server error",)
    assert list(vars(built).items()) == list(vars(made).items())
    assert built.request is request
    assert built.response is response
    assert str(built) == str(made)
    assert pickle.dumps(built) == pickle.dumps(made)


def test_a_status_error_whose_init_does_more_keeps_its_class() -> None:
    """The builder is used only when it gives what the class's own __init__ gives."""

    class Counting(httpx.HTTPStatusError):
        def __init__(self, message: str, *, request: Any, response: Any) -> None:
            super().__init__(message, request=request, response=response)
            self.extra = 1

    class Odd(httpx.HTTPStatusError):
        def __init__(self, message: str, *, request: Any, response: Any) -> None:
            super().__init__(message.upper(), request=request, response=response)

    assert status_error_builder(Counting) is Counting
    assert status_error_builder(Odd) is Odd
    assert status_error_builder(httpx.HTTPStatusError) is not httpx.HTTPStatusError
