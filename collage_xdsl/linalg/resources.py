"""Weights as MLIR resource blobs: ``dense_resource<collage_w_KEY>`` in the IR and the
bytes in the module's ``{-# dialect_resources: {builtin: {...}} #-}`` section, which
xDSL's printer writes after the module and `mlir-opt` / `iree-opt` read back.

    %w = collage.constant #collage.weight<"f84f...">  ==>  %w = arith.constant
         : tensor<8x1x5x5xf32>                               dense_resource<collage_w_f84f...>
                                                              : tensor<8x1x5x5xf32>

A blob is MLIR's hex form: ``0x``, the alignment as a 4-byte little-endian number, then the
raw little-endian bytes. The blobs live in the builtin dialect's resource storage for
the process, one per weight key, so lowering the same weight twice stores it once.
"""

from __future__ import annotations

import hashlib

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin


def _storage() -> OpAsmDialectInterface:
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None, "xDSL's builtin dialect keeps resources"
    return interface


def blob_hex(array: np.ndarray) -> str:
    """``array``'s bytes as an MLIR resource blob."""
    data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    return "0x" + array.dtype.itemsize.to_bytes(4, "little").hex() + data.tobytes().hex()


def weight_resource(array: np.ndarray, key: str | None = None) -> str:
    """The resource name of ``array`` (``collage_w_`` + the weight's key, or a digest of its
    bytes and type), its blob stored under that name if it is not yet."""
    if key is None:
        digest = hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=16)
        digest.update(f"{array.dtype}{array.shape}".encode())
        key = digest.hexdigest()
    name = f"collage_w_{key}"
    storage = _storage()
    if storage.lookup(name) is None:
        storage.parse_resource(storage.declare_resource(name), blob_hex(array))
    return name
