#include "core/argument.hpp"

#include <atomic>
#include <algorithm>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/visit.hpp"

namespace kiln {

namespace {
std::atomic<std::size_t> allocations{0};
thread_local result_buffer_scope* open_scope = nullptr;

std::shared_ptr<std::byte[]> allocate(std::size_t bytes) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    // Over-allocate to a multiple of 8 so 64-bit element loops never read past the end.
    auto p = std::make_shared<std::byte[]>(std::max<std::size_t>((bytes + 7) / 8 * 8, 8));
    return p;
}

// The raw bits of element `off` of a packed tensor of `bits` bits per element (lowest first).
std::uint8_t packed_bits_at(const std::byte* data, std::size_t off, std::size_t bits) {
    std::size_t per_byte = 8 / bits;
    auto byte = static_cast<std::uint8_t>(data[off / per_byte]);
    return static_cast<std::uint8_t>((byte >> (off % per_byte * bits)) & ((1u << bits) - 1));
}

void set_packed_bits(std::byte* data, std::size_t off, std::size_t bits, std::uint8_t v) {
    std::size_t per_byte = 8 / bits, shift = off % per_byte * bits;
    auto& b = reinterpret_cast<std::uint8_t&>(data[off / per_byte]);
    auto mask = static_cast<std::uint8_t>(((1u << bits) - 1) << shift);
    b = static_cast<std::uint8_t>((b & ~mask) | ((v << shift) & mask));
}

// The value of a packed element's bits, and the bits of a value (rounded and saturated).
double packed_value(dtype t, std::uint8_t bits) {
    switch (t) {
    case dtype::int4: return int4_from_nibble(bits);
    case dtype::fp4e2m1: return fp4e2m1_from_nibble(bits);
    case dtype::int2: return int2_from_bits(bits);
    default: return bits;   // uint4, uint2
    }
}

std::uint8_t packed_encode(dtype t, double v) {
    switch (t) {
    case dtype::int4: return int4_to_nibble(v);
    case dtype::uint4: return uint4_to_nibble(v);
    case dtype::fp4e2m1: return fp4e2m1_to_nibble(v);
    case dtype::int2: return int2_to_bits(v);
    default: return uint2_to_bits(v);
    }
}
}  // namespace

result_buffer_scope::result_buffer_scope(std::span<const planned_buffer> buffers)
    : pending_(buffers), previous_(open_scope) {
    open_scope = this;
}

result_buffer_scope::~result_buffer_scope() { open_scope = previous_; }

const planned_buffer* result_buffer_scope::take(std::size_t bytes) {
    if (!open_scope || open_scope->pending_.empty() || open_scope->pending_.front().bytes != bytes) return nullptr;
    const planned_buffer* b = &open_scope->pending_.front();
    open_scope->pending_ = open_scope->pending_.subspan(1);
    return b;
}

std::size_t host_buffer_allocations() { return allocations.load(std::memory_order_relaxed); }

argument::argument(const shape& s) : shape_(s) {
    if (s.dynamic()) fail("argument: cannot allocate dynamic shape ", to_string(s));
    if (!s.rank_known()) fail("argument: cannot allocate a tensor of unknown rank");
    if (s.is_sequence() || s.is_optional()) return;   // empty
    if (s.is_tuple()) {
        for (const auto& sub : s.sub_shapes()) subs_.emplace_back(sub);
        return;
    }
    if (s.type() == dtype::string) {
        // Strings own heap memory: they are constructed in place (empty), never zero bytes, and
        // never placed in a planned buffer (plan_memory refuses string values).
        check_tensor_bytes(s);
        allocations.fetch_add(1, std::memory_order_relaxed);
        auto buf = std::make_shared<std::string[]>(std::max<std::size_t>(s.element_space(), 1));
        data_ = reinterpret_cast<std::byte*>(buf.get());
        owner_ = std::move(buf);
        return;
    }
    if (const planned_buffer* b = result_buffer_scope::take(s.bytes())) {
        if (b->zero) std::memset(b->data, 0, b->bytes);
        data_ = b->data;
        owner_ = b->owner;
        return;
    }
    check_tensor_bytes(s);
    auto buf = allocate(s.bytes());
    data_ = buf.get();
    owner_ = std::move(buf);
}

