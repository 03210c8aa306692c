#include "tools/compare.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace kiln {

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::vector<std::size_t> multi_index(const shape& s, std::size_t i) {
    const auto& lens = s.lens();
    std::vector<std::size_t> idx(lens.size());
    for (std::size_t d = lens.size(); d-- > 0;) {
        idx[d] = lens[d] ? i % lens[d] : 0;
        i = lens[d] ? i / lens[d] : 0;
    }
    return idx;
}

std::string index_string(const std::vector<std::size_t>& idx) {
    std::string r = "[";
    for (std::size_t d = 0; d < idx.size(); ++d) r += (d ? ", " : "") + std::to_string(idx[d]);
    return r + "]";
}

bool same_special(double g, double w) { return (std::isnan(g) && std::isnan(w)) || (std::isinf(g) && g == w); }

comparison compare_tensors(const argument& got, const argument& ref, const tolerances& tol) {
    comparison c;
    c.tol = tol;
    auto g = to_doubles(got), w = to_doubles(ref);
    c.elements = g.size();
    double sq_diff = 0, sq_ref = 0;
    bool rms_special = false;
    for (std::size_t i = 0; i < g.size(); ++i) {
        c.nan_got += std::isnan(g[i]);
        c.nan_ref += std::isnan(w[i]);
        c.inf_got += std::isinf(g[i]);
        c.inf_ref += std::isinf(w[i]);
        if (g[i] == w[i] || same_special(g[i], w[i])) continue;
        double diff = std::abs(g[i] - w[i]);
        if (!std::isfinite(diff)) {
            diff = INFINITY;
            rms_special = true;
        } else {
            sq_diff += diff * diff;
        }
        if (!(diff <= tol.atol + tol.rtol * std::abs(w[i]))) ++c.not_close;
        if (diff > c.max_abs || (c.max_abs == 0 && diff > 0)) {
            c.max_abs = diff;
            c.worst = i;
        }
    }
    for (double v : w)
        if (std::isfinite(v)) sq_ref += v * v;
    c.rms_error = rms_special ? INFINITY : sq_ref > 0 ? std::sqrt(sq_diff / sq_ref) : std::sqrt(sq_diff / std::max<std::size_t>(g.size(), 1));
    if (!g.empty()) {
        c.worst_got = g[c.worst];
        c.worst_ref = w[c.worst];
        c.worst_position = multi_index(ref.get_shape(), c.worst);
        c.worst_index = index_string(c.worst_position);
    }
    c.pass = c.rms_error <= tol.rms_tol && c.not_close == 0;
    return c;
}

}  // namespace

tolerances default_tolerances(dtype t, compute_precision p) {
    if (!is_float(t)) return {0, 0, 0};
    if (dtype_bits(t) <= 8) return {0.8, 0.4, 0.4};   // fp8 and fp4 formats
    if (t == dtype::float16 || t == dtype::bfloat16 || p != compute_precision::fp32) return {8e-2, 4e-2, 4e-2};
    return {};
}

tolerances tolerance_overrides::apply(tolerances t) const {
    // A negative (or NaN) tolerance fails every comparison or passes every one; neither is meant.
    for (auto [name, v] : {std::pair{"rms_tol", rms_tol}, {"atol", atol}, {"rtol", rtol}})
        if (v && !(*v >= 0)) fail(name, " is ", *v, "; a tolerance must be 0 or more");
    if (rms_tol) t.rms_tol = *rms_tol;
    if (atol) t.atol = *atol;
    if (rtol) t.rtol = *rtol;
    return t;
}

comparison compare_results(const argument& got, const argument& ref, const tolerances& tol) {
    const shape& g = got.get_shape();
    const shape& r = ref.get_shape();
    if (!g.is_tensor() || !r.is_tensor()) {   // tuples, sequences and optionals: value by value
        comparison c;
        c.tol = tol;
        c.pass = true;
        if (g.type() != r.type() || got.sub_arguments().size() != ref.sub_arguments().size()) {
            c.pass = false;
            c.mismatch = to_string(g) + " but ref gives " + to_string(r);
            return c;
        }
        for (std::size_t i = 0; i < got.sub_arguments().size(); ++i) {
            comparison e = compare_results(got.sub_arguments()[i], ref.sub_arguments()[i], tol);
            if (!e.pass) return e;
        }
        return c;
    }
    if (g.type() != r.type() || g.lens() != r.lens()) {
        comparison c;
        c.tol = tol;
        c.mismatch = to_string(g.as_standard()) + " but ref gives " + to_string(r.as_standard());
        return c;
    }
    if (g.type() == dtype::string) {
        // Strings match exactly; the first differing element is the one described.
        comparison c;
        c.tol = tol;
        auto gs = to_strings(got), rs = to_strings(ref);
        c.elements = gs.size();
        for (std::size_t i = 0; i < gs.size(); ++i)
            if (gs[i] != rs[i] && c.not_close++ == 0)
                c.mismatch = "element " + index_string(multi_index(r, i)) + " is \"" + gs[i] + "\" but ref gives \"" + rs[i] + "\"";
        c.pass = c.not_close == 0;
        return c;
    }
    return compare_tensors(got, ref, tol);
}

std::string describe(const comparison& c, const std::string& indent) {
    if (!c.mismatch.empty()) return indent + (c.elements ? "strings: " : "shape: ") + c.mismatch + "\n";
    std::string s = indent + "RMS error " + num(c.rms_error) + " (rms_tol " + num(c.tol.rms_tol) + ")";
    s += ", " + std::to_string(c.not_close) + " of " + std::to_string(c.elements) + " elements not close (atol " +
         num(c.tol.atol) + ", rtol " + num(c.tol.rtol) + ")\n";
    if (c.max_abs > 0)
        s += indent + "worst element " + c.worst_index + ": got " + num(c.worst_got) + ", ref " + num(c.worst_ref) +
             " (|diff| " + num(c.max_abs) + ")\n";
    if (c.nan_got + c.nan_ref + c.inf_got + c.inf_ref > 0)
        s += indent + "NaN: " + std::to_string(c.nan_got) + " got, " + std::to_string(c.nan_ref) + " ref; Inf: " +
             std::to_string(c.inf_got) + " got, " + std::to_string(c.inf_ref) + " ref\n";
    return s;
}

}  // namespace kiln
