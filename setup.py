"""Builds the optional compiled engine when Cython and a C compiler are there.

Two kinds of extension modules, both checked against the pure engine in CI:

* ``scorer/_compiled/{links,counting,alignment}``: the pure engine's own
  modules, copied here at build time and compiled unchanged (annotations are
  not used as C types, so the compiled code keeps Python's semantics);
* ``scorer/_rule1``: a small Cython core of rule 1's counts on token ids.

``scorer/_compiled/sources.json`` records the SHA-256 of every compiled
source, so a checkout edited after its build runs the pure engine instead of
a stale compiled one (``scorer --version`` says so). Without a compiler the
build goes on and the package runs its pure-Python engine, which defines the
metric (see scorer/accelerator.py).
"""
import hashlib
import json
import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "scorer"
SAME_SOURCE = ("links", "counting", "alignment")  # must match scorer/accelerator.py


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
            print(f"warning: {ext.name} was not built ({exc}); the pure-Python engine will be used")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _copy_sources() -> list[Extension]:
    """The same-source modules copied into scorer/_compiled, and the record of what was compiled."""
    folder = PACKAGE / "_compiled"
    folder.mkdir(exist_ok=True)
    sources = {}
    extensions = []
    for name in SAME_SOURCE:
        shutil.copyfile(PACKAGE / f"{name}.py", folder / f"{name}.py")
        sources[f"{name}.py"] = _digest(PACKAGE / f"{name}.py")
        extensions.append(Extension(f"scorer._compiled.{name}", [f"scorer/_compiled/{name}.py"]))
    sources["_rule1.pyx"] = _digest(PACKAGE / "_rule1.pyx")
    (folder / "sources.json").write_text(json.dumps(sources, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return extensions + [Extension("scorer._rule1", ["scorer/_rule1.pyx"])]


def extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is not installed; the pure-Python engine will be used")
        return []
    return cythonize(_copy_sources(), quiet=True,
                     compiler_directives={"language_level": 3, "annotation_typing": False})


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
