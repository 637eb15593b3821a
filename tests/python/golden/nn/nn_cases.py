"""Cases shared by gen_nn_goldens.py (run under REAL MLX 0.32) and tests/python/test_nn.py,
test_optimizers.py, test_utils_tree.py (run under mlx-arm): each case is a snippet of Python
that assigns ``out``; both sides execute the same text, so the inputs are the same (random
inputs come from explicit seeds / keys, and mlx-arm's generator is bit-exact with MLX's).

``out`` may be an array, a Python value, or a tree (dict / list / tuple) of those; modules in
it are recorded by their repr. A snippet that raises records the exception type and message.
"""
import math

PRE = "mx.random.seed({seed})\n"


def _x(shape, key=1, dt="float32"):
    return f"mx.random.normal({shape}, key=mx.random.key({key})).astype(mx.{dt})"


CASES = {}  # group -> list of (name, code, rtol)


def case(group, name, code, rtol=None, seed=0):
    CASES.setdefault(group, []).append((name, PRE.format(seed=seed) + code, rtol))


# ----------------------------------------------------------------------------- utils trees
T = "{'a': [1, 2, (3, 4)], 'b': {'c': 5, 'd': []}, 'e': 6}"
case("tree", "flatten", f"out = repr(tree_flatten({T}))")
case("tree", "flatten_prefix", f"out = repr(tree_flatten({T}, prefix='.p'))")
case("tree", "flatten_dict_dest", f"out = repr(tree_flatten({T}, destination={{}}))")
case("tree", "flatten_is_leaf", f"out = repr(tree_flatten({T}, is_leaf=lambda x: isinstance(x, tuple)))")
case("tree", "flatten_bad_dest", f"out = tree_flatten({T}, destination=3)")
case("tree", "flatten_leaf", "out = repr(tree_flatten(7))")
case("tree", "unflatten", "out = repr(tree_unflatten([('a.0', 1), ('a.1', 2), ('b.c', 3), ('d', 4)]))")
case("tree", "unflatten_dict", "out = repr(tree_unflatten({'x.2.y': 1, 'x.0': 2}))")
case("tree", "unflatten_root", "out = repr(tree_unflatten([('', 9)]))")
case("tree", "roundtrip", f"out = repr(tree_unflatten(tree_flatten({T})))")
case("tree", "map", f"out = repr(tree_map(lambda x: x * 10, {T}))")
case("tree", "map_rest", "out = repr(tree_map(lambda x, y: x + y, {'a': [1, 2], 'b': 3}, {'a': [10, 20], 'b': 30}))")
case("tree", "map_is_leaf", f"out = repr(tree_map(lambda x: str(x), {T}, is_leaf=lambda x: isinstance(x, list)))")
case("tree", "map_namedtuple", "import collections\nP = collections.namedtuple('P', 'x y')\nout = repr(tree_map(lambda v: v + 1, [P(1, 2), (3,)]))")
case("tree", "map_with_path", f"out = repr(tree_map_with_path(lambda p, x: (p, x), {T}))")
case("tree", "map_with_path_prefix", "out = repr(tree_map_with_path(lambda p, x, y: f'{p}:{x}{y}', [1, {'k': 2}], [3, {'k': 4}], path='root'))")
case("tree", "map_with_path_leaf", "out = repr(tree_map_with_path(lambda p, x: (p, x), 5))")
case("tree", "reduce", f"out = tree_reduce(lambda a, x: a + x, {T}, 0)")
case("tree", "reduce_noinit", "out = tree_reduce(lambda a, x: a * x, [2, (3, {'q': 4})])")
case("tree", "reduce_is_leaf", "out = repr(tree_reduce(lambda a, x: a + [x], {'a': [1, 2], 'b': [3]}, [], is_leaf=lambda x: isinstance(x, list) and x and not isinstance(x[0], list)))")
case("tree", "reduce_arrays", "out = tree_reduce(lambda a, x: a + x.sum(), {'w': mx.arange(4.0), 'b': [mx.ones(3)]}, 0.0)")
case("tree", "merge", "m = tree_merge({'a': {'b': 1}, 'l': [1, {}]}, {'a': {'c': 2}, 'l': [{}, 5], 'z': 3})\nout = repr(sorted((k, repr(v)) for k, v in tree_flatten(m)))")
case("tree", "merge_conflict", "out = tree_merge({'a': 1}, {'a': 2})")
case("tree", "merge_fn", "out = repr(tree_merge([1, 2, 3], [10, 20], merge_fn=lambda a, b: a + b))")
case("tree", "merge_empty", "out = repr((tree_merge({}, {}), tree_merge([], []), tree_merge({}, [1])))")
case("tree", "merge_empty_mismatch", "out = tree_merge({}, [])")

# ----------------------------------------------------------------------------- activations
ACTS = ["sigmoid", "relu", "relu2", "relu6", "leaky_relu", "log_softmax", "elu", "softmax",
        "softplus", "softsign", "softshrink", "celu", "silu", "log_sigmoid", "gelu",
        "gelu_approx", "gelu_fast_approx", "glu", "step", "selu", "mish", "hardswish",
        "hard_tanh", "hard_shrink", "softmin", "tanh"]
for a in ACTS:
    case("act", f"fn_{a}", f"x = {_x((4, 6))} * 3\nout = nn.{a}(x)")
case("act", "fn_leaky_relu_slope", f"out = nn.leaky_relu({_x((5,))}, negative_slope=0.2)")
case("act", "fn_elu_alpha", f"out = nn.elu({_x((5,))} * 2, alpha=0.5)")
case("act", "fn_celu_alpha", f"out = nn.celu({_x((5,))} * 2, alpha=2.0)")
case("act", "fn_softshrink_l", f"out = nn.softshrink({_x((7,))}, lambd=0.8)")
case("act", "fn_hard_shrink_l", f"out = nn.hard_shrink({_x((7,))}, lambd=0.8)")
case("act", "fn_hard_tanh_range", f"out = nn.hard_tanh({_x((7,))} * 3, min_val=-0.5, max_val=2.0)")
case("act", "fn_step_threshold", f"out = nn.step({_x((7,))}, threshold=0.3)")
case("act", "fn_glu_axis0", f"out = nn.glu({_x((4, 3))}, axis=0)")
case("act", "fn_softmax_axis0", f"out = nn.softmax({_x((4, 3))}, axis=0)")
case("act", "fn_prelu", f"out = nn.prelu({_x((4, 3))}, mx.array([0.1, 0.2, 0.3]))")
case("act", "fn_gelu_f16", f"out = nn.gelu({_x((8,), dt='float16')})")
MODS = ["Sigmoid()", "ReLU()", "ReLU2()", "ReLU6()", "LeakyReLU(0.1)", "ELU(0.7)", "Softmax()",
        "Softplus()", "Softsign()", "Softshrink(0.3)", "CELU(1.5)", "SiLU()", "LogSoftmax()",
        "LogSigmoid()", "PReLU()", "PReLU(3, 0.5)", "GELU()", "GELU('precise')", "GELU('tanh')",
        "GELU('fast')", "Tanh()", "Hardswish()", "Step(0.2)", "SELU()", "HardTanh()",
        "HardShrink(0.2)", "Softmin()", "GLU()", "Mish()"]
for m in MODS:
    case("act", f"mod_{m}", f"layer = nn.{m}\nx = {_x((2, 6, 3))} * 2\nout = {{'y': layer(x), 'repr': repr(layer), 'params': layer.parameters()}}")
case("act", "gelu_bad", "out = nn.GELU('nope')")

