// bitcast: reinterprets each element's bits as target_type (ONNX BitCast), which must have the
// input's bit width; the shape is unchanged. Usually a view of the input. Two cases copy:
// int4 <-> uint4, whose inputs arrive widened to 8 bits (the nibble is re-extended), and bool
// targets, whose storage only holds 0 and 1 (a nonzero byte becomes true).
#include <cstdint>

#include "ops/bitcast.hpp"

namespace kiln::ops {

shape bitcast::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    if (in[0].is_tuple()) fail("input 0 is a tuple; expected a tensor");
    if (target_type == dtype::tuple) fail("target_type=", dtype_name(target_type), " is not an element type");
    dtype from = in[0].type();
    if (dtype_bits(from) != dtype_bits(target_type))
        fail("input 0 is ", dtype_name(from), " (", dtype_bits(from),
             " bits) but target_type=", dtype_name(target_type), " has ", dtype_bits(target_type),
             " bits; expected equal widths");
    if (in[0].dynamic() || copies()) return {target_type, in[0].dims()};
    return in[0].with_type(target_type);  // the input's strides: a view
}

argument bitcast::compute(const shape& out, std::span<const argument> args) const {
    const shape& xs = args[0].get_shape();
    if (!copies()) return args[0].view(xs.with_type(out.type()));
    // Both sides hold one byte per element here (packed types arrive widened).
    argument r(out);
    auto* y = r.as<std::uint8_t>();
    const auto* x = args[0].as<std::uint8_t>();
    for (std::size_t i = 0; i < out.elements(); ++i) {
        std::uint8_t b = x[xs.index(i)];
        if (target_type == dtype::bool_)
            y[i] = b != 0;
        else if (target_type == dtype::int4)
            y[i] = static_cast<std::uint8_t>(int4_from_nibble(b & 0xF));
        else
            y[i] = b & 0xF;
    }
    return r;
}
KILN_REGISTER_OP(bitcast)

}  // namespace kiln::ops
