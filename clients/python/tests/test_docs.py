"""The examples in the docstrings run (those that need a server are marked to skip, and the README's example
is run against a real server in test_install.py)."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["promptstore", "promptstore.errors", "promptstore.variables", "promptstore.types", "promptstore.client"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0