# ----------------------------------------------------------------------------- layers
L = []
L += [("identity", "nn.Identity(3, k=4)", _x((2, 3)))]
L += [("linear", "nn.Linear(6, 5)", _x((3, 6))), ("linear_nobias", "nn.Linear(6, 5, bias=False)", _x((2, 4, 6))),
      ("bilinear", "nn.Bilinear(4, 3, 5)", None), ("bilinear_nobias", "nn.Bilinear(4, 3, 5, bias=False)", None)]
L += [("embedding", "nn.Embedding(10, 8)", "mx.array([[1, 2, 9], [0, 0, 3]])")]
L += [("rmsnorm", "nn.RMSNorm(6)", _x((2, 3, 6))), ("rmsnorm_eps", "nn.RMSNorm(6, eps=1e-2)", _x((2, 6)))]
L += [("layernorm", "nn.LayerNorm(6)", _x((2, 3, 6))), ("layernorm_noaffine", "nn.LayerNorm(6, affine=False)", _x((2, 6))),
      ("layernorm_nobias", "nn.LayerNorm(6, bias=False)", _x((2, 6)))]
L += [("groupnorm", "nn.GroupNorm(2, 6)", _x((2, 4, 6))), ("groupnorm_torch", "nn.GroupNorm(3, 6, pytorch_compatible=True)", _x((2, 4, 5, 6))),
      ("groupnorm_noaffine", "nn.GroupNorm(3, 6, affine=False)", _x((2, 4, 6)))]
L += [("instancenorm", "nn.InstanceNorm(4)", _x((2, 5, 4))), ("instancenorm_affine", "nn.InstanceNorm(4, affine=True)", _x((2, 3, 5, 4)))]
L += [("rope", "nn.RoPE(8)", _x((1, 2, 5, 8))), ("rope_trad", "nn.RoPE(6, traditional=True, base=500, scale=0.5)", _x((1, 2, 5, 8)))]
L += [("sinusoidal", "nn.SinusoidalPositionalEncoding(8)", "mx.arange(5.0)"),
      ("sinusoidal_opts", "nn.SinusoidalPositionalEncoding(6, min_freq=0.01, max_freq=2, scale=1.0, cos_first=True, full_turns=True)", "mx.arange(4.0)"),
      ("sinusoidal_2", "nn.SinusoidalPositionalEncoding(2)", "mx.arange(3.0)")]
L += [("alibi", "nn.ALiBi()", _x((1, 4, 3, 5))), ("alibi_6heads", "nn.ALiBi()", _x((2, 6, 3, 3)))]
L += [("conv1d", "nn.Conv1d(4, 6, 3)", _x((2, 9, 4))), ("conv1d_opts", "nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, bias=False)", _x((2, 11, 4))),
      ("conv2d", "nn.Conv2d(3, 4, (2, 3), stride=(1, 2), padding=1)", _x((1, 6, 7, 3))), ("conv2d_groups", "nn.Conv2d(4, 6, 3, groups=2, dilation=(1, 2))", _x((1, 7, 8, 4))),
      ("conv3d", "nn.Conv3d(2, 3, 2, stride=(1, 2, 1), padding=(0, 1, 1))", _x((1, 4, 5, 4, 2)))]
L += [("convt1d", "nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1)", _x((2, 5, 4))),
      ("convt2d", "nn.ConvTranspose2d(3, 2, (2, 3), stride=2, dilation=(1, 2))", _x((1, 4, 3, 3))),
      ("convt3d", "nn.ConvTranspose3d(2, 2, 2, stride=(2, 1, 1), padding=(0, 1, 0), bias=False)", _x((1, 3, 3, 3, 2)))]
POOLS = [("maxpool1d", "nn.MaxPool1d(2)", _x((2, 8, 3))), ("maxpool1d_s", "nn.MaxPool1d(3, stride=2, padding=1)", _x((2, 8, 3))),
         ("avgpool1d", "nn.AvgPool1d(3, 1)", _x((2, 7, 3))), ("avgpool1d_pad", "nn.AvgPool1d(kernel_size=2, stride=2, padding=1)", _x((1, 5, 2))),
         ("maxpool2d", "nn.MaxPool2d(2)", _x((1, 6, 4, 3))), ("maxpool2d_s", "nn.MaxPool2d((2, 3), stride=(1, 2), padding=(1, 1))", _x((1, 6, 7, 2))),
         ("avgpool2d", "nn.AvgPool2d(3, stride=2)", _x((2, 7, 7, 2))), ("avgpool2d_tile", "nn.AvgPool2d((2, 2))", _x((1, 4, 6, 2))),
         ("maxpool3d", "nn.MaxPool3d(2, stride=1)", _x((1, 3, 4, 3, 2))), ("avgpool3d", "nn.AvgPool3d((1, 2, 2), padding=(0, 1, 0))", _x((1, 2, 4, 4, 2)))]
L += POOLS
UPS = [("up_nearest", "nn.Upsample(2)", _x((1, 3, 4, 2))), ("up_nearest_frac", "nn.Upsample((1.5, 2.5))", _x((1, 3, 2, 2))),
       ("up_nearest_down", "nn.Upsample(0.5)", _x((1, 6, 4, 1))), ("up_nearest_1d", "nn.Upsample(3)", _x((2, 4, 2))),
       ("up_linear", "nn.Upsample(2, mode='linear')", _x((1, 3, 4, 2))), ("up_linear_ac", "nn.Upsample((2, 3), mode='linear', align_corners=True)", _x((1, 3, 3, 1))),
       ("up_linear_1d", "nn.Upsample(2.5, mode='linear')", _x((2, 4, 2))), ("up_linear_3d", "nn.Upsample(2, mode='linear')", _x((1, 2, 2, 3, 1))),
       ("up_cubic", "nn.Upsample(2, mode='cubic')", _x((1, 4, 4, 2))), ("up_cubic_ac", "nn.Upsample(1.5, mode='cubic', align_corners=True)", _x((1, 4, 4, 1))),
       ("up_linear_aa", "nn.Upsample(0.5, mode='linear', antialias=True)", _x((1, 8, 8, 2))), ("up_cubic_aa", "nn.Upsample((0.5, 0.75), mode='cubic', antialias=True)", _x((1, 8, 8, 1))),
       ("up_linear_aa_up", "nn.Upsample(2, mode='linear', antialias=True)", _x((1, 3, 3, 1)))]
L += UPS
for name, ctor, inp in L:
    if inp is None:
        body = f"layer = {ctor}\nx1 = {_x((2, 3, 4))}\nx2 = {_x((2, 3, 3), key=2)}\ny = layer(x1, x2)"
    else:
        body = f"layer = {ctor}\nx = {inp}\ny = layer(x)"
    case("layer", name, body + "\nout = {'y': y, 'params': layer.parameters(), 'repr': repr(layer)}", rtol=2e-5)
case("layer", "embedding_as_linear", f"layer = nn.Embedding(10, 8)\nout = layer.as_linear({_x((3, 8))})")
case("layer", "rope_offset", f"layer = nn.RoPE(8)\nout = layer({_x((1, 2, 5, 8))}, offset=3)")
case("layer", "alibi_offset_mask", f"layer = nn.ALiBi()\nout = layer({_x((1, 4, 3, 5))}, offset=2, mask=mx.ones((3, 5)))")
case("layer", "alibi_matrix", "out = (nn.ALiBi.create_alibi_matrix(4, 6, 3, offset=1), nn.ALiBi.create_alibi_slope(5))")
# Dropout in training mode: the mask comes from the seeded generator.
for name, ctor, shape in [("dropout", "nn.Dropout(0.3)", (4, 5)), ("dropout2d", "nn.Dropout2d(0.5)", (2, 3, 3, 4)),
                          ("dropout3d", "nn.Dropout3d(0.25)", (2, 2, 3, 3, 4)), ("dropout_p0", "nn.Dropout(0.0)", (3,))]:
    case("layer", name, f"layer = {ctor}\nx = {_x(shape)}\nmx.random.seed(5)\nout = {{'train': layer(x), 'eval': layer.eval()(x), 'repr': repr(layer)}}")
