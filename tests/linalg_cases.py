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
        """func.func @main(%x: tensor<1x3x8x8xf32>,
                %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
      dilations = array<i64: 1, 1>, group = 1 : i64}
    : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x8xf32>,
                %w: tensor<4x3x3x3xf32>) -> tensor<1x4x5x4xf32> {
  %y = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 2, 1>,
      dilations = array<i64: 1, 1>, group = 1 : i64}
    : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x4xf32>
  func.return %y : tensor<1x4x5x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x9x8xf32>,
                %w: tensor<5x3x3x2xf32>) -> tensor<1x5x9x5xf32> {
  %y = collage.conv2d %x, %w {strides = array<i64: 1, 2>, pads = array<i64: 2, 2, 2, 2>,
      dilations = array<i64: 2, 3>, group = 1 : i64}
    : (tensor<1x3x9x8xf32>, tensor<5x3x3x2xf32>) -> tensor<1x5x9x5xf32>
  func.return %y : tensor<1x5x9x5xf32>
}""",
        """func.func @main(%x: tensor<1x4x8x8xf32>,
                %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %y = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>,
      dilations = array<i64: 1, 1>, group = 4 : i64}
    : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x4x8x8xf32>,
                %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %y = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
      dilations = array<i64: 1, 1>, group = 4 : i64}
    : (tensor<1x4x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}""",
        """func.func @main(%x: tensor<2x4x8x8xf32>,
                %w: tensor<6x2x3x3xf32>) -> tensor<2x6x5x4xf32> {
  %y = collage.conv2d %x, %w {strides = array<i64: 1, 2>, pads = array<i64: 0, 1, 1, 0>,
      dilations = array<i64: 2, 1>, group = 2 : i64}
    : (tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x4xf32>
  func.return %y : tensor<2x6x5x4xf32>
}""",
    ],
    "collage.conv_transpose2d": [
        """func.func @main(%x: tensor<1x4x5x5xf32>,
                %w: tensor<4x3x3x3xf32>) -> tensor<1x3x7x7xf32> {
  %y = collage.conv_transpose2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0,
      0>, dilations = array<i64: 1, 1>,
      output_padding = array<i64: 0, 0>, group = 1 : i64}
    : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x7x7xf32>
  func.return %y : tensor<1x3x7x7xf32>
}""",
        """func.func @main(%x: tensor<1x4x5x5xf32>,
                %w: tensor<4x2x3x3xf32>) -> tensor<1x2x10x10xf32> {
  %y = collage.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1,
      1>, dilations = array<i64: 1, 1>,
      output_padding = array<i64: 1, 1>, group = 1 : i64}
    : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x10x10xf32>
  func.return %y : tensor<1x2x10x10xf32>
}""",
        """func.func @main(%x: tensor<2x4x4x5xf32>,
                %w: tensor<4x3x2x3xf32>) -> tensor<2x6x8x8xf32> {
  %y = collage.conv_transpose2d %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 0, 1, 2,
      0>, dilations = array<i64: 2, 2>,
      output_padding = array<i64: 1, 0>, group = 2 : i64}
    : (tensor<2x4x4x5xf32>, tensor<4x3x2x3xf32>) -> tensor<2x6x8x8xf32>
  func.return %y : tensor<2x6x8x8xf32>
}""",
        """func.func @main(%x: tensor<1x4x4x4xf32>,
                %w: tensor<4x1x3x3xf32>) -> tensor<1x4x11x7xf32> {
  %y = collage.conv_transpose2d %x, %w {strides = array<i64: 3, 2>, pads = array<i64: 2, 0, 1,
      3>, dilations = array<i64: 1, 1>,
      output_padding = array<i64: 2, 1>, group = 4 : i64}
    : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x11x7xf32>
  func.return %y : tensor<1x4x11x7xf32>
}""",
        """func.func @main(%x: tensor<1x2x5x5xf32>,
                %w: tensor<2x2x2x2xf32>) -> tensor<1x2x11x13xf32> {
  %y = collage.conv_transpose2d %x, %w {strides = array<i64: 3, 3>, pads = array<i64: 2, 2, 1,
      1>, dilations = array<i64: 1, 1>,
      output_padding = array<i64: 0, 2>, group = 1 : i64}
    : (tensor<1x2x5x5xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x11x13xf32>
  func.return %y : tensor<1x2x11x13xf32>
}""",
    ],
    "collage.max_pool2d": [
        """func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = collage.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
      pads = array<i64: 0, 0, 0, 0>, ceil_mode = false}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = collage.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      pads = array<i64: 1, 1, 1, 1>, ceil_mode = false}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = collage.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      pads = array<i64: 0, 0, 0, 0>, ceil_mode = true}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x9xf32>) -> tensor<1x3x4x3xf32> {
  %y = collage.max_pool2d %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 3>,
      pads = array<i64: 1, 0, 0, 1>, ceil_mode = true}
    : tensor<1x3x8x9xf32> -> tensor<1x3x4x3xf32>
  func.return %y : tensor<1x3x4x3xf32>
}""",
    ],
    "collage.avg_pool2d": [
        """func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = collage.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
      pads = array<i64: 0, 0, 0, 0>, ceil_mode = false}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = collage.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      pads = array<i64: 1, 1, 1, 1>, ceil_mode = false, count_include_pad = false}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = collage.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      pads = array<i64: 1, 1, 1, 1>, ceil_mode = false, count_include_pad = true}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = collage.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      pads = array<i64: 0, 0, 0, 0>, ceil_mode = true}
    : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x9xf32>) -> tensor<1x3x5x5xf32> {
  %y = collage.avg_pool2d %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>,
      pads = array<i64: 1, 0, 1, 2>, ceil_mode = true, count_include_pad = true}
    : tensor<1x3x8x9xf32> -> tensor<1x3x5x5xf32>
  func.return %y : tensor<1x3x5x5xf32>
}""",
        """func.func @main(%x: tensor<1x3x8x9xf32>) -> tensor<1x3x5x5xf32> {
  %y = collage.avg_pool2d %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>,
      pads = array<i64: 1, 0, 1, 2>, ceil_mode = true, count_include_pad = false}
    : tensor<1x3x8x9xf32> -> tensor<1x3x5x5xf32>
  func.return %y : tensor<1x3x5x5xf32>
}""",
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
