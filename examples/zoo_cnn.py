"""Image classifiers of the modern zoo (`modern_zoo.py`), as torchvision exports them: batch
norm folded into the convolutions' biases, seeded weights scaled to keep unit variance
(`Net`), NCHW 224x224 inputs.

- mobilenet_v2: inverted residuals (expand 1x1, depthwise 3x3, linear project), ReLU6.
- mobilenet_v3_small: the small configuration's 11 blocks, 3x3/5x5 depthwise, squeeze-and-
  excitation with HardSigmoid, HardSwish, a 576-1024-1000 head.
- efficientnet_b0: 16 MBConv blocks (SiLU as Sigmoid * Mul, squeeze-and-excitation).
- resnet18: 7x7 stem, max-pool, 2+2+2+2 basic blocks (64-512 channels).
"""

from __future__ import annotations

import math

import onnx
from onnx import TensorProto, helper
from onnx_builder import Builder

SECOND_MOMENT = {None: 1.0, "relu": 0.5, "relu6": 0.5, "silu": 0.355, "hardswish": 0.331}
"""E[act(z)^2] for z ~ N(0, 1): the weights after an activation are scaled up by 1/sqrt of it."""
GATE_MOMENT = 0.29
"""E[sigmoid(z)^2] for z ~ N(0, 1) (HardSigmoid is close): the gated tensor's share."""


class Net(Builder):
    """A Builder for convolutional networks that tracks each tensor's second moment, so that
    every convolution's weights keep its output near unit variance (as a trained network's
    folded batch norm does) however deep the network is."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.moments: dict[str, float] = {}

    def act(self, x: str, act: str | None) -> str:
        """The activation `act` of x (SiLU as x * Sigmoid(x), ReLU6 as Clip; None: x)."""
        if act is None:
            return x
        if act == "relu6":
            y = self.op("Clip", x, self.f32(0.0), self.f32(6.0))
        elif act == "silu":
            y = self.op("Mul", x, self.op("Sigmoid", x))
        else:
            y = self.op({"relu": "Relu", "hardswish": "HardSwish"}[act], x)
        self.moments[y] = self.moments.get(x, 1.0) * SECOND_MOMENT[act]
        return y

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, groups: int = 1,
             act: str | None = None, pad: int | None = None, op: str = "Conv") -> str:
        """A k x k convolution (or transposed convolution, stride k) with a bias (batch norm
        folded in) and an activation; `pad` defaults to k // 2."""
        fan_in = cin // groups * k * k
        scale = 1.0 / math.sqrt(fan_in * self.moments.get(x, 1.0))
        if op == "ConvTranspose":
            w = self.weight(cin, cout, k, k, scale=scale * k)
            attrs = {"strides": [k, k]}
        else:
            w = self.weight(cout, cin // groups, k, k, scale=scale)
            p = k // 2 if pad is None else pad
            attrs = {"strides": [stride, stride], "pads": [p] * 4, "group": groups}
        y = self.op(op, x, w, self.weight(cout, scale=0.1), kernel_shape=[k, k], **attrs)
        return self.act(y, act)

    def add(self, x: str, y: str) -> str:
        z = self.op("Add", x, y)
        self.moments[z] = self.moments.get(x, 1.0) + self.moments.get(y, 1.0)
        return z

    def keep(self, op_type: str, x: str, *rest: str, **attrs) -> str:
        """An op whose output keeps the second moment of its input x (pooling, flatten,
        resize)."""
        y = self.op(op_type, x, *rest, **attrs)
        self.moments[y] = self.moments.get(x, 1.0)
        return y

    def concat(self, *xs: str) -> str:
        """Concatenation along channels; the inputs' mean second moment."""
        y = self.op("Concat", *xs, axis=1)
        self.moments[y] = sum(self.moments.get(x, 1.0) for x in xs) / len(xs)
        return y

    def squeeze_excite(self, x: str, channels: int, squeeze: int, act: str,
                       gate: str) -> str:
        """x * gate(conv(act(conv(global-average-pool(x))))), the convolutions 1x1."""
        s = self.keep("GlobalAveragePool", x)
        s = self.conv(self.conv(s, channels, squeeze, 1, act=act), squeeze, channels, 1)
        if gate == "hardsigmoid":
            s = self.op("HardSigmoid", s, alpha=1.0 / 6.0, beta=0.5)
        else:
            s = self.op("Sigmoid", s)
        y = self.op("Mul", x, s)
        self.moments[y] = self.moments.get(x, 1.0) * GATE_MOMENT
        return y


def _classifier(b: Net, x: str, widths: tuple[int, ...], act: str | None) -> str:
    """Global average pooling, flatten, then Gemm layers through `widths` (act between)."""
    h = b.keep("Flatten", b.keep("GlobalAveragePool", x), axis=1)
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:])):
        w = b.weight(n_out, n_in, scale=1.0 / math.sqrt(n_in * b.moments.get(h, 1.0)))
        h = b.op("Gemm", h, w, b.weight(n_out, scale=0.1), transB=1)
        if i < len(widths) - 2:
            h = b.act(h, act)
    return h


