// What the ONNX NN mappings share: the window attributes of Conv, ConvTranspose, ConvInteger and
// the pooling ops (kernel_shape, strides, dilations, pads, auto_pad) read and checked against the
// spatial rank, and the zero-point handling of ConvInteger and MatMulInteger.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {

struct window_attrs {
    std::vector<std::int64_t> kernel, strides, dilations;
    std::vector<std::int64_t> pads;  // ONNX order: all begins, then all ends
    std::string auto_pad;            // NOTSET, SAME_UPPER, SAME_LOWER or VALID
};

// The spatial dims (2...) of x, an [N, C, spatial...] input 0; `why` names what needs them in
// the error for a dynamic input.
std::vector<std::int64_t> spatial_lens(const shape& x, const std::string& why);

// Reads the attributes for `dims` spatial dims. `kernel` is the kernel taken from the weights
// (empty for pooling, whose kernel_shape is then required); a kernel_shape attribute must agree.
// Absent strides and dilations are 1, absent pads 0. pads are as written: auto_pad is not applied.
window_attrs read_window(const node_info& n, std::size_t dims, std::vector<std::int64_t> kernel);

// Replaces pads by the auto_pad padding of Conv and the pooling ops for input x: SAME_* pad so
// that the output length is ceil(input / stride), the odd element at the end (UPPER) or the
// start (LOWER); VALID pads nothing.
void apply_auto_pad(window_attrs& w, const shape& x);

// Floor division (ONNX's formulas are written in Python, where // floors negative values).
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Whether optional input i is present.
inline bool present(context& ctx, const std::vector<instruction_ref>& in, std::size_t i) {
    return i < in.size() && !ctx.is_none(in[i]);
}

// v - in[zp] in int32, exact for 8-bit values; v as is (in int32) when the zero point is absent.
// A 1-D zero point lies along dim `zp_axis` of v (per-row or per-channel quantization); a scalar
// or a single value applies to all of v.
instruction_ref centered_int32(context& ctx, instruction_ref v, const std::vector<instruction_ref>& in, std::size_t zp,
                               std::size_t zp_axis);

}  // namespace kiln::onnx_fe
