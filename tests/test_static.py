"""The source stays lint-clean and type-checked: ``ruff`` and ``mypy --strict`` as tests.

Run as part of the suite so that the README's single test command is the whole gate.
"""

from __future__ import annotations

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


def test_protocol_is_pure() -> None:
    """``protocol`` imports no I/O, clock or event loop, and nothing from server or client."""
    forbidden = ("asyncio", "socket", "websockets", "sqlalchemy", "time", "server", "client")
    for path in (ROOT / "protocol").rglob("*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if words[:1] in (["import"], ["from"]) and len(words) > 1:
                top = words[1].split(".")[0]
                assert top not in forbidden, f"{path.name}: {line.strip()}"


def test_client_never_imports_server() -> None:
    for path in (ROOT / "client").rglob("*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if words[:1] in (["import"], ["from"]) and len(words) > 1:
                assert words[1].split(".")[0] != "server", f"{path.name}: {line.strip()}"
