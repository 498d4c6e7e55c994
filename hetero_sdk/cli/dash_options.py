"""benchmark_app's single-dash spellings, checked before click parses them.

click reads a single-dash token it does not know as a short option with its value glued on:
``-data_shape x`` becomes ``-d ata_shape``, ``-nthreads 4`` fails as ``-n``. The commands that take
benchmark_app's spellings (``benchmark``, ``query``, ``convert``) use :class:`DashOptionCommand`,
which rejects, before click parses, every single-dash token of two or more letters that is not one
of the command's exact option spellings: benchmark_app's options this CLI does not take with what to
use instead, anything else as an unknown option (with suggestions)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import click

__all__ = ["NOT_TAKEN", "DashOptionCommand"]

NOT_TAKEN: Mapping[str, str] = {
    "-data_shape": "give static shapes with -shape (the data comes from -i files, or is random)",
    "-layout": "-b sets the first dimension of every input, -shape any other (models here have no layout)",
    "-mean_values": "normalize the data beforehand and pass it with -i (an .npy or .npz)",
    "-scale_values": "normalize the data beforehand and pass it with -i (an .npy or .npz)",
    "-ip": "inputs keep the model's element types (-i files are converted to them)",
    "-op": "outputs keep the model's element types",
    "-iop": "inputs and outputs keep the model's element types",
    "-infer_precision": "set INFERENCE_PRECISION_HINT with -load_config",
    "-nthreads": "set INFERENCE_NUM_THREADS with -load_config",
    "-pin": "there is no CPU pinning to set",
    "-exec_graph_path": "'hetero-sdk query --dot FILE' writes the compiled placement as a graph",
    "-dump_config": "--json and --report FILE hold the config compiled with",
    "-json_stats": "use --json or --report FILE",
    "-pcsort": "-pc prints the counters per subgraph and per op, in model order",
    "-pcseq": "-pc prints the counters per subgraph and per op, in model order",
    "-inference_only": "the timing covers inference only: each request's inputs are set once",
    "-latency_percentile": "the report gives the median, p90 and p99 latencies",
    "-cache_dir": "set CACHE_DIR with -load_config",
    "-load_from_file": "the model is read as a file or a built-in sample",
}
"""benchmark_app's options ``hetero-sdk benchmark`` does not take, with what to use instead."""

_MULTI_LETTER = re.compile(r"-[A-Za-z]{2}[A-Za-z0-9_]*")
"""A single-dash token click would split: ``-nthreads``, ``-dTEMPLATE`` (not ``-t2``, not ``-1``)."""


class DashOptionCommand(click.Command):
    """A click command whose single-dash multi-letter tokens must be exact option spellings.

    ``not_taken`` (benchmark_app's options the command lacks, with advice) answers those by name."""

    def __init__(self, *args: object, not_taken: Mapping[str, str] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.not_taken = dict(not_taken or {})

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            self._check_single_dash(ctx, args)
        return super().parse_args(ctx, args)

    def _check_single_dash(self, ctx: click.Context, args: list[str]) -> None:
        spellings: dict[str, click.Parameter] = {
            opt: param for param in self.get_params(ctx) for opt in (*param.opts, *param.secondary_opts)
        }
        takes_value = False
        for arg in args:
            if takes_value:  # the value of the option before it, whatever it looks like
                takes_value = False
                continue
            if arg == "--":
                return
            name = arg.split("=", 1)[0]
            param = spellings.get(name)
            if param is not None:
                takes_value = isinstance(param, click.Option) and not param.is_flag and "=" not in arg
                continue
            if not _MULTI_LETTER.fullmatch(name):
                continue
            if name in self.not_taken:
                raise click.UsageError(
                    f"{name} is a benchmark_app option that hetero-sdk {self.name} does not take; "
                    f"{self.not_taken[name]}",
                    ctx,
                )
            if name[:2] in spellings:  # -dTEMPLATE: benchmark_app, like click here, wants -d TEMPLATE
                raise click.UsageError(f"no such option {name!r}; write {name[:2]} {arg[2:]}", ctx)
            raise click.NoSuchOption(name, ctx=ctx)
