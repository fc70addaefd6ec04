"""Fusion-spec files (the design doc's `fusion_spec`): a TOML file that extends or replaces
what backends declare for candidate generation, without writing Python.

    [onnxruntime]
    mode = "extend"                              # or "replace"
    ops = ["relu", "add"]                        # or "all"
    kinds = ["elemwise", "broadcast"]            # ops by OpPatternKind
    exclude = ["softmax"]
    where = { f32 = true }                       # a condition on the ops this section offers
                                                 # (or floats = ["f32", "f16"])
    conditions = { conv2d = { attrs = { group = 1 } } }
    patterns = { conv_relu = "conv2d+relu" }     # the composite onnxruntime.conv_relu
    fusion = "arbitrary"                         # none | tvm | arbitrary
    max_depth = 8

    sections = load_fusion_spec("spec.toml", available_backends())
    backend = apply_section(get_backend("onnxruntime"), sections["onnxruntime"])

A file changes candidates only: lowering, version and cost-database keys stay the
backend's (`docs/fusion_spec.md`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import bf16, f16, f32, f64
from xdsl.ir import Operation

from collage_xdsl.backends.base import (
    Backend,
    FloatTypes,
    FusionStyle,
    NamedPattern,
    OpPredicate,
    full_op_name,
    kernel_op_names,
)
from collage_xdsl.core.patterns import chain_pattern, op_has_attrs
from collage_xdsl.dialects.collage import Collage, OpPatternKind
from collage_xdsl.errors import CollageError

KEYS = ("mode", "ops", "kinds", "exclude", "where", "conditions", "patterns", "fusion",
        "max_depth")
"""The keys a `[backend]` section may have."""
MODES = ("extend", "replace")
CONDITION_KEYS = ("f32", "floats", "attrs")
FLOATS = {"f16": f16, "bf16": bf16, "f32": f32, "f64": f64}
"""The element types a `floats` condition may name."""
KINDS = {kind.name.lower(): kind for kind in OpPatternKind}
PATTERN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class FusionSpecError(CollageError):
    """A fusion-spec file that cannot be read, or a section, key or value it may not have."""


@dataclass(frozen=True)
class Condition:
    """A declarative op predicate: every floating-point operand and result has one of the
    element types of `floats` (None: any; `f32 = true` is `floats = ["f32"]`),
    and the attributes `attrs` have these values (compared as `op_has_attrs` does)."""

    floats: FloatTypes | None = None
    attrs: tuple[tuple[str, Any], ...] = ()

    def __call__(self, op: Operation) -> bool:
        return ((self.floats is None or self.floats(op))
                and op_has_attrs(op, dict(self.attrs)))

    def __and__(self, other: Condition) -> Condition:
        """Both conditions; `other`'s value wins for an attribute both name."""
        attrs = tuple(sorted({**dict(self.attrs), **dict(other.attrs)}.items()))
        return Condition(_both(self.floats, other.floats), attrs)

    def __bool__(self) -> bool:
        """Whether the condition excludes anything (an empty one holds for every op)."""
        return self.floats is not None or bool(self.attrs)


def _both(a: FloatTypes | None, b: FloatTypes | None) -> FloatTypes | None:
    """The element types both allow (None: any)."""
    if a is None or b is None:
        return b if a is None else a
    return FloatTypes(*(t for t in a.types if t in b.types))


@dataclass(frozen=True)
class EitherPredicate:
    """An op predicate that holds when `first` or `second` does (extend's union)."""

    first: OpPredicate
    second: OpPredicate

    def __call__(self, op: Operation) -> bool:
        return self.first(op) or self.second(op)


@dataclass(frozen=True)
class SpecSection:
    """One validated `[backend]` section of a fusion-spec file."""

    backend: str
    source: str = field(compare=False)
    """The file it was read from, for error messages."""
    mode: str = "extend"
    ops: Mapping[str, OpPredicate | None] | None = field(default_factory=dict)
    """Op name -> condition (None: always) the section offers; None: every op, always."""
    exclude: frozenset[str] = frozenset()
    patterns: tuple[NamedPattern, ...] = ()
    fusion: FusionStyle | None = None
    """None: the backend's declared style."""
    max_depth: int | None = None
    """None: the depth the options give (`tvm-max-depth`, `byoc-max-depth`)."""


@dataclass(frozen=True)
class _At:
    """Where in the file a value is: makes the one-line error naming file, section, key."""

    source: str
    section: str

    def __call__(self, key: str, message: str) -> FusionSpecError:
        return FusionSpecError(f"fusion spec {self.source}: [{self.section}] {key}: {message}")


