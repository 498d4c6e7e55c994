"""``hs.Layout`` reads OpenVINO's layout strings as OpenVINO's ``ov.Layout`` does."""

from __future__ import annotations

import pytest

import hetero_sdk as hs
from hetero_sdk import layout as layouts
from hetero_sdk.errors import ModelValidationError

ov = pytest.importorskip("openvino")


@pytest.mark.parametrize(
    "text",
    [
        "NCHW",
        "nhwc",
        "[N,C,H,W]",
        "[n, c, h, w]",
        "?",
        "...C",
        "N...C",
        "[...,C]",
        "NC??",
        "",
        "[batch,seq,hidden]",
        "...",
        "C...",
    ],
)
def test_strings_read_as_openvino_reads_them(text: str) -> None:
    ours, theirs = hs.Layout(text), ov.Layout(text)
    assert ours.to_string() == theirs.to_string()
    assert ours.empty == theirs.empty
    for name in ("N", "C", "H", "W", "BATCH", "SEQ", "D"):
        assert ours.has_name(name) == theirs.has_name(name), name
        if theirs.has_name(name):
            assert ours.get_index_by_name(name) == theirs.get_index_by_name(name), name


def test_helpers_name_the_usual_dimensions() -> None:
    nhwc = hs.Layout("NHWC")
    assert (layouts.get_batch_index(nhwc), layouts.get_height_index(nhwc)) == (0, 1)
    assert (layouts.get_width_index(nhwc), layouts.get_channels_index(nhwc)) == (2, 3)
    assert layouts.has_channels(nhwc) and not layouts.has_channels(hs.Layout("NHW"))
    assert hs.Layout("...C").index_in("C", 4) == 3 and hs.Layout("NCHW") == "[N,C,H,W]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("NCHC", "names C more than once"),
        ("[N,C-1]", "'C-1' is not a dimension name"),
        ("...N...", "more than one '...'"),
        ("[N,C", "without its closing"),
    ],
)
def test_malformed_layouts_are_typed_errors_naming_them(text: str, message: str) -> None:
    with pytest.raises(ModelValidationError, match=message):
        hs.Layout(text)
    with pytest.raises(ModelValidationError, match=r"layout \[N,C\] has no dimension 'H'; it has N, C"):
        hs.Layout("NC").get_index_by_name("H")
