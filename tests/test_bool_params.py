"""Boolean parameters (of a scheduler, of an importer) take a YAML boolean only: pydantic's lax mode would
read ``"yes"``, ``"off"``, ``1`` or ``0`` as a switch, so a typo or a number silently changed a run.
Each is refused with exit 2 and one line naming the file, the line and the parameter's own field."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from helpers import SMALL_STREAM, refused
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.yamlio import strict_bools

ROOT = Path(__file__).resolve().parents[1]
GRAPH = """\
name: flags
platform:
  processors: [{name: cpu, count: 2}, {name: gpu, type: gpu, speed: 2}]
workload: {generator: random, tasks: 6}
schedulers:
  - heft
  - {name: cpop,
     insertion: VALUE}
"""


@pytest.mark.parametrize("value", ['"yes"', "'no'", '"true"', "1", "0", "2.0", "null", "[true]"])
def test_a_scheduler_bool_parameter_takes_a_yaml_boolean_only(tmp_path: Path, value: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(GRAPH.replace("VALUE", value))
    out = tmp_path / "r.json"
    line = refused(["run", str(path), "--json", str(out)], inputs=(path,), absent=(out,))
    assert line.startswith(f"error: {path}:8: schedulers[1].insertion: scheduler 'cpop', parameter 'insertion': ")
    if value != "[true]":  # a list reads as "a valid boolean" too, worded by pydantic
        assert "must be true or false (a YAML boolean)" in line, line


@pytest.mark.parametrize("value", ["true", "false", "True", "off"])
def test_yaml_booleans_still_set_the_switch(tmp_path: Path, value: str) -> None:
    """``off`` is a YAML 1.1 boolean only to other loaders; simsched's safe loader reads it as a string,
    so it is refused like ``"yes"`` (the check is on the loaded value, not on the spelling)."""
    path = tmp_path / "s.yaml"
    path.write_text(GRAPH.replace("VALUE", value))
    result = CliRunner().invoke(app, ["validate", str(path)])
    from simsched.yamlio import load_yaml

    loaded = load_yaml(path).data["schedulers"][1]["insertion"]
    if isinstance(loaded, bool):
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 2 and "must be true or false" in result.output


def test_the_stream_schedulers_late_binding_switch(tmp_path: Path) -> None:
    path = tmp_path / "stream.yaml"
    old = "schedulers: [mct, srjf-eft, fair-eft, heft]"
    assert old in SMALL_STREAM
    path.write_text(SMALL_STREAM.replace(old, 'schedulers: [mct, {name: srjf-eft, late_binding: "yes"}]'))
    line = refused(["run", str(path)], inputs=(path,))
    line_no = SMALL_STREAM.splitlines().index(old) + 1
    assert f"{path}:{line_no}: schedulers[1].late_binding: " in line and "(got 'yes')" in line, line
    path.write_text(SMALL_STREAM.replace(old, "schedulers: [mct, {name: srjf-eft, late_binding: true}]"))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output


def test_an_importer_bool_option_takes_a_yaml_boolean_only(tmp_path: Path) -> None:
    stg = ROOT / "scenarios" / "data" / "kasahara_40.stg"
    path = tmp_path / "s.yaml"
    path.write_text(f"platform:\n  processors: [{{name: cpu, count: 2}}]\nworkload:\n  stg: {stg}\n"
                    "  keep_dummies: 1\nschedulers: [heft]\n")
    line = refused(["run", str(path)], inputs=(path,))
    assert f"{path}:5: workload.keep_dummies: must be true or false (a YAML boolean) (got 1)" in line, line


def test_checked_params_says_which_parameter() -> None:
    cls = registry.load_class("heft")
    with pytest.raises(registry.ParameterError) as exc:
        registry.checked_params("heft", cls, {"insertion": "yes"})
    assert exc.value.param == "insertion" and isinstance(exc.value, SimschedError)
    assert registry.checked_params("heft", cls, {"insertion": False}) == {"insertion": False}
    with pytest.raises(registry.ParameterError) as exc:
        registry.checked_params("heft", cls, {"insertoin": True})
    assert exc.value.param == "insertoin"


ANNOTATIONS = [bool, bool | None, typing.Optional[bool], list[bool], tuple[bool, ...], dict[str, bool],  # noqa: UP045
               typing.Annotated[bool, "meta"], str | bool, int, float, str, list[int], int | None]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ANNOTATIONS),
       st.one_of(st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=4), st.none(),
                 st.lists(st.booleans(), max_size=2)))
def test_strict_bools_refuses_only_what_is_not_a_boolean(ann: typing.Any, value: typing.Any) -> None:
    """Whatever the strict annotation accepts, the lax one accepts with the same result; the strict one
    refuses a value exactly when the lax one would have turned a non-boolean into a boolean somewhere."""
    def result(a: typing.Any) -> tuple[bool, typing.Any]:
        try:
            return True, TypeAdapter(a).validate_python(value)
        except ValidationError:
            return False, None

    lax_ok, lax = result(ann)
    strict_ok, strict = result(strict_bools(ann))
    if strict_ok:
        assert lax_ok and strict == lax and type(strict) is type(lax)
    elif lax_ok:
        def bools_from_non_bools(got: typing.Any, given: typing.Any) -> bool:
            if isinstance(got, bool):
                return not isinstance(given, bool)
            if isinstance(got, (list, tuple)) and isinstance(given, (list, tuple)):
                return any(bools_from_non_bools(g, v) for g, v in zip(got, given))
            return False

        assert bools_from_non_bools(lax, value), (ann, value, lax)
    if bool not in (ann, *typing.get_args(ann)) and ann is not typing.Annotated[bool, "meta"] \
            and not any(bool in typing.get_args(a) for a in typing.get_args(ann)):
        assert strict_bools(ann) is ann