case("layer", "dropout_bad_p", "out = nn.Dropout(1.0)")
case("layer", "dropout2d_bad_ndim", "out = nn.Dropout2d()(mx.ones((2, 3)))")
case("layer", "dropout3d_bad_ndim", "out = nn.Dropout3d()(mx.ones((2, 3, 4)))")
# BatchNorm: training updates the running statistics, eval uses them.
case("layer", "batchnorm", f"bn = nn.BatchNorm(4)\nx = {_x((5, 4))}\ny1 = bn(x)\ny2 = bn({_x((5, 4), key=3)} + 1)\nbn.eval()\ny3 = bn(x)\nout = {{'y1': y1, 'y2': y2, 'y3': y3, 'state': bn.parameters(), 'trainable': bn.trainable_parameters(), 'repr': repr(bn)}}")
case("layer", "batchnorm_3d_input", f"bn = nn.BatchNorm(3, momentum=0.3, affine=False)\nx = {_x((2, 4, 5, 3))}\nout = {{'y': bn(x), 'state': bn.parameters()}}")
case("layer", "batchnorm_no_track", f"bn = nn.BatchNorm(3, track_running_stats=False)\nx = {_x((4, 6, 3))}\nout = {{'y': bn(x), 'eval': bn.eval()(x), 'state': bn.parameters(), 'repr': repr(bn)}}")
case("layer", "batchnorm_unfreeze", "bn = nn.BatchNorm(3)\nbn.unfreeze()\nout = sorted(k for k, _ in tree_flatten(bn.trainable_parameters()))")
case("layer", "batchnorm_one_value", "out = nn.BatchNorm(3)(mx.ones((1, 3)))")
case("layer", "batchnorm_bad_ndim", "out = nn.BatchNorm(3)(mx.ones((1, 2, 2, 2, 3)))")
for nm in ["LayerNorm", "RMSNorm", "InstanceNorm", "BatchNorm"]:
    case("layer", f"{nm}_bad_eps", f"out = nn.{nm}(4, eps=0.0)")
case("layer", "groupnorm_bad", "out = nn.GroupNorm(4, 6)")
case("layer", "instancenorm_2d", "out = nn.InstanceNorm(4)(mx.ones((2, 4)))")
case("layer", "sinusoidal_odd", "out = nn.SinusoidalPositionalEncoding(5)")
case("layer", "conv_bad_groups", "out = nn.Conv1d(5, 4, 3, groups=2)")
case("layer", "pool_bad", "out = nn.MaxPool2d((2, 2, 2))")
case("layer", "pool_bad_stride", "out = nn.AvgPool1d(2, stride=0)")
case("layer", "pool_bad_padding", "out = nn.MaxPool1d(2, padding=-1)")
case("layer", "pool_2d_input", "out = nn.MaxPool1d(2)(mx.ones((4, 3)))")
case("layer", "upsample_bad_mode", "out = nn.Upsample(2, mode='area')")
case("layer", "upsample_aa_nearest", "out = nn.Upsample(2, antialias=True)")
case("layer", "upsample_aa_ac", "out = nn.Upsample(2, mode='linear', antialias=True, align_corners=True)")
case("layer", "upsample_2d_input", "out = nn.Upsample(2)(mx.ones((2, 3)))")
case("layer", "upsample_wrong_scales", "out = nn.Upsample((2, 2))(mx.ones((1, 3, 2)))")
case("layer", "upsample_reprs", "out = [repr(nn.Upsample(2)), repr(nn.Upsample((2, 3), mode='cubic', align_corners=True)), repr(nn.Upsample(0.5, mode='linear', antialias=True))]")
case("layer", "upsample_functions", f"from mlx.nn.layers.upsample import upsample_nearest, upsample_linear, upsample_cubic\nx = {_x((1, 3, 3, 2))}\nout = [upsample_nearest(x, (2, 2)), upsample_linear(x, (2.0, 1.5)), upsample_cubic(x, (1.5, 2.0), align_corners=True)]")
# Recurrent
for name, ctor in [("rnn", "nn.RNN(4, 5)"), ("rnn_relu_nobias", "nn.RNN(4, 5, bias=False, nonlinearity=nn.relu)"),
                   ("gru", "nn.GRU(4, 5)"), ("gru_nobias", "nn.GRU(4, 5, bias=False)"), ("lstm", "nn.LSTM(4, 5)"), ("lstm_nobias", "nn.LSTM(4, 5, bias=False)")]:
    case("layer", name, f"layer = {ctor}\nx = {_x((2, 6, 4))}\nh = {_x((2, 5), key=2)}\nout = {{'y': layer(x), 'y_h': layer(x, h) if 'LSTM' not in repr(layer) else layer(x, h, {_x((2, 5), key=3)}), 'y_unbatched': layer(x[0]), 'params': layer.parameters()}}", rtol=2e-5)