def load_fusion_spec(path: str | Path, backends: Collection[str]) -> dict[str, SpecSection]:
    """The sections of the file at `path` by backend name; a section must name one of
    `backends` (the registered ones)."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise FusionSpecError(f"fusion spec {path}: cannot read it: {e.strerror}") from None
    return parse_fusion_spec(text, str(path), backends)


def parse_fusion_spec(text: str, source: str, backends: Collection[str]
                      ) -> dict[str, SpecSection]:
    """`load_fusion_spec` of the TOML `text` read from `source`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FusionSpecError(f"fusion spec {source}: not valid TOML: {e}") from None
    sections = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise FusionSpecError(f"fusion spec {source}: {name}: expected a [backend] "
                                  "section, got a top-level value")
        if name not in backends:
            raise FusionSpecError(f"fusion spec {source}: [{name}]: unknown backend "
                                  f"{name!r} (available: {', '.join(sorted(backends))})")
        sections[name] = parse_section(name, table, source)
    return sections


def parse_section(name: str, table: Mapping[str, Any], source: str) -> SpecSection:
    """The section `[name]` of `source` from its TOML table."""
    at = _At(source, name)
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise at(unknown[0], f"unknown key (keys: {', '.join(KEYS)})")
    mode = _choice(table, "mode", MODES, at) or "extend"
    fusion = _choice(table, "fusion", tuple(s.value for s in FusionStyle), at)
    ops = _offered_ops(table, at)
    patterns = _patterns(table.get("patterns", {}), at)
    if mode == "replace" and ops == {} and not patterns:
        raise at("mode", "replace offers no op and no pattern (give ops, kinds or patterns)")
    return SpecSection(
        name, source, mode, ops, frozenset(_op_list(table, "exclude", at)), patterns,
        FusionStyle(fusion) if fusion else None, _max_depth(table, at))


def _choice(table: Mapping[str, Any], key: str, choices: tuple[str, ...], at: _At
            ) -> str | None:
    value = table.get(key)
    if value is not None and value not in choices:
        raise at(key, f"unknown {key} {value!r} ({' | '.join(choices)})")
    return value


def _max_depth(table: Mapping[str, Any], at: _At) -> int | None:
    value = table.get("max_depth")
    if value is not None and (type(value) is not int or value < 0):
        raise at("max_depth", f"expected an integer >= 0 (0: unbounded), got {value!r}")
    return value


def _op(name: Any, at: _At, key: str) -> str:
    """The full name of the kernel op `name` (with or without `collage.`)."""
    full = full_op_name(name) if isinstance(name, str) else None
    if full is None:
        known = ", ".join(n.removeprefix("collage.") for n in kernel_op_names())
        raise at(key, f"unknown op {name!r} (known: {known})")
    return full


def _op_list(table: Mapping[str, Any], key: str, at: _At) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list):
        raise at(key, f"expected a list of op names, got {value!r}")
    return [_op(name, at, key) for name in value]


def _ops_of_kinds(table: Mapping[str, Any], at: _At) -> list[str]:
    """The kernel ops whose `OpPatternKind` is one of the section's `kinds`."""
    value = table.get("kinds", [])
    if not isinstance(value, list):
        raise at("kinds", f"expected a list of kinds, got {value!r}")
    for kind in value:
        if kind not in KINDS:
            raise at("kinds", f"unknown kind {kind!r} ({', '.join(KINDS)})")
    wanted = {KINDS[kind] for kind in value}
    names = set(kernel_op_names())
    return [op.name for op in Collage.operations
            if op.name in names and op.PATTERN_KIND in wanted]


def _offered_ops(table: Mapping[str, Any], at: _At) -> dict[str, OpPredicate | None] | None:
    """The ops the section offers (`ops`, `kinds`) with their conditions (`where`,
    `conditions`); None for `ops = "all"` without conditions: every op, always."""
    every = table.get("ops") == "all"
    if isinstance(table.get("ops"), str) and not every:
        raise at("ops", f"expected a list of op names or \"all\", got {table['ops']!r}")
    names = list(kernel_op_names()) if every else _op_list(table, "ops", at)
    names += [n for n in _ops_of_kinds(table, at) if n not in names]
    where = _condition(table.get("where", {}), at, "where")
    per_op = _per_op_conditions(table.get("conditions", {}), at)
    for name in per_op:
        if name not in names:
            raise at(f"conditions.{name.removeprefix('collage.')}",
                     "the section does not offer this op (add it to ops or kinds)")
    if where and not names:
        raise at("where", "the section offers no op to apply it to (give ops or kinds)")
    if every and not where and not per_op:
        return None
    conditions = {n: where & per_op.get(n, Condition()) for n in names}
    return {n: c or None for n, c in conditions.items()}


def _per_op_conditions(value: Any, at: _At) -> dict[str, Condition]:
    if not isinstance(value, dict):
        raise at("conditions", f"expected a table of op = condition, got {value!r}")
    return {_op(name, at, f"conditions.{name}"): _condition(c, at, f"conditions.{name}")
            for name, c in value.items()}


