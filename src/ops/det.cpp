// det, as ONNX Det: the determinant of each square matrix in the last two dims of [..., M, M],
// giving [...]. Computed by LU decomposition with partial pivoting in double.
#include <cmath>
#include <utility>

#include "ops/det.hpp"

namespace kiln::ops {
namespace {

// The determinant of the row-major m x m matrix a (destroyed).
double determinant(std::vector<double>& a, std::size_t m) {
    double det = 1;
    for (std::size_t c = 0; c < m; ++c) {
        std::size_t pivot = c;
        for (std::size_t r = c + 1; r < m; ++r)
            if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) pivot = r;
        if (a[pivot * m + c] == 0) return 0;
        if (pivot != c) {
            for (std::size_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[pivot * m + k]);
            det = -det;
        }
        det *= a[c * m + c];
        for (std::size_t r = c + 1; r < m; ++r) {
            double f = a[r * m + c] / a[c * m + c];
            for (std::size_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
        }
    }
    return det;
}

}  // namespace

shape det::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 1);
    check_static(in);
    check_type(in, 0, float_type, "a float type");
    check_rank(in, 0, 2, true);
    auto lens = in[0].lens();
    std::size_t m = lens.back();
    if (lens[lens.size() - 2] != m)
        fail("input 0 is ", lens_to_string(lens), "; expected square matrices in the last two dims");
    lens.resize(lens.size() - 2);
    return {in[0].type(), lens};
}

argument det::compute(const shape& out, std::span<const argument> args) const {
    std::size_t m = args[0].get_shape().lens().back();
    auto x = to_doubles(args[0]);
    std::vector<double> y(out.elements());
    for (std::size_t i = 0; i < y.size(); ++i) {
        std::vector<double> a(x.begin() + std::ptrdiff_t(i * m * m), x.begin() + std::ptrdiff_t((i + 1) * m * m));
        y[i] = determinant(a, m);
    }
    return from_doubles(out, y);
}
KILN_REGISTER_OP(det)

}  // namespace kiln::ops
