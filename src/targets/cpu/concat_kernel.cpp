// Concat as block copies: for each outer position (the dims before the axis), one memcpy per input
// of its contiguous block (its extent along the axis times the dims after it). Standard inputs and
// output of any whole-byte element type but strings (whose elements own memory).
#include <cstring>

#include "ops/data_movement.hpp"
#include "targets/cpu/kernels.hpp"

namespace kiln {
namespace {

bool copyable(const shape& s) {
    return !s.dynamic() && !s.is_tuple() && s.standard() && !is_packed(s.type()) && s.type() != dtype::string;
}

}  // namespace

cpu_kernel make_concat_kernel(const instruction& ins) {
    const auto* op = ins.get_operator().get_if<ops::concat>();
    const shape& os = ins.get_shape();
    if (!op || !copyable(os) || os.ndim() == 0 || os.elements() == 0) return {};
    auto axis = static_cast<std::size_t>(op->axis < 0 ? op->axis + static_cast<std::int64_t>(os.ndim()) : op->axis);
    std::size_t outer = 1, inner = os.bytes() / os.elements();
    for (std::size_t d = 0; d < axis; ++d) outer *= os.lens()[d];
    for (std::size_t d = axis + 1; d < os.ndim(); ++d) inner *= os.lens()[d];
    std::vector<std::size_t> blocks;   // bytes of each input per outer position
    for (auto in : ins.inputs()) {
        const shape& s = in->get_shape();
        bool empty = !s.dynamic() && !s.is_tuple() && s.elements() == 0;   // copies nothing, whatever its strides
        if ((!empty && !copyable(s)) || s.type() != os.type()) return {};
        blocks.push_back(empty ? 0 : s.lens()[axis] * inner);
    }
    std::size_t row = os.lens()[axis] * inner;
    bool parallel = os.bytes() >= (std::size_t{1} << 20);   // below, the pool's wake-up costs more
    return {[=](std::span<const argument> args, const argument& out) {
                std::byte* y = out.data();
#pragma omp parallel for if (parallel)
                for (std::size_t o = 0; o < outer; ++o) {
                    std::size_t at = o * row;
                    for (std::size_t i = 0; i < blocks.size(); ++i) {
                        if (blocks[i]) std::memcpy(y + at, args[i].data() + o * blocks[i], blocks[i]);
                        at += blocks[i];
                    }
                }
            },
            "block copies"};
}

}  // namespace kiln