case("layer", "rnn_bad_nonlinearity", "out = nn.RNN(2, 3, nonlinearity=3)")
case("layer", "recurrent_reprs", "out = [repr(nn.GRU(3, 4)), repr(nn.LSTM(3, 4, bias=False))]")
# Attention and transformers
case("layer", "mha", f"layer = nn.MultiHeadAttention(8, 2)\nq = {_x((2, 3, 8))}\nk = {_x((2, 5, 8), key=2)}\nout = {{'y': layer(q, k, k), 'params': layer.parameters(), 'repr': repr(layer)}}", rtol=1e-4)
case("layer", "mha_mask_dims", f"layer = nn.MultiHeadAttention(8, 4, query_input_dims=6, key_input_dims=5, value_input_dims=3, value_dims=12, value_output_dims=7, bias=True)\nq = {_x((2, 4, 6))}\nk = {_x((2, 4, 5), key=2)}\nv = {_x((2, 4, 3), key=3)}\nmask = nn.MultiHeadAttention.create_additive_causal_mask(4)\nout = {{'y': layer(q, k, v, mask=mask), 'mask': mask}}", rtol=1e-4)
case("layer", "mha_bad_heads", "out = nn.MultiHeadAttention(10, 3)")
case("layer", "causal_mask_f16", "out = nn.MultiHeadAttention.create_additive_causal_mask(3, mx.float16)")
case("layer", "encoder", f"layer = nn.TransformerEncoder(2, 8, 2, mlp_dims=16)\nx = {_x((2, 4, 8))}\nmask = nn.MultiHeadAttention.create_additive_causal_mask(4)\nout = {{'y': layer(x, mask), 'keys': [k for k, _ in tree_flatten(layer.parameters())], 'repr': repr(layer)}}", rtol=1e-4)
case("layer", "encoder_post_norm", f"layer = nn.TransformerEncoder(1, 8, 4, norm_first=False, activation=nn.gelu)\nx = {_x((1, 3, 8))}\nout = layer(x, None)", rtol=1e-4)
case("layer", "decoder", f"layer = nn.TransformerDecoder(2, 8, 2)\nx = {_x((2, 3, 8))}\nmem = {_x((2, 5, 8), key=2)}\nout = layer(x, mem, nn.MultiHeadAttention.create_additive_causal_mask(3), None)", rtol=1e-4)
case("layer", "decoder_post_norm", f"layer = nn.TransformerDecoder(1, 8, 2, norm_first=False)\nx = {_x((2, 3, 8))}\nmem = {_x((2, 5, 8), key=2)}\nout = layer(x, mem, None, None)", rtol=1e-4)
case("layer", "transformer", f"layer = nn.Transformer(dims=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=2, mlp_dims=12)\nsrc = {_x((2, 5, 8))}\ntgt = {_x((2, 3, 8), key=2)}\nout = {{'y': layer(src, tgt, None, nn.MultiHeadAttention.create_additive_causal_mask(3), None), 'n': len(tree_flatten(layer.parameters()))}}", rtol=1e-4)
case("layer", "sequential", f"layer = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3), lambda t: t * 2)\nout = {{'y': layer({_x((2, 4))}), 'repr': repr(layer)}}")
# Quantized layers
case("quant", "quantized_linear", f"layer = nn.QuantizedLinear(64, 8)\nx = {_x((3, 64))}\nout = {{'y': layer(x), 'params': layer.parameters(), 'trainable': layer.trainable_parameters(), 'repr': repr(layer)}}", rtol=1e-4)
case("quant", "quantized_linear_8bit", f"layer = nn.QuantizedLinear(64, 8, bias=False, group_size=32, bits=8)\nout = {{'y': layer({_x((2, 64))}), 'repr': repr(layer)}}", rtol=1e-4)
case("quant", "linear_to_quantized", f"lin = nn.Linear(128, 16)\nq = lin.to_quantized(group_size=64, bits=4)\nx = {_x((2, 128))}\nout = {{'y': q(x), 'w': q.weight, 'scales': q.scales, 'biases': q.biases, 'bias': q.bias, 'repr': repr(q)}}", rtol=1e-4)
case("quant", "quantized_embedding", f"layer = nn.QuantizedEmbedding(10, 64)\nout = {{'y': layer(mx.array([[1, 3], [9, 0]])), 'lin': layer.as_linear({_x((2, 64))}), 'repr': repr(layer)}}", rtol=1e-4)
case("quant", "embedding_to_quantized", f"e = nn.Embedding(12, 64)\nq = e.to_quantized(bits=8)\nout = {{'y': q(mx.array([0, 5, 11])), 'repr': repr(q)}}", rtol=1e-4)
case("quant", "nn_quantize", f"model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 64), nn.Embedding(8, 64), nn.LayerNorm(64))\nnn.quantize(model, group_size=32, bits=4)\nx = {_x((2, 64))}\nout = {{'y': model.layers[2](model.layers[1](model.layers[0](x))), 'e': model.layers[3](mx.array([1, 2])), 'repr': repr(model)}}", rtol=1e-4)
case("quant", "nn_quantize_predicate", f"model = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 32))\nnn.quantize(model, class_predicate=lambda p, m: {{'group_size': 32, 'bits': 8}} if p == 'layers.1' else False)\nout = {{'repr': repr(model), 'y': model({_x((2, 64))})}}", rtol=1e-4)
case("quant", "nn_quantize_bad_predicate", "model = nn.Sequential(nn.Linear(64, 64))\nout = nn.quantize(model, class_predicate=lambda p, m: 3)")
case("quant", "nn_quantize_not_quantizable", "model = nn.Sequential(nn.LayerNorm(64))\nout = nn.quantize(model, class_predicate=lambda p, m: True)")
case("quant", "qqlinear_modes", "lin = nn.Linear(64, 32, bias=False)\nq = lin.to_quantized(mode='mxfp8', quantize_input=True)\na = [repr(q), q.training, sorted(q.keys()), str(q.weight.dtype)]\nq.eval()\nb = [repr(q), sorted(q.keys()), q.weight, q.scales]\nq.train()\nout = [a, b, sorted(q.keys()), q.weight]", rtol=1e-4)
case("quant", "qqlinear_quantize", "m = nn.Sequential(nn.Linear(64, 32, bias=False), nn.Linear(32, 16, bias=False))\nm.eval()\nnn.quantize(m, group_size=16, mode='nvfp4', quantize_input=True)\nout = [repr(m), m.layers[0].weight, m.layers[1].scales]")
case("quant", "qqlinear_bias", "out = nn.Linear(64, 32).to_quantized(mode='nvfp4', quantize_input=True)")
case("quant", "qqlinear_bad_mode", "out = nn.Linear(64, 32).to_quantized(mode='affine', quantize_input=True)")
case("quant", "bad_mode", "out = nn.QuantizedLinear(64, 8, mode='int3')")
case("quant", "embedding_quantize_input", "out = nn.Embedding(4, 64).to_quantized(quantize_input=True)")

# ----------------------------------------------------------------------------- losses
P = _x((4, 5))
Tg = _x((4, 5), key=2)
IDX = "mx.array([0, 3, 4, 1])"
case("loss", "ce_indices", f"out = [nn.losses.cross_entropy({P}, {IDX}, reduction=r) for r in ('none', 'mean', 'sum')]")
case("loss", "ce_probs", f"out = nn.losses.cross_entropy({P}, mx.softmax({Tg}, axis=-1))")
case("loss", "ce_smoothing_weights", f"out = nn.losses.cross_entropy({P}, {IDX}, weights=mx.array([1.0, 0.5, 2.0, 0.0]), label_smoothing=0.2, reduction='mean')")
case("loss", "ce_axis0", f"out = nn.losses.cross_entropy({P}, mx.array([0, 1, 2, 3, 0]), axis=0, label_smoothing=0.1)")
case("loss", "ce_bad_smoothing", f"out = nn.losses.cross_entropy({P}, {IDX}, label_smoothing=1.0)")
case("loss", "ce_bad_shape", f"out = nn.losses.cross_entropy({P}, mx.array([0, 1]))")
case("loss", "ce_bad_weights", f"out = nn.losses.cross_entropy({P}, {IDX}, weights=mx.ones(3))")
case("loss", "bad_reduction", f"out = nn.losses.mse_loss({P}, {Tg}, reduction='avg')")
case("loss", "bce_logits", f"out = [nn.losses.binary_cross_entropy({P}, (mx.sign({Tg}) + 1) / 2, reduction=r) for r in ('none', 'mean', 'sum')]")
case("loss", "bce_probs", f"out = nn.losses.binary_cross_entropy(mx.array([0.1, 0.9, 0.0, 1.0, 0.5]), mx.array([0.0, 1.0, 1.0, 0.0, 0.3]), with_logits=False, weights=mx.array([1.0, 2.0, 1.0, 1.0, 3.0]), reduction='none')")
case("loss", "bce_bad", f"out = nn.losses.binary_cross_entropy({P}, mx.ones(5))")
for nm in ["l1_loss", "mse_loss"]:
    case("loss", nm, f"out = [nn.losses.{nm}({P}, {Tg}, reduction=r) for r in ('none', 'mean', 'sum')]")
    case("loss", nm + "_bad", f"out = nn.losses.{nm}({P}, mx.ones(5))")
