// ONNX ops whose outputs are constants or pass their input through: Constant, ConstantOfShape,
// Shape, Size, EyeLike (literals, so that shape subgraphs fold at parse time), Identity and
// Dropout (inference: the input unchanged, the mask all true).
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

bool present(context& ctx, const inputs_t& in, std::size_t i) { return i < in.size() && !ctx.is_none(in[i]); }

// A literal of `lens` whose every element is the single element of `v`.
literal filled(const literal& v, const std::vector<std::int64_t>& lens) {
    if (v.get_shape().elements() != 1)
        fail("the fill value has ", v.get_shape().elements(), " elements; expected exactly one");
    argument one = v.get_argument().view(shape(v.get_shape().type()));
    std::vector<argument> args{one};
    return literal(compute_op(make_op("multibroadcast", value{{"out_lens", to_value(lens)}}), args));
}

std::vector<std::int64_t> lens_of(const shape& s) { return {s.lens().begin(), s.lens().end()}; }

// A SparseTensorProto made dense: `indices` are [NNZ] linear indices or [NNZ, rank] coordinates.
literal sparse_to_literal(const onnx::SparseTensorProto& sp, const std::string& base_dir) {
    literal values = tensor_to_literal(sp.values(), base_dir);
    dtype t = values.get_shape().type();
    if (is_packed(t)) fail("sparse tensors of ", dtype_name(t), " are not supported");
    std::vector<std::size_t> lens;
    for (auto d : sp.dims()) {
        if (d < 0) fail("sparse tensor has a negative dim ", d);
        lens.push_back(static_cast<std::size_t>(d));
    }
    shape s(t, lens);
    auto idx = to_int64s(tensor_to_literal(sp.indices(), base_dir).get_argument());
    std::size_t nnz = values.get_shape().elements();
    bool coords = nnz > 0 && idx.size() == nnz * lens.size() && idx.size() != nnz;
    if (idx.size() != nnz && !coords)
        fail("sparse tensor has ", idx.size(), " indices for ", nnz, " values; expected ", nnz, " or ",
             nnz * lens.size());
    argument dense(s);
    std::size_t esize = dtype_bits(t) / 8;
    for (std::size_t k = 0; k < nnz; ++k) {
        std::int64_t at = coords ? 0 : idx[k];
        for (std::size_t d = 0; coords && d < lens.size(); ++d)
            at = at * static_cast<std::int64_t>(lens[d]) + idx[k * lens.size() + d];
        if (at < 0 || static_cast<std::size_t>(at) >= s.elements())
            fail("sparse tensor index ", at, " is outside its ", s.elements(), " elements");
        std::memcpy(dense.data() + static_cast<std::size_t>(at) * esize, values.get_argument().data() + k * esize,
                    esize);
    }
    return literal(dense);
}

// Constant holds exactly one of value, sparse_value (opset 11), or from opset 12 the
// shorthands value_float(s), value_int(s), value_string(s).
literal constant_value(const node_info& n, context& ctx) {
    if (n.has_attr("value")) return tensor_to_literal(n.attr("value").t(), ctx.base_dir());
    if (n.has_attr("sparse_value")) return sparse_to_literal(n.attr("sparse_value").sparse_tensor(), ctx.base_dir());
    if (n.has_attr("value_float"))
        return literal(shape(dtype::float32), std::vector<double>{n.attr_float("value_float", 0)});
    if (n.has_attr("value_int"))
        return literal(shape(dtype::int64), std::vector<std::int64_t>{n.attr_int("value_int", 0)});
    if (n.has_attr("value_floats")) {
        auto f = n.attr_floats("value_floats");
        return literal(shape(dtype::float32, std::vector<std::size_t>{f.size()}),
                       std::vector<double>(f.begin(), f.end()));
    }
    if (n.has_attr("value_ints")) {
        auto v = n.attr_ints("value_ints");
        return literal(shape(dtype::int64, std::vector<std::size_t>{v.size()}), v);
    }
    if (n.has_attr("value_string")) {
        std::vector<std::string> v{n.attr_string("value_string", "")};
        return literal(from_strings(shape(dtype::string), v));
    }
    if (n.has_attr("value_strings")) {
        auto v = n.attr_strings("value_strings");
        return literal(from_strings(shape(dtype::string, std::vector<std::size_t>{v.size()}), v));
    }
    fail("no value attribute: expected one of value, sparse_value, value_float(s), value_int(s), value_string(s)");
}

KILN_ONNX_OP("", "Constant", 1, [](const node_info& n, context& ctx, const inputs_t&) -> inputs_t {
    return {ctx.add_literal(constant_value(n, ctx))};
})

// The output's dims are the values of input 0; `value` is a one-element tensor (float 0 when
// absent) whose type the output takes.
KILN_ONNX_OP("", "ConstantOfShape", 9, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    auto dims = ctx.constant_ints(in.at(0), "input 0 (shape)");
    for (std::size_t i = 0; i < dims.size(); ++i)
        if (dims[i] < 0) fail("input 0 (shape) has ", dims[i], " at ", i, "; expected sizes >= 0");
    literal v = n.has_attr("value") ? tensor_to_literal(n.attr("value").t(), ctx.base_dir())
                                    : literal(shape(dtype::float32), std::vector<double>{0});
    return {ctx.add_literal(filled(v, dims))};
})

