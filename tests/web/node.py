"""Running Node for the tests of the browser client's JavaScript (``server/pages/web/``).

Node is found on ``PATH``. Without it a test is skipped on a developer's machine, but under
``CI=true`` it fails: CI must prove the JavaScript, not skip it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WEB = ROOT / "server" / "pages" / "web"


def node_binary() -> str:
    """The path of ``node``; skips the test (fails it under ``CI=true``) when there is none."""
    node = shutil.which("node")
    if node is None:
        message = "node is not on PATH: the browser client's JavaScript cannot be tested"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return node


def run_node(script: Path, payload: Any, timeout: float = 60) -> Any:
    """Run ``script`` with ``payload`` as JSON on stdin; return the JSON it prints."""
    result = subprocess.run(
        [node_binary(), str(script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert result.returncode == 0, f"{script.name} failed:\n{result.stderr}"
    return json.loads(result.stdout)