def image_model(b: Net, name: str, x: str, logits: str, batch: int) -> onnx.ModelProto:
    """The model from image [batch, 3, 224, 224] to `logits` [batch, 1000]."""
    return b.model(
        name,
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, 3, 224, 224])],
        [helper.make_tensor_value_info(b.rename(logits, "logits"), TensorProto.FLOAT,
                                       [batch, 1000])],
        opset=17,
    )


def _make_divisible(v: float, divisor: int = 8) -> int:
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def mobilenet_v2(name: str, batch: int = 1) -> onnx.ModelProto:
    b = Net(seed=11)
    h = b.conv("image", 3, 32, 3, stride=2, act="relu6")
    cin = 32
    settings = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = h if t == 1 else b.conv(h, cin, hidden, 1, act="relu6")
            y = b.conv(y, hidden, hidden, 3, stride=stride, groups=hidden, act="relu6")
            residual = stride == 1 and cin == c
            y = b.conv(y, hidden, c, 1)
            h = b.add(h, y) if residual else y
            cin = c
    h = b.conv(h, 320, 1280, 1, act="relu6")
    return image_model(b, name, "image", _classifier(b, h, (1280, 1000), None), batch)


V3_SMALL = (  # kernel, expanded, out, squeeze-and-excitation, activation, stride
    (3, 16, 16, True, "relu", 2),
    (3, 72, 24, False, "relu", 2),
    (3, 88, 24, False, "relu", 1),
    (5, 96, 40, True, "hardswish", 2),
    (5, 240, 40, True, "hardswish", 1),
    (5, 240, 40, True, "hardswish", 1),
    (5, 120, 48, True, "hardswish", 1),
    (5, 144, 48, True, "hardswish", 1),
    (5, 288, 96, True, "hardswish", 2),
    (5, 576, 96, True, "hardswish", 1),
    (5, 576, 96, True, "hardswish", 1),
)


def mobilenet_v3_small(name: str, batch: int = 1) -> onnx.ModelProto:
    b = Net(seed=12)
    h = b.conv("image", 3, 16, 3, stride=2, act="hardswish")
    cin = 16
    for k, expanded, cout, se, act, stride in V3_SMALL:
        y = h if expanded == cin else b.conv(h, cin, expanded, 1, act=act)
        y = b.conv(y, expanded, expanded, k, stride=stride, groups=expanded, act=act)
        if se:
            y = b.squeeze_excite(y, expanded, _make_divisible(expanded // 4), "relu",
                               "hardsigmoid")
        residual = stride == 1 and cin == cout
        y = b.conv(y, expanded, cout, 1)
        h = b.add(h, y) if residual else y
        cin = cout
    h = b.conv(h, 96, 576, 1, act="hardswish")
    return image_model(b, name, "image", _classifier(b, h, (576, 1024, 1000), "hardswish"),
                       batch)


B0_STAGES = (  # expansion, kernel, stride, in, out, layers
    (1, 3, 1, 32, 16, 1),
    (6, 3, 2, 16, 24, 2),
    (6, 5, 2, 24, 40, 2),
    (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3),
    (6, 5, 2, 112, 192, 4),
    (6, 3, 1, 192, 320, 1),
)


def efficientnet_b0(name: str, batch: int = 1) -> onnx.ModelProto:
    b = Net(seed=13)
    h = b.conv("image", 3, 32, 3, stride=2, act="silu")
    for t, k, s, cin, cout, layers in B0_STAGES:
        for i in range(layers):
            c, stride = (cin if i == 0 else cout), (s if i == 0 else 1)
            expanded = c * t
            y = h if t == 1 else b.conv(h, c, expanded, 1, act="silu")
            y = b.conv(y, expanded, expanded, k, stride=stride, groups=expanded, act="silu")
            y = b.squeeze_excite(y, expanded, max(1, c // 4), "silu", "sigmoid")
            residual = stride == 1 and c == cout
            y = b.conv(y, expanded, cout, 1)
            h = b.add(h, y) if residual else y
    h = b.conv(h, 320, 1280, 1, act="silu")
    return image_model(b, name, "image", _classifier(b, h, (1280, 1000), None), batch)


def resnet18(name: str, batch: int = 1) -> onnx.ModelProto:
    b = Net(seed=14)
    h = b.conv("image", 3, 64, 7, stride=2, act="relu")
    h = b.keep("MaxPool", h, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for i in range(2):
            stride = 2 if stage > 0 and i == 0 else 1
            y = b.conv(h, cin, cout, 3, stride=stride, act="relu")
            y = b.conv(y, cout, cout, 3)
            skip = h if stride == 1 and cin == cout else b.conv(h, cin, cout, 1, stride)
            h = b.act(b.add(y, skip), "relu")
            cin = cout
    return image_model(b, name, "image", _classifier(b, h, (512, 1000), None), batch)
