// ONNX TensorProto -> literal: typed fields, raw_data and external data files.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/visit.hpp"
#include "frontends/onnx/context.hpp"

namespace kiln::onnx_fe {

dtype onnx_dtype(int code) {
    switch (code) {
    case 1: return dtype::float32;
    case 2: return dtype::uint8;
    case 3: return dtype::int8;
    case 4: return dtype::uint16;
    case 5: return dtype::int16;
    case 6: return dtype::int32;
    case 7: return dtype::int64;
    case 8: return dtype::string;
    case 9: return dtype::bool_;
    case 10: return dtype::float16;
    case 11: return dtype::float64;
    case 12: return dtype::uint32;
    case 13: return dtype::uint64;
    case 16: return dtype::bfloat16;
    case 17: return dtype::fp8e4m3fn;
    case 18: return dtype::fp8e4m3fnuz;
    case 19: return dtype::fp8e5m2;
    case 20: return dtype::fp8e5m2fnuz;
    case 21: return dtype::uint4;
    case 22: return dtype::int4;
    case 23: return dtype::fp4e2m1;
    case 24: return dtype::fp8e8m0;
    case 25: return dtype::uint2;
    case 26: return dtype::int2;
    default: break;
    }
    static const char* names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                  "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                  "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                  "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0"};
    if (code >= 0 && code < static_cast<int>(std::size(names))) fail("ONNX type ", names[code], " is not supported");
    fail("unknown ONNX data type code ", code);
}

namespace {

// An external-data offset or length: decimal digits only (std::stoull would accept "-1" and " 8").
std::size_t parse_size(const onnx::TensorProto& t, const std::string& key, const std::string& text) {
    std::size_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || ec != std::errc() ||
        end != text.data() + text.size())
        fail("tensor '", t.name(), "': external data ", key, " '", text, "' is not a byte count");
    return v;
}

// The file `location` names, which must lie inside the model's folder: a model from a stranger
// must not read /etc/passwd or ../secrets as its weights, directly or through a symlink.
std::filesystem::path external_path(const onnx::TensorProto& t, const std::string& location,
                                    const std::string& base_dir) {
    namespace fs = std::filesystem;
    auto refuse = [&](const std::string& why) {
        fail("tensor '", t.name(), "': external data location '", location, "' ", why);
    };
    if (location.empty()) fail("tensor '", t.name(), "': external data has no location");
    fs::path rel(location);
    if (rel.is_absolute()) refuse("is an absolute path; it must be relative to the model's folder");
    for (const auto& part : rel)
        if (part == "..") refuse("has a '..' component; it must stay inside the model's folder");
    fs::path path = fs::path(base_dir) / rel;
    std::error_code ec;
    fs::path real = fs::canonical(path, ec);
    if (ec)
        fail("tensor '", t.name(), "': external data file '", path.string(), "' cannot be opened (", ec.message(), ")");
    if (!fs::is_regular_file(real)) refuse("is not a regular file");
    fs::path inside = real.lexically_relative(fs::canonical(base_dir));
    if (inside.empty() || *inside.begin() == "..")
        refuse("resolves to '" + real.string() + "', outside the model's folder");
    return path;
}

// Reads the tensor's bytes from its external data file straight into a new buffer of shape s.
argument read_external(const onnx::TensorProto& t, const std::string& base_dir, const shape& s) {
    std::size_t want = s.bytes();
    std::string location;
    std::size_t offset = 0, length = want;
    for (const auto& kv : t.external_data()) {
        if (kv.key() == "location") location = kv.value();
        else if (kv.key() == "offset")
            offset = parse_size(t, "offset", kv.value());
        else if (kv.key() == "length")
            length = parse_size(t, "length", kv.value());
    }
    std::filesystem::path path = external_path(t, location, base_dir);
    if (length != want)
        fail("tensor '", t.name(), "': external data length ", length, " does not match its shape (", want, " bytes)");
    std::ifstream f(path, std::ios::binary);
    if (!f) fail("tensor '", t.name(), "': external data file '", path.string(), "' cannot be opened");
    f.seekg(0, std::ios::end);
    auto size = static_cast<std::size_t>(f.tellg());
    if (offset > size || length > size - offset)
        fail("tensor '", t.name(), "': external data file '", path.string(), "' is truncated (", size, " bytes, needs ",
             length, " from offset ", offset, ")");
    argument a(s);
    f.seekg(static_cast<std::streamoff>(offset));
    f.read(reinterpret_cast<char*>(a.data()), static_cast<std::streamsize>(length));
    if (!f) fail("tensor '", t.name(), "': external data file '", path.string(), "' could not be read");
    return a;
}

// Values stored in int32_data: small ints, bool, and the bit patterns of 16- and 8-bit floats.
argument from_int32_field(const onnx::TensorProto& t, const shape& s) {
    std::size_t n = s.elements();
    if (is_packed(s.type())) {
        // Two 4-bit (or four 2-bit) values per byte; ONNX stores each packed byte in one int32_data entry.
        std::size_t bytes = s.bytes();
        if (static_cast<std::size_t>(t.int32_data_size()) != bytes)
            fail("tensor '", t.name(), "': ", t.int32_data_size(), " int32_data values for ", n, " ", s.type_bits(),
                 "-bit elements");
        argument a(s);
        for (std::size_t i = 0; i < bytes; ++i) a.data()[i] = static_cast<std::byte>(t.int32_data(static_cast<int>(i)));
        return a;
    }
    if (static_cast<std::size_t>(t.int32_data_size()) != n)
        fail("tensor '", t.name(), "': ", t.int32_data_size(), " values for ", n, " elements");
    argument a(s);
    std::size_t esize = s.type_bits() / 8;
    for (std::size_t i = 0; i < n; ++i) {
        auto v = static_cast<std::uint32_t>(t.int32_data(static_cast<int>(i)));
        std::memcpy(a.data() + i * esize, &v, esize);   // little-endian low bytes
    }
    return a;
}