// Shape: dims [start, end) (opset 15; negative bounds count from the rank, then both clamp to
// [0, rank]). A static input's shape is known now, so it is a literal.
inputs_t map_shape(const node_info& n, context& ctx, const inputs_t& in) {
    const shape& x = in.at(0)->get_shape();
    std::int64_t start = n.attr_int("start", 0);
    std::int64_t end = n.attr_int("end", std::numeric_limits<std::int64_t>::max());
    if (x.dynamic()) return {ctx.add("shape_of", value{{"start", start}, {"end", end}}, {in[0]})};
    auto rank = static_cast<std::int64_t>(x.ndim());
    auto clamp = [&](std::int64_t b) { return std::clamp(b < 0 ? b + rank : b, std::int64_t{0}, rank); };
    auto lens = lens_of(x);
    std::vector<std::int64_t> dims(lens.begin() + clamp(start), lens.begin() + std::max(clamp(start), clamp(end)));
    return {ctx.add_literal(literal(shape(dtype::int64, std::vector<std::size_t>{dims.size()}), dims))};
}
KILN_ONNX_OP("", "Shape", 1, map_shape)

// Size: the element count as an int64 scalar; for a dynamic input, the product of its shape.
KILN_ONNX_OP("", "Size", 1, [](const node_info&, context& ctx, const inputs_t& in) -> inputs_t {
    const shape& x = in.at(0)->get_shape();
    if (!x.dynamic()) {
        std::vector<std::int64_t> n{static_cast<std::int64_t>(x.elements())};
        return {ctx.add_literal(literal(shape(dtype::int64), n))};
    }
    auto dims = ctx.add("shape_of", {in[0]});
    return {
        ctx.add("reduce_prod", value{{"axes", to_value(std::vector<std::int64_t>{0})}, {"keepdims", false}}, {dims})};
})

// Identity adds nothing: its output is its input's instruction.
KILN_ONNX_OP("", "Identity", 1, [](const node_info&, context&, const inputs_t& in) -> inputs_t { return {in.at(0)}; })

// Dropout at inference: output = input. The optional mask is all true: of the input's type
// before opset 10, bool from 10.
inputs_t inference_dropout(const node_info& n, context& ctx, instruction_ref x) {
    inputs_t out{x};
    if (n.output_count() < 2 || n.proto().output(1).empty()) return out;
    const shape& s = x->get_shape();
    if (s.dynamic()) fail("output 1 (mask) of a dynamic-shaped input is not supported");
    dtype t = n.opset() < 10 ? s.type() : dtype::bool_;
    out.push_back(ctx.add_literal(filled(literal(shape(t), std::vector<double>{1}), lens_of(s))));
    return out;
}

// Before opset 7 is_test=0 (the default) asks for random, training-mode dropout.
KILN_ONNX_OP("", "Dropout", 1, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    if (n.attr_int("is_test", 0) == 0)
        fail("is_test=0 asks for training-mode (random) dropout; kiln compiles for inference: set is_test=1");
    return inference_dropout(n, ctx, in.at(0));
})
KILN_ONNX_OP("", "Dropout", 7, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    return inference_dropout(n, ctx, in.at(0));
})
// From opset 12 ratio and training_mode are inputs. Training mode with a ratio of 0 drops
// nothing, so it is the inference result too; any other ratio is random.
KILN_ONNX_OP("", "Dropout", 12, [](const node_info& n, context& ctx, const inputs_t& in) -> inputs_t {
    if (present(ctx, in, 2) && ctx.constant_ints(in[2], "input 2 (training_mode)").at(0) != 0) {
        double ratio = present(ctx, in, 1) ? ctx.constant_doubles(in[1], "input 1 (ratio)").at(0) : 0.5;
        if (ratio != 0)
            fail("training_mode is true with ratio ", ratio,
                 ": random dropout is not supported (kiln compiles for inference)");
    }
    return inference_dropout(n, ctx, in.at(0));
})

// EyeLike: ones on diagonal k (k > 0 above the main one) of a 2-D input's shape, zeros
// elsewhere, of type `dtype` (the input's type when absent).
inputs_t map_eye_like(const node_info& n, context& ctx, const inputs_t& in) {
    const shape& x = in.at(0)->get_shape();
    if (x.dynamic()) fail("input 0 is dynamic; EyeLike needs its shape when compiling");
    if (x.ndim() != 2) fail("input 0 has ", x.ndim(), " dims; expected 2");
    dtype t = n.has_attr("dtype") ? onnx_dtype(static_cast<int>(n.attr_int("dtype", 0))) : x.type();
    std::int64_t k = n.attr_int("k", 0);
    std::size_t rows = x.lens()[0];
    std::size_t cols = x.lens()[1];
    std::vector<double> v(rows * cols, 0.0);
    for (std::size_t i = 0; i < rows; ++i) {
        std::int64_t j = static_cast<std::int64_t>(i) + k;
        if (j >= 0 && j < static_cast<std::int64_t>(cols)) v[i * cols + static_cast<std::size_t>(j)] = 1;
    }
    return {ctx.add_literal(literal(shape(t, std::vector<std::size_t>{rows, cols}), v))};
}
KILN_ONNX_OP("", "EyeLike", 9, map_eye_like)

}  // namespace
}  // namespace kiln::onnx_fe
