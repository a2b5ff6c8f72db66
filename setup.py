"""Build configuration beyond pyproject.toml: the solver's optional C search.

``solver/_solvercore.c`` is the solver's search loop in C, node for node the same as the
pure-Python ``solver.dfs._search`` (tests/solver/test_solvercore.py checks it). It
is optional: where no C compiler is found the build goes on without it and the solver
runs in pure Python, with the same verdicts for the same node budgets, only slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "solver._solvercore",
            sources=["solver/_solvercore.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
