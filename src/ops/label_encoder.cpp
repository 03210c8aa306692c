// label_encoder, as ai.onnx.ml LabelEncoder: each element of X is looked up in `keys` and
// replaced by the value at the same position in `values`, or by `default_value` when it is not a
// key. Keys and values are strings, integers or floats (key_type, value_type: string, int16,
// int32, int64, float32, float64); float keys match by value, NaN matching NaN (as ONNX Runtime
// does), and -0 matching 0. The output has X's dims and type value_type.
#include <cmath>
#include <map>

#include "ops/label_encoder.hpp"

namespace kiln::ops {
namespace {

bool label_type(dtype t) {
    return t == dtype::string || t == dtype::int16 || t == dtype::int32 || t == dtype::int64 || t == dtype::float32 ||
           t == dtype::float64;
}

// A key as the lookup compares it: strings by bytes, integers exactly, floats by value with NaN
// ordered after every number so that it finds itself.
struct key {
    std::string s;
    std::int64_t i = 0;
    double f = 0;
    bool operator<(const key& o) const {
        if (s != o.s) return s < o.s;
        if (i != o.i) return i < o.i;
        if (std::isnan(f) || std::isnan(o.f)) return !std::isnan(f) && std::isnan(o.f);
        return f < o.f;
    }
};

key key_of(const value& v, dtype t) {
    if (t == dtype::string) return {.s = v.as_string()};
    if (is_float(t)) return {.f = t == dtype::float32 ? static_cast<float>(v.as_float()) : v.as_float()};
    return {.i = v.as_int()};
}

void check_kind(const value& v, dtype t, const char* what) {
    bool ok = t == dtype::string ? v.is_string() : is_float(t) ? v.is_number() : v.is_int();
    if (!ok) fail(what, " holds ", to_string(v), ", not a ", dtype_name(t), " value");
}

}  // namespace

shape label_encoder::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    if (!label_type(key_type) || !label_type(value_type))
        fail("key_type ", dtype_name(key_type), " and value_type ", dtype_name(value_type),
             "; each must be string, int16, int32, int64, float32 or float64");
    if (in[0].type() != key_type)
        fail("input 0 is ", dtype_name(in[0].type()), "; the keys are ", dtype_name(key_type));
    if (keys.as_array().size() != values.as_array().size())
        fail(keys.as_array().size(), " keys for ", values.as_array().size(), " values; expected as many of each");
    for (const auto& k : keys.as_array()) check_kind(k, key_type, "keys");
    for (const auto& v : values.as_array()) check_kind(v, value_type, "values");
    check_kind(default_value, value_type, "default_value");
    return {value_type, in[0].lens()};
}

argument label_encoder::compute(const shape& out, std::span<const argument> args) const {
    std::map<key, std::size_t> position;
    const auto& ks = keys.as_array();
    for (std::size_t i = 0; i < ks.size(); ++i) position.emplace(key_of(ks[i], key_type), i);
    const shape& xs = args[0].get_shape();
    std::vector<std::size_t> found(xs.elements());   // index into values, or ks.size() for the default
    auto find = [&](const key& k) {
        auto it = position.find(k);
        return it == position.end() ? ks.size() : it->second;
    };
    if (key_type == dtype::string) {
        auto x = to_strings(args[0]);
        for (std::size_t i = 0; i < x.size(); ++i) found[i] = find({.s = x[i]});
    } else if (is_float(key_type)) {
        auto x = to_doubles(args[0]);
        for (std::size_t i = 0; i < x.size(); ++i) found[i] = find({.f = x[i]});
    } else {
        auto x = to_int64s(args[0]);
        for (std::size_t i = 0; i < x.size(); ++i) found[i] = find({.i = x[i]});
    }
    auto pick = [&](std::size_t i) -> const value& { return i < ks.size() ? values.as_array()[i] : default_value; };
    if (value_type == dtype::string) {
        std::vector<std::string> y;
        for (auto i : found) y.push_back(pick(i).as_string());
        return from_strings(out, y);
    }
    if (is_float(value_type)) {
        std::vector<double> y;
        for (auto i : found) y.push_back(pick(i).as_float());
        return from_doubles(out, y);
    }
    std::vector<std::int64_t> y;
    for (auto i : found) y.push_back(pick(i).as_int());
    return from_int64s(out, y);
}

KILN_REGISTER_OP(label_encoder)

}  // namespace kiln::ops
