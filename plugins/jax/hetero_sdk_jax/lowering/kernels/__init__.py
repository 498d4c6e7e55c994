"""How lowerings call the XLA device's native CPU kernels (:mod:`hetero_sdk_jax.native`): for each kernel, the
rule saying where it runs, what its weights are prepared into at compile time, and the ``jax.ffi`` call.

The op families' lowerings (``lowering/convolution.py``, ``lowering/recurrent.py``) ask these modules, and keep
their pure-XLA form wherever a kernel does not run: :mod:`.conv2d` (dense 3x3 convolutions),
:mod:`.depthwise` (depthwise convolutions, with their bias and activation), :mod:`.lstm` (an LSTM's
recurrence), :mod:`.gemm` (products by a constant matrix) and :mod:`.softmax` (long rows of Softmax).
"""
