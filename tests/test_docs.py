"""The examples in the documentation run, so the docs stay true."""

from __future__ import annotations

import doctest
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_rules_doc_examples_run() -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)  # the examples read tests/data relative to the repository
    try:
        result = doctest.testfile(str(ROOT / "docs" / "rules.md"), module_relative=False)
    finally:
        os.chdir(cwd)
    assert result.attempted > 0
    assert result.failed == 0
