// Pointwise ops' scalar expressions (operation::scalar_expr, src/ops/scalar_helpers.h). Every
// pointwise op has one or is listed below as having none. Every expression, for every compute
// type its op accepts, is compiled by the host C++ compiler into one shared library (one
// translation unit for all ops, to keep the test fast) and run on random inputs against the op's
// reference compute, so the helpers and the reference cannot drift apart.
#include <dlfcn.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.hpp"
#include "core/operation.hpp"

namespace kiln {
namespace {

constexpr std::size_t n = 64;

// Pointwise ops whose function is not a scalar expression, and why.
const std::vector<std::string> without_expression = {
    "convert",   // an element cast between types, which generators write at loads and stores
};

struct scalar_case {
    operation op;
    std::vector<dtype> inputs;
    shape out;
};

const char* c_type(dtype t) {
    switch (t) {
    case dtype::float64: return "double";
    case dtype::int64: return "long long";
    case dtype::bool_: return "bool";
    default: fail("no C type for ", dtype_name(t));
    }
}

// One case per compute type (double, int64, bool) the op accepts, with 1 to 3 inputs of that type
// (or a bool condition first, as where takes).
void add_cases(const operation& op, std::vector<scalar_case>& cases) {
    auto accepts = [&](std::vector<dtype> types) {
        std::vector<shape> shapes;
        for (dtype t : types) shapes.emplace_back(t, std::vector<std::size_t>{n});
        try {
            cases.push_back({op, types, op.compute_shape(shapes)});
            return true;
        } catch (const error&) {
            return false;
        }
    };
    for (dtype t : {dtype::float64, dtype::int64, dtype::bool_}) {
        for (std::size_t arity = 1; arity <= 3; ++arity) {
            std::vector<dtype> types(arity, t);
            if (accepts(types)) break;
            types[0] = dtype::bool_;
            if (arity > 1 && t != dtype::bool_ && accepts(types)) break;
        }
    }
}

std::vector<std::string> arg_names(std::size_t count) {
    std::vector<std::string> r;
    for (std::size_t i = 0; i < count; ++i) r.push_back("a" + std::to_string(i) + "[i]");
    return r;
}

// Random inputs: floats in [-3, 3] after 0, 1, -1, +-Inf and NaN; nonzero integers in [-20, 20]
// (the reference throws on an integer division by zero, generated code cannot).
argument random_input(dtype t, std::mt19937& gen) {
    argument a(shape(t, std::vector<std::size_t>{n}));
    for (std::size_t i = 0; i < n; ++i) {
        if (t == dtype::float64) {
            const double special[] = {0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN};
            a.as<double>()[i] = i < 6 ? special[i] : std::uniform_real_distribution<double>(-3, 3)(gen);
        } else if (t == dtype::int64) {
            std::int64_t v = std::uniform_int_distribution<std::int64_t>(-20, 19)(gen);
            a.as<std::int64_t>()[i] = v >= 0 ? v + 1 : v;
        } else {
            a.as<bool>()[i] = std::bernoulli_distribution(0.5)(gen);
        }
    }
    return a;
}

bool same_value(const argument& ref, const argument& got, std::size_t i) {
    dtype t = ref.get_shape().type();
    if (t == dtype::int64) return ref.as<std::int64_t>()[i] == got.as<std::int64_t>()[i];
    if (t == dtype::bool_) return ref.as<bool>()[i] == got.as<bool>()[i];
    double r = ref.as<double>()[i], g = got.as<double>()[i];
    if (r == g || (std::isnan(r) && std::isnan(g))) return true;
    return std::abs(r - g) <= 1e-12 * std::max(1.0, std::abs(r));
}

std::string show(const argument& a, std::size_t i) {
    switch (a.get_shape().type()) {
    case dtype::int64: return std::to_string(a.as<std::int64_t>()[i]);
    case dtype::bool_: return a.as<bool>()[i] ? "true" : "false";
    default: return cat(a.as<double>()[i]);
    }
}

std::string generate(const std::vector<scalar_case>& cases) {
    std::string src = "#include \"ops/scalar_helpers.h\"\n";
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const auto& c = cases[k];
        src += cat("extern \"C\" void kiln_case_", k, "(const void* const* in, void* out, long n) {\n");
        for (std::size_t i = 0; i < c.inputs.size(); ++i)
            src += cat("    auto a", i, " = static_cast<const ", c_type(c.inputs[i]), "*>(in[", i, "]);\n");
        src += cat("    auto y = static_cast<", c_type(c.out.type()), "*>(out);\n");
        src += cat("    for (long i = 0; i < n; ++i) y[i] = ", *c.op.scalar_expr(arg_names(c.inputs.size())), ";\n}\n");
    }
    return src;
}

// Compiles `src` into a shared library and opens it; fails the test with the compiler's output.
void* compile(const std::string& src) {
    auto dir = std::filesystem::temp_directory_path() / ("kiln_scalar_expr_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cases.cpp") << src;
    std::string cmd = cat(KILN_CXX, " -std=c++17 -O1 -shared -fPIC -I", KILN_SOURCE_DIR, "/src -o ", dir / "cases.so",
                          " ", dir / "cases.cpp", " > ", dir / "log.txt", " 2>&1");
    int rc = std::system(cmd.c_str());
    std::ifstream log(dir / "log.txt");
    std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_EQ(rc, 0) << cmd << "\n" << output;
    void* lib = rc == 0 ? dlopen((dir / "cases.so").c_str(), RTLD_NOW) : nullptr;
    std::filesystem::remove_all(dir);
    return lib;
}

TEST(scalar_expr, prints_helper_calls_with_attributes_as_literals) {
    std::vector<std::string> x{"x"}, xy{"x", "y"};
    EXPECT_EQ(*make_op("relu").scalar_expr(x), "kiln_relu(x)");
    EXPECT_EQ(*make_op("leaky_relu", {{"alpha", 0.5}}).scalar_expr(x), "kiln_leaky_relu(x, 0.5)");
    EXPECT_EQ(*make_op("hard_sigmoid", {{"alpha", 1}, {"beta", 2}}).scalar_expr(x), "kiln_hard_sigmoid(x, 1.0, 2.0)");
    EXPECT_EQ(*make_op("mod", {{"fmod", true}}).scalar_expr(xy), "kiln_mod(x, y, true)");
    EXPECT_EQ(*make_op("bitshift", {{"direction", "right"}}).scalar_expr(xy), "kiln_bitshift(x, y, true)");
    EXPECT_EQ(make_op("convert").scalar_expr(x), std::nullopt);
}

TEST(scalar_expr, every_pointwise_op_has_one_or_is_listed) {
    std::vector<std::string> without;
    for (const auto& name : registered_ops()) {
        operation op = make_op(name);
        if (op.traits().pointwise && !op.scalar_expr(arg_names(1))) without.push_back(name);
    }
    EXPECT_EQ(without, without_expression);
}

TEST(scalar_expr, compiled_expressions_match_the_reference) {
    std::vector<scalar_case> cases;
    for (const auto& name : registered_ops()) {
        operation op = make_op(name);
        if (op.traits().pointwise && op.scalar_expr(arg_names(1))) add_cases(op, cases);
    }
    // Attributes whose non-default values change the helper's path.
    for (auto [name, attrs] : std::vector<std::pair<std::string, value>>{
             {"mod", {{"fmod", true}}},
             {"gelu", {{"approximate", "tanh"}}},
             {"bitshift", {{"direction", "left"}}},
             {"bitshift", {{"direction", "right"}}},
             {"isinf", {{"detect_positive", false}}},
             {"leaky_relu", {{"alpha", 0.3}}},
             {"selu", {{"alpha", 2.0}, {"gamma", 0.5}}}})
        add_cases(make_op(name, attrs), cases);
    void* lib = compile(generate(cases));
    ASSERT_NE(lib, nullptr) << (dlerror() ? dlerror() : "");
    std::mt19937 gen(7);
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const auto& c = cases[k];
        std::vector<argument> args;
        std::vector<const void*> ptrs;
        for (dtype t : c.inputs) {
            args.push_back(random_input(t, gen));
            ptrs.push_back(args.back().as<void>());
        }
        argument ref = c.op.compute(c.out, args);
        argument got(c.out);
        auto fn = reinterpret_cast<void (*)(const void* const*, void*, long)>(dlsym(lib, cat("kiln_case_", k).c_str()));
        fn(ptrs.data(), got.as<void>(), static_cast<long>(n));
        for (std::size_t i = 0; i < n; ++i) {
            if (same_value(ref, got, i)) continue;
            ADD_FAILURE() << to_string(c.op) << " on " << dtype_name(c.inputs.back()) << ": element " << i
                          << " is " << show(got, i) << ", the reference gives " << show(ref, i) << "; "
                          << *c.op.scalar_expr(arg_names(c.inputs.size()));
            break;
        }
    }
    dlclose(lib);
}

}  // namespace
}  // namespace kiln
