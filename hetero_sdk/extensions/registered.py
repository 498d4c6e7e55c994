"""The process-wide table of registered extensions: validation at registration, lazy loading of the
installed ones, and the lookups the frontend, the reference, the devices and the conformance kit make.

Op definitions are process-wide (:data:`~hetero_sdk.graph.op_def.OPS`), so an extension registered
through any ``Core`` is seen by every ``Core`` and by ``convert_model``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from hetero_sdk.errors import PluginValidationError
from hetero_sdk.extensions.checks import checked_kernel
from hetero_sdk.extensions.discovery import distribution_of, import_name, installed, load
from hetero_sdk.extensions.extension import Extension, OnnxRule
from hetero_sdk.graph.op_def import OPS, OpDef, define

__all__ = [
    "KNOWN_DOMAINS", "ExtensionInfo", "add_extension", "device_kernel", "extension_infos", "extension_of",
    "extension_op_types", "extension_recipe", "load_installed", "missing_op_hint", "onnx_rules", "provider_of",
    "generation", "remove_extensions", "set_sdk_rule_versions",
]  # fmt: skip

SDK_DISTRIBUTION = "hetero-sdk"

KNOWN_DOMAINS: dict[str, str] = {"com.microsoft": "hetero-sdk-contrib"}
"""ONNX domains whose ops an extension distribution provides, for the error of a model using one
where it is not installed."""

SdkRuleVersions = Callable[[str, str], list[int]]
"""``versions(domain, op_type)``: the opset versions from which the SDK's own ONNX rules translate an op
type (empty when none); the frontend supplies it with :func:`set_sdk_rule_versions`."""

_log = logging.getLogger(__name__)
_lock = threading.RLock()


@dataclass(frozen=True)
class ExtensionInfo:
    """One extension as listings show it.

    :ivar name: the extension's (or its entry point's) name.
    :ivar distribution: the distribution that installs it; empty for one added in process.
    :ivar version: that distribution's version.
    :ivar ops: the op types it defines.
    :ivar error: why it did not load; empty when it did.
    :ivar onnx_rules: the ONNX ops it translates, ``"domain:OpType (since N)"`` (``", replaces the SDK"``
        added for a rule replacing the SDK's translation).
    """

    name: str
    distribution: str = ""
    version: str = ""
    ops: tuple[str, ...] = ()
    error: str = ""
    onnx_rules: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        """``"loaded"`` or ``"broken"``."""
        return "broken" if self.error else "loaded"


@dataclass(frozen=True)
class _Entry:
    extension: Extension
    info: ExtensionInfo


_registered: dict[str, _Entry] = {}
_broken: dict[str, ExtensionInfo] = {}
_owner: dict[str, str] = {}  # op type -> extension name
_installed_loaded = False
_generation = 0
_sdk_rule_versions: SdkRuleVersions | None = None


def set_sdk_rule_versions(versions: SdkRuleVersions) -> None:
    """Tells registration where the SDK's own ONNX rules are (the frontend, a layer above, calls it when
    imported; the function may load the ONNX frontend when first called), so that an extension rule
    duplicating one is refused at registration."""
    global _sdk_rule_versions
    _sdk_rule_versions = versions


def generation() -> int:
    """A number that changes whenever an extension is added or removed: a device caching what it
    supports (a support table) rebuilds it when the number differs from the one it was built at."""
    return _generation


def _label(name: str, distribution: str) -> str:
    return f"extension '{name}' ({distribution or 'added in process'})"


def add_extension(extension: Extension | str, *, distribution: str = "", version: str = "") -> Extension:
    """Validates ``extension`` and registers it process-wide; adding the same object again does nothing.

    :param extension: an :class:`Extension`, or an importable name ``"package.module:attr"`` naming one
        (or a function returning one).
    :param distribution: the distribution that installs it, for listings and for the error of a file using
        its ops where it is not installed.
    :raises PluginValidationError: naming the extension and what is wrong, with how to fix it: an import
        that fails, an op declared twice, an op name the SDK or another extension uses (naming both), a
        rule building an unknown op, an ONNX rule for an op type the SDK or another extension translates
        (naming both; a rule with ``replaces=True`` may replace the SDK's), a kernel or recipe for an op
        the extension does not define.
    """
    return _register(extension, distribution, version, installed=False)


def _register(extension: Extension | str, distribution: str, version: str, *, installed: bool) -> Extension:
    if isinstance(extension, str):
        extension = _imported(extension)
    if not isinstance(extension, Extension):
        raise PluginValidationError(
            f"{extension!r} is not an extension; pass a hetero_sdk.extensions.Extension (or 'package.module:attr' "
            "naming one)",
            extension,
        )
    with _lock:
        entry = _registered.get(extension.name)
        if entry is not None:
            if entry.extension is extension:  # added in process, then found installed: say where it is from
                if distribution and not entry.info.distribution:
                    info = dataclasses.replace(entry.info, distribution=distribution, version=version)
                    _registered[extension.name] = _Entry(extension, info)
                return extension
            raise PluginValidationError(
                f"{_label(extension.name, distribution)}: an extension of that name is registered already "
                f"({entry.info.distribution or 'added in process'}); give the extension another name",
                extension.name,
            )
        _validate(extension, distribution, installed=installed)
        for op in extension.ops:
            define(op)
            _owner[op.type_name] = extension.name
        rules = tuple(_rule_label(r) for r in extension.onnx_rules)
        info = ExtensionInfo(extension.name, distribution, version, tuple(extension.op_types()), onnx_rules=rules)
        _registered[extension.name] = _Entry(extension, info)
        _broken.pop(extension.name, None)
        _changed()
    return extension


def _rule_label(rule: OnnxRule) -> str:
    replacing = ", replaces the SDK" if rule.replaces else ""
    return f"{rule.domain or 'ai.onnx'}:{rule.op_type} (since {rule.since}{replacing})"


def _changed() -> None:
    global _generation
    _generation += 1
    _kernel_cache.cache_clear()


def _imported(name: str) -> Extension:
    try:
        value = import_name(name)
    except ValueError as exc:
        raise PluginValidationError(str(exc), name) from exc
    except Exception as exc:
        raise PluginValidationError(
            f"extension {name!r} failed to import: {type(exc).__name__}: {exc}; fix the module or its dependencies",
            name,
        ) from exc
    if callable(value) and not isinstance(value, Extension):
        value = value()
    return value  # type: ignore[no-any-return]


def _validate(extension: Extension, distribution: str, *, installed: bool) -> None:
    who = _label(extension.name, distribution)

    def fail(message: str) -> PluginValidationError:
        return PluginValidationError(f"{who}: {message}", extension.name)

    if not extension.name or not isinstance(extension.name, str):
        raise fail("the name must be a non-empty string")
    declared: set[str] = set()
    for op in extension.ops:
        if not isinstance(op, OpDef):
            raise fail(f"ops holds {op!r}, not an OpDef; define each op as hetero_sdk.ops.OpDef(...)")
        name = op.type_name
        if name in declared:
            raise fail(f"declares op {name} twice; keep one definition")
        declared.add(name)
        if name in OPS:
            owner = _owner.get(name)
            if owner is None:
                raise fail(f"op {name} clashes with the op {name} of {SDK_DISTRIBUTION} (the SDK's opset); "
                           "rename the extension's op (prefix it with its vendor or domain)")  # fmt: skip
            other = _registered[owner].info
            raise fail(f"op {name} clashes with the op {name} of {_label(other.name, other.distribution)}; "
                       "rename one of them, or uninstall one distribution")  # fmt: skip
    for rule in extension.onnx_rules:
        if not isinstance(rule, OnnxRule) or not callable(rule.translate):
            raise fail(f"onnx_rules holds {rule!r}; each must be an OnnxRule(domain, op_type, translate)")
        for made in rule.makes:
            if made not in declared and made not in OPS:
                raise fail(f"the ONNX rule for {rule.domain or 'ai.onnx'} {rule.op_type} builds op {made}, which "
                           "neither the SDK nor this extension defines; define it in ops, or fix the name")  # fmt: skip
        if (taken := _rule_owner(rule)) is not None:
            raise fail(f"the ONNX rule for {rule.domain or 'ai.onnx'} {rule.op_type} (since {rule.since}) clashes "
                       f"with the one of extension '{taken}'; keep one of them")  # fmt: skip
        _check_against_sdk_rules(rule, installed, fail)
    rules = [(r.domain, r.op_type, r.since) for r in extension.onnx_rules]
    if len(set(rules)) != len(rules):
        twice = next(r for r in rules if rules.count(r) > 1)
        raise fail(f"gives two ONNX rules for {twice[0] or 'ai.onnx'} {twice[1]} since {twice[2]}; keep one")
    for backend, kernels in extension.kernels.items():
        for op_type, kernel in kernels.items():
            if op_type not in declared:
                raise fail(f"gives a {backend} kernel for op {op_type}, which it does not define; add its OpDef to "
                           "ops, or fix the name")  # fmt: skip
            if not callable(kernel) and not (isinstance(kernel, str) and kernel.count(":") == 1):
                raise fail(f"the {backend} kernel of op {op_type} is {kernel!r}; give a function, or "
                           "'package.module:function' naming one")  # fmt: skip
    for op_type, recipe in extension.recipes.items():
        if op_type not in declared or not callable(recipe):
            raise fail(f"gives a conformance recipe for op {op_type}, which it does not define (or the recipe is "
                       "not a function)")  # fmt: skip


def _check_against_sdk_rules(rule: OnnxRule, installed: bool, fail: Callable[[str], Exception]) -> None:
    """An extension rule for an op type the SDK translates would never run: refused, unless it says
    ``replaces`` and the extension was added in process (an installed package, loaded when first needed,
    never changes how the SDK reads standard ONNX)."""
    if _sdk_rule_versions is None:
        return
    domain = "" if rule.domain == "ai.onnx" else rule.domain
    versions = _sdk_rule_versions(domain, rule.op_type)
    if not versions:
        if rule.replaces:
            raise fail(f"the ONNX rule for {domain or 'ai.onnx'} {rule.op_type} says replaces=True, but "
                       f"{SDK_DISTRIBUTION} has no rule for it to replace; drop replaces=True")  # fmt: skip
        return
    what = f"the ONNX rule for {domain or 'ai.onnx'} {rule.op_type} (since {rule.since})"
    sdk = (f"{SDK_DISTRIBUTION}'s own translation of {domain or 'ai.onnx'} {rule.op_type} (its rules since opset "
           f"{', '.join(map(str, versions))})")  # fmt: skip
    if not rule.replaces:
        raise fail(f"{what} duplicates {sdk}, so it would never run; drop the rule, or translate an op type of "
                   "your own domain, or, to replace the SDK's translation from that opset on (as OpenVINO's "
                   "ConversionExtension does), give it replaces=True and add the extension with "
                   "Core.add_extension")  # fmt: skip
    if installed:
        raise fail(f"{what} replaces {sdk}; an installed extension may not (it would change how every program "
                   "in this environment reads that ONNX op): add it with Core.add_extension where you want the "
                   "replacement, or drop replaces=True")  # fmt: skip


def _rule_owner(rule: OnnxRule) -> str | None:
    for name, entry in _registered.items():
        if any((r.domain, r.op_type, r.since) == (rule.domain, rule.op_type, rule.since)
               for r in entry.extension.onnx_rules):  # fmt: skip
            return name
    return None


def load_installed() -> None:
    """Registers every installed extension once per process; one that fails is recorded as broken (see
    :func:`extension_infos`) and logged, never raised: the others still load."""
    global _installed_loaded
    with _lock:
        if _installed_loaded:
            return
        _installed_loaded = True
        for ep in installed():
            distribution, version = distribution_of(ep)
            try:
                value = load(ep)
                if callable(value) and not isinstance(value, Extension):
                    value = value()
                _register(value, distribution, version, installed=True)
            except Exception as exc:  # isolated: a broken extension never stops the others
                _log.warning("extension %s (%s) failed to load: %s", ep.name, distribution, exc)
                _broken[ep.name] = ExtensionInfo(ep.name, distribution, version, (), f"{type(exc).__name__}: {exc}")


OPS.set_loader(load_installed)  # an op type nobody defines may be an installed extension's


def extension_infos() -> list[ExtensionInfo]:
    """Every extension, loaded or broken, sorted by name (installed ones are loaded first)."""
    load_installed()
    with _lock:
        infos = [e.info for e in _registered.values()] + list(_broken.values())
    return sorted(infos, key=lambda i: i.name)


def extension_of(op_type: str) -> ExtensionInfo | None:
    """The extension defining ``op_type``, or None (an SDK op, or unknown)."""
    owner = _owner.get(op_type)
    return None if owner is None else _registered[owner].info


def extension_op_types() -> list[str]:
    """Every op type registered extensions define, sorted."""
    return sorted(_owner)


def provider_of(op_type: str) -> dict[str, str] | None:
    """What a native file records of an extension op: ``{"extension": name, "distribution": dist}``; None
    for the SDK's ops."""
    info = extension_of(op_type)
    return None if info is None else {"extension": info.name, "distribution": info.distribution}


def missing_op_hint(op_type: str, provider: Any = None, domain: str | None = None) -> str:
    """Advice for an op type nobody defines: the distribution that provides it, when the file recorded
    one (``provider``, as :func:`provider_of` gives) or its ONNX ``domain`` is known."""
    distribution = extension = ""
    if isinstance(provider, dict):
        distribution = str(provider.get("distribution") or "")
        extension = str(provider.get("extension") or "")
    if not distribution and domain is not None:
        distribution = KNOWN_DOMAINS.get(domain, "")
    if distribution:
        try:
            version = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return (f"op {op_type} is provided by the distribution {distribution}, which is not installed: "
                    f"pip install {distribution}")  # fmt: skip
        broken = next((b for b in _broken.values() if b.distribution == distribution), None)
        if broken is not None:
            return (f"op {op_type} is provided by the distribution {distribution}, whose extension "
                    f"'{broken.name}' failed to load: {broken.error}")  # fmt: skip
        return (f"op {op_type} is provided by the distribution {distribution}, but the installed {distribution} "
                f"{version} does not define it (see Core.extensions): upgrade it")  # fmt: skip
    if extension:
        return (f"op {op_type} is provided by extension '{extension}', which is not registered: add it with "
                "Core.add_extension before reading")  # fmt: skip
    return ""


def onnx_rules(domain: str | None = None, op_type: str | None = None, *, load: bool = True) -> list[OnnxRule]:
    """The registered extensions' ONNX rules (of ``op_type`` in ``domain``, when given), oldest ``since``
    first; installed extensions are loaded when none is registered yet (and ``load``)."""
    found = _rules_of(domain, op_type)
    if not found and load and not _installed_loaded:
        load_installed()
        found = _rules_of(domain, op_type)
    return found


def _rules_of(domain: str | None, op_type: str | None) -> list[OnnxRule]:
    with _lock:
        rules = [r for e in _registered.values() for r in e.extension.onnx_rules
                 if op_type in (None, r.op_type) and domain in (None, r.domain)]  # fmt: skip
    return sorted(rules, key=lambda r: (r.domain, r.op_type, r.since))


def extension_recipe(op_type: str) -> Callable[..., Any] | None:
    """The conformance recipe an extension gives for ``op_type``, or None."""
    owner = _owner.get(op_type)
    return None if owner is None else _registered[owner].extension.recipes.get(op_type)


def device_kernel(op_type: str, *backends: str, evaluate: bool = True) -> Callable[..., Any] | None:
    """The kernel a device runs for an extension op, checked against the op's shape inference; None for
    an op no extension defines, or when the extension has none for these backends.

    :param backends: the kernel tables to look in, in order (``"TEMPLATE", "reference"``; ``"XLA"``).
    :param evaluate: fall back to the op definition's array-API kernel (``OpDef.evaluate``).
    """
    return _kernel_cache(op_type, backends, evaluate)


@functools.cache
def _kernel_cache(op_type: str, backends: tuple[str, ...], evaluate: bool) -> Callable[..., Any] | None:
    owner = _owner.get(op_type)
    if owner is None:
        return None
    extension = _registered[owner].extension
    for backend in backends:
        found = extension.kernels.get(backend, {}).get(op_type)
        if isinstance(found, str):
            found = _kernel_named(found, owner, op_type, backend)
        if found is not None:
            return checked_kernel(found, owner, op_type, backend)
    definition = OPS.get(op_type)
    if evaluate and definition.evaluate is not None:
        return checked_kernel(definition.evaluate, owner, op_type, "array-API")
    return None


def _kernel_named(name: str, extension: str, op_type: str, backend: str) -> Callable[..., Any]:
    try:
        found = import_name(name)
    except Exception as exc:
        raise PluginValidationError(
            f"extension '{extension}': the {backend} kernel of op {op_type} ({name!r}) failed to import: "
            f"{type(exc).__name__}: {exc}; install what it needs, or fix the name",
            extension,
        ) from exc
    if not callable(found):
        raise PluginValidationError(f"extension '{extension}': the {backend} kernel of op {op_type} ({name!r}) is "
                                    "not a function", extension)  # fmt: skip
    return found  # type: ignore[no-any-return]


def remove_extensions(names: Iterable[str]) -> None:
    """Unregisters the extensions ``names`` and their ops (tests and notebooks; a model built with their
    ops no longer compiles)."""
    with _lock:
        for name in names:
            entry = _registered.pop(name, None)
            _broken.pop(name, None)
            if entry is None:
                continue
            for op_type in entry.info.ops:
                _owner.pop(op_type, None)
                OPS.unregister(op_type)
        _changed()
