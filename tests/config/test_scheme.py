"""Registering kinds, reading types that are not registered, and what importing the scheme costs."""

from __future__ import annotations

import subprocess
import sys

import attrs
import pytest

from componentbase.componentconfig import (
    DecodeError,
    Scheme,
    decode_as,
    structure,
    unstructure,
)
from componentbase.util import Duration
from tests.config.schemetypes import (
    API,
    Empty,
    Mode,
    Plugin,
    ProviderConfig,
    SchedulerConfig,
)


@pytest.mark.unit
def test_register_rules() -> None:
    s = Scheme()
    s.register(SchedulerConfig, API, "SchedulerConfiguration")
    s.register(SchedulerConfig, API, "SchedulerConfiguration")  # the same registration again is fine
    with pytest.raises(ValueError, match='kind "SchedulerConfiguration" is already registered'):
        s.register(Empty, API, "SchedulerConfiguration")
    with pytest.raises(TypeError, match="not an attrs class"):
        s.register(dict, API, "Dict")

    @s.kind("example.io/v2", "Empty")
    @attrs.define
    class Local:
        pass

    assert s.kind_of(Local()) == ("example.io/v2", "Empty")
    with pytest.raises(ValueError, match="no kind is registered for the type"):
        s.encode(Plugin(name="x"))


@pytest.mark.unit
def test_structure_and_decode_as_for_non_registered_types() -> None:
    assert structure({"endpoint": "unix:///x", "timeout": "5s"}, ProviderConfig) == ProviderConfig(
        endpoint="unix:///x", timeout=Duration(5))
    with pytest.raises(DecodeError) as info:
        structure({"timeout": 5, "extra": 1}, ProviderConfig, "provider")
    assert str(info.value).splitlines() == [
        "provider: endpoint: Required value",
        'provider: timeout: Invalid value: 5: must be a duration string such as "1m30s"',
        'provider: unknown field "extra"',
    ]
    with pytest.raises(DecodeError) as info:
        decode_as("endpoint: x\ntimeout: 1\n", ProviderConfig, "p.yaml")
    assert str(info.value) == 'p.yaml:2: timeout: Invalid value: 1: must be a duration string such as "1m30s"'
    assert unstructure(ProviderConfig(endpoint="e")) == {"endpoint": "e", "timeout": "30s"}
    assert unstructure({"b": [Duration(1)], "a": Mode.FAST}) == {"a": "fast", "b": ["1s"]}
    with pytest.raises(TypeError, match="cannot encode a object"):
        unstructure(object())


@pytest.mark.process
def test_importing_the_scheme_stays_light() -> None:
    code = ("import sys, componentbase.componentconfig\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'kubernetes', 'cattrs', 'ruamel'}))")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
    assert "kubernetes" not in out.stderr


@attrs.define(kw_only=True)
class Unsupported:
    either: int | str = 1


@pytest.mark.unit
def test_an_unsupported_field_type_is_a_program_error_not_a_file_error() -> None:
    import cattrs

    with pytest.raises(cattrs.errors.StructureHandlerNotFoundError):
        decode_as("either: 1\n", Unsupported)


@pytest.mark.unit
def test_new_is_what_an_empty_document_decodes_to() -> None:
    from componentbase_examples.scheduler.config import API_VERSION, KIND, SCHEME

    assert SCHEME.new(API_VERSION, KIND) == SCHEME.decode(f"apiVersion: {API_VERSION}\nkind: {KIND}\n")
    with pytest.raises(ValueError, match='no kind "Nope" is registered for version "x/v1"'):
        SCHEME.new("x/v1", "Nope")
