#include "driver/display.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iomanip>
#include <sstream>

#include "core/error.hpp"
#include "core/printer.hpp"

namespace kiln::driver {

std::string brief_program(const program& p, std::size_t max_values) {
    std::ostringstream os;
    print(os, p, max_values);
    return os.str();
}

std::string format_values(const argument& a, std::size_t limit) {
    dtype t = a.get_shape().type();
    std::size_t n = a.get_shape().elements();
    std::size_t shown = limit == 0 ? n : std::min(n, limit);
    std::ostringstream os;
    os << "{";
    if (t == dtype::string) {
        auto vals = to_strings(a);
        for (std::size_t i = 0; i < shown; ++i) os << (i ? ", " : "") << std::quoted(vals[i]);
    } else if (is_float(t)) {
        auto vals = to_doubles(a);
        for (std::size_t i = 0; i < shown; ++i) os << (i ? ", " : "") << vals[i];
    } else {
        auto vals = to_int64s(a);
        for (std::size_t i = 0; i < shown; ++i) {
            os << (i ? ", " : "");
            if (t == dtype::bool_) os << (vals[i] ? "true" : "false");
            else if (t == dtype::uint64) os << static_cast<std::uint64_t>(vals[i]);
            else os << vals[i];
        }
    }
    if (shown < n) os << ", ...";
    os << "}";
    return os.str();
}

std::string param_name(const instruction& param) {
    return param.get_operator().attributes().at("name").as_string();
}

void write_text(const std::string& text, const std::string& path) {
    if (path.empty()) {
        std::cout << text;
        return;
    }
    std::ofstream f(path, std::ios::binary);
    if (!f) fail("cannot open '", path, "' for writing");
    f << text;
    f.close();
    if (!f) fail("could not write '", path, "'");
}

}  // namespace kiln::driver
