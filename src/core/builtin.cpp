#include "core/builtin.hpp"

#include "core/op.hpp"

namespace kiln {
namespace {

struct param_op {
    static constexpr std::string_view name = "@param";
    std::string param_name;
    shape param_shape;
    auto attributes() { return fields(field("name", param_name), field("shape", param_shape)); }
    op_traits traits() const { return {.builtin = true}; }
    shape compute_shape(std::span<const shape> in) const {
        if (!in.empty()) fail("takes no inputs");
        return param_shape;
    }
};

// The value lives in the instruction; the op only marks it.
struct literal_op {
    static constexpr std::string_view name = "@literal";
    op_traits traits() const { return {.builtin = true}; }
    shape compute_shape(std::span<const shape>) const { fail("a literal's shape is its value's"); }
};

struct return_op {
    static constexpr std::string_view name = "@return";
    op_traits traits() const { return {.side_effects = true, .builtin = true}; }
    shape compute_shape(std::span<const shape> in) const {
        return shape(std::vector<shape>(in.begin(), in.end()));
    }
};

KILN_REGISTER_OP(param_op)
KILN_REGISTER_OP(literal_op)
KILN_REGISTER_OP(return_op)

}  // namespace

operation make_param_op(const std::string& name, const shape& s) {
    return make_op("@param", value{{"name", name}, {"shape", to_value(s)}});
}
operation make_literal_op() { return make_op("@literal"); }
operation make_return_op() { return make_op("@return"); }

}  // namespace kiln
