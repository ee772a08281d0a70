"""The wheel, installed into a fresh venv, serves a user project that has its own harness/ and controller/.

One test, in steps (subtests) that share one build and one venv: building the
wheel and installing its dependencies from the package index is the costly
part. The editable-install step comes last: it replaces the wheel's files.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Sequence

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios"
PASSING = SHIPPED / "transient" / "burst-503-clears.yaml"
FAILING = SHIPPED / "ambiguous" / "commit-timeout-no-keys.yaml"
# A safety net against a hung child, far above what any step takes.
TIMEOUT_S = 900

pytestmark = pytest.mark.slow

RETRY = '''
"""The user's retry layer: the README's "Test your own controller" example."""

import asyncio
import random

import httpx

TRANSIENT = {429, 502, 503, 504}


class MyController:
    def __init__(self, env):
        self.env = env
        self.rng = random.Random(env.seed)

    async def call(self, tool, args, ctx):
        key = ctx.idempotency_key
        may_retry = not ctx.side_effect or (key is not None and ctx.idempotency_supported)
        for attempt in range(1, self.env.contract.max_attempts_per_call + 1):
            try:
                return await tool(args, idempotency_key=key)
            except httpx.HTTPStatusError as exc:
                status = exc.response.status_code
                if status in (400, 422):
                    error = exc.response.json().get("error", {})
                    return {
                        "ok": False,
                        "decision": "model_fix",
                        "code": error.get("code"),
                        "field": error.get("field"),
                        "allowed": error.get("allowed"),
                        "retryable_by_model": error.get("retryable_by_model", True),
                        "error": "fix the arguments",
                    }
                if status not in TRANSIENT or not may_retry:
                    return {"ok": False, "decision": "stop", "error": str(status)}
            except httpx.TransportError as exc:
                if not may_retry:
                    return {"ok": False, "decision": "manual_check", "error": repr(exc)}
            delay = min(
                self.env.contract.max_delay_s, self.env.contract.base_delay_s * 2 ** (attempt - 1)
            )
            delay += self.rng.uniform(0, 0.2 * delay)
            if self.env.clock.now() + delay > ctx.deadline:
                return {"ok": False, "decision": "deadline_exceeded", "error": "no time left"}
            await asyncio.sleep(delay)
        return {"ok": False, "decision": "budget_exhausted", "error": "out of attempts"}


def factory(env):
    return MyController(env)
'''

USER_TESTS = '''
"""The user's own tests: their packages named harness and controller are theirs."""

import harness
import controller
from myagent.retry import factory


def test_my_harness_is_mine():
    assert harness.WHO == "the user's harness"


def test_my_controller_is_mine():
    assert controller.WHO == "the user's controller"


def test_my_factory_imports():
    assert callable(factory)
