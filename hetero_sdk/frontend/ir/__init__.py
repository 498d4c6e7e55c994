"""OpenVINO IR (``model.xml`` + ``model.bin``, IR v10 and v11) read and written: what ``ov.save_model``,
``ovc``, optimum-intel and NNCF write. :func:`read_ir` reads one (``core.read_model("model.xml")``),
:func:`save_ir` writes one that OpenVINO reads (``hs.save_model(model, "model.xml")``)."""

from hetero_sdk.frontend.detect import is_ir
from hetero_sdk.frontend.ir.reader import IR_VERSIONS, read_ir
from hetero_sdk.frontend.ir.writer import save_ir

__all__ = ["IR_VERSIONS", "is_ir", "read_ir", "save_ir"]