case("loss", "nll", f"out = [nn.losses.nll_loss(nn.log_softmax({P}), {IDX}), nn.losses.nll_loss(nn.log_softmax({P}, axis=0), mx.array([0, 1, 2, 3, 0]), axis=0, reduction='mean')]")
case("loss", "gaussian_nll", f"out = [nn.losses.gaussian_nll_loss({P}, {Tg}, mx.abs({_x((4, 5), key=3)})), nn.losses.gaussian_nll_loss({P}, {Tg}, mx.abs({_x((4, 5), key=3)}) * 1e-8, full=True, reduction='none')]")
case("loss", "gaussian_nll_bad", f"out = nn.losses.gaussian_nll_loss({P}, {Tg}, mx.ones(5))")
case("loss", "kl_div", f"out = [nn.losses.kl_div_loss(nn.log_softmax({P}), nn.log_softmax({Tg})), nn.losses.kl_div_loss(nn.log_softmax({P}, axis=0), nn.log_softmax({Tg}, axis=0), axis=0, reduction='sum')]")
case("loss", "smooth_l1", f"out = [nn.losses.smooth_l1_loss({P}, {Tg}), nn.losses.smooth_l1_loss({P}, {Tg}, beta=0.3, reduction='none')]")
case("loss", "smooth_l1_bad", f"out = nn.losses.smooth_l1_loss({P}, mx.ones(5))")
case("loss", "triplet", f"out = [nn.losses.triplet_loss({P}, {Tg}, {_x((4, 5), key=3)}), nn.losses.triplet_loss({P}, {Tg}, {_x((4, 5), key=3)}, axis=0, p=1, margin=0.5, reduction='mean')]")
case("loss", "hinge", f"out = [nn.losses.hinge_loss({P}, mx.sign({Tg})), nn.losses.hinge_loss({P}, mx.sign({Tg}), reduction='sum')]")
case("loss", "huber", f"out = [nn.losses.huber_loss({P} * 2, {Tg}), nn.losses.huber_loss({P} * 2, {Tg}, delta=0.5, reduction='mean')]")
case("loss", "log_cosh", f"out = [nn.losses.log_cosh_loss({P} * 3, {Tg}), nn.losses.log_cosh_loss({P}, {Tg}, reduction='mean')]")
case("loss", "cosine_similarity", f"out = [nn.losses.cosine_similarity_loss({P}, {Tg}), nn.losses.cosine_similarity_loss({P}, {Tg}, axis=0, reduction='mean'), nn.losses.cosine_similarity_loss(mx.zeros((2, 3)), mx.ones((2, 3)))]")
case("loss", "margin_ranking", f"out = [nn.losses.margin_ranking_loss({P}[0], {Tg}[0], mx.array([1.0, -1.0, 1.0, -1.0, 1.0])), nn.losses.margin_ranking_loss({P}[0], {Tg}[0], mx.array([1.0, -1.0, 1.0, -1.0, 1.0]), margin=0.5, reduction='sum')]")
case("loss", "margin_ranking_bad", f"out = nn.losses.margin_ranking_loss({P}, {Tg}, mx.ones(5))")

# ----------------------------------------------------------------------------- init
for nm, call in [("constant", "nn.init.constant(0.5)"), ("constant_f16", "nn.init.constant(-2, dtype=mx.float16)"),
                 ("normal", "nn.init.normal()"), ("normal_args", "nn.init.normal(mean=1.0, std=0.3, dtype=mx.float16)"),
                 ("uniform", "nn.init.uniform()"), ("uniform_args", "nn.init.uniform(low=-2, high=3)"),
                 ("glorot_normal", "nn.init.glorot_normal()"), ("glorot_uniform", "nn.init.glorot_uniform()"),
                 ("he_normal", "nn.init.he_normal()"), ("he_uniform", "nn.init.he_uniform()"),
                 ("sparse", "nn.init.sparse(0.5)"), ("sparse_args", "nn.init.sparse(0.25, mean=1.0, std=0.1)"),
                 ("orthogonal", "nn.init.orthogonal()"), ("orthogonal_gain", "nn.init.orthogonal(gain=2.0)")]:
    case("init", nm, f"f = {call}\nout = f(mx.zeros((6, 4)))", rtol=1e-4)
case("init", "identity", "out = nn.init.identity()(mx.zeros((3, 3)))")
case("init", "identity_bad", "out = nn.init.identity()(mx.zeros((3, 2)))")
case("init", "glorot_conv_shape_gain", "out = nn.init.glorot_uniform()(mx.zeros((8, 3, 3, 4)), gain=2.0)")
case("init", "glorot_normal_conv", "out = nn.init.glorot_normal()(mx.zeros((8, 3, 4)), gain=0.5)")
case("init", "he_fan_out", "out = nn.init.he_normal()(mx.zeros((8, 3, 4)), mode='fan_out', gain=2.0)")
case("init", "he_uniform_fan_out", "out = nn.init.he_uniform(mx.float16)(mx.zeros((5, 7)), mode='fan_out')")
case("init", "he_bad_mode", "out = nn.init.he_normal()(mx.zeros((3, 3)), mode='fan')")
case("init", "glorot_1d", "out = nn.init.glorot_uniform()(mx.zeros((3,)))")
case("init", "sparse_3d", "out = nn.init.sparse(0.5)(mx.zeros((2, 2, 2)))")
case("init", "orthogonal_wide", "out = nn.init.orthogonal()(mx.zeros((3, 7)))", rtol=1e-4)
case("init", "orthogonal_1d", "out = nn.init.orthogonal()(mx.zeros((3,)))")
case("init", "stats_large", "w = nn.init.he_normal()(mx.zeros((256, 512)))\nu = nn.init.glorot_uniform()(mx.zeros((256, 512)))\nout = [w.mean(), w.std(), u.min(), u.max(), u.std()]", rtol=1e-4)

# ----------------------------------------------------------------------------- Module tree
MODEL = ("class Block(nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n"
         "        self.lin = nn.Linear(3, 4)\n"
         "        self.norm = nn.LayerNorm(4)\n"
         "        self.extras = {'scale': mx.ones(4), 'subs': [nn.Linear(4, 2, bias=False), nn.Identity()]}\n"
         "        self._hidden = mx.zeros(2)\n"
         "        self.count = 3\n"
         "    def __call__(self, x):\n"
         "        y = self.norm(self.lin(x)) * self.extras['scale']\n"
         "        return self.extras['subs'][1](self.extras['subs'][0](y))\n"
         "model = nn.Sequential(Block(), nn.ReLU(), nn.Linear(2, 2))\n")


def keys(expr):
    return f"[k for k, _ in tree_flatten({expr})]"


