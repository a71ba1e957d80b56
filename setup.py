"""The one compiled part: the solver's search (``golf.engine.solitaire._search``), built from Cython at install.

Everything else is in pyproject.toml. The extension is optional: without a C compiler the install still succeeds
and ``golf.engine.solitaire.solver`` runs its pure Python search (the same search, much slower: its figure is in
bench/README.md).
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [
            Extension(
                "golf.engine.solitaire._search",
                ["service/golf/engine/solitaire/_search.pyx"],
                extra_compile_args=["-O2"],
                optional=True,
            )
        ],
        language_level=3,
    )
)
