#include "targets/gpu/patch_convolution.hpp"

#include "core/reflect.hpp"
#include "ops/convolution.hpp"
#include "passes/view_rewire.hpp"

namespace kiln::gpu {
namespace {

using ints = std::vector<std::int64_t>;

instruction_ref add(module& m, instruction_ref pos, const char* op, std::vector<instruction_ref> in, value attrs = value()) {
    return m.insert_instruction(pos, make_op(op, attrs), std::move(in));
}

instruction_ref reshape(module& m, instruction_ref pos, instruction_ref x, const ints& dims) {
    return add(m, pos, "reshape", {x}, value{{"dims", to_value(dims)}, {"allowzero", value(true)}});
}

instruction_ref transpose(module& m, instruction_ref pos, instruction_ref x, const ints& perm) {
    return add(m, pos, "transpose", {x}, value{{"permutation", to_value(perm)}});
}

void rewrite(module& m, instruction_ref conv) {
    instruction_ref x = conv->inputs()[0], w = conv->inputs()[1];
    const auto& xl = x->get_shape().lens();
    const auto& wl = w->get_shape().lens();
    const std::size_t nd = xl.size() - 2;
    const auto n = static_cast<std::int64_t>(xl[0]), c = static_cast<std::int64_t>(xl[1]),
               mo = static_cast<std::int64_t>(wl[0]);
    std::int64_t patches = n, row = c;
    ints out(nd), k(nd);
    bool trailing = false;
    for (std::size_t d = 0; d < nd; ++d) {
        k[d] = static_cast<std::int64_t>(wl[2 + d]);
        out[d] = static_cast<std::int64_t>(xl[2 + d]) / k[d];
        trailing = trailing || out[d] * k[d] != static_cast<std::int64_t>(xl[2 + d]);
        patches *= out[d];
        row *= k[d];
    }
    if (trailing) {   // the rows and columns past the last whole patch, which no output reads
        ints axes, starts(nd, 0), ends;
        for (std::size_t d = 0; d < nd; ++d) {
            axes.push_back(static_cast<std::int64_t>(2 + d));
            ends.push_back(out[d] * k[d]);
        }
        x = add(m, conv, "slice", {x},
                value{{"axes", to_value(axes)}, {"starts", to_value(starts)}, {"ends", to_value(ends)}, {"steps", to_value(ints{})}});
    }
    // [N, C, o1, k1, o2, k2, ...] -> [N, o1, o2, ..., C, k1, k2, ...] -> rows of one patch each:
    // the only copy, which reads runs of k_last contiguous elements.
    ints split{n, c}, perm{0};
    for (std::size_t d = 0; d < nd; ++d) {
        split.push_back(out[d]);
        split.push_back(k[d]);
        perm.push_back(static_cast<std::int64_t>(2 + 2 * d));
    }
    perm.push_back(1);
    for (std::size_t d = 0; d < nd; ++d) perm.push_back(static_cast<std::int64_t>(3 + 2 * d));
    auto rows = reshape(m, conv, transpose(m, conv, reshape(m, conv, x, split), perm), {patches, row});
    // Filters [M, C, k...] as [C * k..., M] (a view; cuBLASLt reads it transposed).
    auto wt = transpose(m, conv, reshape(m, conv, w, {mo, row}), {1, 0});
    auto y = add(m, conv, "dot", {rows, wt});
    // [N * patches, M] -> [N, o..., M] -> [N, M, o...]: the convolution's lens, channels last.
    ints lens{n}, back{0, static_cast<std::int64_t>(nd + 1)};
    for (std::size_t d = 0; d < nd; ++d) {
        lens.push_back(out[d]);
        back.push_back(static_cast<std::int64_t>(1 + d));
    }
    lens.push_back(mo);
    auto result = transpose(m, conv, reshape(m, conv, y, lens), back);
    // Users that cannot take the channels-last result read a standard copy of it.
    auto copy = add(m, conv, "contiguous", {result});
    m.replace_uses(conv, copy);
    move_users(m, copy, result);
}

}  // namespace

bool is_patch_convolution(const instruction& ins) {
    const auto* c = ins.get_operator().get_if<ops::convolution>();
    if (!c || ins.inputs().size() != 2 || c->group != 1) return false;
    const shape &x = ins.inputs()[0]->get_shape(), &w = ins.inputs()[1]->get_shape();
    const dtype t = x.type();   // the types cuBLASLt multiplies (fp8 and fp4 convolutions stay as they are)
    if (t != dtype::float16 && t != dtype::bfloat16 && t != dtype::float32 && t != dtype::float64) return false;
    if (x.dynamic() || w.dynamic() || w.type() != t || x.ndim() < 3 ||
        w.ndim() != x.ndim() || x.elements() == 0 || w.elements() == 0 || !ins.get_shape().standard())
        return false;
    const std::size_t nd = x.ndim() - 2;
    if (c->stride.size() != nd || c->dilation.size() != nd || c->padding.size() != 2 * nd) return false;
    std::size_t kernel = 1;
    for (std::size_t d = 0; d < nd; ++d) {
        const auto k = static_cast<std::int64_t>(w.lens()[2 + d]);
        if (c->stride[d] != k || c->dilation[d] != 1 || c->padding[d] != 0 || c->padding[nd + d] != 0 ||
            x.lens()[2 + d] < w.lens()[2 + d])
            return false;
        kernel *= w.lens()[2 + d];
    }
    return kernel > 1;
}

void patch_convolutions::apply(module& m) const {
    std::vector<instruction_ref> convs;
    for (auto ins = m.begin(); ins != m.end(); ++ins)
        if (is_patch_convolution(*ins)) convs.push_back(ins);
    for (auto c : convs) rewrite(m, c);
}

}  // namespace kiln::gpu
