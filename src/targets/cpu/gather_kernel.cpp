// Gather (ONNX Gather, any axis) as row copies: for each outer position and index, one memcpy of
// the contiguous block after the axis (an embedding lookup copies whole rows). Standard data,
// indices and output of any whole-byte element type; an index out of range is the reference's
// error (ops::wrap_index names it), raised before anything is written.
#include <cstring>

#include "ops/gather.hpp"
#include "ops/indexing.hpp"
#include "targets/cpu/kernels.hpp"

namespace kiln {
namespace {

template <class I>
void gather_rows(const std::byte* data, const I* indices, std::byte* out, std::size_t outer, std::size_t len,
                 std::size_t n, std::size_t block, std::size_t axis) {
    for (std::size_t p = 0; p < n; ++p) ops::wrap_index(static_cast<std::int64_t>(indices[p]), len, axis, p);
    for (std::size_t p = 0; p < n; ++p) {
        auto i = static_cast<std::int64_t>(indices[p]);
        std::size_t row = static_cast<std::size_t>(i < 0 ? i + static_cast<std::int64_t>(len) : i);
        for (std::size_t o = 0; o < outer; ++o)
            std::memcpy(out + (o * n + p) * block, data + (o * len + row) * block, block);
    }
}

}  // namespace

cpu_kernel make_gather_kernel(const instruction& ins) {
    const auto* op = ins.get_operator().get_if<ops::gather>();
    if (!op || ins.inputs().size() != 2) return {};
    const shape& ds = ins.inputs()[0]->get_shape();
    const shape& is = ins.inputs()[1]->get_shape();
    const shape& os = ins.get_shape();
    for (const shape* s : {&ds, &is, &os})
        if (s->dynamic() || s->is_tuple() || !s->standard() || is_packed(s->type())) return {};
    if (ds.ndim() == 0 || os.elements() == 0 || (is.type() != dtype::int64 && is.type() != dtype::int32)) return {};
    std::size_t axis = static_cast<std::size_t>(op->axis < 0 ? op->axis + static_cast<std::int64_t>(ds.ndim()) : op->axis);
    std::size_t outer = 1, block = ds.bytes() / ds.elements();
    for (std::size_t d = 0; d < axis; ++d) outer *= ds.lens()[d];
    for (std::size_t d = axis + 1; d < ds.ndim(); ++d) block *= ds.lens()[d];
    std::size_t len = ds.lens()[axis], n = is.elements();
    bool wide = is.type() == dtype::int64;
    return {[=](std::span<const argument> args, const argument& out) {
                if (wide)
                    gather_rows(args[0].data(), reinterpret_cast<const std::int64_t*>(args[1].data()), out.data(), outer,
                                len, n, block, axis);
                else
                    gather_rows(args[0].data(), reinterpret_cast<const std::int32_t*>(args[1].data()), out.data(), outer,
                                len, n, block, axis);
            },
            "row copies"};
}

}  // namespace kiln
