"""Cases for src/ops/convolution.cpp (convolution, deconvolution), computed in float64 by the
numpy references of window_ref.py (checked against onnx.reference's Conv and ConvTranspose
where that evaluator handles the case) and rounded once to the element type."""
import numpy as np
from caselib import case, error_case, rng, shape_only, tensor, write
from window_ref import check_onnx, conv, deconv, split_pads

r = rng(11)
cases = []


def rand(shape, dtype=np.float32):
    return r.standard_normal(shape).astype(dtype)


def onnx_attrs(x, padding, stride, dilation, group):
    dims = x.ndim - 2
    pb, pe = split_pads(padding, dims)
    return {"pads": list(pb) + list(pe), "strides": stride or [1] * dims, "dilations": dilation or [1] * dims,
            "group": group}


def add_conv(name, x, w, padding=None, stride=None, dilation=None, group=1, **tol):
    y = conv(x, w, padding, stride, dilation, group)
    check_onnx(y, "Conv", [x, w], **onnx_attrs(x, padding, stride, dilation, group))
    attrs = {"padding": padding or [], "stride": stride or [], "dilation": dilation or [], "group": group}
    cases.append(case(name, "convolution", [tensor(x), tensor(w)], [tensor(y.astype(x.dtype))], attrs, **tol))


add_conv("conv2d", rand((1, 2, 5, 5)), rand((3, 2, 3, 3)))
add_conv("conv2d_pad_stride", rand((1, 2, 5, 6)), rand((2, 2, 3, 3)), padding=[1, 1], stride=[2, 2])
add_conv("conv2d_asymmetric_pad", rand((1, 2, 4, 5)), rand((2, 2, 3, 2)), padding=[1, 0, 2, 1])
add_conv("conv2d_dilation", rand((1, 1, 7, 6)), rand((2, 1, 3, 2)), dilation=[2, 3])
add_conv("conv2d_group", rand((1, 4, 4, 4)), rand((6, 2, 3, 3)), padding=[1, 1], group=2)
add_conv("conv2d_depthwise", rand((2, 3, 5, 5)), rand((3, 1, 3, 3)), group=3)
add_conv("conv2d_depthwise_multiplier", rand((1, 2, 4, 4)), rand((4, 1, 2, 2)), stride=[2, 1], group=2)
add_conv("conv2d_everything", rand((2, 4, 6, 5)), rand((4, 2, 2, 3)), padding=[2, 1, 0, 1], stride=[2, 1],
         dilation=[2, 1], group=2)
add_conv("conv2d_1x1", rand((2, 3, 3, 3)), rand((4, 3, 1, 1)))
add_conv("conv1d", rand((2, 3, 7)), rand((4, 3, 3)), padding=[1, 2], stride=[2])
add_conv("conv1d_dilation_group", rand((1, 4, 9)), rand((2, 2, 3)), dilation=[3], group=2)
add_conv("conv3d", rand((1, 2, 4, 4, 3)), rand((2, 2, 2, 2, 2)), padding=[1, 1, 1], stride=[1, 2, 1])
add_conv("conv3d_asymmetric", rand((1, 1, 3, 4, 4)), rand((2, 1, 2, 3, 2)), padding=[0, 1, 1, 1, 0, 0],
         dilation=[1, 1, 2])
add_conv("conv2d_f16", rand((1, 2, 4, 4), np.float16), rand((2, 2, 3, 3), np.float16), padding=[1, 1])
add_conv("conv2d_f64", rand((1, 2, 5, 4), np.float64), rand((3, 2, 2, 2), np.float64), stride=[2, 2])

f32 = "float32"
x4, w4 = shape_only(f32, [1, 4, 5, 5]), shape_only(f32, [2, 2, 3, 3])
cases += [
    error_case("conv_channel_mismatch", "convolution", [shape_only(f32, [1, 3, 5, 5]), w4],
               "input 1 (weights) {2, 2, 3, 3} has 2 channels per group; expected 3"),
    error_case("conv_group_not_dividing", "convolution", [shape_only(f32, [1, 3, 5, 5]), w4],
               "input 0 has 3 channels, which group=2 does not divide", {"group": 2}),
    error_case("conv_group_not_dividing_outputs", "convolution", [x4, shape_only(f32, [3, 2, 3, 3])],
               "has 3 output channels, which group=2 does not divide", {"group": 2}),
    error_case("conv_group_zero", "convolution", [x4, w4], "group=0; expected >= 1", {"group": 0}),
    error_case("conv_bad_padding_length", "convolution", [x4, shape_only(f32, [2, 4, 3, 3])],
               "padding has 3 values; expected 2 (one per spatial dim) or 4", {"padding": [1, 1, 1]}),
    error_case("conv_negative_padding", "convolution", [x4, shape_only(f32, [2, 4, 3, 3])],
               "padding has -1; expected values >= 0", {"padding": [1, -1]}),
    error_case("conv_bad_stride_length", "convolution", [x4, shape_only(f32, [2, 4, 3, 3])],
               "stride has 3 values; expected 2", {"stride": [1, 1, 1]}),
    error_case("conv_zero_stride", "convolution", [x4, shape_only(f32, [2, 4, 3, 3])],
               "stride has 0; expected values >= 1", {"stride": [1, 0]}),
    error_case("conv_zero_dilation", "convolution", [x4, shape_only(f32, [2, 4, 3, 3])],
               "dilation has 0; expected values >= 1", {"dilation": [0, 1]}),
    error_case("conv_kernel_too_big", "convolution", [shape_only(f32, [1, 1, 3, 4]), shape_only(f32, [1, 1, 5, 2])],
               "spatial dim 0: kernel 5 is larger than the padded input 4 (3 + padding 1+0)",
               {"padding": [1, 0, 0, 0]}),
    error_case("conv_dilated_kernel_too_big", "convolution",
               [shape_only(f32, [1, 1, 4, 4]), shape_only(f32, [1, 1, 2, 3])],
               "spatial dim 1: kernel 3 (5 dilated) is larger than the padded input 4", {"dilation": [1, 2]}),
    error_case("conv_weight_rank", "convolution", [x4, shape_only(f32, [2, 4, 3])],
               "input 1 (weights) has 3 dims {2, 4, 3}; expected 4 like input 0 {1, 4, 5, 5}"),
    error_case("conv_rank2", "convolution", [shape_only(f32, [1, 4]), shape_only(f32, [2, 4])],
               "input 0 has 2 dims"),
    error_case("conv_int", "convolution", [shape_only("int8", [1, 1, 3, 3]), shape_only("int8", [1, 1, 2, 2])],
               "expected a float type"),
    error_case("conv_type_mismatch", "convolution", [x4, shape_only("float16", [2, 4, 3, 3])],
               "inputs must have the same type"),
    error_case("conv_three_inputs", "convolution", [x4, shape_only(f32, [2, 4, 3, 3]), shape_only(f32, [2])],
               "expected 2 inputs, got 3"),
]


