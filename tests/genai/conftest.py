"""Fixtures of the generation tests: a tiny real decoder exported by torch, compiled once on TEMPLATE."""

from __future__ import annotations

import pytest
from decoders import PATHS

import hetero_sdk as hs
from hetero_sdk.genai import LLMPipeline
from template_plugin import TemplatePlugin

LLAMA = PATHS["llama"]


@pytest.fixture(scope="session")
def template_core() -> hs.Core:
    """TEMPLATE alone, in process."""
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)


@pytest.fixture(scope="session")
def llama_pipeline(template_core: hs.Core) -> LLMPipeline:
    """The tiny Llama decoder on TEMPLATE (compiled once: the tests must leave it usable)."""
    return LLMPipeline(LLAMA, "TEMPLATE", core=template_core)
