#include "targets/gpu/elementwise.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"

namespace kiln::gpu {
namespace {

std::string list(const std::vector<std::size_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]) + "ull";
    return s.empty() ? "0ull" : s;
}

// "kiln::layout<2>{{4ull, 5ull}, {5ull, 1ull}}"
std::string layout_of(const shape& s) {
    return cat("kiln::layout<", s.lens().size(), ">{{", list(s.lens()), "}, {", list(s.strides()), "}}");
}

// layout_of, or a block_layout when the coordinates are divided.
std::string block_layout_of(const shape& s, const std::vector<std::size_t>& div) {
    if (div.empty()) return layout_of(s);
    return cat("kiln::block_layout<", s.lens().size(), ">{{", list(s.lens()), "}, {", list(s.strides()), "}, {", list(div), "}}");
}

// Reads element `off` of operand k: packed types through their bit position.
std::string load_of(dtype t, std::size_t k, const std::string& off) {
    const char* packed = t == dtype::int4 ? "int4" : t == dtype::uint4 ? "uint4" : t == dtype::int2 ? "int2"
                       : t == dtype::uint2 ? "uint2" : t == dtype::fp4e2m1 ? "fp4e2m1" : nullptr;
    if (!packed) return cat("kiln::load(p", k, "[", off, "])");
    return cat("kiln::load_", packed, "(p", k, ", ", off, ")");
}

}  // namespace

std::string device_type(dtype t) {
    switch (t) {
        case dtype::bool_: return "bool";
        case dtype::int8: return "kiln::i8";
        case dtype::int16: return "kiln::i16";
        case dtype::int32: return "kiln::i32";
        case dtype::int64: return "kiln::i64";
        case dtype::uint8: return "kiln::u8";
        case dtype::uint16: return "kiln::u16";
        case dtype::uint32: return "kiln::u32";
        case dtype::uint64: return "kiln::u64";
        case dtype::float16: return "kiln::half";
        case dtype::bfloat16: return "kiln::bf16";
        case dtype::float32: return "float";
        case dtype::float64: return "double";
        case dtype::fp8e4m3fn: return "kiln::fp8e4m3fn";
        case dtype::fp8e5m2: return "kiln::fp8e5m2";
        case dtype::fp8e4m3fnuz: return "kiln::fp8e4m3fnuz";
        case dtype::fp8e5m2fnuz: return "kiln::fp8e5m2fnuz";
        case dtype::fp8e8m0: return "kiln::fp8e8m0";
        case dtype::int4: case dtype::uint4: case dtype::int2: case dtype::uint2: case dtype::fp4e2m1: return "kiln::u8";
        default: fail("gpu: no device type for ", dtype_name(t), " (generated kernels do not support it yet)");
    }
}

std::string flit(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string r = buf;
    if (r.find_first_of(".e") == std::string::npos) r += ".0";
    return r + "f";
}

std::string dlit(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string r = buf;
    return r.find_first_of(".e") == std::string::npos ? r + ".0" : r;
}

std::string compute_type(dtype t) {
    if (t == dtype::bool_) return "bool";
    if (is_float(t)) return t == dtype::float64 ? "double" : (device_type(t), "float");
    device_type(t);   // rejects what kernels cannot store
    return is_signed(t) ? "kiln::i64" : "kiln::u64";
}

namespace {

// s with its dims in `order`.
shape permuted(const shape& s, const std::vector<std::size_t>& order) {
    std::vector<std::size_t> lens, strides;
    for (auto d : order) {
        lens.push_back(s.lens()[d]);
        strides.push_back(s.strides()[d]);
    }
    return shape(s.type(), lens, strides);
}

// The spec with every operand's dims in the output's memory order, so the output is standard and
// consecutive threads write consecutive elements. Only where that changes nothing else: the body
// does not use i, and every operand is broadcast to the output's lens.
elementwise_spec in_memory_order(const elementwise_spec& spec) {
    const shape& out = spec.output;
    if (!spec.any_order || out.standard() || !out.packed() || is_packed(out.type()) || !spec.divisors.empty())
        return spec;
    for (const auto& s : spec.inputs)
        if (s.lens() != out.lens()) return spec;
    std::vector<std::size_t> order(out.ndim());
    for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return out.strides()[a] > out.strides()[b]; });
    elementwise_spec r = spec;
    r.output = permuted(out, order);
    for (auto& s : r.inputs) s = permuted(s, order);
    return r;
}

