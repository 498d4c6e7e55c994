"""Text generation with decoders, as OpenVINO GenAI: :class:`LLMPipeline` runs a decoder exported with
its KV cache (``past_key_values``/``present``) or made stateful, on any device, choosing each token
greedily or by sampling as a :class:`GenerationConfig` says.

```python
from hetero_sdk.genai import GenerationConfig, LLMPipeline

pipe = LLMPipeline("decoder.onnx", "TEMPLATE")
pipe.generate([1, 2, 3], max_new_tokens=16)                       # the generated ids
pipe.generate([1, 2, 3], GenerationConfig(max_new_tokens=16, do_sample=True, top_k=40, rng_seed=7))
```
"""

from hetero_sdk.genai.config import GenerationConfig
from hetero_sdk.genai.pipeline import (
    DecodedResults,
    EncodedResults,
    LLMPipeline,
    PerfMetrics,
    Streamer,
    StreamerBase,
)
from hetero_sdk.genai.tokenizer import Tokenizer

__all__ = [
    "DecodedResults", "EncodedResults", "GenerationConfig", "LLMPipeline", "PerfMetrics", "Streamer", "StreamerBase",
    "Tokenizer",
]  # fmt: skip
