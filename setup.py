"""Builds the optional compiled core (scorer/_rule1.pyx) when Cython and a C compiler are there.

Without a compiler the build goes on and the package uses its pure-Python
engine, which defines the metric (see scorer/accelerator.py).
"""
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """A failed compile is a warning, never a failed install."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # no compiler, no headers
            print(f"warning: the compiled core was not built ({exc}); the pure-Python engine will be used")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(f"warning: {ext.name} was not built ({exc}); the pure-Python engine will be used")


def extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is not installed; the pure-Python engine will be used")
        return []
    return cythonize([Extension("scorer._rule1", ["scorer/_rule1.pyx"])], quiet=True)


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
