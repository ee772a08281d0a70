"""The tool a controller calls: one attempt at a simulated service, bound to one invocation.

:class:`Tool` is what an async controller's ``call`` receives, :class:`SyncTool`
its face for a plain ``def call`` (it blocks in virtual time on a baton
thread). Both are part of the plug-in contract and are found there too
(:mod:`retrychaos.contract`). One call makes one attempt through the run's
transport ("direct" or "http"), plus the retries of the SDK layer under the
tool when the scenario has one (:mod:`retrychaos.world.sdk`). It raises what
a client of the controller's declared family raises (httpx's classes, or
httpx2's: :mod:`retrychaos.world.families`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .context import CURRENT_CALL, CallMeta
from .families import HTTPX
from .loop import sleep
from .sdk import ask_gate
from .transport import attempt_direct, attempt_http

if TYPE_CHECKING:
    from collections.abc import Callable

    from .families import Family
    from .loop import VirtualEventLoop
    from .sdk import SdkLayer
    from .services import Services
    from .spec import Contract, ToolSpec


class Tool:
    """One attempt at a tool, bound to the invocation it serves."""

    def __init__(
        self,
        *,
        spec: ToolSpec,
        services: Services,
        meta: CallMeta,
        contract: Contract,
        sdk: SdkLayer | None,
        transport: str,
        http: Callable[[], Any],
        family: Family = HTTPX,
    ) -> None:
        """Bind a tool to one invocation (the harness does this)."""
        self.spec = spec
        self.name = spec.name
        self.method = spec.method
        self.url = spec.url
        self.side_effect = spec.side_effect
        self.idempotency_supported = spec.idempotency
        self._services = services
        self._meta = meta
        self._contract = contract
        self._sdk = sdk
        self._transport = transport
        self._http = http
        self._family = family
        self.client_family = family.name
        """The client family whose exceptions this tool raises (``"httpx"`` or ``"httpx2"``)."""
        self._layer = "controller"

    def bound_to(self, meta: CallMeta) -> Tool:
        """The same tool, bound to another invocation (what the harness makes per call)."""
        tool: Tool = object.__new__(Tool)
        tool.__dict__ = state = self.__dict__.copy()  # one copy, the keys in their order
        state["_meta"] = meta
        return tool

    def _with_layer(self, layer: str) -> Tool:
        """The same tool, its attempts attributed to ``layer`` in the trace.

        ``"framework"`` marks a framework's own retry loop executing the tool
        again inside one invocation (the first execution stays ``"controller"``).
        """
        tool = self.bound_to(self._meta)
        tool._layer = layer  # noqa: SLF001 (a copy of this very class)
        return tool

    def build_request(self, args: dict[str, Any], idempotency_key: str | None = None) -> Any:
        """The HTTP request one attempt sends (for controllers that send it themselves).

        A ``Request`` of the controller's client family (httpx's or httpx2's).
        """
        return self._family.request(self.method, self.url, args, idempotency_key)

    async def __call__(
        self,
        args: dict[str, Any],
        idempotency_key: str | None = None,
        gate: Callable[[int, BaseException | None], bool] | None = None,
    ) -> Any:
        """Make one attempt (plus the SDK layer's retries, if the scenario has one).

        Returns the parsed JSON result or raises what the family's client raises.
        ``gate(attempt_number, error)`` is asked before each SDK-layer retry,
        with ``wait_s=`` (the layer's planned wait) when its signature accepts it.
        """
        if not isinstance(args, dict):  # a controller may pass anything: say what was expected
            msg = f"tool({self.name!r}) expected args to be a dict, got {type(args).__name__}"  # type: ignore[unreachable]
            raise TypeError(msg)
        sdk = self._sdk
        if sdk is None:  # no layer under the tool: one attempt, whatever it raises
            meta = self._meta
            if (
                self._transport == "direct"
                and meta.layer == self._layer == "controller"
                and CURRENT_CALL.get() is meta
            ):
                # What _once() does then, one coroutine less on every wait.
                return await attempt_direct(
                    self._services,
                    self.spec,
                    args,
                    idempotency_key,
                    meta,
                    self._contract.attempt_timeout_s,
                    self._family,
                )
            return await self._once(args, idempotency_key, self._layer)
        attempt = 1
        while True:
            layer = self._layer if attempt == 1 else "sdk"
            try:
                return await self._once(args, idempotency_key, layer)
            except self._family.errors as exc:
                if attempt > sdk.retries or not sdk.retryable(exc):
                    raise
                # Drawn before the gate is asked, so a gate taking ``wait_s`` sees it.
                wait_s = sdk.delay(attempt, exc, self._meta.rng)
                if gate is not None and not ask_gate(gate, attempt + 1, exc, wait_s=wait_s):
                    raise
                await sleep(wait_s)
                attempt += 1

    async def _once(self, args: dict[str, Any], key: str | None, layer: str) -> Any:
        meta = self._meta
        if meta.layer != layer:
            meta = CallMeta(
                agent=meta.agent,
                task=meta.task,
                call=meta.call,
                op=meta.op,
                rng=meta.rng,
                layer=layer,
                counts=meta.counts,
            )
        token = CURRENT_CALL.set(meta) if CURRENT_CALL.get() is not meta else None
        try:
            if self._transport == "http":
                return await attempt_http(
                    self._http(),
                    self.spec,
                    args,
                    idempotency_key=key,
                    timeout_s=self._contract.attempt_timeout_s,
                )
            return await attempt_direct(
                self._services,
                self.spec,
                args,
                idempotency_key=key,
                meta=meta,
                timeout_s=self._contract.attempt_timeout_s,
                family=self._family,
            )
        finally:
            if token is not None:
                CURRENT_CALL.reset(token)


class SyncTool:
    """The sync face of :class:`Tool`, for controllers whose ``call`` is a plain function."""

    def __init__(self, tool: Tool, loop: VirtualEventLoop) -> None:
        """Wrap an async tool for use from a baton thread."""
        self._tool = tool
        self._loop = loop
        self.name = tool.name
        self.method = tool.method
        self.url = tool.url
        self.side_effect = tool.side_effect
        self.idempotency_supported = tool.idempotency_supported
        self.client_family = tool.client_family
        self.build_request = tool.build_request

    def __call__(
        self,
        args: dict[str, Any],
        idempotency_key: str | None = None,
        gate: Callable[[int, BaseException | None], bool] | None = None,
    ) -> Any:
        """Make one attempt and block (in virtual time) until it ends."""
        return self._loop.wait_from_thread(self._tool(args, idempotency_key, gate))
