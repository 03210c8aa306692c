// bitcast: reinterprets each element's bits as target_type (ONNX BitCast), which must have the
// input's bit width; the shape is unchanged. Usually a view of the input. Two cases copy: the
// packed types (int4, uint4, int2, uint2, fp4e2m1), whose values arrive widened, and bool
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
    // Packed types arrive widened (int4/int2 to int8, uint4/uint2 to uint8, fp4e2m1 to float32, see
    // core/eval.cpp): take each element's bits back, then the target's value of those bits.
    std::uint8_t mask = static_cast<std::uint8_t>((1u << dtype_bits(target_type)) - 1);
    auto bits_at = [&](std::size_t i) -> std::uint8_t {
        if (xs.type() == dtype::float32) return fp4e2m1_to_nibble(args[0].as<float>()[xs.index(i)]);
        return args[0].as<std::uint8_t>()[xs.index(i)] & mask;
    };
    argument r(out);
    for (std::size_t i = 0; i < out.elements(); ++i) {
        std::uint8_t b = bits_at(i);
        switch (target_type) {
        case dtype::bool_: r.as<std::uint8_t>()[i] = b != 0; break;
        case dtype::int4: r.as<std::int8_t>()[i] = int4_from_nibble(b); break;
        case dtype::int2: r.as<std::int8_t>()[i] = int2_from_bits(b); break;
        case dtype::fp4e2m1: r.as<float>()[i] = static_cast<float>(fp4e2m1_from_nibble(b)); break;
        default: r.as<std::uint8_t>()[i] = b; break;   // uint4, uint2
        }
    }
    return r;
}
KILN_REGISTER_OP(bitcast)

}  // namespace kiln::ops