def add_deconv(name, x, w, padding=None, stride=None, dilation=None, output_padding=None, group=1, **tol):
    y = deconv(x, w, padding, stride, dilation, output_padding, group)
    # onnx.reference's ConvTranspose fails for group > 1: check each group on its own.
    cpg, mpg = x.shape[1] // group, w.shape[1]
    for g in range(group):
        xg, wg = x[:, g * cpg:(g + 1) * cpg], w[g * cpg:(g + 1) * cpg]
        check_onnx(y[:, g * mpg:(g + 1) * mpg], "ConvTranspose", [xg, wg],
                   output_padding=output_padding or [0] * (x.ndim - 2), **onnx_attrs(x, padding, stride, dilation, 1))
    attrs = {"padding": padding or [], "stride": stride or [], "dilation": dilation or [],
             "output_padding": output_padding or [], "group": group}
    cases.append(case(name, "deconvolution", [tensor(x), tensor(w)], [tensor(y.astype(x.dtype))], attrs, **tol))


add_deconv("deconv2d", rand((1, 2, 3, 3)), rand((2, 3, 3, 3)))
add_deconv("deconv2d_stride_pad", rand((1, 2, 3, 3)), rand((2, 2, 3, 3)), padding=[1, 1], stride=[2, 2])
add_deconv("deconv2d_output_padding", rand((1, 2, 3, 2)), rand((2, 1, 3, 3)), padding=[1, 1], stride=[2, 3],
           output_padding=[1, 2])
add_deconv("deconv2d_asymmetric_pad", rand((2, 1, 3, 3)), rand((1, 2, 3, 2)), padding=[0, 1, 1, 0])
add_deconv("deconv2d_dilation", rand((1, 2, 3, 3)), rand((2, 2, 2, 2)), dilation=[2, 3], stride=[1, 2])
add_deconv("deconv2d_group", rand((1, 4, 3, 3)), rand((4, 2, 2, 2)), stride=[2, 2], group=2)
add_deconv("deconv2d_group_output_padding", rand((2, 6, 2, 3)), rand((6, 1, 3, 2)), padding=[1, 0],
           stride=[2, 2], output_padding=[1, 0], group=3)
add_deconv("deconv1d", rand((2, 3, 4)), rand((3, 2, 3)), padding=[1, 0], stride=[3])
add_deconv("deconv3d", rand((1, 2, 2, 3, 2)), rand((2, 2, 2, 2, 2)), stride=[2, 1, 2], padding=[0, 1, 0])
add_deconv("deconv2d_f16", rand((1, 2, 3, 3), np.float16), rand((2, 2, 3, 3), np.float16), stride=[2, 2])
add_deconv("deconv2d_f64", rand((1, 1, 3, 2), np.float64), rand((1, 2, 2, 2), np.float64), padding=[1, 0])

cases += [
    error_case("deconv_channel_mismatch", "deconvolution", [shape_only(f32, [1, 3, 4, 4]), w4],
               "input 1 (weights) {2, 2, 3, 3} has 2 input channels; expected 3 like input 0 {1, 3, 4, 4}"),
    error_case("deconv_group_not_dividing", "deconvolution",
               [shape_only(f32, [1, 3, 4, 4]), shape_only(f32, [3, 2, 3, 3])],
               "input 0 has 3 channels, which group=2 does not divide", {"group": 2}),
    error_case("deconv_bad_output_padding", "deconvolution", [shape_only(f32, [1, 2, 4, 4]), w4],
               "output_padding has 1 values; expected 2", {"output_padding": [1]}),
    error_case("deconv_padding_eats_output", "deconvolution",
               [shape_only(f32, [1, 2, 1, 4]), shape_only(f32, [2, 2, 2, 3])],
               "spatial dim 0: padding 1+1 leaves no output of the full length 2", {"padding": [1, 1]}),
    error_case("deconv_bad_padding_length", "deconvolution", [shape_only(f32, [1, 2, 4, 4]), w4],
               "padding has 5 values", {"padding": [1, 1, 1, 1, 1]}),
    error_case("deconv_weight_rank", "deconvolution", [shape_only(f32, [1, 2, 4, 4]), shape_only(f32, [2, 2, 3])],
               "input 1 (weights) has 3 dims"),
]
write("convolution", cases)
