// The view ops keep their promise: where an op says its output aliases input i (output_alias), the
// computed output lies inside input i's buffer (no copy); where it says -1, the output is a fresh
// buffer. Checked on the compute cases of the view and data-movement families, with standard and
// column-major inputs (a reshape of the latter must copy).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "ops_test_util.hpp"

namespace kiln {
namespace {

bool inside(const argument& out, const argument& in) {
    return out.data() >= in.data() && out.data() < in.data() + std::max<std::size_t>(in.get_shape().bytes(), 1);
}

// The tensors an output holds: itself, or the elements of a tuple (split's pieces).
std::vector<argument> parts(const argument& a) {
    if (a.get_shape().is_tuple()) return a.sub_arguments();
    return {a};
}

void check_case(const value& c, bool strided) {
    std::vector<argument> args;
    std::vector<shape> shapes;
    for (const auto& t : c.at("inputs").as_array()) {
        args.push_back(make_tensor(t, strided));
        shapes.push_back(args.back().get_shape());
    }
    operation op = make_op(c.at("op").as_string(), c.at("attrs"));
    int alias = op.output_alias(shapes);
    for (const auto& out : parts(compute_op(op, args))) {
        if (out.get_shape().elements() == 0) continue;  // an empty view may point anywhere
        for (std::size_t i = 0; i < args.size(); ++i)
            EXPECT_EQ(inside(out, args[i]), static_cast<int>(i) == alias)
                << "output_alias is " << alias << ", output " << (inside(out, args[i]) ? "is" : "is not")
                << " inside input " << i;
    }
}

TEST(view_alias, outputs_alias_what_output_alias_says) {
    for (const char* family : {"views", "data_movement"}) {
        std::ifstream f(std::string(KILN_TEST_DATA_DIR "/ops/cases/") + family + ".json");
        std::stringstream ss;
        ss << f.rdbuf();
        value doc = parse_json(ss.str());
        for (const auto& c : doc.at("cases").as_array()) {
            if (c.contains("error") || c.contains("ir")) continue;
            for (bool strided : {false, true}) {
                SCOPED_TRACE(cat(family, " case ", c.at("name").as_string(), strided ? " (column-major)" : ""));
                check_case(c, strided);
            }
        }
    }
}

// A reshape or flatten of a strided view is a view where strides express it: the lens and strides
// compute_shape gives, output_alias 0, and compute's result inside the input, reading the same
// elements as a copy would; a copy (standard, output_alias -1) where they do not.
struct strided_reshape {
    shape in;
    const char* op;
    value attrs;
    std::vector<std::size_t> lens, strides;   // strides empty: a standard copy
};

TEST(view_alias, reshape_of_a_strided_view_is_a_view_where_strides_allow) {
    const dtype f = dtype::float32;
    const strided_reshape cases[] = {
        // GPT-2's q/k/v: [2, 5, 24] sliced to 8 of the last dim, split into 2 heads of 4.
        {shape(f, {2, 5, 8}, {120, 24, 1}), "reshape", value_object{{"dims", value_array{2, 5, 2, 4}}}, {2, 5, 2, 4}, {120, 24, 4, 1}},
        // a transpose's dim split; then merged across its permuted dims: a copy
        {shape(f, {6, 4}, {1, 6}), "reshape", value_object{{"dims", value_array{2, 3, 4}}}, {2, 3, 4}, {3, 1, 6}},
        {shape(f, {2, 4, 3}, {12, 1, 4}), "reshape", value_object{{"dims", value_array{8, 3}}}, {8, 3}, {}},
        // a slice of dim 0 merged (contiguous); a slice of the last dim merged (a gap): a copy
        {shape(f, {2, 3, 5}, {15, 5, 1}), "reshape", value_object{{"dims", value_array{6, 5}}}, {6, 5}, {5, 1}},
        {shape(f, {3, 4, 4}, {24, 6, 1}), "flatten", value_object{{"axis", 1}}, {3, 16}, {}},
        // a broadcast merged keeps its zero strides; length-1 dims take any stride
        {shape(f, {2, 4, 3}, {0, 0, 1}), "reshape", value_object{{"dims", value_array{8, 3}}}, {8, 3}, {0, 1}},
        {shape(f, {3, 1, 4}, {8, 99, 2}), "reshape", value_object{{"dims", value_array{1, 3, 2, 2}}}, {1, 3, 2, 2}, {24, 8, 4, 2}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(cat(c.op, " of ", to_string(c.in)));
        operation op = make_op(c.op, c.attrs);
        std::vector<shape> in{c.in};
        shape out = op.compute_shape(in);
        EXPECT_EQ(out.lens(), c.lens);
        EXPECT_EQ(op.output_alias(in), c.strides.empty() ? -1 : 0);
        EXPECT_EQ(out, c.strides.empty() ? shape(f, c.lens) : shape(f, c.lens, c.strides));
        std::size_t extent = 1;
        for (std::size_t d = 0; d < c.in.ndim(); ++d) extent += (c.in.lens()[d] - 1) * c.in.strides()[d];
        argument buffer(shape(f, std::vector<std::size_t>{extent}));
        for (std::size_t i = 0; i < extent; ++i) buffer.as<float>()[i] = static_cast<float>(i);
        argument x = buffer.view(c.in);
        argument y = compute_op(op, std::span(&x, 1));
        EXPECT_EQ(inside(y, buffer), !c.strides.empty());
        EXPECT_EQ(to_doubles(y), to_doubles(x.copy()));   // the same elements in the same order
    }
}

}  // namespace
}  // namespace kiln
