// The output types of a deferred node (deferred.cpp) whose model declares none. For these ops
// the dtype and the rank follow from the inputs' types and static lengths (a Pad, Transpose or
// GatherElements keeps its input's rank, a ReduceSum drops as many dims as its axes input is
// long); each dim stays
// unknown until the node runs. Other ops, or inputs whose lengths are unknown too, give no type.
#include <onnx/onnx_pb.h>

#include <optional>

#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

// The length of the 1-D input i when its shape is static, else none.
std::optional<std::size_t> length_of(const std::vector<instruction_ref>& in, std::size_t i) {
    if (i >= in.size() || context::is_none(in[i])) return std::nullopt;
    const shape& s = in[i]->get_shape();
    if (s.dynamic() || s.ndim() != 1) return std::nullopt;
    return s.lens()[0];
}

std::optional<std::size_t> reduced_rank(const node_info& n, const std::vector<instruction_ref>& in, std::size_t r) {
    if (n.attr_int("keepdims", 1) != 0) return r;
    std::optional<std::size_t> axes;
    if (n.has_attr("axes"))
        axes = n.attr_ints("axes").size();
    else if (n.has_input(1))
        axes = length_of(in, 1);
    else
        axes = 0;
    if (!axes) return std::nullopt;
    if (*axes == 0) return n.attr_int("noop_with_empty_axes", 0) != 0 ? r : 0;
    if (*axes > r) return std::nullopt;
    return r - *axes;
}

// Output k's dtype and rank, or none.
std::optional<std::pair<dtype, std::size_t>> dtype_and_rank(const node_info& n, const std::vector<instruction_ref>& in,
                                                            std::size_t k) {
    if (in.empty() || context::is_none(in[0])) return std::nullopt;
    const shape& x = in[0]->get_shape();
    if (x.is_tuple()) return std::nullopt;
    dtype t = x.type();
    std::size_t r = x.ndim();
    const std::string& op = n.op_type();
    auto plus = [](std::optional<std::size_t> a, std::size_t b) -> std::optional<std::size_t> {
        if (!a) return std::nullopt;
        return *a + b;
    };
    std::optional<std::size_t> rank;
    if (op == "Pad" || op == "Slice" || op == "Tile" || op == "Resize" || op == "CenterCropPad" ||
        op == "Transpose" || op == "GatherElements" || op == "Concat" || op == "Split" || op == "Identity")
        rank = r;
    else if (op == "TopK")
        return std::pair{k == 0 ? t : dtype::int64, r};
    else if (op.starts_with("Reduce"))
        rank = reduced_rank(n, in, r);
    else if (op == "Expand")
        rank = length_of(in, 1) ? std::max(r, *length_of(in, 1)) : std::optional<std::size_t>();
    else if (op == "Reshape")
        rank = length_of(in, 1);
    else if (op == "Unsqueeze" && n.has_input(1))
        rank = plus(length_of(in, 1), r);
    else if (op == "Squeeze" && n.has_input(1) && length_of(in, 1) && *length_of(in, 1) <= r)
        rank = r - *length_of(in, 1);
    else if (op == "Range")
        rank = 1;
    else if (op == "ConstantOfShape") {
        rank = length_of(in, 0);
        t = n.has_attr("value") ? n.attr_tensor("value").get_shape().type() : dtype::float32;
    }
    if (!rank) return std::nullopt;
    return std::pair{t, *rank};
}

}  // namespace

std::optional<shape> inferred_output_type(const node_info& n, const std::vector<instruction_ref>& in, std::size_t k) {
    auto tr = dtype_and_rank(n, in, k);
    if (!tr) return std::nullopt;
    return shape(tr->first, std::vector<dynamic_dim>(tr->second, dynamic_dim{0, unbounded_dim, {}, {}}));
}

}  // namespace kiln::onnx_fe