argument::argument(const shape& s, std::byte* data, std::shared_ptr<void> owner)
    : shape_(s), data_(data), owner_(std::move(owner)) {}

argument::argument(std::vector<argument> elements) : subs_(std::move(elements)) {
    std::vector<shape> shapes;
    for (const auto& a : subs_) shapes.push_back(a.get_shape());
    shape_ = shape(std::move(shapes));
}

argument::argument(const shape& type, std::vector<argument> elements) : shape_(type), subs_(std::move(elements)) {
    if (!type.is_sequence() && !type.is_optional()) fail("argument: ", to_string(type), " is not a sequence or optional type");
    if (type.is_optional() && subs_.size() > 1) fail("argument: an optional holds one value, not ", subs_.size());
}

argument argument::view(const shape& s, std::size_t element_offset) const {
    if (is_packed(s.type()) && element_offset * s.type_bits() % 8 != 0)
        fail("argument: a view of a packed ", s.type_bits(), "-bit tensor must start on a byte boundary");
    std::size_t byte_offset = element_offset * s.type_bits() / 8;
    return {s, data_ + byte_offset, owner_};
}

argument argument::copy() const {
    if (!shape_.is_tensor()) {
        std::vector<argument> c;
        for (const auto& a : subs_) c.push_back(a.copy());
        return shape_.is_tuple() ? argument(std::move(c)) : argument(shape_, std::move(c));
    }
    argument r(shape_.as_standard());
    std::size_t n = shape_.elements();
    if (is_packed(shape_.type())) {
        std::size_t bits = shape_.type_bits();
        for (std::size_t i = 0; i < n; ++i) set_packed_bits(r.data_, i, bits, packed_bits_at(data_, shape_.index(i), bits));
        return r;
    }
    if (shape_.type() == dtype::string) {
        for (std::size_t i = 0; i < n; ++i) r.as<std::string>()[i] = as<std::string>()[shape_.index(i)];
        return r;
    }
    std::size_t esize = shape_.type_bits() / 8;
    if (shape_.standard()) {
        std::memcpy(r.data_, data_, n * esize);
        return r;
    }
    for (std::size_t i = 0; i < n; ++i) std::memcpy(r.data_ + i * esize, data_ + shape_.index(i) * esize, esize);
    return r;
}

bool argument::same_values(const argument& o) const {
    if (shape_.lens() != o.shape_.lens() || shape_.type() != o.shape_.type()) return false;
    if (!shape_.is_tensor()) {
        if (subs_.size() != o.subs_.size()) return false;
        for (std::size_t i = 0; i < subs_.size(); ++i)
            if (!subs_[i].same_values(o.subs_[i])) return false;
        return true;
    }
    if (shape_.type() == dtype::string) {
        for (std::size_t i = 0; i < shape_.elements(); ++i)
            if (as<std::string>()[shape_.index(i)] != o.as<std::string>()[o.shape_.index(i)]) return false;
        return true;
    }
    argument a = copy(), b = o.copy();
    return std::memcmp(a.data_, b.data_, shape_.as_standard().bytes()) == 0;
}

namespace {
const argument& tensor_only(const argument& a) {
    if (a.get_shape().is_sequence() || a.get_shape().is_optional()) fail("literal: a literal is a tensor, not a ", dtype_name(a.get_shape().type()));
    return a;
}
}  // namespace

literal::literal(const argument& a) : arg_(tensor_only(a).copy()) {}

literal literal::borrow(argument a) {
    const shape& s = a.get_shape();
    if (s.is_tuple() || s.dynamic() || !s.standard()) fail("literal: cannot borrow a buffer of shape ", to_string(s));
    literal l;
    l.arg_ = std::move(a);
    return l;
}

literal::literal(const shape& s, std::span<const double> values) : arg_(from_doubles(s.as_standard(), values)) {}

literal::literal(const shape& s, std::span<const std::int64_t> values)
    : arg_(from_int64s(s.as_standard(), values)) {}

