"""Tests import the package from this source tree (python/), unless an installed copy
is asked for with TVMJIT_TEST_INSTALLED=1."""
import os
import sys

if not os.environ.get("TVMJIT_TEST_INSTALLED"):
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
