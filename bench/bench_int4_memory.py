"""Peak resident memory of generating a few tokens of the medium int4 Llama on XLA, native MatMulNBits
kernel on or off (``XLA_NATIVE_KERNELS``): each setting in a fresh process.

Usage::

    python bench/bench_int4_memory.py                 # both settings, 4 tokens after a 16-token prompt
    python bench/bench_int4_memory.py --medium-dir ~/.cache/hetero-sdk/decoders

The model is ``llama_int4_medium.onnx`` of ``--medium-dir`` (``tools/export_int4_decoder.py`` writes it;
see ``bench_decoders.py``). A child process per setting reads it, compiles ``hs.make_stateful`` of it for
XLA and generates greedily; it reports its peak resident bytes (``VmHWM``) and its tokens, which must be
the same in both settings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys
import numpy as np
import hetero_sdk as hs
from timing import peak_rss_bytes
path, native, tokens = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
core = hs.Core()
compiled = core.compile_model(hs.make_stateful(core.read_model(path)), "XLA", {"XLA_NATIVE_KERNELS": native})
request = compiled.create_infer_request()
ids, total, out_tokens = np.arange(1, 17, dtype=np.int64)[None], 0, []
while len(out_tokens) < tokens:
    total += ids.shape[1]
    out = request.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)})
    out_tokens.append(int(np.argmax(np.asarray(out["logits"])[0, -1])))
    ids = np.asarray([[out_tokens[-1]]], np.int64)
print(json.dumps({"peak_bytes": peak_rss_bytes(), "tokens": out_tokens}))
"""


def main() -> None:
    """Runs a child per setting and prints their peaks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("HETERO_SDK_DECODERS") or str(Path.home() / ".cache" / "hetero-sdk" / "decoders")
    parser.add_argument("--medium-dir", default=default)
    parser.add_argument("--tokens", type=int, default=4)
    args = parser.parse_args()
    path = Path(args.medium_dir) / "llama_int4_medium.onnx"
    if not path.exists():
        raise SystemExit(f"{path} is missing: write it with tools/export_int4_decoder.py (see bench_decoders.py)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    results = {}
    for native in (False, True):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), "1" if native else "0", str(args.tokens)],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        results[native] = json.loads(done.stdout.strip().splitlines()[-1])
    if results[False]["tokens"] != results[True]["tokens"]:
        raise SystemExit(f"tokens differ: f32 weight {results[False]['tokens']}, native {results[True]['tokens']}")
    print(f"medium int4 Llama on XLA, {args.tokens} tokens after 16, peak RSS:")
    for native, result in results.items():
        name = "native MatMulNBits kernel" if native else "f32 weight (XLA_NATIVE_KERNELS=False)"
        print(f"  {name}: {result['peak_bytes'] / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
