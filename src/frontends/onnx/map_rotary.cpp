// ONNX RotaryEmbedding (opset 23), composed from slices, elementwise ops and concat: each pair
// (x1, x2) of the first rotary_embedding_dim features of a head turns by its position's angle,
// (x1 cos - x2 sin, x1 sin + x2 cos). Pairs are the two halves of those features, or neighbours
// (2k, 2k + 1) when interleaved. The composition rounds as ONNX's reference does (one rounding
// per product and sum), and it is all pointwise and data movement, which fusion turns into one
// kernel.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"
#include "frontends/onnx/nn_common.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;
using ints = std::vector<std::int64_t>;

instruction_ref slice_last(context& ctx, instruction_ref x, std::int64_t start, std::int64_t end, std::int64_t step) {
    return ctx.add("slice",
                   value{{"axes", to_value(ints{-1})},
                         {"starts", to_value(ints{start})},
                         {"ends", to_value(ints{end})},
                         {"steps", to_value(ints{step})}},
                   {x});
}

instruction_ref permute_0213(context& ctx, instruction_ref x) {
    return ctx.add("transpose", value{{"permutation", to_value(ints{0, 2, 1, 3})}}, {x});
}

// The input as [B, S, H, D]: 4-D inputs are [B, H, S, D]; 3-D ones [B, S, H * D] with num_heads.
instruction_ref to_bshd(const node_info& n, context& ctx, instruction_ref x) {
    const shape& s = x->get_shape();
    if (s.dynamic()) fail("input 0 has dynamic dims (", to_string(s), "); give its shape");
    if (s.ndim() == 4) return permute_0213(ctx, x);
    if (s.ndim() != 3) fail("input 0 has ", s.ndim(), " dims; expected 3 or 4");
    std::int64_t heads = n.attr_int("num_heads", 0);
    if (heads <= 0 || s.lens()[2] % static_cast<std::size_t>(heads) != 0)
        fail("3-D input 0 needs num_heads dividing its hidden size ", s.lens()[2], "; num_heads=", heads);
    return ctx.add("reshape", value{{"dims", to_value(ints{0, 0, heads, -1})}}, {x});
}

// cos or sin for every [B, S] position as [B, S, 1, rotary_dim / 2]: the cache row of each
// position id, or the cache itself when it is already per position.
instruction_ref angles(context& ctx, const inputs_t& in, std::size_t which, std::int64_t half) {
    instruction_ref c = in.at(which);
    if (present(ctx, in, 3)) c = ctx.add("gather", value{{"axis", 0}}, {c, in[3]});
    const shape& s = c->get_shape();
    if (s.ndim() != 3 || s.lens()[2] != static_cast<std::size_t>(half))
        fail("input ", which, " gives ", to_string(s), " per position; expected [batch, sequence, ", half,
             "] (rotary_embedding_dim / 2)");
    return ctx.add("unsqueeze", value{{"axes", to_value(ints{2})}}, {c});
}

inputs_t map_rotary(const node_info& n, context& ctx, const inputs_t& in) {
    instruction_ref x = to_bshd(n, ctx, in.at(0));
    auto head = static_cast<std::int64_t>(x->get_shape().lens()[3]);
    std::int64_t dim = n.attr_int("rotary_embedding_dim", 0);
    if (dim == 0) dim = head;
    if (dim < 0 || dim > head || dim % 2 != 0)
        fail("rotary_embedding_dim=", dim, "; expected an even size up to the head size ", head);
    bool interleaved = n.attr_int("interleaved", 0) != 0;
    auto cos = angles(ctx, in, 1, dim / 2), sin = angles(ctx, in, 2, dim / 2);
    auto x1 = interleaved ? slice_last(ctx, x, 0, dim, 2) : slice_last(ctx, x, 0, dim / 2, 1);
    auto x2 = interleaved ? slice_last(ctx, x, 1, dim, 2) : slice_last(ctx, x, dim / 2, dim, 1);
    auto real = ctx.add("sub", {ctx.add("mul", {cos, x1}), ctx.add("mul", {sin, x2})});
    auto imag = ctx.add("add", {ctx.add("mul", {sin, x1}), ctx.add("mul", {cos, x2})});
    instruction_ref rotated;
    if (interleaved) {
        auto last = value{{"axes", to_value(ints{4})}};
        auto pairs = ctx.add("concat", value{{"axis", 4}},
                             {ctx.add("unsqueeze", last, {real}), ctx.add("unsqueeze", last, {imag})});
        rotated = ctx.add("reshape", value{{"dims", to_value(ints{0, 0, 0, dim})}}, {pairs});
    } else {
        rotated = ctx.add("concat", value{{"axis", 3}}, {real, imag});
    }
    if (dim < head) rotated = ctx.add("concat", value{{"axis", 3}}, {rotated, slice_last(ctx, x, dim, head, 1)});
    if (in[0]->get_shape().ndim() == 4) return {permute_0213(ctx, rotated)};
    return {ctx.add("reshape", value{{"dims", to_value(ints{0, 0, -1})}}, {rotated})};
}
KILN_ONNX_OP("", "RotaryEmbedding", 23, map_rotary)

}  // namespace
}  // namespace kiln::onnx_fe
