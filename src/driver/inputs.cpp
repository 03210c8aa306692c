#include "driver/inputs.hpp"

#include <random>

#include "core/error.hpp"
#include "driver/display.hpp"

namespace kiln::driver {

namespace {

std::string list_names(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? "none" : s;
}

void check_names(const module& m, const std::set<std::string>& names, const char* option) {
    for (const auto& n : names)
        if (m.get_parameter(n) == m.end())
            fail(option, ": the program has no input '", n, "' (inputs: ", list_names(m.parameter_names()), ")");
}

// The static shape an input is generated with: its own, or the --input-dim lens for it.
shape input_shape(const std::string& name, const shape& declared, const input_options& opts) {
    auto it = opts.dims.find(name);
    if (it == opts.dims.end()) {
        if (!declared.dynamic()) return declared.as_standard();
        std::string dyn, placeholders;
        for (std::size_t i = 0; i < declared.ndim(); ++i) {
            const auto& d = declared.dyn_dims()[i];
            if (!d.is_fixed()) dyn += (dyn.empty() ? "" : ", ") + cat("dim ", i, " is ", to_string(d));
            placeholders += " D" + std::to_string(i);
        }
        fail("input '", name, "' has dynamic dims (", dyn, "); give its size with --input-dim @", name, placeholders);
    }
    const auto& lens = it->second;
    if (lens.size() != declared.ndim())
        fail("--input-dim @", name, ": ", lens.size(), " dims given; '", name, "' has ", declared.ndim(), " (",
             to_string(declared), ")");
    if (!declared.dynamic()) {
        if (lens != declared.lens())
            fail("--input-dim @", name, ": ", lens_to_string(lens), " differs from the static shape ", to_string(declared));
        return declared.as_standard();
    }
    try {
        return declared.instantiate(lens);
    } catch (const error& e) {
        fail("--input-dim @", name, ": ", e.what());
    }
}

generated_input random_input(const std::string& name, const shape& s, std::uint64_t seed, std::size_t index) {
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(index)};
    std::mt19937_64 gen(seq);   // its output sequence is fixed by the standard, unlike distributions'
    std::size_t n = s.elements();
    dtype t = s.type();
    if (is_float(t)) {
        std::vector<double> v(n);
        for (auto& x : v) x = static_cast<double>(gen() >> 11) * 0x1.0p-52 - 1.0;
        return {name, from_doubles(s, v), "uniform in [-1, 1]"};
    }
    std::vector<std::int64_t> v(n);
    if (t == dtype::bool_) {
        for (auto& x : v) x = static_cast<std::int64_t>(gen() & 1);
        return {name, from_int64s(s, v), "random bools"};
    }
    // Small values, so that integer inputs used as indices or counts are mostly valid.
    std::int64_t low = is_signed(t) ? -4 : 0;
    for (auto& x : v) x = low + static_cast<std::int64_t>(gen() % 9);
    return {name, from_int64s(s, v), cat("uniform integers in [", low, ", ", low + 8, "]")};
}

generated_input constant_input(const std::string& name, const shape& s, std::int64_t c) {
    return {name, from_int64s(s, std::vector<std::int64_t>(s.elements(), c)), c ? "1s" : "0s"};
}

}  // namespace

std::vector<generated_input> make_inputs(const module& m, const input_options& opts) {
    check_names(m, opts.zeros.names, "--fill0");
    check_names(m, opts.ones.names, "--fill1");
    for (const auto& [name, lens] : opts.dims) check_names(m, {name}, "--input-dim");
    std::vector<generated_input> inputs;
    auto params = m.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
        std::string name = param_name(*params[i]);
        shape s = input_shape(name, params[i]->get_shape(), opts);
        // A named input beats "all" of the other option.
        bool zero = opts.zeros.names.count(name) || (opts.zeros.all && !opts.ones.names.count(name));
        bool one = opts.ones.names.count(name) || (opts.ones.all && !opts.zeros.names.count(name));
        if (zero) inputs.push_back(constant_input(name, s, 0));
        else if (one) inputs.push_back(constant_input(name, s, 1));
        else inputs.push_back(random_input(name, s, opts.seed, i));
    }
    return inputs;
}

}  // namespace kiln::driver