case("module", "tree_views", MODEL + f"out = {{'params': {keys('model.parameters()')}, 'children': repr(model.children()), 'leaves': repr(model.leaf_modules()), 'named': [n for n, _ in model.named_modules()], 'modules': [type(m).__name__ for m in model.modules()], 'repr': repr(model), 'y': model({_x((2, 3))})}}")
case("module", "freeze", MODEL + f"model.freeze()\na = {keys('model.trainable_parameters()')}\nmodel.unfreeze(keys=['bias'])\nb = {keys('model.trainable_parameters()')}\nmodel.layers[0].freeze(recurse=False, keys='scale')\nc = {keys('model.trainable_parameters()')}\nmodel.unfreeze()\nmodel.freeze(keys=['weight'], recurse=True)\nd = {keys('model.trainable_parameters()')}\nmodel.unfreeze(recurse=False)\ne = {keys('model.trainable_parameters()')}\nout = [a, b, c, d, e]")
case("module", "freeze_strict", MODEL + "out = model.freeze(keys=['nonexistent'], strict=True)")
case("module", "freeze_strict_local", MODEL + "out = model.freeze(keys='weight', recurse=False, strict=True)")
case("module", "unfreeze_strict", MODEL + "out = model.unfreeze(keys=['nope'], strict=True)")
case("module", "freeze_strict_ok", MODEL + f"model.freeze(keys=['bias'], strict=True)\nout = {keys('model.trainable_parameters()')}")
case("module", "update", MODEL + f"p = tree_map(lambda a: a * 0 + 2, model.parameters())\nmodel.update(p)\nout = {{'params': model.parameters(), 'y': model({_x((2, 3))})}}")
case("module", "update_partial", MODEL + "model.update({'layers': [{'lin': {'bias': mx.zeros(4)}}]})\nout = model.layers[0].lin.bias")
case("module", "update_bad_name", MODEL + "out = model.update({'layers': [{'nope': mx.zeros(4)}]})")
case("module", "update_bad_type", MODEL + "out = model.update({'layers': [{'lin': {'bias': 3}}]})")
case("module", "update_bad_index", MODEL + "out = model.update({'layers': [{}, {}, {}, {}]})")
case("module", "update_nonstrict", MODEL + "model.update({'layers': [{'nope': 1}, {}, {}, {}]}, strict=False)\nout = " + keys("model.parameters()"))
case("module", "update_modules", MODEL + f"model.update_modules({{'layers': [{{'lin': nn.Linear(3, 4, bias=False)}}, nn.GELU()]}})\nout = {{'repr': repr(model), 'y': model({_x((2, 3))})}}")
case("module", "update_modules_bad", MODEL + "out = model.update_modules({'layers': [{'nope': nn.ReLU()}]})")
case("module", "update_modules_bad_type", MODEL + "out = model.update_modules({'layers': [{'lin': 3}]})")
case("module", "apply", MODEL + "model.apply(lambda a: a * 3)\nout = model.parameters()")
case("module", "apply_filter", MODEL + "model.apply(lambda a: a + 1, filter_fn=lambda m, k, v: k != 'bias' and nn.Module.valid_parameter_filter(m, k, v))\nout = model.parameters()")
case("module", "apply_to_modules", MODEL + "seen = []\nmodel.apply_to_modules(lambda k, m: seen.append((k, type(m).__name__)))\nout = seen")
case("module", "train_eval", MODEL + "a = [m.training for m in model.modules()]\nmodel.eval()\nb = [m.training for m in model.modules()]\nmodel.train()\nout = [a, b, [m.training for m in model.modules()], model.layers[2].train(False).training]")
case("module", "set_dtype", MODEL + "model.layers[0]['ids'] = mx.array([1, 2])\nmodel.set_dtype(mx.float16)\na = [str(v.dtype) for _, v in tree_flatten(model.parameters())]\nmodel.set_dtype(mx.bfloat16, predicate=None)\nout = [a, [str(v.dtype) for _, v in tree_flatten(model.parameters())]]")
case("module", "attributes", "m = nn.Linear(2, 3)\nm.foo = 3\nm.arr = mx.ones(2)\nm.lst = [mx.zeros(1)]\nhas = ['foo' in m, 'arr' in m, 'lst' in m]\ndel m.arr\nm.arr2 = mx.ones(1)\nm.arr2 = 5\nout = [has, sorted(m.keys()), m.foo, m.arr2, m.state is m]")
case("module", "missing_attribute", "out = nn.Linear(2, 3).nope")
case("module", "dict_behaviour", "m = nn.Linear(2, 3)\nout = [isinstance(m, dict), sorted(m.keys()), m['weight'].shape, nn.Module.is_module(m), nn.Module.is_module({})]")
case("module", "empty_repr", "out = [repr(nn.Module()), repr(nn.Sequential()), repr(nn.Sequential(nn.Sequential(nn.ReLU())))]")
case("module", "layer_reprs", "out = [repr(nn.Linear(2, 3, bias=False)), repr(nn.Bilinear(2, 3, 4)), repr(nn.Embedding(5, 2)), repr(nn.LayerNorm(4, affine=False)), repr(nn.RMSNorm(3)), repr(nn.GroupNorm(2, 4)), repr(nn.InstanceNorm(3)), repr(nn.BatchNorm(3)), repr(nn.RoPE(4)), repr(nn.SinusoidalPositionalEncoding(4)), repr(nn.ALiBi()), repr(nn.Conv1d(2, 4, 3)), repr(nn.Conv2d(4, 6, 3, groups=2)), repr(nn.Conv3d(2, 3, (1, 2, 3))), repr(nn.ConvTranspose1d(2, 3, 2)), repr(nn.ConvTranspose2d(2, 3, (2, 1))), repr(nn.ConvTranspose3d(1, 2, 2)), repr(nn.MaxPool1d(2)), repr(nn.AvgPool2d((2, 3), stride=1, padding=1)), repr(nn.MaxPool3d(2)), repr(nn.Dropout(0.1)), repr(nn.Dropout2d()), repr(nn.Dropout3d(0.2)), repr(nn.RNN(2, 3)).split(' at 0x')[0], repr(nn.Identity()), repr(nn.PReLU())]")
case("module", "load_weights_list", MODEL + f"w = [(k, v + 1) for k, v in tree_flatten(model.parameters())]\nmodel.load_weights(w)\nout = model.parameters()")
case("module", "load_weights_missing", MODEL + "w = tree_flatten(model.parameters())[1:]\nout = model.load_weights(w)")
case("module", "load_weights_extra", MODEL + "w = tree_flatten(model.parameters()) + [('layers.9.w', mx.ones(2)), ('zz', mx.ones(1))]\nout = model.load_weights(w)")
case("module", "load_weights_shape", MODEL + "w = tree_flatten(model.parameters())\nw[0] = (w[0][0], mx.ones((1, 1)))\nout = model.load_weights(w)")
case("module", "load_weights_type", MODEL + "w = tree_flatten(model.parameters())\nw[0] = (w[0][0], 1.0)\nout = model.load_weights(w)")
case("module", "load_weights_nonstrict", MODEL + "model.load_weights([('layers.2.bias', mx.array([7.0, 8.0])), ('layers.5.x', mx.ones(1))], strict=False)\nout = model.layers[2].bias")
case("module", "save_bad_ext", MODEL + "out = model.save_weights('weights.bin')")
case("module", "value_and_grad_exists", "out = callable(nn.value_and_grad(nn.Linear(2, 2), lambda x: x))")

# ----------------------------------------------------------------------------- fully sharded (one process)
# On one process MLX's fully_shard returns the module itself; FullyShardedModule made directly
# still gathers (cast to compute_dtype) and returns the mean gradients to the shards.
MLP = "mlp = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))\n"
LOSS = "def loss(m, x):\n    return m(x).astype(mx.float32).square().sum()\n"
case("shard", "fully_shard_one_process", MLP + "out = [nn.fully_shard(mlp) is mlp, nn.fully_shard(mlp, compute_dtype=mx.float16) is mlp, nn.fully_shard(mlp, group=mx.distributed.init()) is mlp]")
for dt in ("None", "mx.float16", "mx.bfloat16"):
    case("shard", f"module_{dt}", MLP + LOSS + f"w = nn.FullyShardedModule(mlp, compute_dtype={dt})\nx = {_x((3, 4))}\n"
         f"l, g = nn.value_and_grad(w, loss)(w, x)\n"
         f"out = {{'repr': repr(w), 'paths': w._paths, 'keys': {keys('w.parameters()')}, 'trainable': {keys('w.trainable_parameters()')}, "
         f"'y': w(x), 'loss': l, 'grads': g, 'after': w.parameters()}}", rtol=1e-4)
case("shard", "module_embedding_as_linear", "e = nn.FullyShardedModule(nn.Embedding(5, 3), compute_dtype=mx.float16)\n"
     f"out = [e(mx.array([[0, 4, 2]])), e.as_linear({_x((2, 3))})]", rtol=1e-3)
