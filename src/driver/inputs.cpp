#include "driver/inputs.hpp"

#include "core/error.hpp"
#include "core/random.hpp"
#include "driver/display.hpp"

namespace kiln::driver {

namespace {

void check_names(const module& m, const std::set<std::string>& names, const char* option) {
    for (const auto& n : names)
        if (m.get_parameter(n) == m.end())
            fail(option, ": the program has no input '", n, "' (inputs: ", list_names(m.parameter_names()), ")");
}

// The size of a dynamic input without lens of its own: each dynamic dim from --dim-param (by
// its symbol) or --default-dim. The ONNX frontend has applied those already; what is left for an
// ONNX model is a range (--dim-param batch=1:64).
shape size_from_symbols(const std::string& name, const shape& declared, const dim_options& dims) {
    std::vector<std::size_t> lens;
    std::string unset, placeholders, symbol;
    for (std::size_t i = 0; i < declared.ndim(); ++i) {
        const auto& d = declared.dyn_dims()[i];
        placeholders += " D" + std::to_string(i);
        auto p = d.symbol.empty() ? dims.params.end() : dims.params.find(d.symbol);
        if (d.is_fixed()) {
            lens.push_back(d.min);
        } else if (p != dims.params.end() && p->second.is_fixed()) {
            lens.push_back(p->second.min);
        } else if (dims.default_dim && p == dims.params.end()) {
            lens.push_back(*dims.default_dim);
        } else {
            unset += (unset.empty() ? "" : ", ") + cat("dim ", i, " is ", to_string(d));
            if (symbol.empty()) symbol = d.symbol;
        }
    }
    if (!unset.empty())
        fail("input '", name, "' has dynamic dims (", unset, "); give its size with --input-dim @", name, placeholders,
             symbol.empty() ? "" : " or --dim-param " + symbol + "=N");
    try {
        return declared.instantiate(lens);
    } catch (const error& e) {
        fail("input '", name, "': ", e.what());
    }
}

// The static shape an input is fed with: its own, or the lens given for it, or its dynamic
// dims sized from the symbols.
shape input_shape(const std::string& name, const shape& declared, const dim_options& dims) {
    auto it = dims.inputs.find(name);
    if (it == dims.inputs.end())
        return declared.dynamic() ? size_from_symbols(name, declared, dims) : declared.as_standard();
    const auto& [lens, source] = it->second;
    if (lens.size() != declared.ndim())
        fail(source, ": ", lens_to_string(lens), " has ", lens.size(), " dims; input '", name, "' has ", declared.ndim(),
             " (", to_string(declared), ")");
    if (!declared.dynamic()) {
        if (lens != declared.lens())
            fail(source, ": ", lens_to_string(lens), " differs from the static shape of input '", name, "' (",
                 to_string(declared), ")");
        return declared.as_standard();
    }
    try {
        return declared.instantiate(lens);
    } catch (const error& e) {
        fail(source, ": ", e.what());
    }
}

generated_input given_value(const std::string& name, const shape& s, const given_input& g) {
    dtype t = g.arg.get_shape().type();
    if (t != s.type())
        fail(g.source, ": the array is ", dtype_name(t), " but input '", name, "' is ", dtype_name(s.type()));
    return {name, g.arg, "from " + g.file};
}

generated_input random_input(const std::string& name, const shape& s, std::uint64_t seed, std::size_t index) {
    return {name, random_argument(s, seed, index), random_description(s.type())};
}

generated_input constant_input(const std::string& name, const shape& s, std::int64_t c) {
    if (s.type() == dtype::string)
        fail("input '", name, "' holds strings; --fill0 and --fill1 fill numbers (give it with --test-data)");
    return {name, from_int64s(s, std::vector<std::int64_t>(s.elements(), c)), c ? "1s" : "0s"};
}

}  // namespace

std::vector<generated_input> make_inputs(const module& m, const input_options& opts) {
    check_names(m, opts.zeros.names, "--fill0");
    check_names(m, opts.ones.names, "--fill1");
    for (const auto& [option, fill] : {std::pair{"--fill0", &opts.zeros}, std::pair{"--fill1", &opts.ones}})
        for (const auto& n : fill->names)
            if (auto g = opts.given.find(n); g != opts.given.end())
                fail(option, ": input '", n, "' is given by ", g->second.source);
    std::vector<generated_input> inputs;
    auto params = m.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
        std::string name = param_name(*params[i]);
        shape s = input_shape(name, params[i]->get_shape(), opts.dims);
        // A named input beats "all" of the other option.
        bool zero = opts.zeros.names.count(name) || (opts.zeros.all && !opts.ones.names.count(name));
        bool one = opts.ones.names.count(name) || (opts.ones.all && !opts.zeros.names.count(name));
        if (auto g = opts.given.find(name); g != opts.given.end()) inputs.push_back(given_value(name, s, g->second));
        else if (zero) inputs.push_back(constant_input(name, s, 0));
        else if (one) inputs.push_back(constant_input(name, s, 1));
        else inputs.push_back(random_input(name, s, opts.seed, i));
    }
    return inputs;
}

}  // namespace kiln::driver
