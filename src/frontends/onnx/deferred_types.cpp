// The output types of a deferred node (deferred.cpp) whose model declares none. The dtype follows
// from the inputs' dtypes and the attributes for the ops listed here (ONNX's type constraints:
// most keep input 0's type, comparisons give bool, Shape gives int64, Cast gives `to`). The rank
// follows for some of them from the inputs' ranks and static lengths (a Pad, Transpose or
// GatherElements keeps its input's rank, a ReduceSum drops as many dims as its axes input is
// long); each dim stays unknown until the node runs. Where the rank does not follow (an input of
// unknown rank, a Squeeze without axes of dims that may be 1) the output is a tensor of any rank
// and its consumers are deferred too. Other ops give no type, and parsing fails naming the output.
#include <onnx/onnx_pb.h>

#include <optional>
#include <set>
#include <string_view>

#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

// Ops whose outputs all have input 0's dtype.
const std::set<std::string_view> keeps_input_type = {
    "Abs", "Acos", "Acosh", "Add", "Asin", "Asinh", "Atan", "Atanh", "BitShift", "BitwiseAnd", "BitwiseNot",
    "BitwiseOr", "BitwiseXor", "Ceil", "Celu", "CenterCropPad", "Clip", "Compress", "Concat", "Cos", "Cosh", "CumSum",
    "DepthToSpace", "Det", "Div", "Einsum", "Elu", "Erf", "Exp", "Expand", "Flatten", "Floor", "Gather",
    "GatherElements", "GatherND", "Gelu", "Gemm", "Hardmax", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu",
    "Log", "LogSoftmax", "LpNormalization", "MatMul", "Max", "Mean", "Min", "Mish", "Mod", "Mul", "Neg", "Pad",
    "Pow", "PRelu", "Range", "Reciprocal", "Relu", "Reshape", "Resize", "ReverseSequence", "Round", "ScatterElements",
    "ScatterND", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Slice", "Softmax", "Softplus", "Softsign",
    "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "Transpose",
    "Trilu", "Unsqueeze"};

const std::set<std::string_view> gives_bool = {"And",   "Equal", "Greater", "GreaterOrEqual", "IsInf", "IsNaN",
                                               "Less",  "LessOrEqual", "Not", "Or", "Xor"};

const std::set<std::string_view> gives_int64 = {"ArgMax", "ArgMin", "NonZero", "Shape", "Size"};

std::optional<shape> type_of(const std::vector<instruction_ref>& in, std::size_t i) {
    if (i >= in.size() || context::is_none(in[i]) || !in[i]->get_shape().is_tensor()) return std::nullopt;
    return in[i]->get_shape();
}

// The length of the 1-D input i (1 for a scalar) when its shape is static, else none.
std::optional<std::size_t> length_of(const std::vector<instruction_ref>& in, std::size_t i) {
    auto s = type_of(in, i);
    if (!s || s->dynamic() || s->ndim() > 1) return std::nullopt;
    return s->ndim() == 0 ? 1 : s->lens()[0];
}

std::optional<dtype> output_dtype(const node_info& n, const std::vector<instruction_ref>& in, std::size_t k) {
    const std::string& op = n.op_type();
    auto input_type = [&](std::size_t i) -> std::optional<dtype> {
        if (auto s = type_of(in, i)) return s->type();
        return std::nullopt;
    };
    if (gives_bool.count(op) || (op == "Dropout" && k == 1)) return dtype::bool_;
    if (gives_int64.count(op) || ((op == "TopK" || op == "Unique") && k > 0)) return dtype::int64;
    if (op == "Cast") return onnx_dtype(static_cast<int>(n.attr_int("to", 0)));
    if (op == "CastLike" || op == "Where") return input_type(1);
    if (op == "ConstantOfShape")
        return n.has_attr("value") ? n.attr_tensor("value").get_shape().type() : dtype::float32;
    if (op == "EyeLike" && n.has_attr("dtype")) return onnx_dtype(static_cast<int>(n.attr_int("dtype", 0)));
    if (keeps_input_type.count(op) || op.starts_with("Reduce") || op == "TopK" || op == "Unique" ||
        op == "Dropout" || op == "EyeLike")
        return input_type(0);
    return std::nullopt;
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

// The outputs' rank when the inputs' ranks and static lengths give it, else none.
std::optional<std::size_t> output_rank(const node_info& n, const std::vector<instruction_ref>& in) {
    const std::string& op = n.op_type();
    if (op == "Shape" || op == "Range") return 1;
    if (op == "NonZero") return 2;
    if (op == "Size") return 0;
    if (op == "Transpose" && n.has_attr("perm")) return n.attr_ints("perm").size();
    if (op == "Reshape") return length_of(in, 1);
    if (op == "ConstantOfShape") return length_of(in, 0);
    auto x = type_of(in, 0);
    if (!x || !x->rank_known()) return std::nullopt;
    const std::size_t r = x->ndim();
    if (op == "Pad" || op == "Slice" || op == "Tile" || op == "Resize" || op == "CenterCropPad" ||
        op == "Transpose" || op == "GatherElements" || op == "Concat" || op == "Split" || op == "Identity" ||
        op == "TopK" || op == "Cast" || op == "CastLike")
        return r;
    if (op.starts_with("Reduce")) return reduced_rank(n, in, r);
    if (op == "Expand") return length_of(in, 1) ? std::max(r, *length_of(in, 1)) : std::optional<std::size_t>();
    if (op == "Unsqueeze" && n.has_input(1) && length_of(in, 1)) return r + *length_of(in, 1);
    if (op == "Squeeze" && n.has_input(1) && length_of(in, 1) && *length_of(in, 1) <= r) return r - *length_of(in, 1);
    return std::nullopt;
}

}  // namespace

std::optional<shape> inferred_output_type(const node_info& n, const std::vector<instruction_ref>& in, std::size_t k) {
    auto t = output_dtype(n, in, k);
    if (!t) return std::nullopt;
    auto rank = output_rank(n, in);
    if (!rank) return shape::any_rank(*t);
    return shape(*t, std::vector<dynamic_dim>(*rank, dynamic_dim{0, unbounded_dim, {}, {}}));
}

}  // namespace kiln::onnx_fe
