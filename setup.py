"""Builds the optional compiled engine when Cython and a C compiler are there.

The engine's Python modules (the list is in
``scorer/metric/engine/compiled_modules.py``) are copied to ``scorer/_compiled/``
at build time and compiled with Cython from that same code: annotations are not
used as C types, so the compiled code keeps Python's semantics, except where a
``.pxd`` beside the module declares C types (Cython's pure-Python mode:
``id_counts``, rule 1's counts on token ids, ``alignment``'s search and
``formula``'s figures, compiled with floating-point contraction off so that C
computes each figure as Python does); a ``.pxd`` copied by an earlier build
whose source has none now is removed.
CI checks the compiled engine against the pure one.

Each copy ends with one added line, ``__source_sha256__ = "<SHA-256 of the
source and its .pxd>"``, so the stamp is compiled into the module itself: a compile that
fails leaves the old module with its old stamp, and at import the stamp is
compared with the source beside it (a checkout edited after its build runs the
pure engine; ``scorer --version`` says why). Without a compiler the build goes
on and the package runs its pure-Python engine, which defines the metric (see
scorer/metric/engine/accelerator.py).
"""

import runpy
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "scorer"
ENGINE = PACKAGE / "metric" / "engine"  # the sources compiled
#: The compiled modules and their sources: the package's one list, read without importing the package.
_LIST = runpy.run_path(str(ENGINE / "compiled_modules.py"))
COMPILED, source_digest = _LIST["COMPILED"], _LIST["source_digest"]


class OptionalBuildExt(build_ext):
    """A failed compile is a warning, never a failed install."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # no compiler, no headers
            print(f"warning: the compiled engine was not built ({exc}); the pure-Python engine will be used")

    def build_extension(self, ext):
        if self.compiler.compiler_type in ("unix", "mingw32", "cygwin"):  # gcc, clang: no fused a * b + c
            ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
        try:
            super().build_extension(ext)
        except Exception as exc:
            self.__dict__.setdefault("failed", set()).add(ext.name)
            print(f"warning: {ext.name} was not built ({exc}); the pure-Python engine will be used")

    def copy_extensions_to_source(self):
        """In-place builds (editable installs) copy only the modules that were built: one that failed keeps
        whatever was there before, which then no longer matches its source and is not used."""
        every, failed = self.extensions, self.__dict__.get("failed", set())
        self.extensions = [ext for ext in every if ext.name not in failed]
        try:
            super().copy_extensions_to_source()
        finally:
            self.extensions = every


def _copy(data: bytes, target: Path) -> None:
    if not target.exists() or target.read_bytes() != data:  # an unchanged copy keeps its build
        target.write_bytes(data)


def _stamped_copy(source: str, folder: Path) -> None:
    """``source`` (and its ``.pxd``) copied into ``folder``, the source with one line added: the digest
    of both, which the compiled module then carries. A copied ``.pxd`` whose source has none is removed."""
    stamp = f'\n__source_sha256__ = "{source_digest(ENGINE, source)}"\n'.encode("ascii")
    _copy((ENGINE / source).read_bytes() + stamp, folder / source)
    pxd = (ENGINE / source).with_suffix(".pxd")
    if pxd.exists():
        _copy(pxd.read_bytes(), folder / pxd.name)
    else:  # a .pxd left from an earlier build would still give the copy its C types
        (folder / pxd.name).unlink(missing_ok=True)


def _copy_sources() -> list[Extension]:
    """The engine's sources copied, stamped, into scorer/_compiled; one extension each."""
    folder = PACKAGE / "_compiled"
    folder.mkdir(exist_ok=True)
    extensions = []
    for name, source in COMPILED.items():
        _stamped_copy(source, folder)
        extensions.append(Extension(f"scorer._compiled.{name}", [f"scorer/_compiled/{source}"]))
    return extensions


def extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is not installed; the pure-Python engine will be used")
        return []
    return cythonize(
        _copy_sources(), quiet=True, compiler_directives={"language_level": 3, "annotation_typing": False}
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
