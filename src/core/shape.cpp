#include "core/shape.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>
#include <sstream>

#include "core/error.hpp"

namespace kiln {

std::vector<std::size_t> shape::standard_strides(std::span<const std::size_t> lens) {
    std::vector<std::size_t> s(lens.size(), 1);
    for (std::size_t i = lens.size(); i > 1; --i) s[i - 2] = s[i - 1] * std::max<std::size_t>(lens[i - 1], 1);
    return s;
}

namespace {

constexpr std::size_t max_size = std::size_t{1} << 63;

// Element counts, the element space strides reach and byte sizes must stay within 2^63, checked
// here where every static shape is made: a product that wraps would pass a huge tensor (dims
// [2^62+1] of 4 bytes) for a small one, and the error would come later or never.
void check_size(dtype t, const std::vector<std::size_t>& lens, const std::vector<std::size_t>* strides) {
    if (t == dtype::sequence || t == dtype::optional)
        fail("shape: ", dtype_name(t), " is not an element type (a ", dtype_name(t), " shape holds its element type)");
    if (t == dtype::tuple || std::find(lens.begin(), lens.end(), 0) != lens.end()) return;
    auto too_large = [&](const char* what) {
        fail("shape ", dtype_name(t), ", ", lens_to_string(lens), ": its ", what, " exceeds 2^63");
    };
    std::size_t n = 1;
    for (auto l : lens)
        if (__builtin_mul_overflow(n, l, &n) || n > max_size) too_large("element count");
    if (strides) {
        n = 1;
        for (std::size_t i = 0; i < lens.size(); ++i) {
            std::size_t reach = 0;
            if (__builtin_mul_overflow(lens[i] - 1, (*strides)[i], &reach) || __builtin_add_overflow(n, reach, &n) ||
                n > max_size)
                too_large("element space");
        }
    }
    std::size_t bytes = 0, bits = dtype_bits(t);  // ceil(n * bits / 8) without forming n * bits
    if (__builtin_mul_overflow(n / 8, bits, &bytes) || __builtin_add_overflow(bytes, (n % 8 * bits + 7) / 8, &bytes) ||
        bytes > max_size)
        too_large("size in bytes");
}

}  // namespace

shape::shape(dtype t, std::vector<std::size_t> lens) : type_(t), lens_(std::move(lens)) {
    check_size(type_, lens_, nullptr);
    strides_ = standard_strides(lens_);
}

shape::shape(dtype t, std::vector<std::size_t> lens, std::vector<std::size_t> strides)
    : type_(t), lens_(std::move(lens)), strides_(std::move(strides)) {
    if (lens_.size() != strides_.size())
        fail("shape: ", lens_.size(), " lens but ", strides_.size(), " strides");
    check_size(type_, lens_, &strides_);
}

shape::shape(dtype t, std::vector<dynamic_dim> dims) : type_(t) {
    for (const auto& d : dims)
        if (d.min > d.max) fail("shape: dynamic dim min ", d.min, " > max ", d.max);
    bool fixed = std::all_of(dims.begin(), dims.end(), [](const dynamic_dim& d) { return d.is_fixed(); });
    if (fixed) {
        for (const auto& d : dims) lens_.push_back(d.min);
        check_size(type_, lens_, nullptr);
        strides_ = standard_strides(lens_);
    } else {
        dyn_ = std::move(dims);
    }
}

shape::shape(std::vector<shape> sub_shapes) : type_(dtype::tuple), subs_(std::move(sub_shapes)) {}

shape shape::sequence(shape element) {
    if (!element.is_tensor()) fail("shape: a sequence holds tensors, not ", to_string(element));
    shape s;
    s.type_ = dtype::sequence;
    s.subs_.push_back(std::move(element));
    return s;
}

shape shape::optional(shape element) {
    if (!element.is_tensor() && !element.is_sequence())
        fail("shape: an optional holds a tensor or a sequence, not ", to_string(element));
    shape s;
    s.type_ = dtype::optional;
    s.subs_.push_back(std::move(element));
    return s;
}

shape shape::any_rank(dtype t) {
    shape s(t);
    if (!s.is_tensor()) fail("shape: ", dtype_name(t), " is not an element type");
    s.strides_.clear();
    s.any_rank_ = true;
    return s;
}

const shape& shape::element() const {
    if ((is_sequence() || is_optional()) && subs_.size() == 1) return subs_[0];
    fail("shape: ", to_string(*this), " is not a sequence or optional; it has no element type");
}

std::size_t shape::elements() const {
    if (dynamic()) fail("shape: elements() of dynamic shape ", to_string(*this));
    return std::accumulate(lens_.begin(), lens_.end(), std::size_t{1}, std::multiplies<>());
}

std::size_t shape::element_space() const {
    if (dynamic()) fail("shape: element_space() of dynamic shape ", to_string(*this));
    if (!is_tensor()) return 0;
    std::size_t n = 1;
    for (std::size_t i = 0; i < lens_.size(); ++i) {
        if (lens_[i] == 0) return 0;
        n += (lens_[i] - 1) * strides_[i];
    }
    return n;
}

std::size_t shape::bytes() const {
    if (is_tuple()) {
        std::size_t n = 0;
        for (const auto& s : subs_) n += s.bytes();
        return n;
    }
    std::size_t n = element_space();  // ceil(n * bits / 8) without forming n * bits, which may not fit
    return n / 8 * type_bits() + (n % 8 * type_bits() + 7) / 8;
}

bool shape::standard() const {
    if (dynamic() || !is_tensor()) return false;
    std::size_t expect = 1;
    for (std::size_t i = lens_.size(); i-- > 0;) {
        if (lens_[i] != 1 && strides_[i] != expect) return false;
        expect *= std::max<std::size_t>(lens_[i], 1);   // as standard_strides counts a 0 dim
    }
    return true;
}

bool shape::packed() const {
    if (dynamic() || !is_tensor()) return false;
    if (elements() == 0) return true;
    std::vector<std::size_t> order(lens_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return strides_[a] > strides_[b]; });
    std::size_t expect = 1;
    for (std::size_t k = order.size(); k-- > 0;) {
        std::size_t i = order[k];
        if (lens_[i] != 1 && strides_[i] != expect) return false;
        expect *= lens_[i];
    }
    return true;
}

