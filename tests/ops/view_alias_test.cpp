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

}  // namespace
}  // namespace kiln
