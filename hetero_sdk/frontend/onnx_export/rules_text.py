"""Export rules of the ``string`` ops: StringNormalizer, StringSplit, StringConcat and RegexFullMatch
(ONNX opset 20 on for the last three), and LabelEncoder (ai.onnx.ml 4: keys and values as tensors)."""

from __future__ import annotations

from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter, tensor

__all__: list[str] = []

ML_DOMAIN = "ai.onnx.ml"


def _since(ctx: ExportContext, version: int) -> None:
    if ctx.opset < version:
        raise ctx.unsupported(f"ONNX defines {ctx.current.type_name} from opset {version}, not {ctx.opset}")


@exporter("StringNormalizer")
def string_normalizer(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    ctx.emit1("StringNormalizer", [ctx.input(0)], ctx.out(), case_change_action=attrs["case_change_action"],
              is_case_sensitive=int(attrs["is_case_sensitive"]), stopwords=attrs["stopwords"] or None,
              locale=attrs["locale"] or None)  # fmt: skip


@exporter("StringSplit")
def string_split(ctx: ExportContext) -> None:
    _since(ctx, 20)
    limit = ctx.attrs["maxsplit"]
    ctx.emit("StringSplit", [ctx.input(0)], [ctx.out(0), ctx.out(1)], delimiter=ctx.attrs["delimiter"] or None,
             maxsplit=limit if limit >= 0 else None)  # fmt: skip


@exporter("StringConcat")
def string_concat(ctx: ExportContext) -> None:
    _since(ctx, 20)
    ctx.emit1("StringConcat", [ctx.input(0), ctx.input(1)], ctx.out())


@exporter("RegexFullMatch")
def regex_full_match(ctx: ExportContext) -> None:
    _since(ctx, 20)
    ctx.emit1("RegexFullMatch", [ctx.input(0)], ctx.out(), pattern=ctx.attrs["pattern"])


@exporter("LabelEncoder")
def label_encoder(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    ctx.emit1("LabelEncoder", [ctx.input(0)], ctx.out(), domain=ML_DOMAIN,
              keys_tensor=tensor(attrs["keys"], "keys_tensor"), values_tensor=tensor(attrs["values"], "values_tensor"),
              default_tensor=tensor(attrs["default"].reshape(1), "default_tensor"))  # fmt: skip
