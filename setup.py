"""Builds the optional compiled engine when Cython and a C compiler are there.

Two kinds of extension modules, both checked against the pure engine in CI:

* ``scorer/_compiled/{links,counting,alignment}``: the pure engine's own
  modules, copied here at build time and compiled unchanged (annotations are
  not used as C types, so the compiled code keeps Python's semantics);
* ``scorer/_compiled/_rule1``: a small Cython core of rule 1's counts on token
  ids, compiled from ``scorer/_rule1.pyx``.

Each copy ends with one added line, ``__source_sha256__ = "<SHA-256 of the
source>"``, so the stamp is compiled into the module itself: a compile that
fails leaves the old module with its old stamp, and at import the stamp is
compared with the source beside it (a checkout edited after its build runs the
pure engine; ``scorer --version`` says why). Without a compiler the build goes
on and the package runs its pure-Python engine, which defines the metric (see
scorer/metric/engine/accelerator.py).
"""
import hashlib
import runpy
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "scorer"
ENGINE = PACKAGE / "metric" / "engine"  # the sources compiled
#: The compiled modules and their sources: the package's one list, read without importing the package.
COMPILED = runpy.run_path(str(ENGINE / "compiled_modules.py"))["COMPILED"]


class OptionalBuildExt(build_ext):
    """A failed compile is a warning, never a failed install."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # no compiler, no headers
            print(f"warning: the compiled engine was not built ({exc}); the pure-Python engine will be used")

    def build_extension(self, ext):
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


def _stamped_copy(source: Path, target: Path) -> None:
    """``source`` with one line added: its SHA-256, which the compiled module then carries."""
    data = source.read_bytes()
    stamp = f'\n__source_sha256__ = "{hashlib.sha256(data).hexdigest()}"\n'.encode("ascii")
    if not target.exists() or target.read_bytes() != data + stamp:  # an unchanged copy keeps its build
        target.write_bytes(data + stamp)


def _copy_sources() -> list[Extension]:
    """The engine's sources copied, stamped, into scorer/_compiled; one extension each."""
    folder = PACKAGE / "_compiled"
    folder.mkdir(exist_ok=True)
    extensions = []
    for name, source in COMPILED.items():
        _stamped_copy(ENGINE / source, folder / source)
        extensions.append(Extension(f"scorer._compiled.{name}", [f"scorer/_compiled/{source}"]))
    return extensions


def extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is not installed; the pure-Python engine will be used")
        return []
    return cythonize(_copy_sources(), quiet=True,
                     compiler_directives={"language_level": 3, "annotation_typing": False})


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
