"""One small function per case of `collage-lower-linalg`, keyed by the collage op it
exercises (`tests/test_linalg.py` runs each through IREE and the reference interpreter,
and checks that every op the lowering handles has a case here).

Each case is the body of ``func.func @main`` as MLIR text: its parameters are filled with
seeded random arrays (`collage_xdsl.ir.inputs.random_arguments`), so an op whose operand
must be small integers (gather indices) takes them from a constant instead.
"""

F = "f32"


def t(*shape: int, element: str = F) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>" if shape else f"tensor<{element}>"


def unary(op: str, shape=(2, 3, 4), attrs: str = "") -> str:
    ty = t(*shape)
    return f"""func.func @main(%x: {ty}) -> {ty} {{
  %y = collage.{op} %x {attrs}: {ty}
  func.return %y : {ty}
}}"""


def binary(op: str, a=(2, 3, 4), b=(2, 3, 4), out=None, element: str = F,
           result: str | None = None) -> str:
    ta, tb = t(*a, element=element), t(*b, element=element)
    to = t(*(out or a), element=result or element)
    return f"""func.func @main(%x: {ta}, %y: {tb}) -> {to} {{
  %z = collage.{op} %x, %y : ({ta}, {tb}) -> {to}
  func.return %z : {to}
}}"""


def einsum(equation: str, *shapes: tuple[int, ...]) -> str:
    """``collage.einsum`` of ``equation`` over one parameter per shape."""
    terms, output = equation.split("->")
    sizes = {c: n for term, shape in zip(terms.split(","), shapes) for c, n in zip(term, shape)}
    types, to = [t(*s) for s in shapes], t(*(sizes[c] for c in output))
    params = ", ".join(f"%x{i}: {ty}" for i, ty in enumerate(types))
    operands = ", ".join(f"%x{i}" for i in range(len(shapes)))
    return f"""func.func @main({params}) -> {to} {{
  %y = collage.einsum {operands} {{equation = "{equation}"}} : ({", ".join(types)}) -> {to}
  func.return %y : {to}
}}"""


def ints(*values: int) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


def conv(op: str, x: tuple[int, ...], w: tuple[int, ...], out: tuple[int, ...], strides,
         pads, dilations=(1, 1), group: int = 1, output_padding=None) -> str:
    """``collage.conv2d`` or ``conv_transpose2d`` of %x by the weight %w."""
    attrs = f"strides = {ints(*strides)}, pads = {ints(*pads)}, dilations = {ints(*dilations)}"
    if output_padding is not None:
        attrs += f", output_padding = {ints(*output_padding)}"
    tx, tw, to = t(*x), t(*w), t(*out)
    return f"""func.func @main(%x: {tx}, %w: {tw}) -> {to} {{
  %y = collage.{op} %x, %w {{{attrs}, group = {group} : i64}} : ({tx}, {tw}) -> {to}
  func.return %y : {to}
}}"""


def pool(op: str, x: tuple[int, ...], out: tuple[int, ...], kernel, strides, pads,
         ceil_mode: bool = False, count_include_pad: bool | None = None) -> str:
    """``collage.max_pool2d`` or ``avg_pool2d`` of %x (count_include_pad: avg only)."""
    attrs = (f"kernel = {ints(*kernel)}, strides = {ints(*strides)}, pads = {ints(*pads)}, "
             f"ceil_mode = {str(ceil_mode).lower()}")
    if count_include_pad is not None:
        attrs += f", count_include_pad = {str(count_include_pad).lower()}"
    tx, to = t(*x), t(*out)
    return f"""func.func @main(%x: {tx}) -> {to} {{
  %y = collage.{op} %x {{{attrs}}} : {tx} -> {to}
  func.return %y : {to}
}}"""


