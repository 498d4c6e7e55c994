"""benchmark_app's ``-i``: real input data from files instead of random values.

``-i data.npz`` feeds arrays by input name; ``-i x.npy`` (or an image) feeds a model's one input;
``-i x:a.npy,mask:b.npy`` names the input of each file; a folder stands for the files in it (sorted).
A file holds either a whole input (its shape is the input's) or one batch item (the input's shape
without its first dimension: an image, a sentence); items fill the batch in order, as benchmark_app
fills it with images. With more files than one batch, the requests cycle through the sets.
Inputs that no file names get random values, and the report says which."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetero_sdk.cli.context import EXIT_FAILURE, EXIT_USAGE, CLIError
from hetero_sdk.errors import did_you_mean
from hetero_sdk.graph import Model, Output

__all__ = ["IMAGE_SUFFIXES", "InputData", "load_input_files", "parse_input_spec"]

IMAGE_SUFFIXES = frozenset({".bmp", ".gif", ".jpeg", ".jpg", ".png", ".tif", ".tiff", ".webp"})
"""The image files ``-i`` reads (through Pillow)."""
_ARRAY_SUFFIXES = frozenset({".npy", ".npz"})
_CHANNELS = {1: "L", 3: "RGB", 4: "RGBA"}


@dataclass(frozen=True)
class InputData:
    """The input sets a benchmark feeds, and where each input's values came from.

    :ivar sets: whole feeds, by input name; request ``k`` gets ``sets[k % len(sets)]``.
    :ivar sources: per input, the files it was read from, or ``"random"``.
    """

    sets: list[dict[str, np.ndarray]]
    sources: dict[str, str]


def parse_input_spec(text: str) -> dict[str | None, list[Path]]:
    """Splits ``-i``'s value into files per input name (``None``: files not given a name).

    A part ``name:path`` names its input unless the whole part is an existing path.

    :raises CLIError: (usage) for an empty part or a path that does not exist.
    """
    groups: dict[str | None, list[Path]] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise CLIError(f"-i {text!r} has an empty entry; write -i FILE or -i name:FILE,other:FILE", EXIT_USAGE)
        name: str | None = None
        location = part
        if ":" in part and not Path(part).exists():
            name, location = (s.strip() for s in part.split(":", 1))
        path = Path(location)
        if not path.exists():
            raise CLIError(f"FileNotFoundError: -i {location}: no such file or directory", EXIT_FAILURE)
        files = sorted(f for f in path.iterdir() if f.is_file()) if path.is_dir() else [path]
        if not files:
            raise CLIError(f"-i: the folder {location} holds no files", EXIT_USAGE)
        groups.setdefault(name, []).extend(files)
    return groups


def load_input_files(model: Model, spec: str, random_fill: Mapping[str, np.ndarray]) -> InputData:
    """Reads ``-i``'s files into input sets for ``model`` (whose inputs are static by now).

    :param random_fill: the values of inputs no file names.
    :raises CLIError: (usage) naming the file and the input when a file cannot feed it: an unknown
        input name, a shape that is neither the input's nor one batch item's, an element type that
        does not convert, an unreadable file.
    """
    ports = {port.any_name: port for port in model.inputs}
    files: dict[str, list[Path]] = {}
    arrays: dict[str, list[tuple[Path, np.ndarray]]] = {}
    for name, paths in parse_input_spec(spec).items():
        for path in paths:
            if path.suffix.lower() == ".npz" and name is None:
                for key, value in _read_npz(path, ports).items():
                    arrays.setdefault(key, []).append((path, value))
                    files.setdefault(key, []).append(path)
                continue
            target = _target(name, path, ports)
            files.setdefault(target, []).append(path)
            arrays.setdefault(target, []).append((path, _read(path, ports[target])))
    samples = {name: _batches(ports[name], items) for name, items in arrays.items()}
    count = max(len(values) for values in samples.values())
    sets = [
        {name: samples[name][k % len(samples[name])] if name in samples else random_fill[name] for name in ports}
        for k in range(count)
    ]
    sources = {name: _describe(files[name]) if name in files else "random" for name in ports}
    return InputData(sets, sources)


def _target(name: str | None, path: Path, ports: Mapping[str, Output]) -> str:
    if name is not None:
        if name not in ports:
            raise CLIError(
                f"-i {name}:{path}: the model has no input {name!r}; {did_you_mean(name, ports, listing='inputs')}",
                EXIT_USAGE,
            )
        return name
    if len(ports) != 1:
        raise CLIError(
            f"-i {path}: the model has {len(ports)} inputs ({', '.join(ports)}); name the one this file feeds, "
            f"-i name:{path}, or give an .npz with one array per input name",
            EXIT_USAGE,
        )
    return next(iter(ports))


def _read_npz(path: Path, ports: Mapping[str, Output]) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            found = {key: archive[key] for key in archive.files}
    except (OSError, ValueError) as exc:
        raise CLIError(f"-i {path}: cannot read it as an .npz archive: {exc}", EXIT_USAGE) from None
    unknown = sorted(set(found) - set(ports))
    if unknown:
        raise CLIError(
            f"-i {path}: array {unknown[0]!r} names no model input; "
            + did_you_mean(unknown[0], ports, listing="inputs"),
            EXIT_USAGE,
        )
    return {key: _converted(value, ports[key], path) for key, value in found.items()}


def _read(path: Path, port: Output) -> np.ndarray:
    suffix = path.suffix.lower()
    if suffix == ".npy":
        try:
            value = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise CLIError(f"-i {path}: cannot read it as an .npy array: {exc}", EXIT_USAGE) from None
        return _converted(value, port, path)
    if suffix in IMAGE_SUFFIXES:
        return _converted(_read_image(path, port), port, path)
    raise CLIError(
        f"-i {path}: unknown file type {path.suffix or '(none)'}; -i reads "
        f"{', '.join(sorted(_ARRAY_SUFFIXES | IMAGE_SUFFIXES))}",
        EXIT_USAGE,
    )


def _converted(value: np.ndarray, port: Output, path: Path) -> np.ndarray:
    dtype = np.dtype(port.element_type.numpy)
    if not np.can_cast(value.dtype, dtype, "same_kind"):
        raise CLIError(
            f"-i {path}: holds {value.dtype} values, but input {port.any_name!r} is {port.element_type.value}; "
            f"save the array as {dtype}",
            EXIT_USAGE,
        )
    return np.asarray(value).astype(dtype, copy=False)


def _batches(port: Output, items: list[tuple[Path, np.ndarray]]) -> list[np.ndarray]:
    """Whole inputs as they are; batch items stacked ``N`` at a time (the last batch cycles round)."""
    shape = tuple(port.partial_shape.dims)
    whole: list[np.ndarray] = []
    single: list[np.ndarray] = []
    for path, value in items:
        if value.shape == shape:
            whole.append(value)
        elif shape and value.shape == shape[1:]:
            single.append(value)
        else:
            item = f" or one batch item {list(shape[1:])}" if shape else ""
            raise CLIError(
                f"-i {path}: has shape {list(value.shape)}, but input {port.any_name!r} takes {list(shape)}{item}; "
                "reshape the data, or the model with -shape / -b",
                EXIT_USAGE,
            )
    if single:
        size = shape[0]
        rounds = -(-len(single) // size)
        whole += [np.stack([single[(r * size + i) % len(single)] for i in range(size)]) for r in range(rounds)]
    return whole


def _read_image(path: Path, port: Output) -> np.ndarray:
    """One image as a batch item in the input's layout (channels first or last, told by the channel
    count), resized to the input's height and width; RGB order, values 0-255 as stored."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise CLIError(
            f"-i {path}: reading images needs Pillow: pip install 'hetero-sdk[images]' (or give an .npy)", EXIT_USAGE
        ) from None
    dims = list(port.partial_shape.dims)
    if len(dims) != 4:
        raise CLIError(
            f"-i {path}: input {port.any_name!r} has shape {dims}, not an image batch [N,C,H,W] or [N,H,W,C]; "
            "give an .npy instead",
            EXIT_USAGE,
        )
    channels_first = dims[1] in _CHANNELS and dims[3] not in _CHANNELS
    if not channels_first and dims[3] not in _CHANNELS:
        raise CLIError(
            f"-i {path}: cannot tell the channels of input {port.any_name!r} {dims} (1, 3 or 4 at axis 1 or 3); "
            "give an .npy instead",
            EXIT_USAGE,
        )
    channels, height, width = (dims[1], dims[2], dims[3]) if channels_first else (dims[3], dims[1], dims[2])
    try:
        with Image.open(path) as image:
            pixels = np.asarray(image.convert(_CHANNELS[channels]).resize((width, height), Image.Resampling.BILINEAR))
    except (OSError, UnidentifiedImageError) as exc:
        raise CLIError(f"-i {path}: cannot read it as an image: {exc}", EXIT_USAGE) from None
    pixels = pixels.reshape(height, width, channels)
    return pixels.transpose(2, 0, 1) if channels_first else pixels


def _describe(paths: Iterable[Path]) -> str:
    names = [str(p) for p in paths]
    return names[0] if len(names) == 1 else f"{len(names)} files ({names[0]}, ...)"
