"""Every simulated service of a run, reached by URL host or by tool name."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from .service import SimulatedService

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .clock import VirtualClock
    from .context import CallMeta
    from .recorder import Recorder
    from .spec import Contract, ToolSpec


class Services:
    """Every simulated service of a run, reached by URL host or by tool name."""

    __slots__ = ("_by_host", "by_name", "direct")

    def __init__(
        self,
        specs: Iterable[ToolSpec],
        *,
        recorder: Recorder,
        clock: VirtualClock,
        contract: Contract,
    ) -> None:
        """Create one service per tool; tool names must be unique."""
        self.by_name: dict[str, SimulatedService] = {}
        self._by_host: dict[str, SimulatedService] = {}
        for spec in specs:
            if spec.name in self.by_name:
                msg = f"Expected unique tool names but got name={spec.name!r} twice"
                raise ValueError(msg)
            service = SimulatedService(spec, recorder=recorder, clock=clock, contract=contract)
            self.by_name[spec.name] = service
            self._by_host[httpx.URL(spec.base_url).host] = service
        # The tools a direct attempt may reach by name: exactly those a request
        # to the tool's URL reaches by host (the direct transport's shortcut).
        self.direct: dict[str, SimulatedService] = {
            name: service
            for name, service in self.by_name.items()
            if service.url is not None and self._by_host.get(service.url.host) is service
        }

    def __iter__(self) -> Iterator[SimulatedService]:
        """The services, in the order their tools were given."""
        return iter(self.by_name.values())

    def at_host(self, host: str) -> SimulatedService | None:
        """The service at ``host`` (None: no tool is served there)."""
        return self._by_host.get(host)

    def for_request(self, request: httpx.Request) -> SimulatedService:
        """The service at ``request``'s host.

        Raises:
            httpx.ConnectError: no tool is served at that host (as DNS would say).
        """
        service = self._by_host.get(request.url.host)
        if service is None:
            msg = f"[Errno -2] Name or service not known: {request.url.host!r} is no simulated tool"
            raise httpx.ConnectError(msg, request=request)
        return service

    async def handle(
        self, request: httpx.Request, meta: CallMeta | None, *, timeout_s: float
    ) -> httpx.Response:
        """Dispatch to the service at the request's host (see :meth:`SimulatedService.handle`)."""
        return await self.for_request(request).handle(request, meta, timeout_s=timeout_s)