CASES: dict[str, list[str]] = {
    # element-wise (collage_xdsl/linalg/elementwise.py)
    **{f"collage.{op}": [unary(op)] for op in (
        "relu", "sigmoid", "tanh", "erf", "exp", "neg", "abs", "hard_swish", "mish",
        "softplus", "gelu")},
    "collage.log": [unary("log").replace("%y = collage.log %x", "%a = collage.abs %x : "
                                         f"{t(2, 3, 4)}\n  %y = collage.log %a")],
    "collage.sqrt": [unary("sqrt").replace("%y = collage.sqrt %x", "%a = collage.abs %x : "
                                           f"{t(2, 3, 4)}\n  %y = collage.sqrt %a")],
    "collage.reciprocal": [unary("reciprocal")],
    "collage.leaky_relu": [unary("leaky_relu", attrs="{alpha = 0.1 : f32} ")],
    "collage.hard_sigmoid": [unary("hard_sigmoid", attrs="{alpha = 0.3 : f32, beta = 0.4 : f32} ")],
    "collage.elu": [unary("elu", attrs="{alpha = 0.7 : f32} ")],
    "collage.selu": [unary("selu", attrs="{alpha = 1.5 : f32, gamma = 1.1 : f32} ")],
    "collage.clip": [unary("clip", attrs="{min = -0.5 : f32, max = 0.5 : f32} ")],
    "collage.add": [binary("add"), binary("add", (1, 8, 4, 4), (8, 1, 1)),
                    binary("add", (2, 3), (2, 3), element="i64")],
    "collage.sub": [binary("sub", (4, 5), (5,))],
    "collage.mul": [binary("mul", (2, 1, 4), (3, 1), out=(2, 3, 4))],
    "collage.div": [binary("div")],
    "collage.pow": [binary("pow").replace("%z = collage.pow %x", "%p = collage.abs %x : "
                                          f"{t(2, 3, 4)}\n  %z = collage.pow %p")],
    "collage.maximum": [binary("maximum")],
    "collage.minimum": [binary("minimum", (3, 4), (4,))],
    "collage.equal": [binary("equal", (3, 4), (3, 4), element="i64", result="i1")],
    "collage.less": [binary("less", (3, 4), (4,), result="i1")],
    "collage.greater": [binary("greater", result="i1")],
    "collage.prelu": [binary("prelu", (1, 3, 4, 4), (3, 1, 1))],
    "collage.not": ["""func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xi1> {
  %z = collage.constant dense<0.0> : tensor<f32>
  %c = collage.greater %x, %z : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %n = collage.not %c : tensor<3x4xi1>
  func.return %n : tensor<3x4xi1>
}"""],
    "collage.where": ["""func.func @main(%x: tensor<3x4xf32>, %y: tensor<4xf32>) -> tensor<3x4xf32> {
  %z = collage.constant dense<0.0> : tensor<f32>
  %c = collage.greater %x, %z : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %w = collage.where %c, %x, %y : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  func.return %w : tensor<3x4xf32>
}"""],
    "collage.cast": ["""func.func @main(%x: tensor<3x4xi64>) -> tensor<3x4xf32> {
  %y = collage.cast %x : tensor<3x4xi64> -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}""", """func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xi64> {
  %y = collage.cast %x : tensor<3x4xf32> -> tensor<3x4xi64>
  func.return %y : tensor<3x4xi64>
}"""],
    # constants, matrix products, data movement
    "collage.constant": ["""func.func @main(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %w = collage.constant dense<0.5> : tensor<4x32xf32>
  %y = collage.add %x, %w : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  func.return %y : tensor<4x32xf32>
}"""],
    "collage.matmul": [binary("matmul", (3, 5), (5, 4), out=(3, 4)),
                       binary("matmul", (2, 3, 5), (5, 4), out=(2, 3, 4)),
                       binary("matmul", (2, 1, 3, 5), (4, 5, 6), out=(2, 4, 3, 6)),
                       binary("matmul", (5,), (2, 5, 4), out=(2, 4))],
    "collage.einsum": [einsum("bhid,bhjd->bhij", (1, 2, 3, 4), (1, 2, 5, 4)),
                       einsum("bhij,bhjd->bhid", (1, 2, 3, 5), (1, 2, 5, 4)),
                       einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
                       einsum("bi,bi->b", (3, 4), (3, 4)),
                       einsum("ij->ji", (3, 4)), einsum("ij->i", (3, 4)),
                       einsum("ii->i", (3, 3)), einsum("ij,jk,kl->il", (2, 3), (3, 4), (4, 2))],
    "collage.reshape": ["""func.func @main(%x: tensor<1x16x4x4xf32>) -> tensor<4x64xf32> {
  %y = collage.reshape %x : tensor<1x16x4x4xf32> -> tensor<4x64xf32>
  func.return %y : tensor<4x64xf32>
}"""],
    # convolutions, pooling, padding, LRN (linalg/contraction.py, linalg/windows.py)
    "collage.conv2d": [
        conv("conv2d", (1, 3, 8, 8), (4, 3, 3, 3), (1, 4, 6, 6), (1, 1), (0, 0, 0, 0)),
        conv("conv2d", (1, 3, 8, 8), (4, 3, 3, 3), (1, 4, 5, 4), (2, 2), (1, 0, 2, 1)),
        conv("conv2d", (1, 3, 9, 8), (5, 3, 3, 2), (1, 5, 9, 5), (1, 2), (2, 2, 2, 2),
             dilations=(2, 3)),
        conv("conv2d", (1, 4, 8, 8), (4, 1, 3, 3), (1, 4, 4, 4), (2, 2), (1, 1, 1, 1), group=4),
        conv("conv2d", (1, 4, 8, 8), (8, 1, 3, 3), (1, 8, 8, 8), (1, 1), (1, 1, 1, 1), group=4),
        conv("conv2d", (2, 4, 8, 8), (6, 2, 3, 3), (2, 6, 5, 4), (1, 2), (0, 1, 1, 0),
             dilations=(2, 1), group=2),
    ],
    "collage.conv_transpose2d": [
        conv("conv_transpose2d", (1, 4, 5, 5), (4, 3, 3, 3), (1, 3, 7, 7), (1, 1),
             (0, 0, 0, 0), output_padding=(0, 0)),
        conv("conv_transpose2d", (1, 4, 5, 5), (4, 2, 3, 3), (1, 2, 10, 10), (2, 2),
             (1, 1, 1, 1), output_padding=(1, 1)),
        conv("conv_transpose2d", (2, 4, 4, 5), (4, 3, 2, 3), (2, 6, 8, 8), (2, 1),
             (0, 1, 2, 0), dilations=(2, 2), group=2, output_padding=(1, 0)),
        conv("conv_transpose2d", (1, 4, 4, 4), (4, 1, 3, 3), (1, 4, 11, 7), (3, 2),
             (2, 0, 1, 3), group=4, output_padding=(2, 1)),
        conv("conv_transpose2d", (1, 2, 5, 5), (2, 2, 2, 2), (1, 2, 11, 13), (3, 3),
             (2, 2, 1, 1), output_padding=(0, 2)),
    ],
    "collage.max_pool2d": [
        pool("max_pool2d", (1, 3, 8, 8), (1, 3, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0)),
        pool("max_pool2d", (1, 3, 8, 8), (1, 3, 4, 4), (3, 3), (2, 2), (1, 1, 1, 1)),
        pool("max_pool2d", (1, 3, 8, 8), (1, 3, 4, 4), (3, 3), (2, 2), (0, 0, 0, 0),
             ceil_mode=True),
        pool("max_pool2d", (1, 3, 8, 9), (1, 3, 4, 3), (3, 2), (2, 3), (1, 0, 0, 1),
             ceil_mode=True),
    ],
    "collage.avg_pool2d": [
        pool("avg_pool2d", (1, 3, 8, 8), (1, 3, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0)),
        pool("avg_pool2d", (1, 3, 8, 8), (1, 3, 4, 4), (3, 3), (2, 2), (1, 1, 1, 1),
             count_include_pad=False),
        pool("avg_pool2d", (1, 3, 8, 8), (1, 3, 4, 4), (3, 3), (2, 2), (1, 1, 1, 1),
             count_include_pad=True),
        pool("avg_pool2d", (1, 3, 8, 8), (1, 3, 4, 4), (3, 3), (2, 2), (0, 0, 0, 0),
             ceil_mode=True),
        pool("avg_pool2d", (1, 3, 8, 9), (1, 3, 5, 5), (3, 2), (2, 2), (1, 0, 1, 2),
             ceil_mode=True, count_include_pad=True),
        pool("avg_pool2d", (1, 3, 8, 9), (1, 3, 5, 5), (3, 2), (2, 2), (1, 0, 1, 2),
             ceil_mode=True, count_include_pad=False),
    ],
    "collage.global_avg_pool2d": [
        """func.func @main(%x: tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32> {
  %y = collage.global_avg_pool2d %x : tensor<2x3x5x7xf32> -> tensor<2x3x1x1xf32>
  func.return %y : tensor<2x3x1x1xf32>
}""",
    ],
    "collage.pad": [
        """func.func @main(%x: tensor<2x3x4xf32>) -> tensor<3x6x7xf32> {
  %y = collage.pad %x {pads = array<i64: 0, 1, 2, 1, 2, 1>, value = 0.5 : f32}
    : tensor<2x3x4xf32> -> tensor<3x6x7xf32>
  func.return %y : tensor<3x6x7xf32>
}""",
        """func.func @main(%x: tensor<3x4xi64>) -> tensor<5x4xi64> {
  %y = collage.pad %x {pads = array<i64: 2, 0, 0, 0>, value = -2.0 : f32}
    : tensor<3x4xi64> -> tensor<5x4xi64>
  func.return %y : tensor<5x4xi64>
}""",
        """func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = collage.pad %x {pads = array<i64: 0, 0, 0, 0>} : tensor<3x4xf32> -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}""",
    ],
    "collage.lrn": [
        """func.func @main(%x: tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32> {
  %y = collage.lrn %x {size = 3 : i64, alpha = 0.001 : f32, beta = 0.75 : f32, bias = 2.0 : f32}
    : tensor<1x6x4x4xf32>
  func.return %y : tensor<1x6x4x4xf32>
}""",
        """func.func @main(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %y = collage.lrn %x {size = 4 : i64, alpha = 0.5 : f32, beta = 0.5 : f32, bias = 1.0 : f32}
    : tensor<2x5x3xf32>
  func.return %y : tensor<2x5x3xf32>
}""",
    ],
    # normalizations, softmax, reductions, argmax (linalg/normalization.py)
    "collage.softmax": [unary("softmax", (2, 3, 8), "{axis = -1 : i64} "),
                        unary("softmax", (2, 5, 4), "{axis = 1 : i64} ")],
    "collage.layer_norm": ["""func.func @main(%x: tensor<2x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %y = collage.layer_norm %x, %s, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}""", """func.func @main(%x: tensor<2x4x8xf32>, %s: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %y = collage.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-03 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}"""],
    "collage.batch_norm": ["""func.func @main(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %a = collage.abs %v : tensor<3xf32>
  %y = collage.batch_norm %x, %s, %b, %m, %a {epsilon = 1.0e-05 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  func.return %y : tensor<2x3x4x4xf32>
}"""],
    "collage.instance_norm": ["""func.func @main(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %y = collage.instance_norm %x, %s, %b {epsilon = 1.0e-05 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  func.return %y : tensor<2x3x4x4xf32>
}"""],
    "collage.group_norm": ["""func.func @main(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %y = collage.group_norm %x, %s, %b {num_groups = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  func.return %y : tensor<2x4x3x3xf32>
}""", """func.func @main(%x: tensor<2x6xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6xf32> {
  %y = collage.group_norm %x, %s, %b {num_groups = 3 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}"""],
    "collage.reduce_sum": ["""func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %y = collage.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  func.return %y : tensor<2x1x4xf32>
}""", """func.func @main(%x: tensor<2x3x4xi64>) -> tensor<3xi64> {
  %y = collage.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x3x4xi64> -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}"""],
    "collage.reduce_mean": ["""func.func @main(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32> {
  %y = collage.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x3x4x4xf32> -> tensor<1x3x1x1xf32>
  func.return %y : tensor<1x3x1x1xf32>
}""", """func.func @main(%x: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = collage.reduce_mean %x {keepdims = false} : tensor<2x3x4xf32> -> tensor<f32>
  func.return %y : tensor<f32>
}""", """func.func @main(%x: tensor<3x4xi64>) -> tensor<3xi64> {
  %y = collage.reduce_mean %x {axes = array<i64: -1>, keepdims = false} : tensor<3x4xi64> -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}"""],
    "collage.reduce_max": ["""func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  %y = collage.reduce_max %x {axes = array<i64: -1>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}""", """func.func @main(%x: tensor<3x4xi64>) -> tensor<1x4xi64> {
  %y = collage.reduce_max %x {axes = array<i64: 0>, keepdims = true} : tensor<3x4xi64> -> tensor<1x4xi64>
  func.return %y : tensor<1x4xi64>
}"""],
    "collage.reduce_min": ["""func.func @main(%x: tensor<2x3x4xf32>) -> tensor<1x3x4xf32> {
  %y = collage.reduce_min %x {axes = array<i64: 0>, keepdims = true} : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
  func.return %y : tensor<1x3x4xf32>
}"""],
    "collage.reduce_l2": ["""func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  %y = collage.reduce_l2 %x {axes = array<i64: 1, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}"""],
    "collage.argmax": ["""func.func @main(%x: tensor<2x5x4xf32>) -> tensor<2x1x4xi64> {
  %y = collage.argmax %x {axis = 1 : i64, keepdims = true} : tensor<2x5x4xf32> -> tensor<2x1x4xi64>
  func.return %y : tensor<2x1x4xi64>
}""", """func.func @main(%x: tensor<3x6xf32>) -> tensor<3xi64> {
  %y = collage.argmax %x {axis = -1 : i64, keepdims = false} : tensor<3x6xf32> -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}""", """func.func @main(%x: tensor<6x4xi64>) -> tensor<1x4xi64> {
  %y = collage.argmax %x {axis = 0 : i64} : tensor<6x4xi64> -> tensor<1x4xi64>
  func.return %y : tensor<1x4xi64>
}""", """func.func @main(%x: tensor<4x6xf32>) -> tensor<4xi64> {
  %c = collage.clip %x {max = 0.0 : f32} : tensor<4x6xf32>
  %y = collage.argmax %c {axis = 1 : i64, keepdims = false} : tensor<4x6xf32> -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}"""],
    # transpose, concat, slice, split, gather, expand, tile (linalg/shapes.py)
    "collage.transpose": ["""func.func @main(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = collage.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %y : tensor<4x2x3xf32>
}"""],
    "collage.concat": [
        """func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %z = collage.concat %x, %y {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  func.return %z : tensor<2x8xf32>
}""", """func.func @main(%x: tensor<1x3xi64>, %y: tensor<2x3xi64>) -> tensor<4x3xi64> {
  %z = collage.concat %x, %y, %x {axis = 0 : i64} : (tensor<1x3xi64>, tensor<2x3xi64>, tensor<1x3xi64>) -> tensor<4x3xi64>
  func.return %z : tensor<4x3xi64>
}"""],
    "collage.slice": [
        """func.func @main(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %y = collage.slice %x {starts = array<i64: 1>, ends = array<i64: 7>, axes = array<i64: 1>, steps = array<i64: 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}""", """func.func @main(%x: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %y = collage.slice %x {starts = array<i64: -1, 100>, ends = array<i64: 0, -9>, axes = array<i64: 0, -1>, steps = array<i64: -2, -2>} : tensor<4x8xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}""", """func.func @main(%x: tensor<3x5x6xf32>) -> tensor<2x5x2xf32> {
  %y = collage.slice %x {starts = array<i64: 1, 5>, ends = array<i64: 3, 1>, axes = array<i64: 0, 2>, steps = array<i64: 1, -3>} : tensor<3x5x6xf32> -> tensor<2x5x2xf32>
  func.return %y : tensor<2x5x2xf32>
}"""],
    "collage.split": ["""func.func @main(%x: tensor<2x7xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x1xf32>) {
  %a, %b, %c = collage.split %x {axis = -1 : i64, sizes = array<i64: 2, 4, 1>} : (tensor<2x7xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x1xf32>)
  func.return %a, %b, %c : tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x1xf32>
}"""],
    "collage.gather": [
        """func.func @main(%w: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %g = collage.gather %w, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  func.return %g : tensor<2x3x4xf32>
}""", """func.func @main(%x: tensor<2x5x3xf32>) -> tensor<2x4x3xf32> {
  %i = collage.constant dense<[4, -1, 0, -5]> : tensor<4xi64>
  %g = collage.gather %x, %i {axis = -2 : i64} : (tensor<2x5x3xf32>, tensor<4xi64>) -> tensor<2x4x3xf32>
  func.return %g : tensor<2x4x3xf32>
}""", """func.func @main(%x: tensor<2x5x3xf32>) -> tensor<2x5xf32> {
  %i = collage.constant dense<-2> : tensor<i32>
  %g = collage.gather %x, %i {axis = 2 : i64} : (tensor<2x5x3xf32>, tensor<i32>) -> tensor<2x5xf32>
  func.return %g : tensor<2x5xf32>
}"""],
    "collage.expand": [
        """func.func @main(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = collage.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}"""],
    "collage.tile": [
        """func.func @main(%x: tensor<2x3xf32>) -> tensor<4x9xf32> {
  %y = collage.tile %x {repeats = array<i64: 2, 3>} : tensor<2x3xf32> -> tensor<4x9xf32>
  func.return %y : tensor<4x9xf32>
}""", """func.func @main(%x: tensor<2x1x3xi64>) -> tensor<2x4x3xi64> {
  %y = collage.tile %x {repeats = array<i64: 1, 4, 1>} : tensor<2x1x3xi64> -> tensor<2x4x3xi64>
  func.return %y : tensor<2x4x3xi64>
}"""],
}
