"""The run's MCP server, started and stopped with the run, and the clients it hands out.

:class:`McpWorld` builds the SDK server for a scenario's MCP tools
(:mod:`retrychaos.mcp.server`), runs its streamable-HTTP session manager
on the run's virtual loop for the whole run, and makes the httpx2 clients
that reach it (:mod:`retrychaos.mcp.front`): a controller passes one to
``streamable_http_client(env.mcp_url, http_client=env.mcp_http_client())``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .require import require_mcp

if TYPE_CHECKING:
    from ..world.recorder import Recorder
    from ..world.services import Services
    from ..world.spec import Scenario

__all__ = ["MCP_URL", "McpWorld", "mcp_tools", "speaks_mcp", "start_serving"]

MCP_URL = "http://mcp.tools.test/mcp"
"""Where the run's MCP server answers (never resolvable outside a run)."""


def speaks_mcp(*declarers: Any) -> bool:
    """Whether the first declarer with a ``protocol`` attribute declares ``"mcp"``.

    A controller whose client speaks MCP only (an agent framework's MCP
    server object) declares ``protocol = "mcp"`` on its factory: the run then
    serves every tool of any scenario over MCP.
    """
    for declarer in declarers:
        protocol = getattr(declarer, "protocol", None)
        if protocol is not None:
            return bool(protocol == "mcp")
    return False


def mcp_tools(scenario: Scenario) -> list[str]:
    """The names of the scenario's tools served over MCP."""
    return [spec.name for spec in scenario.world.tools if spec.protocol == "mcp"]


class McpWorld:
    """The MCP server of one run, and its clients' transport."""

    def __init__(self, services: Services, names: list[str], recorder: Recorder) -> None:
        """Serve the tools ``names`` of ``services`` (the SDK must be installed)."""
        require_mcp("a run serving " + ", ".join(names))
        from mcp.server.transport_security import (  # noqa: PLC0415 (the optional extra)
            TransportSecuritySettings,
        )

        from .front import McpFront  # noqa: PLC0415 (imports the SDK)
        from .server import Tickets, build_server  # noqa: PLC0415

        self.names = tuple(names)
        by_name = {name: services.by_name[name] for name in names}
        tickets = Tickets()
        self.server = build_server([service.spec for service in by_name.values()], tickets)
        # The run's host is no localhost: the SDK's DNS-rebinding guard (on for
        # 127.0.0.1) would refuse it, and there is no network to guard.
        app = self.server.streamable_http_app(
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        self.front = McpFront(
            app,
            services=by_name,
            tickets=tickets,
            recorder=recorder,
            forget=self._forget,
            known=self._known,
        )
        self.url = MCP_URL

    def _known(self, session_id: str) -> bool:
        """Whether the server still has the session ``session_id``."""
        return session_id in self.server.session_manager._server_instances  # noqa: SLF001 (see _forget)

    async def _forget(self, session_id: str) -> None:
        """The server loses the session (as a restart does): its id answers 404 from now on."""
        manager = self.server.session_manager
        transport = manager._server_instances.get(session_id)  # noqa: SLF001 (the SDK keeps no public way)
        if transport is not None:
            await manager._discard_session(session_id, transport)  # noqa: SLF001

    async def start(self) -> None:
        """Run the session manager in a task of its own; return once it serves."""
        started = asyncio.Event()
        self._stop = asyncio.Event()

        async def run() -> None:
            async with self.server.session_manager.run():
                started.set()
                await self._stop.wait()

        self._task = asyncio.create_task(run())
        await started.wait()

    async def stop(self) -> None:
        """Stop the session manager (its open sessions end with it)."""
        self._stop.set()
        await self._task

    def http_client(self, *, timeout: Any = None, **kwargs: Any) -> Any:
        """A new ``httpx2.AsyncClient`` reaching the server (``timeout``: the client's own)."""
        import httpx2  # noqa: PLC0415 (only an MCP run gets here)

        return httpx2.AsyncClient(transport=self.front, timeout=timeout, **kwargs)


async def start_serving(
    scenario: Scenario, services: Services, recorder: Recorder, *, every_tool: bool = False
) -> McpWorld | None:
    """Start the scenario's MCP server on the running loop (None: it serves no tool).

    ``every_tool``: serve every tool over MCP (the controller speaks MCP
    only), not just those the scenario marks ``protocol: mcp``. The session
    manager runs in a task of its own until :meth:`McpWorld.stop` (or until
    the run's end cancels what is left).
    """
    names = [spec.name for spec in scenario.world.tools] if every_tool else mcp_tools(scenario)
    if not names:
        return None
    world = McpWorld(services, names, recorder)
    await world.start()
    return world
