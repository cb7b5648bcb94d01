"""Packs the tvmjit shared library built by ../setup.sh into the package, so that an
installed `tvmjit` needs neither the build tree nor LD_LIBRARY_PATH:

    ./setup.sh && pip install --no-index --no-build-isolation ./python

TVMJIT_BUILD_DIR names another build folder (default ../build)."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def built_library():
    build_dir = os.environ.get("TVMJIT_BUILD_DIR", os.path.join(HERE, "..", "build"))
    path = os.path.join(build_dir, "libtvmjit.so")
    if not os.path.exists(path):
        raise SystemExit(f"tvmjit: {path} does not exist: build tvmjit first (./setup.sh), "
                         "or set TVMJIT_BUILD_DIR to the build folder")
    return os.path.realpath(path)


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        shutil.copyfile(built_library(), os.path.join(self.build_lib, "tvmjit", "libtvmjit.so"))


setup(cmdclass={"build_py": BuildPyWithLibrary})