namespace {
template <class R>
std::vector<R> read_all(const argument& a) {
    const shape& s = a.get_shape();
    if (s.is_tuple()) fail("cannot read the elements of a tuple");
    if (!s.is_tensor()) fail("cannot read the elements of a ", dtype_name(s.type()), " as numbers");
    std::size_t n = s.elements();
    // A broadcast view of a few bytes may stand for more elements than memory holds.
    if (n > max_tensor_bytes() / sizeof(R))
        fail("reading the elements of ", to_string(s), " needs ", n, " x ", sizeof(R), " bytes, more than the limit of ",
             max_tensor_bytes(), " bytes (max_tensor_bytes)");
    std::vector<R> out(n);
    if (is_packed(s.type())) {
        for (std::size_t i = 0; i < n; ++i)
            out[i] = static_cast<R>(packed_value(s.type(), packed_bits_at(a.data(), s.index(i), s.type_bits())));
        return out;
    }
    visit_type(s.type(), [&](auto t) {
        using T = decltype(t);
        const T* p = a.as<T>();
        for (std::size_t i = 0; i < n; ++i) out[i] = cast<R>(p[s.index(i)]);
    });
    return out;
}

template <class V>
argument write_all(const shape& s, std::span<const V> values) {
    if (s.elements() != values.size())
        fail("literal: ", values.size(), " values given for ", s.elements(), " elements of ", to_string(s));
    argument r(s.as_standard());
    if (is_packed(s.type())) {
        for (std::size_t i = 0; i < values.size(); ++i) {
            set_packed_bits(r.data(), i, s.type_bits(), packed_encode(s.type(), static_cast<double>(values[i])));
        }
        return r;
    }
    visit_type(s.type(), [&](auto t) {
        using T = decltype(t);
        T* p = r.as<T>();
        for (std::size_t i = 0; i < values.size(); ++i) p[i] = cast<T>(values[i]);
    });
    return r;
}
}  // namespace

std::vector<std::string> to_strings(const argument& a) {
    const shape& s = a.get_shape();
    if (s.type() != dtype::string) fail("expected a string tensor, not ", to_string(s));
    std::vector<std::string> out(s.elements());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = a.as<std::string>()[s.index(i)];
    return out;
}

argument from_strings(const shape& s, std::span<const std::string> values) {
    if (s.type() != dtype::string) fail("from_strings: ", to_string(s), " is not a string type");
    if (s.elements() != values.size())
        fail("literal: ", values.size(), " strings given for ", s.elements(), " elements of ", to_string(s));
    argument r(s.as_standard());
    std::copy(values.begin(), values.end(), r.as<std::string>());
    return r;
}

// Each string as its length (8 bytes, little-endian as the host) followed by its bytes.
std::vector<std::byte> encode_strings(const argument& a) {
    std::vector<std::byte> out;
    for (const auto& str : to_strings(a)) {
        std::uint64_t n = str.size();
        auto* p = reinterpret_cast<const std::byte*>(&n);
        out.insert(out.end(), p, p + sizeof(n));
        auto* q = reinterpret_cast<const std::byte*>(str.data());
        out.insert(out.end(), q, q + str.size());
    }
    return out;
}

argument decode_strings(const shape& s, std::span<const std::byte> bytes) {
    std::vector<std::string> vals;
    std::size_t pos = 0;
    for (std::size_t i = 0; i < s.elements(); ++i) {
        std::uint64_t n = 0;
        if (bytes.size() - pos < sizeof(n)) fail("string payload: ", i, " of ", s.elements(), " strings before the end");
        std::memcpy(&n, bytes.data() + pos, sizeof(n));
        pos += sizeof(n);
        if (bytes.size() - pos < n) fail("string payload: string ", i, " of ", n, " bytes runs past the end");
        vals.emplace_back(reinterpret_cast<const char*>(bytes.data() + pos), n);
        pos += n;
    }
    if (pos != bytes.size()) fail("string payload: ", bytes.size() - pos, " bytes left after ", s.elements(), " strings");
    return from_strings(s, vals);
}

std::vector<double> to_doubles(const argument& a) { return read_all<double>(a); }
std::vector<std::int64_t> to_int64s(const argument& a) { return read_all<std::int64_t>(a); }
argument from_doubles(const shape& s, std::span<const double> values) { return write_all<double>(s, values); }
argument from_int64s(const shape& s, std::span<const std::int64_t> values) {
    return write_all<std::int64_t>(s, values);
}

}  // namespace kiln
