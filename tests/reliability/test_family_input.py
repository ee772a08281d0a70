"""Bad input about client families: exit 2 before anything runs, or the run's own failure."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

import pytest

from retrychaos.scenario.library import library_path

if TYPE_CHECKING:
    from pathlib import Path

SCENARIO = library_path() / "transient" / "burst-503-clears.yaml"

FAMILIES = """
import httpx2


class Loud(Exception):
    def __str__(self):
        raise RuntimeError("no text")

    def __repr__(self):
        raise RuntimeError("no repr")


class ClassDeclares:
    client_family = "requests"

    def __init__(self, env):
        pass

    async def call(self, tool, args, ctx):
        return await tool(args)


def function_declares(env):
    return ClassDeclares(env)


function_declares.client_family = "httpx3"


class Plain:
    def __init__(self, family):
        self.client_family = family

    async def call(self, tool, args, ctx):
        return await tool(args)


def object_declares(env):
    return Plain("curl")


class LoudHttpx:
    def __init__(self, env):
        pass

    async def call(self, tool, args, ctx):
        try:
            return await tool(args, idempotency_key=ctx.idempotency_key)
        except Exception as exc:
            raise Loud() from exc


class LoudHttpx2(LoudHttpx):
    client_family = "httpx2"
"""


@pytest.fixture
def families(tmp_path: Path) -> Path:
    """A project: controllers declaring families, one scenario on each transport."""
    (tmp_path / "families.py").write_text(textwrap.dedent(FAMILIES))
    folder = tmp_path / "scenarios"
    folder.mkdir()
    text = SCENARIO.read_text()
    (folder / "direct.yaml").write_text(text)
    name = text.split("\n", 1)[0]
    (folder / "http.yaml").write_text(
        text.replace(name, f"{name}-http\ntransport: http", 1), encoding="utf-8"
    )
    return tmp_path


@pytest.mark.parametrize(
    ("controller", "declared"),
    [("families:ClassDeclares", "'requests'"), ("families:function_declares", "'httpx3'")],
)
def test_a_factory_declaring_an_unknown_family_exits_2(
    families: Path, cli, controller: str, declared: str
) -> None:
    """Declared on the factory (a class attribute, a function's attribute): refused before running."""
    result = cli("run", "scenarios", "-c", controller, "--report", "out", cwd=families)
    assert result.returncode == 2, result.stdout
    assert result.stderr == (
        f"error: controller {controller!r}: client_family={declared} is no client family; "
        "expected one of: httpx, httpx2\n"
    )
    assert not (families / "out").exists()


def test_an_object_declaring_an_unknown_family_exits_2(families: Path, cli) -> None:
    """Known only once the factory has run: each run fails with the message, said once, exit 2."""
    result = cli(
        "run",
        "scenarios",
        "-c",
        "families:object_declares",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=families,
    )
    message = (
        "controller 'families:object_declares': "
        "client_family='curl' is no client family; expected one of: httpx, httpx2"
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"error: {message}\n"
    assert result.stdout.count(f"error:      ClientFamilyError: {message}\n") == 2
    document = json.loads((families / "out" / "results.json").read_text(encoding="utf-8"))
    assert [run["error_kind"] for run in document["runs"]] == ["input", "input"]


def test_replay_of_an_object_declaring_an_unknown_family_exits_2(families: Path, cli) -> None:
    """`retrychaos replay` of such a controller exits 2 too, the run's error naming the families."""
    result = cli(
        "replay",
        "--scenario",
        "burst-503-clears",
        "--controller",
        "families:object_declares",
        "--seed",
        "1",
        "scenarios",
        cwd=families,
    )
    assert result.returncode == 2, result.stderr
    assert (
        "run failed: ClientFamilyError: controller 'families:object_declares': "
        "client_family='curl' is no client family; expected one of: httpx, httpx2\n"
    ) in result.stdout


def test_an_exception_whose_str_raises_is_the_runs_failure(families: Path, cli) -> None:
    """Either family, either transport: the run fails (exit 1), never a harness error (3)."""
    result = cli(
        "run",
        "scenarios",
        "-c",
        "families:LoudHttpx",
        "-c",
        "families:LoudHttpx2",
        "--seed",
        "1",
        "--report",
        "out",
        cwd=families,
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    document = json.loads((families / "out" / "results.json").read_text(encoding="utf-8"))
    seen = {(r["controller"], r["scenario"]): r for r in document["runs"]}
    assert len(seen) == 4
    for run in seen.values():
        assert run["error_kind"] is None, run["error"]
        assert run["passed"] is False
        assert run["traceback"].endswith("families.Loud: <exception str() failed>")
    httpx2_trace = seen["families:LoudHttpx2", "burst-503-clears-http"]["traceback"]
    assert "httpx2.HTTPStatusError: Server error '503 Service Unavailable'" in httpx2_trace
    httpx_trace = seen["families:LoudHttpx", "burst-503-clears"]["traceback"]
    assert "httpx.HTTPStatusError: Server error '503 Service Unavailable'" in httpx_trace
    assert "httpx2" not in httpx_trace
