"""The harness's shape: small modules, thin packages, real time in few places, one public API."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import retrychaos
from retrychaos import _exports, errors

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harness"
MODULES = sorted(HARNESS.rglob("*.py"))

MAX_LINES = 400
LONGER = {
    "runner.py": (
        455,
        "a case's whole life (world, workload, judging, three trace modes) in one place",
    ),
}
"""Modules allowed past MAX_LINES: the ceiling each may not pass, and why."""

REAL_TIME = {
    "cli.py": "the command line may read the system clock (report folder names)",
    "contract.py": "EnvClock.sleep_sync calls time.sleep, which a run patches to the virtual clock",
    "controllers/adapters/_tooling.py": "adapters are written as user code is: they read the "
    "time module, which a run patches",
    "cli/commands.py": "selftest reports the real seconds it took, never a decision",
    "controllers/selftest/planted.py": "planted bugs are written as user code is: they read "
    "the time module's local-time faces, which a run patches",
    "controllers/naive.py": "a deliberately naive controller, written as user code is: it "
    "draws from module-level random, which the run seeds",
    "matrix.py": "measures the real seconds a matrix took, for its progress line",
    "runner.py": "measures the real seconds a case took (wall_s in the report), never a decision",
    "world/loop.py": "sleep() falls back to asyncio.sleep off the virtual loop",
    "world/thread_waits.py": "the stdlib's waits outside a run's threads keep the real "
    "time.monotonic they were written against",
    "world/runtime.py": "seeds module-level random, so that controller code using it is "
    "deterministic",
    "world/timepatch.py": "patches the time module: it holds the real functions",
    "world/localtime.py": "sets the C library's time zone and patches the local-time faces",
    "world/watchdog.py": "measures real time to catch code that blocks the loop",
    "workers.py": "the parent's real-time limit per case (--case-timeout), never a decision",
}
"""Modules allowed to touch ``time``, ``asyncio.sleep`` or module-level ``random``, and why."""


def _relative(path: Path) -> str:
    return path.relative_to(HARNESS).as_posix()


def test_modules_stay_small():
    """Every harness module has at most 400 lines, or a listed reason and ceiling."""
    for path in MODULES:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        name = _relative(path)
        ceiling, _why = LONGER.get(name, (MAX_LINES, ""))
        assert lines <= ceiling, f"{name} has {lines} lines: expected at most {ceiling}"


@pytest.mark.parametrize("name", sorted(LONGER))
def test_every_listed_long_module_is_still_long(name):
    """A module on the long list is past the limit (a split module leaves the list)."""
    lines = len((HARNESS / name).read_text(encoding="utf-8").splitlines())
    assert lines > MAX_LINES, f"{name} has {lines} lines now: drop it from LONGER"


def _module_names(tree: ast.AST, module: str) -> set[str]:
    """The names ``module`` is bound to in ``tree`` (``import time``, ``import time as t``)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == module
    }


def _real_time_uses(tree: ast.AST) -> list[str]:
    """Each use of ``time.*``, ``asyncio.sleep`` or a module-level ``random`` function."""
    time_names = _module_names(tree, "time")
    asyncio_names = _module_names(tree, "asyncio")
    random_names = _module_names(tree, "random")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner, attr = node.value.id, node.attr
            if owner in time_names:
                found.append(f"time.{attr}")
            elif owner in asyncio_names and attr == "sleep":
                found.append("asyncio.sleep")
            elif owner in random_names and attr not in {"Random", "SystemRandom"}:
                found.append(f"random.{attr}")
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            for alias in node.names:
                if node.module == "time" or (node.module, alias.name) == ("asyncio", "sleep"):
                    found.append(f"from {node.module} import {alias.name}")
                if node.module == "random" and alias.name not in {"Random", "SystemRandom"}:
                    found.append(f"from random import {alias.name}")
    return found


def test_only_the_modules_that_own_real_time_touch_it():
    """``time``, ``asyncio.sleep`` and module-level ``random`` appear only in listed modules."""
    for path in MODULES:
        name = _relative(path)
        if name in REAL_TIME:
            continue
        uses = _real_time_uses(ast.parse(path.read_text(encoding="utf-8")))
        assert not uses, f"{name} uses {', '.join(uses)}: expected the virtual clock or an rng"


