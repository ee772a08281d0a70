import ast
import inspect
from pathlib import Path

import pytest

from retrychaos import controller

PACKAGE = Path(controller.__file__).parent


@pytest.mark.parametrize("name", controller.__all__)
def test_public_names_exist_and_are_documented(name):
    """Every exported class and function exists and has a docstring."""
    obj = getattr(controller, name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        assert inspect.getdoc(obj)


def test_init_holds_only_imports_and_all():
    """`__init__.py` holds the docstring, imports and `__all__`, nothing else."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    body = tree.body[1:]  # the module docstring
    assert all(isinstance(node, ast.ImportFrom | ast.Import | ast.Assign) for node in body)
    assigns = [node for node in body if isinstance(node, ast.Assign)]
    assert [target.id for node in assigns for target in node.targets] == ["__all__"]


def _imports_the_harness(name: str) -> bool:
    return name.split(".", maxsplit=1)[0] in {"harness", "retrychaos"} and not name.startswith(
        "retrychaos.controller"
    )


def test_controller_never_imports_the_harness():
    """No module of the controller package imports the harness, by any path."""
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, path.name  # `from ..` would reach retrychaos
                assert not _imports_the_harness(node.module or ""), path.name
            if isinstance(node, ast.Import):
                assert not any(_imports_the_harness(a.name) for a in node.names), path.name


def test_only_the_clock_module_touches_real_time():
    """`time`, `asyncio.sleep` and module-level `random` calls appear only in clock.py."""
    for path in PACKAGE.glob("*.py"):
        if path.name == "clock.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "import time" not in text, path.name
        assert "asyncio.sleep" not in text, path.name
        assert "random.random(" not in text, path.name
        assert "random.uniform(" not in text, path.name


def test_modules_stay_small():
    """Each module stays around 400 lines or fewer."""
    for path in PACKAGE.glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 400, path.name