// How the vector path reads an operand: one value for everything, one value per vector (constant
// along the rows), one vector load (contiguous along them), or not at all (no vector path).
enum class lane_read { scalar, repeat, vector, none };

bool all_zero(const std::vector<std::size_t>& v) {
    return std::all_of(v.begin(), v.end(), [](auto x) { return x == 0; });
}

// v consecutive elements from an index that is a multiple of v lie in one row of s's last dim
// when that dim's length is a multiple of v; a vector load there is aligned (given an aligned
// pointer) when every other stride is a multiple of v too.
lane_read read_of(const shape& s, bool divided, std::size_t v) {
    if (is_packed(s.type()) || divided) return lane_read::none;
    if (s.elements() == 1 || all_zero(s.strides())) return lane_read::scalar;
    if (s.lens().empty() || s.lens().back() % v != 0) return lane_read::none;
    if (s.strides().back() == 0) return lane_read::repeat;
    if (s.strides().back() != 1) return lane_read::none;
    for (std::size_t d = 0; d + 1 < s.ndim(); ++d)
        if (s.strides()[d] % v != 0) return lane_read::none;
    return lane_read::vector;
}

std::size_t element_bytes(dtype t) { return std::max<std::size_t>(1, dtype_bits(t) / 8); }

// The widest vector (at most 8 elements and 16 bytes of output; an input's, up to 32 bytes, is
// two loads) every operand of the spec (already in memory order) takes; 1 for none. Checking
// bodies (error_slot) keep one element per thread: a bad element skips its store.
std::size_t vector_of(const elementwise_spec& spec) {
    const shape& out = spec.output;
    if (spec.error_slot || is_packed(out.type()) || !out.standard() || out.lens().empty() || !spec.divisors.empty())
        return 1;
    for (std::size_t v : {8, 4, 2}) {
        bool ok = v * element_bytes(out.type()) <= 16 && read_of(out, false, v) == lane_read::vector;
        for (const auto& s : spec.inputs) {
            lane_read r = read_of(s, false, v);
            ok = ok && r != lane_read::none && (r != lane_read::vector || v * element_bytes(s.type()) <= 32);
        }
        if (ok) return v;
    }
    return 1;
}

}  // namespace

std::size_t elementwise_vector(const elementwise_spec& spec) { return vector_of(in_memory_order(spec)); }