template <class T, class Field>
argument from_field(const onnx::TensorProto& t, const shape& s, const Field& field) {
    std::size_t n = s.elements();
    if (static_cast<std::size_t>(field.size()) != n)
        fail("tensor '", t.name(), "': ", field.size(), " values for ", n, " elements");
    argument a(s);
    for (std::size_t i = 0; i < n; ++i) a.as<T>()[i] = static_cast<T>(field.Get(static_cast<int>(i)));
    return a;
}

}  // namespace

namespace {

// The tensor's shape, checked before anything is allocated: the shape refuses dims whose size
// overflows, and sizes above max_tensor_bytes are refused.
shape tensor_shape(const onnx::TensorProto& t) {
    if (t.has_segment()) fail("tensor '", t.name(), "': segmented tensors are not supported");
    std::vector<std::size_t> lens;
    for (auto d : t.dims()) {
        if (d < 0) fail("tensor '", t.name(), "': negative dim ", d);
        lens.push_back(static_cast<std::size_t>(d));
    }
    dtype type{};
    try {
        type = onnx_dtype(t.data_type());
    } catch (const error& e) {
        fail("tensor '", t.name(), "': ", e.what());
    }
    shape s;
    try {
        s = shape(type, lens);
        check_tensor_bytes(s);
    } catch (const error& e) {
        fail("tensor '", t.name(), "': ", e.what());
    }
    return s;
}

bool in_raw_data(const onnx::TensorProto& t, const shape& s) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL || !t.has_raw_data()) return false;
    if (s.type() == dtype::string) fail("tensor '", t.name(), "': a STRING tensor keeps its values in string_data");
    if (t.raw_data().size() != s.bytes())
        fail("tensor '", t.name(), "': raw_data has ", t.raw_data().size(), " bytes, its shape ", to_string(s), " needs ",
             s.bytes());
    return true;
}

// The unused high bits of a packed tensor's last byte (ONNX leaves them unspecified) are zeroed,
// as in kiln's own buffers: literals compare and hash by their bytes.
void clear_packed_padding(std::byte* data, const shape& s) {
    std::size_t used = s.elements() * s.type_bits() % 8;
    if (is_packed(s.type()) && used != 0) data[s.bytes() - 1] &= static_cast<std::byte>((1u << used) - 1);
}

// Each literal is built in a buffer of its own, which it then keeps (literal::borrow): no second copy.
argument tensor_values(const onnx::TensorProto& t, const std::string& base_dir, const shape& s) {
    if (s.type() == dtype::string) {
        // Strings live in string_data only (the spec allows neither raw_data nor external data).
        if (t.has_raw_data() || t.data_location() == onnx::TensorProto::EXTERNAL)
            fail("tensor '", t.name(), "': a STRING tensor keeps its values in string_data");
        if (static_cast<std::size_t>(t.string_data_size()) != s.elements())
            fail("tensor '", t.name(), "': ", t.string_data_size(), " strings for ", s.elements(), " elements");
        std::vector<std::string> vals(t.string_data().begin(), t.string_data().end());
        return from_strings(s, vals);
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return read_external(t, base_dir, s);
    if (in_raw_data(t, s)) {
        argument a(s);
        std::memcpy(a.data(), t.raw_data().data(), s.bytes());
        return a;
    }
    switch (s.type()) {
    case dtype::float32: return from_field<float>(t, s, t.float_data());
    case dtype::float64: return from_field<double>(t, s, t.double_data());
    case dtype::int64: return from_field<std::int64_t>(t, s, t.int64_data());
    case dtype::uint32: return from_field<std::uint32_t>(t, s, t.uint64_data());
    case dtype::uint64: return from_field<std::uint64_t>(t, s, t.uint64_data());
    default: return from_int32_field(t, s);
    }
}

}  // namespace

literal tensor_to_literal(const onnx::TensorProto& t, const std::string& base_dir) {
    shape s = tensor_shape(t);
    argument a = tensor_values(t, base_dir, s);
    clear_packed_padding(a.data(), s);
    return literal::borrow(a);
}

literal take_tensor_literal(onnx::TensorProto& t, const std::string& base_dir) {
    shape s = tensor_shape(t);
    if (!in_raw_data(t, s)) return tensor_to_literal(t, base_dir);
    // The literal takes the parsed raw_data string itself. Its size is padded to a multiple of 8
    // (zeros), as host buffers are, so that 64-bit element loops never read past the end.
    auto owner = std::make_shared<std::string>();
    owner->swap(*t.mutable_raw_data());
    std::size_t padded = std::max<std::size_t>((s.bytes() + 7) / 8 * 8, 8);
    if (owner->size() != padded) owner->resize(padded);
    auto* data = reinterpret_cast<std::byte*>(owner->data());
    clear_packed_padding(data, s);
    // Host buffers are 16-byte aligned (malloc's guarantee); a short string kept inside its
    // object may not be, and is copied instead.
    if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0) {
        argument a(s);
        std::memcpy(a.data(), data, s.bytes());
        return literal::borrow(a);
    }
    return literal::borrow(argument(s, data, std::move(owner)));
}

}  // namespace kiln::onnx_fe
