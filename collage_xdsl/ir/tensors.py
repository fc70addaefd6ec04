"""Tensors between numpy and the IR: dtypes, inline attributes and the weight store.

Small constants live inline in the IR as ``dense<...>`` attributes. Large ones are
kept by reference: ``#collage.weight<"KEY">`` names an ``.npy`` file in a
content-addressed store (``$COLLAGE_WEIGHTS_DIR``, default
``~/.cache/collage-xdsl/weights``), so printing a model stays small and fast and
re-parsing the printed text (custom or generic) finds the same data again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute

from collage_xdsl.cache import cache_dir
from collage_xdsl.errors import CollageError

INLINE_LIMIT = 16
"""Constants with at most this many elements (or splats) are printed inline."""

_NP_TO_IR: dict[np.dtype, Attribute] = {
    np.dtype(np.float32): f32,
    np.dtype(np.float16): f16,
    np.dtype(np.float64): f64,
    np.dtype(np.int64): i64,
    np.dtype(np.int32): i32,
    np.dtype(np.int8): i8,
    np.dtype(np.uint8): IntegerType(8, Signedness.UNSIGNED),
    np.dtype(np.bool_): i1,
}


class TensorError(CollageError):
    """A tensor cannot be represented or a stored weight cannot be found."""


def ir_dtype(dtype: np.dtype | type) -> Attribute:
    """The IR element type for a numpy dtype."""
    try:
        return _NP_TO_IR[np.dtype(dtype)]
    except KeyError:
        raise TensorError(f"unsupported element type {np.dtype(dtype)}") from None


def np_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype for an IR element type."""
    if isinstance(element_type, Float32Type):
        return np.dtype(np.float32)
    if isinstance(element_type, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element_type, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width == 8 and element_type.signedness.data == Signedness.UNSIGNED:
            return np.dtype(np.uint8)
        if width in (8, 32, 64):
            return np.dtype(f"int{width}")
    raise TensorError(f"unsupported element type {element_type}")


def tensor_type(shape: tuple[int, ...] | list[int], dtype: np.dtype | type) -> TensorType:
    return TensorType(ir_dtype(dtype), list(shape))


def shape_of(t: Attribute) -> tuple[int, ...]:
    assert isinstance(t, TensorType), f"expected a tensor type, got {t}"
    return tuple(t.get_shape())


def tensor_bytes(t: Attribute) -> int:
    """The bytes of a value of type ``t`` (0 for tuples and other non-tensor types)."""
    if not isinstance(t, TensorType):
        return 0
    return int(np.prod(shape_of(t))) * np_dtype(t.get_element_type()).itemsize


def dense_attr(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """An inline ``dense<...>`` attribute holding ``array`` (stored splat-compressed)."""
    array = np.ascontiguousarray(array).reshape(np.shape(array))  # keeps 0-d arrays 0-d
    flat = array.reshape(-1)
    if flat.size > 1 and bool((flat == flat[0]).all()):
        flat = flat[:1]
    if flat.dtype == np.bool_:
        flat = flat.astype(np.int8)
    data = flat.tobytes()
    if flat.size == 1 and array.size != 1:
        data = data * array.size
    return DenseIntOrFPElementsAttr(tensor_type(array.shape, array.dtype), BytesAttr(data))


def dense_value(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    t = attr.get_type()
    dtype = np_dtype(t.get_element_type())
    raw_dtype = np.int8 if dtype == np.bool_ else dtype
    return np.frombuffer(attr.data.data, dtype=raw_dtype).astype(dtype).reshape(shape_of(t))


def is_splat(array: np.ndarray) -> bool:
    flat = array.reshape(-1)
    return flat.size > 0 and bool((flat == flat[0]).all())


class WeightStore:
    """A content-addressed store of large constant tensors (one ``.npy`` per key).

    A splat tensor is stored as its single value; the IR type supplies the shape.
    """

    def __init__(self, root: Path | None = None):
        if root is None:
            env = os.environ.get("COLLAGE_WEIGHTS_DIR")
            root = Path(env) if env else cache_dir() / "weights"
        self.root = root
        self._memory: dict[str, np.ndarray] = {}

    @staticmethod
    def key(array: np.ndarray, stored: np.ndarray) -> str:
        """The content key: dtype, shape and the stored data (one value for a splat)."""
        h = hashlib.blake2b(digest_size=16)
        h.update(f"{array.dtype.str}{array.shape}".encode())
        h.update(stored.data)
        return h.hexdigest()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npy"

    def put(self, array: np.ndarray) -> str:
        array = np.ascontiguousarray(array)
        stored = array.reshape(-1)[:1] if is_splat(array) else array
        key = self.key(array, stored)
        self._memory[key] = array
        path = self.path(key)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                np.save(f, stored)
            os.replace(tmp, path)
        return key

    def get(self, key: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        if key in self._memory:
            return self._memory[key]
        path = self.path(key)
        try:
            stored = np.load(path)
        except FileNotFoundError:
            raise TensorError(
                f"weight {key} not found in {self.root} (set COLLAGE_WEIGHTS_DIR "
                "to the store the IR was written with)"
            ) from None
        except ValueError as e:
            raise TensorError(f"weight file {path} is corrupt: {e}") from None
        if stored.dtype != dtype or (stored.size != 1 and stored.shape != shape):
            raise TensorError(
                f"weight file {path} holds {stored.dtype}{list(stored.shape)}, "
                f"expected {dtype}{list(shape)}"
            )
        array = np.broadcast_to(stored.reshape(()) if stored.size == 1 else stored, shape)
        array = np.ascontiguousarray(array)
        self._memory[key] = array
        return array


_STORE: WeightStore | None = None


def weight_store() -> WeightStore:
    """The process-wide weight store."""
    global _STORE
    if _STORE is None or (
        os.environ.get("COLLAGE_WEIGHTS_DIR")
        and Path(os.environ["COLLAGE_WEIGHTS_DIR"]) != _STORE.root
    ):
        _STORE = WeightStore()
    return _STORE


def constant_op(array: np.ndarray):
    """A `collage.constant` holding ``array``: inline when small or a splat, else by reference."""
    from collage_xdsl.dialects.collage import ConstantOp, WeightAttr

    array = np.asarray(array)
    if array.size <= INLINE_LIMIT:
        return ConstantOp(dense_attr(array), tensor_type(array.shape, array.dtype))
    return ConstantOp(WeightAttr(weight_store().put(array)), tensor_type(array.shape, array.dtype))


def constant_array(op) -> np.ndarray:
    """The value of a `collage.constant` as a (read-only for weights) numpy array."""
    from collage_xdsl.dialects.collage import WeightAttr

    t = op.output.type
    if isinstance(op.value, WeightAttr):
        return weight_store().get(op.value.key.data, shape_of(t), np_dtype(t.get_element_type()))
    return dense_value(op.value)
