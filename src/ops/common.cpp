#include "ops/common.hpp"

namespace kiln::ops {

void check_input_count(std::span<const shape> in, std::size_t min, std::size_t max) {
    if (in.size() < min || in.size() > max) {
        if (min == max) fail("expected ", min, " input", min == 1 ? "" : "s", ", got ", in.size());
        fail("expected ", min, " to ", max, " inputs, got ", in.size());
    }
}

void check_static(std::span<const shape> in) {
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i].dynamic()) fail("input ", i, " has a dynamic shape ", to_string(in[i]), "; give its dims");
        if (in[i].is_tuple()) fail("input ", i, " is a tuple");
    }
}

void check_same_type(std::span<const shape> in) {
    for (std::size_t i = 1; i < in.size(); ++i)
        if (in[i].type() != in[0].type())
            fail("input ", i, " is ", dtype_name(in[i].type()), " but input 0 is ", dtype_name(in[0].type()),
                 "; inputs must have the same type");
}

void check_type(std::span<const shape> in, std::size_t i, bool (*pred)(dtype), const char* what) {
    if (!pred(in[i].type())) fail("input ", i, " is ", dtype_name(in[i].type()), "; expected ", what);
}

void check_rank(std::span<const shape> in, std::size_t i, std::size_t n, bool at_least) {
    std::size_t r = in[i].ndim();
    if (at_least ? r < n : r != n)
        fail("input ", i, " has ", r, " dims (", to_string(in[i]), "); expected ", at_least ? "at least " : "", n);
}

std::size_t normalize_axis(std::int64_t axis, std::size_t ndim, const char* attr) {
    auto n = static_cast<std::int64_t>(ndim);
    if (axis < -n || axis >= n)
        fail(attr, "=", axis, " is out of range for ", ndim, " dims (valid: ", -n, " to ", n - 1, ")");
    return static_cast<std::size_t>(axis < 0 ? axis + n : axis);
}

std::vector<std::size_t> normalize_axes(std::span<const std::int64_t> axes, std::size_t ndim, const char* attr) {
    std::vector<std::size_t> r;
    for (auto a : axes) {
        auto x = normalize_axis(a, ndim, attr);
        for (auto y : r)
            if (y == x) fail(attr, " repeats axis ", a);
        r.push_back(x);
    }
    return r;
}

std::vector<std::size_t> broadcast_lens(std::span<const shape> in) {
    std::size_t rank = 0;
    for (const auto& s : in) rank = std::max(rank, s.lens().size());
    std::vector<std::size_t> out(rank, 1);
    for (const auto& s : in) {
        std::size_t off = rank - s.lens().size();
        for (std::size_t i = 0; i < s.lens().size(); ++i) {
            std::size_t l = s.lens()[i];
            std::size_t& o = out[off + i];
            if (o == l || l == 1) continue;
            if (o == 1) {
                o = l;
                continue;
            }
            std::string all;
            for (const auto& t : in) all += (all.empty() ? "" : " and ") + lens_to_string(t.lens());
            fail("cannot broadcast ", all, ": dim ", off + i, " is ", o, " vs ", l);
        }
    }
    return out;
}

shape broadcast_to(const shape& s, std::span<const std::size_t> lens) {
    std::size_t off = lens.size() - s.lens().size();
    std::vector<std::size_t> strides(lens.size(), 0);
    for (std::size_t i = 0; i < s.lens().size(); ++i)
        strides[off + i] = (s.lens()[i] == 1 && lens[off + i] != 1) ? 0 : s.strides()[i];
    return {s.type(), std::vector<std::size_t>(lens.begin(), lens.end()), strides};
}

bool any_type(dtype) { return true; }
bool float_type(dtype t) { return is_float(t); }
bool signed_type(dtype t) { return is_signed(t); }
bool integer_type(dtype t) { return is_integral(t); }
bool numeric_type(dtype t) { return is_integral(t) || is_float(t); }
bool bool_type(dtype t) { return t == dtype::bool_; }

}  // namespace kiln::ops
