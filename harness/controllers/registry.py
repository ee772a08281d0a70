"""Finding the controller under test: built-in names or ``package.module:attr``."""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ClientFamilyError, ControllerLoadError
from ..world.families import HTTPX, Family, declared_family

if TYPE_CHECKING:
    from ..contract import Env

BUILTINS: dict[str, tuple[str, str]] = {
    "naive": (
        "retrychaos.controllers.naive:naive",
        "retries everything 3 more times at once, fresh key each try (the anti-pattern)",
    ),
    "reference": (
        "retrychaos.controller.plugin:reference",
        "this project's reference controller (async)",
    ),
    "reference-sync": (
        "retrychaos.controller.plugin:reference_sync",
        "the reference controller's sync facade",
    ),
    "tenacity-default": (
        "retrychaos.controllers.adapters.tenacity_default:factory",
        "tenacity as typically written: stop_after_attempt(3), no wait, retries everything",
    ),
    "tenacity-good": (
        "retrychaos.controllers.adapters.tenacity_good:factory",
        "tenacity as documented: wait_random_exponential, attempt | delay stop, transient only",
    ),
    "tenacity-sync": (
        "retrychaos.controllers.adapters.tenacity_sync:factory",
        "the tenacity-good policy with tenacity's sync Retrying",
    ),
    "stamina-default": (
        "retrychaos.controllers.adapters.stamina_default:factory",
        "stamina's defaults on httpx.HTTPError: 10 attempts, 45 s, jittered backoff",
    ),
    "stamina-tuned": (
        "retrychaos.controllers.adapters.stamina_tuned:factory",
        "stamina fitted to the contract, with a Retry-After backoff hook",
    ),
    "backoff-expo": (
        "retrychaos.controllers.adapters.backoff_expo:factory",
        "backoff.on_exception: expo, full_jitter, max_tries and max_time",
    ),
    "httpx-retries-default": (
        "retrychaos.controllers.adapters.httpx_retries_default:factory",
        "httpx-retries RetryTransport() defaults at the HTTP layer (backoff factor 0)",
    ),
    "httpx-retries-jitter": (
        "retrychaos.controllers.adapters.httpx_retries_jitter:factory",
        "httpx-retries with a backoff factor, full jitter and the contract's limits",
    ),
    "pybreaker-tenacity": (
        "retrychaos.controllers.adapters.pybreaker_tenacity:factory",
        "a pybreaker circuit breaker per tool inside tenacity-good's retries",
    ),
    "pybreaker-async": (
        "retrychaos.controllers.adapters.pybreaker_async:factory",
        "pybreaker's @breaker on an async def: the coroutine counts as a success (never trips)",
    ),
    "urllib3-retry": (
        "retrychaos.controllers.adapters.urllib3_retry:factory",
        "requests with urllib3's documented Retry(total=3, backoff 0.5, Retry-After uncapped)",
    ),
    "pydantic-ai": (
        "retrychaos.controllers.frameworks.pydantic_ai:factory",
        "a pydantic-ai Agent whose tool raises ModelRetry on failure (default retries)",
    ),
    "pydantic-ai-transport": (
        "retrychaos.controllers.frameworks.pydantic_ai_transport:factory",
        "a pydantic-ai agent's HTTP tool over AsyncHTTPX2TenacityTransport as its docs show",
    ),
    "openai-agents": (
        "retrychaos.controllers.frameworks.openai_agents:factory",
        "an openai-agents Agent with a @function_tool (defaults), run by Runner.run",
    ),
    "langgraph": (
        "retrychaos.controllers.frameworks.langgraph:factory",
        "a LangGraph agent graph, its ToolNode added with retry_policy=RetryPolicy()",
    ),
    "langgraph-requests": (
        "retrychaos.controllers.frameworks.langgraph_requests:factory",
        "the langgraph graph, its tool a sync def calling requests with raise_for_status()",
    ),
    "langchain-retry-middleware": (
        "retrychaos.controllers.frameworks.langchain:factory",
        "a LangChain v1 create_agent with ToolRetryMiddleware() defaults: 2 retries, any error",
    ),
    "mcp-session": (
        "retrychaos.controllers.mcp.session:factory",
        "a plain mcp ClientSession per attempt, the reference controller around call_tool",
    ),
    "openai-agents-mcp": (
        "retrychaos.controllers.mcp.openai_agents:OpenAiAgentsMcpController",
        "an openai-agents Agent on MCPServerStreamableHttp(max_retry_attempts=3)",
    ),
    "openai-agents-mcp-default": (
        "retrychaos.controllers.mcp.openai_agents:OpenAiAgentsMcpDefault",
        "an openai-agents Agent on MCPServerStreamableHttp at its defaults (no retries)",
    ),
    "pydantic-ai-mcp": (
        "retrychaos.controllers.mcp.pydantic_ai:PydanticAiMcpController",
        "a pydantic-ai Agent with an MCPToolset at its defaults (tool errors become ModelRetry)",
    ),
    "openai-sdk": (
        "retrychaos.controllers.frameworks.openai_sdk:factory",
        "the openai SDK's client.post to the tool, its default max_retries=2 (httpx2)",
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerRef:
    """A resolved controller: its display name, its import path and its factory."""

    name: str
    path: str
    factory: Any


def resolve(name: str) -> ControllerRef:
    """Resolve ``name`` (built in, or ``package.module:attr``) to a factory.

    Raises:
        ControllerLoadError: with a message naming what was wrong and what was expected.
    """
    if name in BUILTINS:
        path = BUILTINS[name][0]
    elif ":" in name:
        path = name
    else:
        known = ", ".join(sorted(BUILTINS))
        raise ControllerLoadError(
            f"unknown controller {name!r}: expected a built-in name ({known}) "
            "or an import path 'package.module:factory'"
        )
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ControllerLoadError(
            f"controller {name!r}: expected 'package.module:factory' with both parts non-empty"
        )
    try:
        module = _import_from_here(module_name)
    except ControllerLoadError:  # a built-in's own message: its framework is missing
        raise
    except ImportError as exc:
        raise ControllerLoadError(
            f"controller {name!r}: cannot import module {module_name!r} ({exc}); "
            "is it installed or on PYTHONPATH?"
        ) from exc
    except Exception as exc:
        raise ControllerLoadError(
            f"controller {name!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    factory = module
    for part in attr.split("."):
        if not hasattr(factory, part):
            raise ControllerLoadError(
                f"controller {name!r}: module {module_name!r} has no attribute {attr!r}; "
                "expected a factory 'def factory(env) -> controller'"
            )
        factory = getattr(factory, part)
    check_factory(name, factory)
    return ControllerRef(name=name, path=path, factory=factory)


def _import_from_here(module_name: str) -> Any:
    """Import ``module_name``, finding it in the working directory as pytest would.

    ``python -m pytest`` and pytest's rootdir handling make a project's own
    modules importable; a console script does not. Without this, the replay
    command a report prints for ``--controller myagent.retry:factory`` fails
    with "No module named 'myagent'" from the very folder it was printed in.
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        here = str(Path.cwd())
        top = module_name.partition(".")[0]
        if exc.name != top or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(module_name)


def check_factory(name: str, factory: Any) -> None:
    """Check that ``factory`` can be called as ``factory(env)``."""
    if not callable(factory):
        raise ControllerLoadError(
            f"controller {name!r}: {type(factory).__name__} object is not callable; "
            "expected a factory 'def factory(env) -> controller'"
        )
    try:
        inspect.signature(factory).bind(object())
    except TypeError as exc:
        raise ControllerLoadError(
            f"controller {name!r}: the factory cannot be called with one argument ({exc}); "
            "expected 'def factory(env) -> controller'"
        ) from exc
    except ValueError:  # builtins without a signature: let the call decide
        pass
    controller_family(name, factory)


def controller_family(name: str, *declarers: Any) -> Family:
    """The client family the first declarer declares (``client_family``); httpx if none does.

    Raises:
        ClientFamilyError: the declared name is no family (the message names them).
    """
    try:
        return declared_family(*declarers) or HTTPX
    except ValueError as exc:
        raise ClientFamilyError(f"controller {name!r}: {exc}") from None


def settle_family(controller: ControllerRef, instance: Any, env: Env) -> Family:
    """Check what the factory returned; the client family it speaks, which ``env`` adopts.

    The factory's declaration wins; the object's counts when the factory makes none.
    """
    check_controller(controller.name, instance)
    family = controller_family(controller.name, controller.factory, instance)
    env._adopt_family(family)  # noqa: SLF001 (the harness's own hook)
    return family


def check_controller(name: str, controller: Any) -> None:
    """Check what a factory returned: an object with ``call(tool, args, ctx)``."""
    call = getattr(controller, "call", None)
    if not callable(call):
        raise ControllerLoadError(
            f"controller {name!r}: the factory returned {type(controller).__name__}, which "
            "has no call() method; expected an object with "
            "'async def call(self, tool, args, ctx)' or 'def call(self, tool, args, ctx)'"
        )
    try:
        inspect.signature(call).bind(object(), object(), object())
    except TypeError as exc:
        raise ControllerLoadError(
            f"controller {name!r}: call() cannot take (tool, args, ctx) ({exc})"
        ) from exc
    except ValueError:
        return
