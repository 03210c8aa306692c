// ONNX string ops onto kiln's string ops (src/ops/strings.cpp, string_match.cpp,
// label_encoder.cpp): StringConcat, StringSplit, StringNormalizer, RegexFullMatch and ai.onnx.ml
// LabelEncoder. Cast and Equal on strings are in map_elementwise.cpp.
#include <onnx/onnx_pb.h>

#include "core/error.hpp"
#include "core/reflect.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {
namespace {

using inputs_t = std::vector<instruction_ref>;

inputs_t string_concat(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(2, 2);
    return {ctx.add("string_concat", in)};
}
KILN_ONNX_OP("", "StringConcat", 20, string_concat)

inputs_t string_split(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    value a{{"delimiter", n.attr_string("delimiter", "")}, {"maxsplit", n.attr_int("maxsplit", -1)}};
    if (n.has_attr("maxsplit") && n.attr_int("maxsplit", 0) < 0)
        fail("maxsplit=", n.attr_int("maxsplit", 0), "; expected 0 or more");
    auto t = ctx.add("string_split", a, {in.at(0)});
    return {ctx.add("get_tuple_elem", value{{"index", 0}}, {t}), ctx.add("get_tuple_elem", value{{"index", 1}}, {t})};
}
KILN_ONNX_OP("", "StringSplit", 20, string_split)

inputs_t string_normalizer(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    value a{{"case_change_action", n.attr_string("case_change_action", "NONE")},
            {"is_case_sensitive", n.attr_int("is_case_sensitive", 0) != 0},
            {"locale", n.attr_string("locale", "")},
            {"stopwords", to_value(n.has_attr("stopwords") ? n.attr_strings("stopwords") : std::vector<std::string>{})}};
    return {ctx.add("string_normalizer", a, {in.at(0)})};
}
KILN_ONNX_OP("", "StringNormalizer", 10, string_normalizer)

inputs_t regex_full_match(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    if (!n.has_attr("pattern")) fail("the pattern attribute is missing");
    return {ctx.add("regex_full_match", value{{"pattern", n.attr_string("pattern", "")}}, {in.at(0)})};
}
KILN_ONNX_OP("", "RegexFullMatch", 20, regex_full_match)

// A tensor's elements as a value array of strings, ints or floats (by its type).
value values_of(const literal& l) {
    value_array out;
    dtype t = l.get_shape().type();
    if (t == dtype::string)
        for (auto& s : to_strings(l.get_argument())) out.emplace_back(s);
    else if (is_float(t))
        for (double d : to_doubles(l.get_argument())) out.emplace_back(d);
    else
        for (auto i : to_int64s(l.get_argument())) out.emplace_back(i);
    return out;
}

// LabelEncoder's keys or values (`which`): exactly one of <which>_strings, _int64s, _floats and
// (opset 4) _tensor, as a value array and its type.
std::pair<value, dtype> label_list(const node_info& n, const std::string& which) {
    std::vector<std::pair<value, dtype>> found;
    if (n.has_attr(which + "_strings")) found.push_back({to_value(n.attr_strings(which + "_strings")), dtype::string});
    if (n.has_attr(which + "_int64s")) found.push_back({to_value(n.attr_ints(which + "_int64s")), dtype::int64});
    if (n.has_attr(which + "_floats")) found.push_back({to_value(n.attr_floats(which + "_floats")), dtype::float32});
    if (n.has_attr(which + "_tensor")) {
        literal t = n.attr_tensor(which + "_tensor");
        found.push_back({values_of(t), t.get_shape().type()});
    }
    if (found.size() != 1)
        fail("has ", found.size(), " of ", which, "_strings, ", which, "_int64s, ", which, "_floats and ", which,
             "_tensor; expected exactly one");
    return found[0];
}

// The spec's defaults: default_tensor when given (one element), else default_string ("_Unused"),
// default_int64 (-1) or default_float (-0.0) by the values' type.
value label_default(const node_info& n, dtype t) {
    if (n.has_attr("default_tensor")) {
        literal d = n.attr_tensor("default_tensor");
        if (d.get_shape().elements() != 1)
            fail("default_tensor has ", d.get_shape().elements(), " elements; expected 1");
        if (d.get_shape().type() != t)
            fail("default_tensor is ", dtype_name(d.get_shape().type()), "; the values are ", dtype_name(t));
        return values_of(d).as_array()[0];
    }
    if (t == dtype::string) return n.attr_string("default_string", "_Unused");
    if (is_float(t)) return static_cast<double>(n.attr_float("default_float", -0.0f));
    return n.attr_int("default_int64", -1);
}

inputs_t label_encoder(const node_info& n, context& ctx, const inputs_t& in) {
    n.expect_inputs(1, 1);
    auto [keys, key_type] = label_list(n, "keys");
    auto [vals, value_type] = label_list(n, "values");
    value a{{"key_type", std::string(dtype_name(key_type))},
            {"value_type", std::string(dtype_name(value_type))},
            {"keys", keys},
            {"values", vals},
            {"default_value", label_default(n, value_type)}};
    return {ctx.add("label_encoder", a, {in.at(0)})};
}
KILN_ONNX_OP("ai.onnx.ml", "LabelEncoder", 2, label_encoder)

}  // namespace
}  // namespace kiln::onnx_fe