def test_the_real_time_check_sees_every_spelling():
    """The check finds attribute uses, from-imports and aliases, and lets ``random.Random`` be."""
    source = (
        "import time as t\nimport asyncio\nimport random\nfrom time import monotonic\n"
        "t.sleep(1)\nasyncio.sleep(0)\nrandom.random()\nrandom.Random(3)\n"
    )
    assert sorted(_real_time_uses(ast.parse(source))) == [
        "asyncio.sleep",
        "from time import monotonic",
        "random.random",
        "time.sleep",
    ]


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps ``__all__`` in: CONSTANTS, then Classes, then the rest."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _init_parts(path: Path) -> tuple[set[str], list[str] | None]:
    """What an ``__init__.py`` binds by import or annotation, and its ``__all__`` (None: none).

    Fails if the file holds anything but a docstring, imports, ``if TYPE_CHECKING:``
    blocks of imports and annotations, and ``__all__``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    first = tree.body[0] if tree.body else None
    assert isinstance(first, ast.Expr), f"{path}: expected a module docstring first"
    assert isinstance(first.value, ast.Constant), f"{path}: expected a module docstring first"
    names: set[str] = set()
    exported: list[str] | None = None
    statements = list(tree.body[1:])
    while statements:
        node = statements.pop(0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            assert not node.orelse, f"{path}: expected no else under TYPE_CHECKING"
            statements[:0] = node.body
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            assert isinstance(node.target, ast.Name)
            names.add(node.target.id)
        elif isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            exported = list(ast.literal_eval(node.value))
        else:
            pytest.fail(f"{path}:{node.lineno}: expected only imports and __all__, got {node}")
    return names - {"TYPE_CHECKING", "__dir__", "__getattr__"}, exported


@pytest.mark.parametrize("path", sorted(HARNESS.rglob("__init__.py")), ids=_relative)
def test_init_holds_a_docstring_imports_and_a_sorted_all(path):
    """An ``__init__.py`` holds a docstring, imports and a sorted ``__all__`` of them."""
    names, exported = _init_parts(path)
    if not names:
        assert exported is None, f"{path}: __all__ without imports"
        return
    assert exported is not None, f"{path}: expected __all__ listing {sorted(names)}"
    assert exported == sorted(exported, key=_isort_key), f"{path}: expected __all__ sorted"
    assert set(exported) == names, f"{path}: __all__ and the imported names differ"


def test_the_top_package_lists_what_it_loads_in_one_place():
    """``retrychaos.__all__`` is the sorted list of names ``retrychaos._exports`` loads."""
    assert retrychaos.__all__ == sorted(_exports.EXPORTS, key=_isort_key)
    tree = ast.parse((HARNESS / "__init__.py").read_text(encoding="utf-8"))
    typed = {
        alias.asname or alias.name: "." * node.level + (node.module or "")
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module != "_exports" and node.level
        for alias in node.names
    }
    assert typed == {
        name: where for name, where in _exports.EXPORTS.items() if name != "__version__"
    }


@pytest.mark.parametrize("name", retrychaos.__all__)
def test_public_names_exist_and_are_documented(name):
    """Every name in ``retrychaos.__all__`` loads, and each class or function has a docstring."""
    obj = getattr(retrychaos, name)
    if name == "__version__":
        assert obj == importlib.metadata.version("retrychaos")
        return
    assert inspect.isclass(obj) or inspect.isfunction(obj), name
    assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
    if inspect.isclass(obj):
        assert "__doc__" in vars(obj), f"{name} inherits its docstring"


def test_an_unknown_name_is_an_attribute_error():
    """``retrychaos.nope`` raises AttributeError naming the package and the name."""
    with pytest.raises(AttributeError) as caught:
        _ = retrychaos.nope  # type: ignore[attr-defined]
    assert str(caught.value) == "module 'retrychaos' has no attribute 'nope'"
    assert set(retrychaos.__all__) <= set(dir(retrychaos))


def test_importing_the_package_loads_nothing_heavy():
    """``import retrychaos`` loads no submodule but its export table, and no dependency."""
    code = (
        "import sys; before = set(sys.modules); import retrychaos; "
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(ast.literal_eval(out))
    assert {name for name in loaded if name.startswith("retrychaos")} == {
        "retrychaos",
        "retrychaos._exports",
    }
    heavy = {"httpx", "pydantic", "hypothesis", "yaml", "rich", "typer", "respx", "freezegun"}
    assert not loaded & heavy


def _harness_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in a harness module (all of them imported)."""
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(retrychaos.__path__, "retrychaos."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        found.extend(
            value
            for value in vars(module).values()
            if inspect.isclass(value)
            and issubclass(value, BaseException)
            and value.__module__ == info.name
        )
    return found


_DRAWN = re.compile(r"^(?P<lead>[ │]*)(?P<branch>[├└]── )?(?P<name>\w+)")


def _drawn_parents(doc: str) -> dict[str, str | None]:
    """Each class drawn in the docstring's trees, and the class drawn as its parent."""
    parents: dict[str, str | None] = {}
    stack: list[str] = []
    for line in doc.splitlines():
        match = _DRAWN.match(line)
        if match is None:
            continue
        column = match.start("name")
        if match["branch"] is None and column != 4:  # prose, or a note's continuation
            continue
        depth = (column - 4) // 4
        del stack[depth:]
        parents[match["name"]] = stack[-1] if stack else None
        stack.append(match["name"])
    return parents


def test_the_exception_tree_draws_every_exception_of_the_harness():
    """errors.py's docstring draws each harness exception under its real base class."""
    drawn = _drawn_parents(errors.__doc__ or "")
    exceptions = _harness_exceptions()
    assert errors.HarnessError in exceptions
    for cls in exceptions:
        assert cls.__name__ in drawn, f"{cls.__module__}.{cls.__name__} is not in the tree"
        base = cls.__bases__[0].__name__
        expected = None if cls is errors.HarnessError else base
        assert drawn[cls.__name__] == expected, f"{cls.__name__}: drawn under the wrong class"


_TOP_LEVEL = frozenset(
    {"harness", "controller", "scenarios", "tests", "reports", "docs", "benchmarks", "scripts"}
)
_PATH = re.compile(r"(?<![\w./<-])((?:[\w.-]+/)*[\w.-]+\.[a-z]+)\b")
CITING_ELSEWHERE: dict[str, str] = {}
"""Modules whose citations are checked elsewhere, with the reason (none today)."""


def _docstrings(tree: ast.AST) -> list[str]:
    return [
        node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]


def _cited(text: str) -> list[str]:
    """Paths a docstring cites: under a top-level folder, or an upper-case Markdown name."""
    cited = []
    for path in _PATH.findall(text):
        head, _, _ = path.partition("/")
        stem = Path(path).name
        if (
            ("/" in path and head in _TOP_LEVEL)
            or re.fullmatch(r"[A-Z][A-Z_]*\.md", stem)
            or path == "pyproject.toml"
        ):
            cited.append(path)
    return cited


def test_the_citation_check_reads_paths_and_names():
    """Cited: top-level paths, upper-case Markdown names, pyproject.toml; not output names."""
    text = "See docs/ci.md, DESIGN.md, shared/bench/WORKLOAD.md, pyproject.toml, results.json."
    assert _cited(text) == ["docs/ci.md", "DESIGN.md", "shared/bench/WORKLOAD.md", "pyproject.toml"]


def test_docstrings_cite_files_that_exist():
    """Every file a docstring cites exists in the repository (or next to the module)."""
    folders = ("harness", "controller", "tests", "benchmarks", "scripts")
    for path in sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in CITING_ELSEWHERE:
            continue
        for text in _docstrings(ast.parse(path.read_text(encoding="utf-8"))):
            for cited in _cited(text):
                assert (ROOT / cited).exists() or (path.parent / cited).exists(), (
                    f"{name} cites {cited}, which is not in the repository"
                )
