// Text IR pieces for pass tests: literal values and standard shapes, so that a test's program
// stays readable when it needs weights.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::ir_text {

// n values in [-1, 1] with two decimals (never 0, so no rule sees an accidental zero), from seed.
inline std::string values(std::size_t n, std::uint32_t seed = 1) {
    std::string s;
    std::uint32_t state = seed * 2654435761u + 12345u;
    for (std::size_t i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        int v = static_cast<int>(state >> 16) % 199 - 99;
        if (v == 0) v = 1;
        s += (i ? ", " : "") + std::to_string(v / 100.0).substr(0, v < 0 ? 5 : 4);
    }
    return s;
}

// "float_type, {2, 3}, {3, 1}": a shape with standard strides.
inline std::string shape_text(const std::vector<std::size_t>& lens, const std::string& type = "float_type") {
    std::string l, st;
    std::size_t stride = 1;
    std::vector<std::size_t> strides(lens.size());
    for (std::size_t i = lens.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= lens[i] == 0 ? 1 : lens[i];
    }
    for (std::size_t i = 0; i < lens.size(); ++i) {
        l += (i ? ", " : "") + std::to_string(lens[i]);
        st += (i ? ", " : "") + std::to_string(strides[i]);
    }
    return type + ", {" + l + "}, {" + st + "}";
}

// "NAME = @literal{...} -> SHAPE\n" with random values.
inline std::string literal_line(const std::string& name, const std::vector<std::size_t>& lens, std::uint32_t seed = 1,
                                const std::string& type = "float_type") {
    std::size_t n = 1;
    for (auto l : lens) n *= l;
    return name + " = @literal{" + values(n, seed) + "} -> " + shape_text(lens, type) + "\n";
}

}  // namespace kiln::ir_text