'''

WHERE = """
import importlib.util, json, sys
import retrychaos, retrychaos.controller, retrychaos.scenarios
print(json.dumps({
    "harness": importlib.util.find_spec("harness") is not None,
    "controller": importlib.util.find_spec("controller") is not None,
    "retrychaos": retrychaos.__file__,
    "retrychaos.controller": retrychaos.controller.__file__,
    "root on sys.path": %r in sys.path,
}))
"""


def user_project(path: Path) -> Path:
    """A project with its own harness/, controller/ and myagent/retry.py, and tests of its own."""
    files = {
        "harness/__init__.py": 'WHO = "the user\'s harness"\n',
        "controller/__init__.py": 'WHO = "the user\'s controller"\n',
        "myagent/__init__.py": "",
        "myagent/retry.py": RETRY,
        "tests/test_mine.py": USER_TESTS,
        "chaos/burst-503-clears.yaml": PASSING.read_text(encoding="utf-8"),
        "regressions/commit-timeout-no-keys.yaml": FAILING.read_text(encoding="utf-8"),
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    }
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def environment(bin_dir: Path) -> dict[str, str]:
    """The environment of an activated venv, without this test session's own settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "COV_", "COVERAGE_"))
        and key not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
    }
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    return env


def run(
    args: Sequence[str | Path], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion, capturing its output."""
    return subprocess.run(  # noqa: PLW1510 - the callers assert the exit code with the output
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def explain(done: subprocess.CompletedProcess[str]) -> str:
    """The command, its exit code and its output, for an assertion message."""
    return f"$ {shlex.join(done.args)}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"


def scenario_names(*, mcp: bool = True) -> set[str]:
    """The names of the shipped scenarios (each file's ``name``); ``mcp=False``: not the mcp/ suite."""
    import yaml  # noqa: PLC0415

    return {
        yaml.safe_load(path.read_text(encoding="utf-8"))["name"]
        for path in SHIPPED.rglob("*.yaml")
        if mcp or path.parent.name != "mcp"
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Installed:
    """A wheel installed into a fresh venv, and the directories the steps run in."""

    wheel: Path
    bin_dir: Path
    env: dict[str, str]
    user: Path
    elsewhere: Path


@pytest.fixture
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel and install it, with pytest, into a venv outside the repository."""
    build = tmp_path_factory.mktemp("wheel")
    home = tmp_path_factory.mktemp("venv") / "venv"
    user = user_project(tmp_path_factory.mktemp("user-project"))
    assert ROOT not in home.parents
    assert ROOT not in user.parents
    built = run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", build, ROOT],
        build,
        dict(os.environ),
    )
    assert built.returncode == 0, explain(built)
    (wheel,) = build.glob("retrychaos-*.whl")
    venv.create(home, with_pip=True)
    env = environment(home / "bin")
    done = run([home / "bin" / "python", "-m", "pip", "install", wheel, "pytest"], user, env)
    assert done.returncode == 0, explain(done)
    return Installed(
        wheel=wheel,
        bin_dir=home / "bin",
        env=env,
        user=user,
        elsewhere=tmp_path_factory.mktemp("elsewhere"),
    )


def test_an_installed_wheel_serves_a_user_project(installed, subtests):
    """Built, installed in a fresh venv: plugin, list, bare run, replay; nothing but retrychaos."""
    wheel, bin_dir, env = installed.wheel, installed.bin_dir, installed.env
    user, elsewhere, python = installed.user, installed.elsewhere, installed.bin_dir / "python"

    with subtests.test("the wheel holds retrychaos and its dist-info, nothing else"):
        names = zipfile.ZipFile(wheel).namelist()
        tops = {name.split("/")[0] for name in names}
        assert tops == {"retrychaos", wheel.name.split("-py3")[0] + ".dist-info"}
        shipped = {
            f"retrychaos/scenarios/{p.relative_to(SHIPPED).as_posix()}"
            for p in SHIPPED.rglob("*.yaml")
        }
        assert shipped - set(names) == set()

    with subtests.test("pytest with the plugin runs the user's tests and a scenario"):
        done = run(
            [
                bin_dir / "pytest",
                "-p",
                "no:cacheprovider",
                "-v",
                "--retrychaos-scenarios",
                "chaos",
                "--retrychaos-controller",
                "myagent.retry:factory",
                "--retrychaos-seeds",
                "1",
            ],
            user,
            env,
        )
        assert done.returncode == 0, explain(done)
        passed = sorted(
            line.split(" ")[0] for line in done.stdout.splitlines() if " PASSED" in line
        )
        assert passed == [
            "chaos/burst-503-clears.yaml::burst-503-clears[seed1]",
            "tests/test_mine.py::test_my_controller_is_mine",
            "tests/test_mine.py::test_my_factory_imports",
            "tests/test_mine.py::test_my_harness_is_mine",
        ]

    with subtests.test("retrychaos list shows the shipped library"):
        done = run([bin_dir / "retrychaos", "list"], user, env)
        assert done.returncode == 0, explain(done)
        missing = {name for name in scenario_names() if f"/{name}" not in done.stdout}
        assert missing == set(), explain(done)

    with subtests.test("a bare retrychaos run runs the shipped library"):
        done = run([bin_dir / "retrychaos", "run"], user, env)
        assert done.returncode == 0, explain(done)
        (results,) = user.glob("reports/**/results.json")
        document = json.loads(results.read_text(encoding="utf-8"))
        # The wheel is installed without the MCP extra: the mcp/ suite is left out, and said so.
        assert {r["scenario"] for r in document["runs"]} == scenario_names(mcp=False)
        assert "left out the shipped library's 8 MCP scenario(s)" in done.stderr
        assert all(r["passed"] for r in document["runs"])

    with subtests.test("the replay command of a failing run works as printed"):
        done = run(
            [
                bin_dir / "retrychaos",
                "run",
                "regressions",
                "-c",
                "myagent.retry:factory",
                "--seed",
                "1",
                "--report",
                "failing",
            ],
            user,
            env,
        )
        assert done.returncode == 1, explain(done)
        document = json.loads((user / "failing" / "results.json").read_text(encoding="utf-8"))
        (failed,) = [r for r in document["runs"] if not r["passed"]]
        command = failed["replay"]
        assert command.startswith("retrychaos replay"), command
        # As printed: `retrychaos` is looked up on the PATH, which finds the venv's.
        assert shutil.which("retrychaos", path=env["PATH"]) == str(bin_dir / "retrychaos")
        replayed = run(shlex.split(command), user, env)
        assert replayed.returncode == 1, explain(replayed)
        first = failed["violations"][0]["invariant"]
        assert first in replayed.stdout, explain(replayed)
        assert "Traceback" not in replayed.stdout + replayed.stderr, explain(replayed)

    with subtests.test("an editable install exposes retrychaos alone"):
        editable = run([python, "-m", "pip", "install", "--no-deps", "-e", ROOT], elsewhere, env)
        assert editable.returncode == 0, explain(editable)
        done = run([python, "-c", WHERE % str(ROOT)], elsewhere, env)
        assert done.returncode == 0, explain(done)
        assert json.loads(done.stdout) == {
            "harness": False,
            "controller": False,
            "retrychaos": str(ROOT / "harness" / "__init__.py"),
            "retrychaos.controller": str(ROOT / "controller" / "__init__.py"),
            "root on sys.path": False,
        }
