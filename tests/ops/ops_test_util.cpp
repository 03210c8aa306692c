#include "ops_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "core/visit.hpp"

namespace kiln {

std::string test_case::name() const {
    std::string n = family + "_" + data.at("name").as_string();
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
}

std::string test_case::op_name() const { return data.contains("op") ? data.at("op").as_string() : ""; }

shape tensor_shape(const value& t) {
    std::vector<std::size_t> lens;
    for (const auto& l : t.at("lens").as_array()) lens.push_back(static_cast<std::size_t>(l.as_int()));
    return {parse_dtype(t.at("type").as_string()), lens};
}

argument make_tensor(const value& t, bool strided) {
    shape s = tensor_shape(t);
    const auto& vals = t.at("data").as_array();
    argument standard;
    if (s.type() == dtype::string) {
        std::vector<std::string> d;
        for (const auto& v : vals) d.push_back(v.as_string());
        standard = from_strings(s, d);
    } else if (is_float(s.type())) {
        std::vector<double> d;
        for (const auto& v : vals) d.push_back(v.as_float());
        standard = from_doubles(s, d);
    } else {
        std::vector<std::int64_t> d;
        for (const auto& v : vals) d.push_back(v.is_int() ? v.as_int() : static_cast<std::int64_t>(v.as_float()));
        standard = from_int64s(s, d);
    }
    if (!strided || s.lens().size() < 2 || is_packed(s.type())) return standard;
    // Column-major strides: reversed-dim layout with the same logical values.
    std::vector<std::size_t> strides(s.lens().size());
    std::size_t acc = 1;
    for (std::size_t i = 0; i < s.lens().size(); ++i) {
        strides[i] = acc;
        acc *= std::max<std::size_t>(s.lens()[i], 1);
    }
    shape cs(s.type(), s.lens(), strides);
    argument r(cs);
    if (s.type() == dtype::string) {
        for (std::size_t i = 0; i < s.elements(); ++i) r.as<std::string>()[cs.index(i)] = standard.as<std::string>()[i];
        return r;
    }
    std::size_t esize = s.type_bits() / 8;
    for (std::size_t i = 0; i < s.elements(); ++i)
        std::memcpy(r.data() + cs.index(i) * esize, standard.data() + i * esize, esize);
    return r;
}

program test_case::build() const {
    if (data.contains("ir")) return parse_text(data.at("ir").as_string());
    program p;
    module& m = p.main();
    std::vector<instruction_ref> params;
    const auto& ins = data.at("inputs").as_array();
    for (std::size_t i = 0; i < ins.size(); ++i) params.push_back(m.add_parameter("x" + std::to_string(i), tensor_shape(ins[i])));
    value attrs = data.contains("attrs") ? data.at("attrs") : value(value_object{});
    auto r = m.add_instruction(make_op(op_name(), attrs), params);
    m.add_return({r});
    return p;
}

namespace {
param_map case_inputs(const value& data, bool strided) {
    param_map inputs;
    const auto& ins = data.at("inputs");
    if (ins.is_object()) {
        for (const auto& [name, t] : ins.as_object()) inputs[name] = make_tensor(t, strided);
    } else {
        for (std::size_t i = 0; i < ins.as_array().size(); ++i)
            inputs["x" + std::to_string(i)] = make_tensor(ins.as_array()[i], strided);
    }
    return inputs;
}

// Tuple results (topk, split, ...) are compared element by element.
std::vector<argument> flatten(std::vector<argument> outs) {
    if (outs.size() == 1 && outs[0].get_shape().is_tuple()) return outs[0].sub_arguments();
    return outs;
}
}  // namespace

std::vector<argument> test_case::run(bool strided) const { return flatten(evaluate(build(), case_inputs(data, strided))); }

std::vector<argument> test_case::run_on(const std::string& target, bool strided) const {
    compile_options opts;
    opts.optimize = false;
    auto exe = make_target(target)->compile(build(), opts);
    param_map inputs = case_inputs(data, strided);   // outputs may view them
    std::vector<argument> outs;
    for (const auto& o : exe->run(inputs)) outs.push_back(o.copy());
    return flatten(std::move(outs));
}

void default_tolerance(dtype t, double& rtol, double& atol) {
    switch (t) {
    case dtype::float64: rtol = 1e-10; atol = 1e-12; break;
    case dtype::float32: rtol = 1e-5; atol = 1e-6; break;
    case dtype::float16: rtol = 2e-3; atol = 1e-4; break;
    case dtype::bfloat16: rtol = 1.6e-2; atol = 1e-3; break;
    case dtype::fp8e4m3fn: rtol = 0.13; atol = 1e-2; break;
    case dtype::fp8e5m2: rtol = 0.26; atol = 1e-2; break;
    default: rtol = 0; atol = 0;
    }
}

std::string compare(const argument& actual, const value& expected, double rtol, double atol) {
    shape es = tensor_shape(expected);
    const shape& as = actual.get_shape();
    if (as.type() != es.type()) return cat("type ", dtype_name(as.type()), ", expected ", dtype_name(es.type()));
    if (as.lens() != es.lens())
        return cat("lens ", lens_to_string(as.lens()), ", expected ", lens_to_string(es.lens()));
    const auto& want = expected.at("data").as_array();
    if (as.type() == dtype::string) {
        auto got = to_strings(actual);
        for (std::size_t i = 0; i < got.size(); ++i)
            if (got[i] != want[i].as_string())
                return cat("element ", i, ": got \"", got[i], "\", expected \"", want[i].as_string(), "\"");
        return "";
    }
    if (!is_float(as.type())) {
        auto got = to_int64s(actual);
        for (std::size_t i = 0; i < got.size(); ++i) {
            auto w = want[i].is_int() ? want[i].as_int() : static_cast<std::int64_t>(want[i].as_float());
            if (got[i] != w) return cat("element ", i, ": got ", got[i], ", expected ", w);
        }
        return "";
    }
    auto got = to_doubles(actual);
    for (std::size_t i = 0; i < got.size(); ++i) {
        double w = want[i].as_float(), g = got[i];
        if (std::isnan(w) && std::isnan(g)) continue;
        if (std::isinf(w) && g == w) continue;
        if (!(std::abs(g - w) <= atol + rtol * std::abs(w)))
            return cat("element ", i, " of ", lens_to_string(as.lens()), ": got ", g, ", expected ", w,
                       " (rtol ", rtol, ", atol ", atol, ")");
    }
    return "";
}

void test_case::check_outputs(const std::vector<argument>& outs, double float_slack) const {
    const auto& want = data.at("outputs").as_array();
    ASSERT_EQ(outs.size(), want.size()) << "number of outputs";
    for (std::size_t i = 0; i < outs.size(); ++i) {
        double rtol, atol;
        default_tolerance(outs[i].get_shape().type(), rtol, atol);
        if (data.contains("rtol")) rtol = data.at("rtol").as_float();
        if (data.contains("atol")) atol = data.at("atol").as_float();
        if (is_float(outs[i].get_shape().type())) rtol *= float_slack, atol *= float_slack;
        std::string msg = compare(outs[i], want[i], rtol, atol);
        EXPECT_TRUE(msg.empty()) << "output " << i << ": " << msg;
    }
}

void expect_error(const test_case& tc) {
    const std::string want = tc.data.at("error").as_string();
    try {
        program p = tc.build();
        const auto& ins = tc.data.at("inputs");
        // Inputs are a list, or an object by parameter name for IR cases.
        const value* first = ins.is_array() ? (ins.as_array().empty() ? nullptr : &ins.as_array()[0])
                                            : (ins.as_object().empty() ? nullptr : &ins.as_object()[0].second);
        bool has_data = first && first->contains("data");
        if (has_data) tc.run(false);
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos)
            << "error message '" << e.what() << "' does not contain '" << want << "'";
        return;
    }
    ADD_FAILURE() << "expected an error containing '" << want << "', but none was thrown";
}

std::uint64_t run_seed() {
    static const std::uint64_t seed = []() -> std::uint64_t {
        if (const char* s = std::getenv("KILN_SEED")) return std::strtoull(s, nullptr, 10);
        return static_cast<std::uint64_t>(std::random_device{}());
    }();
    return seed;
}

}  // namespace kiln
