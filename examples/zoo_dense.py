"""Dense-prediction networks of the modern zoo (`modern_zoo.py`), built on `zoo_cnn.Net`.

- yolo_small: YOLOv5s (v6) at 640x640: Conv-SiLU, C3 blocks, SPPF, a PANet neck with nearest
  Resize x2 and Concat, and the detect head decoding boxes on three strides into
  [1, 25200, 85] (xywh, objectness, 80 classes); non-maximum suppression is the host's.
- unet: the UNet of Ronneberger et al. (double 3x3 conv + ReLU, 64-1024 channels, max-pool
  down, ConvTranspose 2x2 up, skip connections by Concat) on 1x3x128x128, 2 classes.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper
from zoo_cnn import Net

ANCHORS = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))
"""YOLOv5's anchors (width, height pairs) for strides 8, 16 and 32."""


def _c3(b: Net, x: str, cin: int, cout: int, n: int, shortcut: bool = True) -> str:
    """CSP bottleneck with 3 convolutions: n bottlenecks on one half, concat, 1x1."""
    hidden = cout // 2
    y = b.conv(x, cin, hidden, 1, act="silu")
    for _ in range(n):
        z = b.conv(b.conv(y, hidden, hidden, 1, act="silu"), hidden, hidden, 3, act="silu")
        y = b.add(y, z) if shortcut else z
    cat = b.concat(y, b.conv(x, cin, hidden, 1, act="silu"))
    return b.conv(cat, 2 * hidden, cout, 1, act="silu")


def _sppf(b: Net, x: str, c: int) -> str:
    """Spatial pyramid pooling, fast: three chained 5x5 max-pools, concatenated."""
    y = b.conv(x, c, c // 2, 1, act="silu")
    pools = [y]
    for _ in range(3):
        pools.append(b.keep("MaxPool", pools[-1], kernel_shape=[5, 5], pads=[2] * 4))
    return b.conv(b.concat(*pools), 2 * c, c, 1, act="silu")


def _up_cat(b: Net, x: str, skip: str) -> str:
    """Nearest-neighbour x2 upsampling of x, concatenated with skip along channels."""
    scales = b.const(np.array([1, 1, 2, 2], np.float32), "scales")
    return b.concat(b.keep("Resize", x, "", scales, mode="nearest"), skip)


def _detect(b: Net, x: str, cin: int, size: int, stride: int, anchors) -> str:
    """One detect level: 1x1 conv to 3 x 85, sigmoid, xy = (2s - 0.5 + cell) * stride,
    wh = (2s)^2 * anchor; [1, 3 * size * size, 85]."""
    p = b.conv(x, cin, 3 * 85, 1)
    p = b.op("Transpose", b.op("Reshape", p, b.i64(-1, 3, 85, size, size)), perm=[0, 1, 3, 4, 2])
    xy, wh, conf = b.ops("Split", b.op("Sigmoid", p), b.i64(2, 2, 81), outputs=3, axis=4)
    ys, xs = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    grid = np.stack([xs, ys], -1).reshape(1, 1, size, size, 2).astype(np.float32) - 0.5
    anchor = np.array(anchors, np.float32).reshape(1, 3, 1, 1, 2)
    two = b.f32(2.0)
    xy = b.op("Mul", b.op("Add", b.op("Mul", xy, two), b.const(grid, "grid")), b.f32(stride))
    wh = b.op("Mul", b.op("Pow", b.op("Mul", wh, two), two), b.const(anchor, "anchor"))
    box = b.op("Concat", xy, wh, conf, axis=4)
    return b.op("Reshape", box, b.i64(-1, 3 * size * size, 85))


def _yolo_backbone(b: Net, x: str) -> tuple[str, str, str]:
    """The CSP-Darknet backbone; its stride 8, 16 and 32 features (128, 256, 512 ch)."""
    h = b.conv(x, 3, 32, 6, stride=2, act="silu", pad=2)
    h = _c3(b, b.conv(h, 32, 64, 3, stride=2, act="silu"), 64, 64, 1)
    p3 = _c3(b, b.conv(h, 64, 128, 3, stride=2, act="silu"), 128, 128, 2)
    p4 = _c3(b, b.conv(p3, 128, 256, 3, stride=2, act="silu"), 256, 256, 3)
    p5 = _c3(b, b.conv(p4, 256, 512, 3, stride=2, act="silu"), 512, 512, 1)
    return p3, p4, _sppf(b, p5, 512)


def yolo_small(name: str, batch: int = 1, size: int = 640) -> onnx.ModelProto:
    b = Net(seed=21)
    p3, p4, p5 = _yolo_backbone(b, "image")
    h10 = b.conv(p5, 512, 256, 1, act="silu")
    h13 = _c3(b, _up_cat(b, h10, p4), 512, 256, 1, shortcut=False)
    h14 = b.conv(h13, 256, 128, 1, act="silu")
    out3 = _c3(b, _up_cat(b, h14, p3), 256, 128, 1, shortcut=False)
    down = b.conv(out3, 128, 128, 3, stride=2, act="silu")
    out4 = _c3(b, b.concat(down, h14), 256, 256, 1, shortcut=False)
    down = b.conv(out4, 256, 256, 3, stride=2, act="silu")
    out5 = _c3(b, b.concat(down, h10), 512, 512, 1, shortcut=False)
    levels = ((out3, 128, 8), (out4, 256, 16), (out5, 512, 32))
    boxes = [_detect(b, x, c, size // s, s, a) for (x, c, s), a in zip(levels, ANCHORS)]
    out = b.rename(b.op("Concat", *boxes, axis=1), "detections")
    cells = sum(3 * (size // s) ** 2 for _, _, s in levels)
    return b.model(
        name,
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, size, size])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [batch, cells, 85])],
        opset=17,
    )


def _double_conv(b: Net, x: str, cin: int, cout: int) -> str:
    return b.conv(b.conv(x, cin, cout, 3, act="relu"), cout, cout, 3, act="relu")


def unet(name: str, batch: int = 1, size: int = 128, classes: int = 2) -> onnx.ModelProto:
    b = Net(seed=22)
    widths = (64, 128, 256, 512, 1024)
    skips = [_double_conv(b, "image", 3, widths[0])]
    for cin, cout in zip(widths, widths[1:]):
        down = b.keep("MaxPool", skips[-1], kernel_shape=[2, 2], strides=[2, 2])
        skips.append(_double_conv(b, down, cin, cout))
    h = skips.pop()
    for cin, cout in zip(widths[:0:-1], widths[-2::-1]):
        up = b.conv(h, cin, cout, 2, op="ConvTranspose")
        h = _double_conv(b, b.concat(skips.pop(), up), cin, cout)
    out = b.rename(b.conv(h, widths[0], classes, 1), "mask_logits")
    return b.model(
        name,
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, size, size])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [batch, classes, size, size])],
        opset=17,
    )
