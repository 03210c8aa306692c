#include "core/random.hpp"

#include <random>

#include "core/error.hpp"

namespace kiln {

namespace {
std::int64_t int_low(dtype t) { return is_signed(t) ? -4 : 0; }
}  // namespace

argument random_argument(const shape& s, std::uint64_t seed, std::size_t index) {
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(index)};
    std::mt19937_64 gen(seq);   // its output sequence is fixed by the standard, unlike distributions'
    if (s.is_sequence() || s.is_optional())
        fail("a ", dtype_name(s.type()), " value is not made up at random: give it (", to_string(s), ")");
    std::size_t n = s.elements();
    dtype t = s.type();
    if (t == dtype::string) {
        // Short words over a few letters of both cases, a space and two delimiters, so that
        // splitting, case changes and equality all have something to do.
        static constexpr std::string_view alphabet = "abcAB .-";
        std::vector<std::string> v(n);
        for (auto& x : v)
            for (auto len = gen() % 7; len > 0; --len) x += alphabet[gen() % alphabet.size()];
        return from_strings(s, v);
    }
    if (is_float(t)) {
        std::vector<double> v(n);
        for (auto& x : v) x = static_cast<double>(gen() >> 11) * 0x1.0p-52 - 1.0;
        return from_doubles(s, v);
    }
    std::vector<std::int64_t> v(n);
    if (t == dtype::bool_) {
        for (auto& x : v) x = static_cast<std::int64_t>(gen() & 1);
    } else {
        for (auto& x : v) x = int_low(t) + static_cast<std::int64_t>(gen() % 9);
    }
    return from_int64s(s, v);
}

std::string random_description(dtype t) {
    if (t == dtype::string) return "random words of 0 to 6 characters from \"abcAB .-\"";
    if (is_float(t)) return "uniform in [-1, 1]";
    if (t == dtype::bool_) return "random bools";
    return cat("uniform integers in [", int_low(t), ", ", int_low(t) + 8, "]");
}

param_map random_inputs(const module& m, std::uint64_t seed) {
    param_map inputs;
    auto params = m.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
        std::string name = m.parameter_name(*params[i]);
        if (params[i]->get_shape().dynamic()) fail("input '", name, "' has dynamic dims; give its size");
        inputs[name] = random_argument(params[i]->get_shape(), seed, i);
    }
    return inputs;
}

}  // namespace kiln