case("shard", "module_nested", MLP + "mlp.layers[2] = nn.FullyShardedModule(mlp.layers[2])\nw = nn.FullyShardedModule(mlp)\n"
     f"out = [repr(w), w._paths, {keys('w.parameters()')}, w({_x((2, 4))})]")
case("shard", "module_frozen", MLP + LOSS + "mlp.layers[0].freeze()\nw = nn.FullyShardedModule(mlp)\n"
     f"l, g = nn.value_and_grad(w, loss)(w, {_x((2, 4))})\nout = [w._paths, g]")
case("shard", "module_scalar", "class S(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.s = mx.array(2.0)\n"
     "out = nn.FullyShardedModule(S())")
case("shard", "module_no_params", "w = nn.FullyShardedModule(nn.ReLU())\nout = [repr(w), w._paths, nn.fully_shard(nn.ReLU()).__class__.__name__, w(mx.array([-1.0, 2.0]))]")
case("shard", "module_train_step", MLP + LOSS + "w = nn.FullyShardedModule(mlp)\nopt = optim.SGD(0.1)\nx = " + _x((3, 4)) + "\n"
     "for _ in range(3):\n    l, g = nn.value_and_grad(w, loss)(w, x)\n    opt.update(w, g)\n"
     "out = [l, w.parameters(), nn.utils.clip_grad_norm_sharded(g, 0.5), nn.utils.clip_grad_norm_sharded(g, 1e3)]", rtol=1e-4)

# ----------------------------------------------------------------------------- optimizers
PARAMS = ("params = {'w': mx.random.normal((3, 4), key=mx.random.key(10)), 'b': mx.random.normal((4,), key=mx.random.key(11)), "
          "'layers': [{'k': mx.random.normal((2, 3, 2), key=mx.random.key(12))}]}\n"
          "grads = [tree_map(lambda p, i=i: mx.random.normal(p.shape, key=mx.random.key(100 + i)), params) for i in range(3)]\n")


def opt_case(name, ctor, rtol=2e-5, steps=3):
    code = (PARAMS + f"opt = {ctor}\nhist = []\n"
            f"for i in range({steps}):\n"
            "    params = opt.apply_gradients(grads[i % 3], params)\n"
            "    hist.append(params)\n"
            "out = {'hist': hist, 'state': opt.state}\n")
    case("optim", name, code, rtol=rtol)


opt_case("sgd", "optim.SGD(0.1)")
opt_case("sgd_momentum", "optim.SGD(0.1, momentum=0.9)")
opt_case("sgd_all", "optim.SGD(0.05, momentum=0.8, weight_decay=0.01, dampening=0.1)")
opt_case("sgd_nesterov", "optim.SGD(0.05, momentum=0.9, nesterov=True, weight_decay=0.1)")
opt_case("rmsprop", "optim.RMSprop(0.01)")
opt_case("rmsprop_args", "optim.RMSprop(0.02, alpha=0.9, eps=1e-4)")
opt_case("adagrad", "optim.Adagrad(0.1)")
opt_case("adadelta", "optim.AdaDelta(1.0)")
opt_case("adadelta_args", "optim.AdaDelta(0.5, rho=0.5, eps=1e-3)")
opt_case("adam", "optim.Adam(0.01)")
opt_case("adam_bias_correction", "optim.Adam(0.01, betas=[0.8, 0.99], eps=1e-6, bias_correction=True)")
opt_case("adamw", "optim.AdamW(0.01)")
opt_case("adamw_args", "optim.AdamW(0.02, betas=[0.85, 0.9], weight_decay=0.1, bias_correction=True)")
opt_case("adamax", "optim.Adamax(0.01)")
opt_case("lion", "optim.Lion(0.01)")
opt_case("lion_wd", "optim.Lion(0.01, betas=[0.8, 0.95], weight_decay=0.1)")
opt_case("adafactor", "optim.Adafactor()", rtol=1e-4)
opt_case("adafactor_args", "optim.Adafactor(learning_rate=0.01, relative_step=False, beta_1=0.9, weight_decay=0.01, scale_parameter=False)", rtol=1e-4)
opt_case("adafactor_warmup", "optim.Adafactor(warmup_init=True, clip_threshold=0.5, decay_rate=-0.5)", rtol=1e-4)
opt_case("muon", "optim.Muon(0.02)", rtol=1e-4)
opt_case("muon_args", "optim.Muon(0.02, momentum=0.9, weight_decay=0.0, nesterov=False, ns_steps=3)", rtol=1e-4)
opt_case("sgd_schedule", "optim.SGD(optim.cosine_decay(0.1, 4), momentum=0.5)")
opt_case("adam_schedule", "optim.Adam(optim.join_schedules([optim.linear_schedule(0.0, 0.1, 2), optim.exponential_decay(0.1, 0.5)], [2]))", steps=5)
opt_case("multi", "optim.MultiOptimizer([optim.SGD(0.1), optim.Adam(0.01)], [lambda k, g: k == 'b' or k.startswith('layers')])")
for nm, ctor in [("adam_beta", "optim.Adam(0.1, betas=[1.0, 0.9])"), ("lion_beta", "optim.Lion(0.1, betas=[0.9, -0.1])"),
                 ("adam_eps", "optim.Adam(0.1, eps=-1.0)"), ("rmsprop_alpha", "optim.RMSprop(0.1, alpha=-1)"),
                 ("rmsprop_eps", "optim.RMSprop(0.1, eps=0.0)"), ("adagrad_eps", "optim.Adagrad(0.1, eps=0)"),
                 ("adadelta_rho", "optim.AdaDelta(0.1, rho=-0.5)"), ("adadelta_eps", "optim.AdaDelta(0.1, eps=0)"),
                 ("sgd_nesterov_bad", "optim.SGD(0.1, nesterov=True)"), ("multi_bad", "optim.MultiOptimizer([optim.SGD(0.1)], [lambda k, g: True])")]:
    case("optim", nm + "_error", f"out = {ctor}")