bool shape::transposed() const { return packed() && !standard(); }

bool shape::broadcasted() const {
    if (dynamic() || !is_tensor()) return false;
    for (std::size_t i = 0; i < lens_.size(); ++i)
        if (lens_[i] > 1 && strides_[i] == 0) return true;
    return false;
}

std::size_t shape::index(std::span<const std::size_t> idx) const {
    std::size_t off = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * strides_[i];
    return off;
}

std::size_t shape::index(std::size_t linear) const {
    std::size_t off = 0;
    for (std::size_t i = lens_.size(); i-- > 0;) {
        std::size_t len = lens_[i];
        off += (linear % len) * strides_[i];
        linear /= len;
    }
    return off;
}

std::vector<std::size_t> shape::multi(std::size_t linear) const {
    std::vector<std::size_t> idx(lens_.size());
    for (std::size_t i = lens_.size(); i-- > 0;) {
        idx[i] = linear % lens_[i];
        linear /= lens_[i];
    }
    return idx;
}

shape shape::with_type(dtype t) const {
    shape s = *this;
    s.type_ = t;
    if (!dynamic()) check_size(t, lens_, &strides_);
    return s;
}

shape shape::with_lens(std::vector<std::size_t> lens) const { return {type_, std::move(lens)}; }

shape shape::as_standard() const {
    if (dynamic() || !is_tensor()) return *this;
    return {type_, lens_};
}

shape shape::normalized() const {
    if (!dynamic() || any_rank_) return *this;
    return shape(type_, dyn_);
}

shape shape::instantiate(std::span<const std::size_t> lens) const {
    if (!dynamic()) {
        if (!std::equal(lens.begin(), lens.end(), lens_.begin(), lens_.end()))
            fail("shape: lens ", lens_to_string(lens), " do not match ", to_string(*this));
        return *this;
    }
    if (any_rank_) return {type_, std::vector<std::size_t>(lens.begin(), lens.end())};
    if (lens.size() != dyn_.size())
        fail("shape: ", lens.size(), " lens given for ", dyn_.size(), "-d shape ", to_string(*this));
    for (std::size_t i = 0; i < lens.size(); ++i)
        if (lens[i] < dyn_[i].min || lens[i] > dyn_[i].max)
            fail("shape: dim ", i, " = ", lens[i], " is outside ", to_string(dyn_[i]));
    return {type_, std::vector<std::size_t>(lens.begin(), lens.end())};
}

std::vector<dynamic_dim> shape::dims() const {
    if (dynamic()) return dyn_;
    std::vector<dynamic_dim> d;
    for (auto l : lens_) d.push_back({l, l, {}, {}});
    return d;
}

bool shape::operator==(const shape& o) const {
    return type_ == o.type_ && lens_ == o.lens_ && strides_ == o.strides_ && dyn_ == o.dyn_ && subs_ == o.subs_ &&
           any_rank_ == o.any_rank_;
}

std::string lens_to_string(std::span<const std::size_t> lens) {
    std::string s = "{";
    for (std::size_t i = 0; i < lens.size(); ++i) s += (i ? ", " : "") + std::to_string(lens[i]);
    return s + "}";
}

std::string to_string(const dynamic_dim& d) {
    if (d.is_fixed() && d.symbol.empty()) return std::to_string(d.min);
    std::string s = d.symbol.empty() ? "?" : d.symbol;
    s += "[" + std::to_string(d.min) + "..";
    s += d.max >= unbounded_dim ? std::string("inf") : std::to_string(d.max);
    for (std::size_t i = 0; i < d.optimals.size(); ++i) s += (i ? "," : ":") + std::to_string(d.optimals[i]);
    return s + "]";
}

std::string to_string(const shape& s) {
    if (s.is_tuple()) {
        std::string r = "tuple_type, {";
        for (std::size_t i = 0; i < s.sub_shapes().size(); ++i) r += (i ? "; " : "") + to_string(s.sub_shapes()[i]);
        return r + "}";
    }
    if (s.is_sequence() || s.is_optional()) return cat(dtype_name(s.type()), ", {", to_string(s.element()), "}");
    std::string r{dtype_name(s.type())};
    if (!s.rank_known()) return r + ", {...}";
    if (s.dynamic()) {
        r += ", {";
        for (std::size_t i = 0; i < s.dyn_dims().size(); ++i) r += (i ? ", " : "") + to_string(s.dyn_dims()[i]);
        return r + "}";
    }
    return r + ", " + lens_to_string(s.lens()) + ", " + lens_to_string(s.strides());
}

std::ostream& operator<<(std::ostream& os, const shape& s) { return os << to_string(s); }

}  // namespace kiln
