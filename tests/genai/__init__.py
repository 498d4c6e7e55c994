"""Tests of generative models: decoders with a KV cache, state and the generation loop."""