case("optim", "update_model", "mx.random.seed(3)\nmodel = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))\nopt = optim.Adam(0.1)\ng = tree_map(lambda p: mx.ones_like(p) * 0.5, model.parameters())\nopt.update(model, g)\nopt.update(model, g)\nout = {'params': model.parameters(), 'state': opt.state, 'lr': opt.learning_rate, 'step': opt.step}")
case("optim", "update_frozen", "mx.random.seed(3)\nmodel = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))\nmodel.layers[0].freeze()\nopt = optim.SGD(0.1)\nopt.update(model, tree_map(mx.ones_like, model.trainable_parameters()))\nout = model.parameters()")
case("optim", "learning_rate_set", PARAMS + "opt = optim.SGD(0.1)\nopt.learning_rate = 0.5\np1 = opt.apply_gradients(grads[0], params)\nout = {'lr': opt.learning_rate, 'p1': p1}")
case("optim", "init_explicit", PARAMS + "opt = optim.Adam(0.1)\nopt.init(params)\nout = opt.state")
case("optim", "state_reset", PARAMS + "opt = optim.SGD(0.1, momentum=0.9)\np = opt.apply_gradients(grads[0], params)\nst = opt.state\nopt2 = optim.SGD(0.1, momentum=0.9)\nopt2.state = st\np2 = opt2.apply_gradients(grads[1], p)\nout = {'p2': p2, 'state': opt2.state}")
case("optim", "init_grow", "opt = optim.Adam(0.1)\nopt.init({'a': mx.ones(2)})\nopt.init({'a': mx.ones(2), 'b': [mx.ones(3)]})\nout = opt.state")
case("optim", "multi_state", PARAMS + "opt = optim.MultiOptimizer([optim.SGD(0.1, momentum=0.9), optim.Adam(0.1)], [lambda k, g: g.ndim == 1])\np = opt.apply_gradients(grads[0], params)\nopt.learning_rate = 0.2\np = opt.apply_gradients(grads[1], p)\nout = {'p': p, 'state': opt.state, 'lr': opt.learning_rate}")
case("optim", "multi_bad_state", "opt = optim.MultiOptimizer([optim.SGD(0.1), optim.Adam(0.1)], [lambda k, g: True])\nopt.state = {'states': [{}]}\nout = 0")
case("optim", "float16_params", "p = {'w': mx.ones((2, 3), mx.float16)}\ng = {'w': mx.full((2, 3), 0.25, mx.float16)}\nopt = optim.AdamW(0.01)\nfor _ in range(2):\n    p = opt.apply_gradients(g, p)\nout = p", rtol=1e-3)
case("optim", "clip_grad_norm", PARAMS + "c, n = optim.clip_grad_norm(grads[0], 1.0)\nc2, n2 = optim.clip_grad_norm(grads[1], 100.0)\nout = [c, n, c2, n2]")
case("optim", "clip_grad_norm_f16", "g = {'a': mx.full((3,), 300.0, mx.float16), 'b': [mx.ones(2, mx.float16)]}\nout = optim.clip_grad_norm(g, 2.0)", rtol=1e-3)
case("optim", "clip_grad_norm_bad", "out = optim.clip_grad_norm({'a': mx.ones(2)}, -1.0)")
S = "steps = [mx.array(i) for i in range(12)]\n"
case("sched", "exponential", S + "f = optim.exponential_decay(0.1, 0.9)\nout = [f(s) for s in steps]")
case("sched", "step", S + "f = optim.step_decay(0.1, 0.5, 3)\nout = [f(s) for s in steps]")
case("sched", "cosine", S + "f = optim.cosine_decay(0.1, 8)\ng = optim.cosine_decay(0.1, 5, end=0.01)\nout = [[f(s) for s in steps], [g(s) for s in steps]]")
case("sched", "linear", S + "f = optim.linear_schedule(0.0, 1.0, 7)\nout = [f(s) for s in steps]")
case("sched", "join", S + "f = optim.join_schedules([optim.linear_schedule(0.0, 0.1, 3), optim.cosine_decay(0.1, 5), optim.exponential_decay(0.05, 0.5)], [3, 8])\nout = [f(s) for s in steps]")
case("sched", "python_int_step", "out = [optim.exponential_decay(2.0, 0.5)(3), optim.step_decay(1.0, 0.1, 2)(5)]")
for nm, ctor in [("step_bad", "optim.step_decay(0.1, 0.5, 0)"), ("cosine_bad", "optim.cosine_decay(0.1, 0)"),
                 ("linear_bad", "optim.linear_schedule(0.0, 1.0, 0)"), ("join_empty", "optim.join_schedules([], [])"),
                 ("join_bad", "optim.join_schedules([optim.exponential_decay(0.1, 0.9)], [3])")]:
    case("sched", nm, f"out = {ctor}")
case("sched", "scheduled_lr_in_state", "opt = optim.SGD(optim.step_decay(1.0, 0.5, 1))\np = {'w': mx.ones(2)}\nlrs = []\nfor _ in range(4):\n    p = opt.apply_gradients({'w': mx.ones(2)}, p)\n    lrs.append(opt.learning_rate)\nout = {'lrs': lrs, 'p': p}")


# ----------------------------------------------------------------------------- shared runner
def environment(mx):
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx import utils
    env = {"mx": mx, "nn": nn, "optim": optim, "math": math}
    for name in ("tree_flatten", "tree_unflatten", "tree_map", "tree_map_with_path", "tree_reduce", "tree_merge"):
        env[name] = getattr(utils, name)
    return env


def run(code, mx):
    """Execute a case: ``('ok', out)`` or ``('error', type name, message)``."""
    env = environment(mx)
    try:
        exec(code, env)
        out = env["out"]
        mx.eval([leaf for _, leaf in flatten(out, mx) if isinstance(leaf, mx.array)])
        return ("ok", out)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is recorded
        return ("error", type(e).__name__, str(e))


def flatten(out, mx, prefix=""):
    """``[(path, leaf)]`` of an output tree; Modules count as leaves (recorded by repr)."""
    import mlx.nn as nn
    if isinstance(out, nn.Module):
        return [(prefix, repr(out))]
    if isinstance(out, dict):
        res = [(prefix + "{}", None)] if not out else []
        for k, v in out.items():
            res += flatten(v, mx, f"{prefix}/{k}")
        return res
    if isinstance(out, (list, tuple)):
        res = [(prefix + "[]", None)] if not out else []
        for i, v in enumerate(out):
            res += flatten(v, mx, f"{prefix}/{i}")
        return res
    return [(prefix, out)]


# ----------------------------------------------------------------------------- checking (tests)
def load_group(group):
    """``[(entry, npz)]`` of a group's recorded cases."""
    import json
    import os

    import numpy as np
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "nn_goldens.json")) as f:
        entries = json.load(f)["groups"][group]
    return entries, np.load(os.path.join(here, f"{group}.npz"))


# Errors raised by an mlx.core op inside a layer: the type must match, but the wording is
# mlx-arm's core's own (e.g. "[split] ... axis 2 for shape [2, 6, 3]" vs MLX's "... axis -1
# for shape (2,6,3)").
CORE_MESSAGES = {"mod_GLU()"}


def check(entry, arrays, mx):
    """Run ``entry``'s code with this ``mx`` and assert it matches what real MLX recorded."""
    import numpy as np
    res = run(entry["code"], mx)
    if "error" in entry:
        assert res[0] == "error", f"expected {entry['error']}: {entry['message']}, got {res[1]!r}"
        assert res[1] == entry["error"], (res[1], res[2], entry["message"])
        if entry["name"] not in CORE_MESSAGES:
            assert res[2] == entry["message"], (res[2], entry["message"])
        return
    assert res[0] == "ok", f"raised {res[1]}: {res[2]}"
    # Compared by path, not order: MLX's tree_merge (MultiOptimizer) orders keys by a set.
    got = sorted(flatten(res[1], mx), key=lambda pl: pl[0])
    want = sorted(entry["leaves"], key=lambda w: w["path"])
    assert [p for p, _ in got] == [w["path"] for w in want], "output structure differs"
    rtol = entry["rtol"] or 1e-5
    for (path, leaf), w in zip(got, want):
        if "array" in w:
            assert isinstance(leaf, mx.array), f"{path}: expected an array, got {leaf!r}"
            assert str(leaf.dtype) == w["dtype"], (path, leaf.dtype, w["dtype"])
            assert list(leaf.shape) == w["shape"], (path, leaf.shape, w["shape"])
            a = np.array(leaf.astype(mx.float32) if leaf.dtype == mx.bfloat16 else leaf)
            b = arrays[w["array"]]
            if a.dtype.kind in "fc":
                tol = max(rtol, 1e-3) if w["dtype"] in ("mlx.core.float16", "mlx.core.bfloat16") else rtol
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=path)
            else:
                np.testing.assert_array_equal(a, b, err_msg=path)
        elif "float" in w:
            assert isinstance(leaf, float), (path, leaf)
            assert abs(leaf - w["float"]) <= 1e-6 * max(1.0, abs(w["float"])), (path, leaf, w["float"])
        else:
            assert repr(leaf) == w["repr"], (path, repr(leaf), w["repr"])
