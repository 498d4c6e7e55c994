"""Device strings are parsed in one place: NAME, NAME.ID and META:A,B with case-sensitive names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk.device_name import DeviceName, parse_device_name

NAMES = st.from_regex(r"[A-Z][A-Z0-9_]{0,7}", fullmatch=True)
IDS = st.from_regex(r"[A-Za-z0-9_]{1,4}", fullmatch=True)
DEVICES = st.builds(lambda n, i: n if i is None else f"{n}.{i}", NAMES, st.none() | IDS)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("TEMPLATE", DeviceName("TEMPLATE")),
        ("TEMPLATE.1", DeviceName("TEMPLATE", "1")),
        ("GPU.0", DeviceName("GPU", "0")),
        ("MY_DEV2", DeviceName("MY_DEV2")),
        ("HETERO:XLA,TEMPLATE", DeviceName("HETERO", None, ("XLA", "TEMPLATE"))),
        ("HETERO:TEMPLATE.0,TEMPLATE.1", DeviceName("HETERO", None, ("TEMPLATE.0", "TEMPLATE.1"))),
        ("HETERO:CPU", DeviceName("HETERO", None, ("CPU",))),
    ],
)
def test_accepted_forms_parse_to_name_id_and_targets(text: str, expected: DeviceName) -> None:
    assert parse_device_name(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "template", "Template", "1GPU", "GPU.", "GPU..1", "HETERO:", "HETERO:A,,B", "HETERO:A, B", " GPU", "GPU.1.2",
     "HETERO:a", "HETERO:A:B", "GPU-1"],
)  # fmt: skip
def test_malformed_names_raise_value_error_naming_the_text_and_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"device name .* (malformed|empty)") as info:
        parse_device_name(text)
    assert repr(text) in str(info.value)
    assert "NAME" in str(info.value) or "TEMPLATE" in str(info.value)


def test_non_string_is_rejected() -> None:
    with pytest.raises(ValueError):
        parse_device_name(None)  # type: ignore[arg-type]


def test_full_is_name_dot_id_without_targets() -> None:
    assert parse_device_name("TEMPLATE.1").full == "TEMPLATE.1"
    assert parse_device_name("HETERO:A,B").full == "HETERO"


@settings(max_examples=50, deadline=None)
@given(DEVICES, st.lists(DEVICES, max_size=3))
def test_str_round_trips(device: str, targets: list[str]) -> None:
    text = device + (":" + ",".join(targets) if targets else "")
    parsed = parse_device_name(text)
    assert str(parsed) == text
    assert parse_device_name(str(parsed)) == parsed
    assert list(parsed.targets) == targets
