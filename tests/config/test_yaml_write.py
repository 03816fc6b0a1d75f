"""Config text written without ruamel's emitter is exactly ruamel's text, and nearly every config takes that path."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from componentbase.componentconfig._encode import _new_yaml, dump_yaml, reads_as_string, ruamel_dump
from componentbase.componentconfig._yamlwrite import block_yaml

pytestmark = pytest.mark.unit

#: Texts at the edges of what ruamel writes unquoted: YAML's other types, indicators, spaces, long words.
TRICKY = ["", "x", "true", "True", "yes", "no", "on", "null", "Null", "~", "1", "-1", "1.5", "1e3", "0x1F", "0o7",
          ".inf", ".nan", "1_000", "2024-01-01", "12:30", "1s", "0s", "1m30s", "a b", "a  b", " a", "a ", "a: b",
          "a #b", "#a", "-a", "a-", "a/b", "a.b", "=", "<<", "*a", "&a", "!a", "%a", "@a", "`a", "a'b", 'a"b',
          "a\nb", "a\tb", "\u00e9", "x" * 119, "x" * 130, "y " * 70, "application/vnd.kubernetes.protobuf"]
words = st.builds("{}{}".format, st.sampled_from("aZ19"), st.text("abXY09./_- ", max_size=10))  # most are plain
texts = st.sampled_from(TRICKY) | st.text(max_size=10) | words


def documents(keys: st.SearchStrategy[str], values: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | values
    return st.dictionaries(keys, st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=8), min_size=1, max_size=5)


@settings(max_examples=50, deadline=None, database=None)
@given(documents(texts, texts) | documents(words, words))  # the second mostly takes the fast path
def test_what_it_writes_is_what_ruamel_writes(data: dict[str, Any]) -> None:
    yaml = _new_yaml()
    fast = block_yaml(data, reads_as_string(yaml))
    assert fast is None or fast == ruamel_dump(yaml, data)


@pytest.mark.parametrize("text", TRICKY)
def test_each_tricky_text_as_key_value_and_item_is_written_as_ruamel_writes_it(text: str) -> None:
    data = {text: text, "list": [text, [text], {text: [text]}], "map": {"a": {text: None}}}
    yaml = _new_yaml()
    assert dump_yaml(data) == ruamel_dump(yaml, data)


def test_plain_words_and_numbers_take_the_fast_path() -> None:
    from componentbase_examples.greeter.__main__ import HelloOptions
    from componentbase_examples.scheduler.__main__ import new_command

    for options in (new_command().options, HelloOptions()):
        data = options.SCHEME.to_dict(options.component_config)
        assert block_yaml(data, reads_as_string(_new_yaml())) is not None, data["kind"]
    assert block_yaml({"a": "a: b"}, reads_as_string(_new_yaml())) is None  # quoted: ruamel writes it
