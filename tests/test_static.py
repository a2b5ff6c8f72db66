"""The source stays lint-clean and type-checked: ``ruff`` and ``mypy --strict`` as tests.

Run as part of the suite so that the README's single test command is the whole gate.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_check_is_clean() -> None:
    result = run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    # The files checked, and strictness, come from [tool.mypy] in pyproject.toml.
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def imported(package: str) -> list[tuple[str, str, str]]:
    """Every import in ``package``'s source: (file, line, the top-level package it names;
    ``""`` for a relative import). Imports inside functions count too."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line in path.read_text().splitlines():
            words = line.split()
            if words[:1] in (["import"], ["from"]) and len(words) > 1:
                found.append((path.name, line.strip(), words[1].split(".")[0]))
    return found


def test_protocol_is_pure() -> None:
    """``protocol`` imports no I/O, clock or event loop, and nothing from the packages
    built on it: server, client, the solver, the command line."""
    forbidden = ("asyncio", "socket", "websockets", "sqlalchemy", "time")
    forbidden += ("server", "client", "solver", "yukon")
    for name, line, top in imported("protocol"):
        assert top not in forbidden, f"{name}: {line}"


def test_protocol_loads_no_solver() -> None:
    """Importing every module of ``protocol`` loads nothing of the solver (which has a
    package of its own, built on ``protocol``) nor of the server, client or command line."""
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "protocol").rglob("*.py")
    )
    assert "protocol.messages.codec" in modules
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.split()
    assert "protocol.messages" in loaded
    ours = ("solver", "server", "client", "yukon")
    assert [m for m in loaded if "solver" in m or m.split(".")[0] in ours] == []


def test_solver_is_pure() -> None:
    """``solver`` is built on ``protocol`` alone: no I/O, no event loop, nothing from the
    server, client or command line (``solve`` takes its clock as an argument)."""
    forbidden = ("asyncio", "socket", "websockets", "sqlalchemy", "time")
    forbidden += ("server", "client", "yukon")
    tops = set()
    for name, line, top in imported("solver"):
        assert top not in forbidden, f"{name}: {line}"
        tops.add(top)
    assert "protocol" in tops


def test_client_never_imports_server() -> None:
    """The client is the rules and the wire: no server code, and no solver (hints come
    from the server)."""
    for name, line, top in imported("client"):
        assert top not in ("server", "solver"), f"{name}: {line}"


def client_modules_imported(name: str) -> set[str]:
    """The ``client`` modules that ``client/NAME.py`` (or every file of the package
    ``client/NAME/``) imports, wherever the import is: at the top, in a function, or under
    ``if TYPE_CHECKING``. ``client.screens.lobby`` counts as ``client.screens`` too."""
    package = ROOT / "client" / name
    paths = sorted(package.rglob("*.py")) if package.is_dir() else [package.with_suffix(".py")]
    found: set[str] = set()
    for path in paths:
        here = path.relative_to(ROOT).with_suffix("").parts[:-1]  # the file's package
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from .app import X, from ..chrome import Base
                    parent = ".".join(here[: len(here) - node.level + 1])
                    base = parent + (f".{node.module}" if node.module else "")
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
    prefixes = {".".join(m.split(".")[:i]) for m in found for i in range(1, m.count(".") + 2)}
    return {m for m in prefixes if m.split(".")[0] == "client"}


def test_client_imports_run_one_way() -> None:
    """app.py imports screens/, which imports widgets.py; never back, so each reads on
    its own. Screens and widgets reach the app as the ``Host`` of host.py; the chrome the
    screens share (chrome.py) and the player's page (player.py) import no screen."""
    never = {
        "widgets": {"client.screens", "client.chrome", "client.player", "client.app"},
        "screens": {"client.app"},
        "chrome": {"client.screens", "client.player", "client.app"},
        "player": {"client.screens", "client.app"},
        "host": {"client.widgets", "client.screens", "client.chrome", "client.app"},
    }
    for name, forbidden in never.items():
        wrong = client_modules_imported(name) & forbidden
        assert not wrong, f"client/{name}.py imports {sorted(wrong)}"
    assert "client.screens" in client_modules_imported("app")
    assert "client.widgets" in client_modules_imported("screens")


def test_every_package_is_installed() -> None:
    """A package left out of ``[tool.setuptools] packages`` works in an editable install
    (the tests' own) and is missing from a built one (a wheel, the Docker image): every
    directory with an ``__init__.py`` under the installed packages must be listed."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    tops = {name.split(".")[0] for name in listed}
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in tops
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages"
