"""Op names from TensorFlow's and PyTorch's profilers -> a few categories, so one stacked bar
can compare configurations of both frameworks."""

import re

# First match wins; the patterns cover TensorFlow op types (with oneDNN's _Mkl prefixes) and
# PyTorch aten/mkldnn op names.
CATEGORIES = [
    ("optimizer", r"RMSProp|rmsprop|addcdiv|_foreach|lerp|optimizer"),
    ("batch norm", r"[Bb]atch_?[Nn]orm|moments|Rsqrt|native_batch_norm"),
    ("convolution", r"[Cc]onv|mkldnn_convolution"),
    ("copies / feed", r"copy|Copy|_Send|_Recv|IteratorGetNext|Placeholder|to_copy|contiguous|"
                      r"Identity|Const|ReadVariableOp|Transpose|clone|Tile|empty|zero_"),
    ("pooling / resize", r"[Pp]ool|[Rr]esize|upsample|interpolate|NearestNeighbor"),
    ("elementwise", r"[Rr]elu|[Aa]dd|[Mm]ul|[Ss]ub|[Ss]quare|[Mm]ean|[Ss]um|[Pp]ow|div|Div|"
                    r"[Ss]qrt|neg|Neg|fill|Fill|where|Select|Reshape|view|expand|stack|Pack|"
                    r"Squared|BiasAdd|BroadcastTo|Cast|mse|[Rr]educe"),
]


def categorize(op):
    for name, pattern in CATEGORIES:
        if re.search(pattern, op):
            return name
    return "other"