def _condition(value: Any, at: _At, key: str) -> Condition:
    """A condition table: `{ f32 = true, floats = ["f32", "f16"], attrs = { group = 1 } }`."""
    if not isinstance(value, dict):
        raise at(key, f"expected a condition table such as {{ f32 = true }}, got {value!r}")
    unknown = sorted(set(value) - set(CONDITION_KEYS))
    if unknown:
        raise at(f"{key}.{unknown[0]}", f"unknown condition ({', '.join(CONDITION_KEYS)})")
    only_f32 = value.get("f32", False)
    if not isinstance(only_f32, bool):
        raise at(f"{key}.f32", f"expected true or false, got {only_f32!r}")
    attrs = value.get("attrs", {})
    if not isinstance(attrs, dict):
        raise at(f"{key}.attrs", f"expected a table of attribute = value, got {attrs!r}")
    floats = _both(FloatTypes(f32) if only_f32 else None, _floats(value, at, key))
    return Condition(floats, tuple(sorted((name, _attr_value(v, at, f"{key}.attrs.{name}"))
                                          for name, v in attrs.items())))


def _floats(value: Mapping[str, Any], at: _At, key: str) -> FloatTypes | None:
    """The element types a condition's `floats` names (None when it has none)."""
    if "floats" not in value:
        return None
    names = value["floats"]
    known = isinstance(names, list) and all(isinstance(n, str) and n in FLOATS for n in names)
    if not names or not known:
        raise at(f"{key}.floats", f"expected a list of element types "
                                  f"({', '.join(FLOATS)}), got {names!r}")
    return FloatTypes(*(FLOATS[n] for n in names))


def _attr_value(value: Any, at: _At, key: str) -> Any:
    """A TOML value as `attr_value` gives attributes: a list as a tuple."""
    if isinstance(value, list):
        return tuple(_attr_value(v, at, key) for v in value)
    if not isinstance(value, (bool, int, float, str)):
        raise at(key, f"expected a number, string, boolean or list, got {value!r}")
    return value


def _patterns(value: Any, at: _At) -> tuple[NamedPattern, ...]:
    """`{ name = "a+b+c" }` as chain patterns (`chain_pattern`) named `name`."""
    if not isinstance(value, dict):
        raise at("patterns", f"expected a table of name = \"op+op+...\", got {value!r}")
    patterns = []
    for name, text in value.items():
        key = f"patterns.{name}"
        if not PATTERN_NAME.fullmatch(name):
            raise at(key, "a pattern name is letters, digits and _")
        if not isinstance(text, str) or not text:
            raise at(key, f"expected a chain of op names such as \"conv2d+relu\", got {text!r}")
        patterns.append(NamedPattern(name, chain_pattern([_op(n, at, key)
                                                          for n in text.split("+")])))
    return tuple(patterns)


def apply_section(backend: Backend, section: SpecSection) -> Backend:
    """`backend` with what `section` says: extend unites its ops (a declared op keeps its
    predicate, or the file's condition) and patterns (a file pattern replaces a declared
    one of its name) with the declared ones; replace keeps only the file's. Then `exclude`
    is removed, and `fusion` and `max_depth` replace the declared ones when given."""
    if section.mode == "replace":
        ops, patterns = section.ops, section.patterns
    elif backend.rule is not None:
        raise _At(section.source, section.backend)(
            "mode", f"backend {backend.name!r} has a hand-written partition rule; a fusion "
                    "spec can only replace it (mode = \"replace\")")
    else:
        ops = _united(backend.supported_ops, section.ops)
        names = {p.name for p in section.patterns}
        patterns = (*(p for p in backend.patterns if p.name not in names), *section.patterns)
    return replace(
        backend, supported_ops=_without(ops, section.exclude), patterns=patterns, rule=None,
        fusion=section.fusion or backend.fusion,
        max_depth=backend.max_depth if section.max_depth is None else section.max_depth)


def _united(declared: Mapping[str, OpPredicate | None] | None,
            offered: Mapping[str, OpPredicate | None] | None
            ) -> Mapping[str, OpPredicate | None] | None:
    """The ops either map supports (None: every op, always)."""
    if declared is None or offered is None:
        return None
    united = dict(declared)
    for name, predicate in offered.items():
        if name not in united:
            united[name] = predicate
        elif united[name] is not None:
            united[name] = None if predicate is None else EitherPredicate(united[name],
                                                                          predicate)
    return united


def _without(ops: Mapping[str, OpPredicate | None] | None, exclude: frozenset[str]
             ) -> Mapping[str, OpPredicate | None] | None:
    if not exclude:
        return ops
    if ops is None:
        ops = dict.fromkeys(kernel_op_names())
    return {name: p for name, p in ops.items() if name not in exclude}
