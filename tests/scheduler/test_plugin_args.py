"""The in-tree args scheme, kept apart from the plugins so config defaulting need not import them."""

from __future__ import annotations

import pytest

from componentbase_examples.scheduler.plugins.args import IN_TREE_ARGS
from componentbase_examples.scheduler.registry import DEFAULT_PLUGINS

pytestmark = pytest.mark.unit


def test_the_args_scheme_names_each_default_plugin_with_args_and_its_type() -> None:
    declared = {cls.name: cls.Args for cls in DEFAULT_PLUGINS if getattr(cls, "Args", None) is not None}
    assert IN_TREE_ARGS == declared
