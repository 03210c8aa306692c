#include "driver/compare.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace kiln::driver {

namespace {

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

struct errors {
    double max_abs = 0, max_rel = 0;
    bool pass = true;
};

errors measure(const argument& got, const argument& want, tolerance tol) {
    auto g = to_doubles(got), w = to_doubles(want);
    errors e;
    for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) continue;
        double diff = std::abs(g[i] - w[i]);   // NaN or inf when only one side is
        if (std::isnan(diff)) diff = INFINITY;
        e.max_abs = std::max(e.max_abs, diff);
        if (w[i] != 0) e.max_rel = std::max(e.max_rel, diff / std::abs(w[i]));
        if (!(diff <= tol.atol + tol.rtol * std::abs(w[i]))) e.pass = false;
    }
    return e;
}

}  // namespace

std::size_t compare_outputs(const std::vector<named_value>& got, const std::vector<argument>& expected, tolerance tol,
                            std::ostream& os) {
    std::size_t failed = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const shape& g = got[i].arg.get_shape();
        const shape& w = expected[i].get_shape();
        os << got[i].label << ": ";
        if (g.type() != w.type() || g.lens() != w.lens()) {
            os << to_string(g.as_standard()) << " but expected " << to_string(w.as_standard()) << ": FAIL\n";
            ++failed;
            continue;
        }
        if (g.type() == dtype::string) {
            bool same = to_strings(got[i].arg) == to_strings(expected[i]);
            os << (same ? "strings equal: PASS\n" : "strings differ: FAIL\n");
            failed += same ? 0 : 1;
            continue;
        }
        errors e = measure(got[i].arg, expected[i], tol);
        os << "max abs error " << number(e.max_abs) << ", max rel error " << number(e.max_rel) << ": "
           << (e.pass ? "PASS" : "FAIL") << "\n";
        failed += e.pass ? 0 : 1;
    }
    return failed;
}

}  // namespace kiln::driver