kernel_source make_elementwise_kernel(const elementwise_spec& given, const std::string& where) {
    const elementwise_spec spec = in_memory_order(given);
    const shape& out = spec.output;
    const bool packed_out = is_packed(out.type());
    if (packed_out && !out.standard()) fail("gpu: a packed output must be standard, got ", to_string(out), ": ", where);
    std::string params = cat(device_type(out.type()), "* __restrict__ y_ptr");
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        params += cat(", const ", device_type(spec.inputs[i].type()), "* __restrict__ p", i);
    if (spec.error_slot) params += ", kiln::error_slot* err";
    auto divided = [&](std::size_t k) { return k < spec.divisors.size() && !spec.divisors[k].empty(); };
    // Operands laid out as the output (standard, same lens) index with i directly.
    auto offset = [&](const shape& s, const std::string& name, bool div, const std::string& i = "i") -> std::string {
        if (!div && s.standard() && s.lens() == out.lens()) return i;
        if (s.elements() == 1 || all_zero(s.strides())) return "0";
        return cat(name, ".offset(", i, ")");
    };
    std::string code = cat("#include \"kiln_elementwise.cuh\"\n", spec.error_slot ? "#include \"kiln_error.cuh\"\n" : "",
                           "#include \"scalar_helpers.h\"\n", "extern \"C\" __global__ void __launch_bounds__(256) kiln_elementwise(",
                           params, ") {\n");
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        if (offset(spec.inputs[i], "", divided(i)) != "i" && offset(spec.inputs[i], "", divided(i)) != "0")
            code += cat("    constexpr auto L", i, " = ", block_layout_of(spec.inputs[i], divided(i) ? spec.divisors[i] : std::vector<std::size_t>{}), ";\n");
    if (offset(out, "", false) != "i") code += cat("    constexpr auto Ly = ", layout_of(out), ";\n");
    std::string element;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        element += cat("const ", compute_type(spec.inputs[i].type()), " x", i, " = ",
                       load_of(spec.inputs[i].type(), i, offset(spec.inputs[i], cat("L", i), divided(i))), ";\n");
    element += spec.body + "\n";
    if (const std::size_t v = vector_of(spec); v > 1) {
        // v elements a thread (index i0 = a multiple of v) where every vector-read pointer is
        // aligned to its vector; otherwise the one-element loop below.
        const std::string y_vec = cat("kiln::vec<", device_type(out.type()), ", ", v, ">");
        std::string aligned = cat("reinterpret_cast<unsigned long long>(y_ptr) % ", v * element_bytes(out.type()), "ull == 0");
        std::string reads, lanes;
        for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
            const shape& s = spec.inputs[k];
            const std::string t = device_type(s.type()), in = cat("kiln_in", k);
            switch (read_of(s, false, v)) {
                case lane_read::vector:
                    aligned += cat(" && reinterpret_cast<unsigned long long>(p", k, ") % ", v * element_bytes(s.type()), "ull == 0");
                    reads += cat("            const kiln::vec<", t, ", ", v, "> ", in, " = *reinterpret_cast<const kiln::vec<", t,
                                 ", ", v, ">*>(p", k, " + ", offset(s, cat("L", k), false, "i0"), ");\n");
                    lanes += cat("const ", compute_type(s.type()), " x", k, " = kiln::load(", in, ".v[kiln_lane]);\n");
                    break;
                case lane_read::repeat:
                    reads += cat("            const ", t, " ", in, " = p", k, "[", offset(s, cat("L", k), false, "i0"), "];\n");
                    lanes += cat("const ", compute_type(s.type()), " x", k, " = kiln::load(", in, ");\n");
                    break;
                default: lanes += cat("const ", compute_type(s.type()), " x", k, " = ", load_of(s.type(), k, "0"), ";\n");
            }
        }
        code += cat("    if (", aligned, ") {\n",
                    "        for (kiln::index_t w = kiln::global_thread(); w < ", out.elements() / v,
                    "ull; w += kiln::grid_threads()) {\n            const kiln::index_t i0 = w * ", v, "ull;\n", reads,
                    "            ", y_vec, " kiln_out;\n#pragma unroll\n            for (int kiln_lane = 0; kiln_lane < ", v,
                    "; ++kiln_lane) {\nconst kiln::index_t i = i0 + kiln_lane;\n", lanes, spec.body,
                    "\nkiln::store(kiln_out.v[kiln_lane], y);\n            }\n",
                    "            *reinterpret_cast<", y_vec, "*>(y_ptr + i0) = kiln_out;\n        }\n        return;\n    }\n");
    }
    if (!packed_out) {
        code += cat("    for (kiln::index_t i = kiln::global_thread(); i < ", out.elements(),
                    "ull; i += kiln::grid_threads()) {\n", element, "kiln::store(y_ptr[", offset(out, "Ly", false), "], y);\n    }\n}\n");
    } else {
        // One thread per output byte, so no two threads write the same byte.
        std::size_t bits = dtype_bits(out.type()), per = 8 / bits;
        code += cat("    for (kiln::index_t b = kiln::global_thread(); b < ", out.bytes(), "ull; b += kiln::grid_threads()) {\n",
                    "        kiln::u32 byte = 0;\n",
                    "        for (kiln::index_t k = 0; k < ", per, "ull && b * ", per, "ull + k < ", out.elements(), "ull; ++k) {\n",
                    "const kiln::index_t i = b * ", per, "ull + k;\n", element,
                    "byte |= kiln::packed_code(y, ", bits, ") << (k * ", bits, ");\n        }\n",
                    "        y_ptr[b] = static_cast<kiln::u8>(byte);\n    }\n}\n");
    }
    return {"kiln_elementwise", std::move(code), where};
}

std::string checked_index(const std::string& k, const std::string& index, std::size_t n, const std::string& position,
                          const std::string& on_bad) {
    return cat("        const kiln::i64 ", k, " = kiln::checked_index((kiln::i64)", index, ", ", n, "ll, err, ", position,
               ");\n        if (", k, " < 0) ", on_bad, "\n");
}

launch_dims elementwise_launch(std::size_t elements) {
    std::size_t blocks = std::max<std::size_t>(1, (elements + 255) / 256);
    return {static_cast<unsigned>(std::min<std::size_t>(blocks, 1u << 20)), 256};
}

launch_dims elementwise_launch(const elementwise_spec& spec) {
    return elementwise_launch(spec.output.elements() / elementwise_vector(spec));
}

}  // namespace kiln::gpu
