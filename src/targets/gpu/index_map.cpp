// Data movement whose every output element is one input element or a constant, decided by static
// shapes and attributes alone (pad in every mode, tile, reverse, trilu, depth_to_space,
// space_to_depth, slices with negative steps): the op's own reference compute, run once at
// compile time over the numbers 1..n in the input's shape, gives for each output element the
// input element it copies (0 where it holds the constant). A generated kernel gathers through that
// map. One definition of each op's semantics (ref's), so the GPU cannot drift from it; the cost is
// one extra index read per element.
#include <limits>

#include "core/error.hpp"
#include "ops/data_movement.hpp"
#include "ops/views.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

bool is_index_map(const instruction& ins) {
    const auto& op = ins.get_operator();
    if (ins.inputs().size() != 1 || ins.get_shape().dynamic() || ins.inputs()[0]->get_shape().dynamic()) return false;
    return op.get_if<ops::pad>() || op.get_if<ops::tile>() || op.get_if<ops::reverse>() || op.get_if<ops::trilu>() ||
           op.get_if<ops::depth_to_space>() || op.get_if<ops::space_to_depth>() || op.get_if<ops::slice>();
}

// What fills output elements that copy nothing: pad's value, trilu's zero.
double fill_value(const operation& op) {
    if (const auto* p = op.get_if<ops::pad>()) return p->value;
    return 0;
}

// Output element i copies input element map[i] - 1 (row-major), or nothing where map[i] is 0.
argument source_map(const instruction& ins) {
    const shape& x = ins.inputs()[0]->get_shape();
    shape ids(dtype::int64, x.lens());
    argument in(ids);
    auto* v = in.as<std::int64_t>();
    for (std::size_t i = 0; i < ids.elements(); ++i) v[i] = static_cast<std::int64_t>(i) + 1;
    operation op = ins.get_operator();
    if (op.get_if<ops::pad>()) op = op.with_attributes(value_object{{"value", 0.0}});
    shape out(dtype::int64, ins.get_shape().lens());
    argument r = op.compute(out, std::vector<argument>{in});
    return r.get_shape().standard() ? r : r.copy();
}

void lower_index_map(lowering_context& ctx, const instruction& ins) {
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& y = ins.get_shape();
    if (!y.standard()) fail("gpu: data movement into a non-standard output: ", ctx.where(ins));
    argument map = source_map(ins);
    // int32 indices halve the map where the input is small enough.
    bool narrow = x.elements() < static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
    if (narrow) {
        argument m32(shape(dtype::int32, map.get_shape().lens()));
        for (std::size_t i = 0; i < map.get_shape().elements(); ++i)
            m32.as<std::int32_t>()[i] = static_cast<std::int32_t>(map.as<std::int64_t>()[i]);
        map = m32;
    }
    std::vector<std::size_t> all(x.ndim());
    for (std::size_t d = 0; d < all.size(); ++d) all[d] = d;
    std::string ty = device_type(y.type());
    std::string fill = stored_value(y.type(), cat("(", compute_type(y.type()), ")", double_literal(fill_value(ins.get_operator()))));
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n",
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_index_map(", ty, "* __restrict__ y, const ",
                           ty, "* __restrict__ x, const ", narrow ? "kiln::i32" : "kiln::i64", "* __restrict__ map) {\n",
                           "    constexpr auto X = ", layout_of(x, all), ";\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < ", y.elements(), "ull; i += kiln::grid_threads()) {\n",
                           "        const kiln::i64 k = map[i];\n",
                           "        y[i] = k > 0 ? x[X.offset((kiln::index_t)(k - 1))] : kiln::storer<", ty, ">::from(", fill, ");\n",
                           "    }\n}\n");
    std::byte* m = ctx.upload(map, ctx.where(ins));
    ctx.add_kernel(ins, {"kiln_index_map", code, ctx.where(ins)}, elementwise_launch(y.elements()),
                   {ctx.address(ins), ctx.address(*ins.inputs()[0]), m});
}

const gpu_lowering_registrar index_map_lowering{{"data movement through a compile-time index map (generated kernel)",
                                                 is_index_map, lower_index_map}};

}  // namespace
}  // namespace kiln::gpu
