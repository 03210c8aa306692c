// Pointwise regions as generated code: each `pointwise` instruction whose values are float32,
// float16, bfloat16, whole-byte integers or bools (low_precision.hpp) and whose ops print scalar
// expressions (operation::scalar_expr over src/ops/scalar_helpers.h)
// becomes one C++ function, a single pass over memory: the innermost dim vectorised (strides are
// compile-time constants, broadcast inputs stride 0), the outer ones split over the OpenMP pool
// for large tensors. All regions of an executable go into one source file compiled once with the
// system compiler (-O3, AVX2 or AVX-512 as this CPU has them) into a shared library,
// cached on disk by a hash of the source and flags, so a second compile is a cache hit.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unordered_map>

#include "core/error.hpp"
#include "ops/binary.hpp"
#include "ops/convert.hpp"
#include "ops/fused.hpp"
#include "ops/normalization.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/low_precision.hpp"
#include "targets/cpu/scalar_helpers_source.hpp"

namespace kiln {
namespace {

using leaf = pointwise_library::leaf;
using namespace cpu_codegen;

// Outer-index divisor of dim d: the product of the outer dims after d (the inner dim excluded).
std::size_t outer_div(const std::vector<std::size_t>& lens, std::size_t d) {
    std::size_t p = 1;
    for (std::size_t k = d + 1; k + 1 < lens.size(); ++k) p *= lens[k];
    return p;
}

bool only_viewed(const instruction& b) {
    for (auto u : b.outputs())
        if (!u->get_operator().traits().broadcast_view) return false;
    return !b.outputs().empty();
}

// Strides of `s` right-aligned to `out` lens (broadcast dims stride 0).
std::optional<std::vector<std::size_t>> strides_at(const shape& s, const std::vector<std::size_t>& out) {
    if (s.ndim() > out.size()) return std::nullopt;
    std::vector<std::size_t> r(out.size(), 0);
    std::size_t lead = out.size() - s.ndim();
    for (std::size_t d = 0; d < s.ndim(); ++d) {
        if (s.lens()[d] == out[lead + d]) r[lead + d] = s.lens()[d] == 1 ? 0 : s.strides()[d];
        else if (s.lens()[d] != 1) return std::nullopt;
    }
    return r;
}

// A convert the generated code does as the reference: between float types (a rounding), and from
// integers and bools to anything (an integer wraps to a narrower one, a bool is 0 or 1, a number
// becomes a bool as != 0). From a float to an integer C++ leaves out-of-range values undefined:
// those stay on the reference.
std::optional<std::string> convert_value(dtype from, dtype to, const std::string& v) {
    if (float_kind(from) && !float_kind(to)) return std::nullopt;
    if (to == dtype::bool_) return "(" + v + " != 0)";
    return float_kind(to) ? "float(" + v + ")" : v;
}

// Integer division, modulus and power raise on a zero divisor or a negative exponent in ref; the
// scalar helpers return 0 there (scalar_helpers.h), so such a region stays on the reference.
bool raises_on_integers(const instruction& b) {
    const operation& op = b.get_operator();
    return integer_kind(b.get_shape().type()) && (op.get_if<ops::div>() || op.get_if<ops::mod>() || op.get_if<ops::pow>());
}

// The function computing one region; empty when it cannot be generated.
std::string generate(const instruction& ins, const std::string& fn, std::vector<leaf>& leaves) {
    const module& body = *ins.module_inputs()[0];
    const auto& out = ins.get_shape().lens();
    auto params = body.parameters();
    std::unordered_map<const instruction*, std::string> names;
    // An op's float16/bfloat16 result before its rounding: storing it rounds the same
    // (rounding twice to one type is rounding once), so the returned value's rounding is left
    // to its store (a float16 rounding costs as much as its store).
    std::unordered_map<const instruction*, std::string> unrounded;
    std::string loads, code;
    for (const auto& b : body) {
        if (b.is_return()) {
            if (b.inputs().size() != 1) return "";
            const instruction* r = &*b.inputs()[0];
            code += "            y[o * INNER + i] = " +
                    store(ins.get_shape().type(), unrounded.contains(r) ? unrounded.at(r) : names.at(r)) + ";\n";
            break;
        }
        if (!generated_type(b.get_shape().type()) || b.get_shape().dynamic() || raises_on_integers(b)) return "";
        if ((b.is_param() || b.is_literal()) && only_viewed(b)) continue;   // read through its views
        std::string name = "v" + std::to_string(names.size());
        bool view = b.get_operator().traits().broadcast_view;
        if (b.is_param() || b.is_literal() || view) {
            leaf l;
            const shape* mem = &b.get_shape();
            if (b.is_param()) {
                std::size_t i = 0;
                while (&*params[i] != &b) ++i;
                l.arg = static_cast<int>(i);
                mem = &ins.inputs()[i]->get_shape();
            } else if (b.is_literal()) {
                l.constant = &b.get_literal().get_argument();
            } else {
                const instruction& root = *b.inputs()[0];
                if (!root.is_param() && !root.is_literal()) return "";
                if (root.is_param()) {
                    std::size_t i = 0;
                    while (&*params[i] != &root) ++i;
                    if (!ins.inputs()[i]->get_shape().standard()) return "";   // view strides assume standard
                    l.arg = static_cast<int>(i);
                } else {
                    l.constant = &root.get_literal().get_argument();
                }
            }
            auto st = strides_at(*mem, out);
            if (!st) return "";
            l.strides = *st;
            l.type = mem->type();
            std::size_t k = leaves.size();
            leaves.push_back(l);
            std::string base = "base" + std::to_string(k);
            loads += "        long " + base + " = 0;\n";
            for (std::size_t d = 0; d + 1 < out.size(); ++d)
                if (l.strides[d])
                    loads += "        " + base + " += (o / " + std::to_string(outer_div(out, d)) + " % " +
                             std::to_string(out[d]) + ") * " + std::to_string(l.strides[d]) + "L;\n";
            std::string inner = out.empty() ? "0" : std::to_string(l.strides.back());
            code += "            const " + value_type(l.type) + " " + name + " = " +
                    load(l.type, "in" + std::to_string(k) + "[" + base + " + i * " + inner + "]") + ";\n";
            names[&b] = name;
            continue;
        }
        std::vector<std::string> args;
        for (auto in : b.inputs()) args.push_back(names.at(&*in));
        std::optional<std::string> e;
        dtype t = b.get_shape().type();
        if (const auto* c = b.get_operator().get_if<ops::convert>()) {
            if (b.inputs().size() == 1) e = convert_value(b.inputs()[0]->get_shape().type(), c->target_type, args[0]);
        } else {
            e = b.get_operator().scalar_expr(args);
        }
        if (!e) return "";
        std::string value = float_kind(t) ? "float(" + *e + ")" : *e;
        if (t == dtype::float16 || t == dtype::bfloat16) {   // named before its rounding
            code += "            const " + value_type(t) + " " + name + "u = " + value + ";\n";
            unrounded[&b] = name + "u";
            value = name + "u";
        }
        code += "            const " + value_type(t) + " " + name + " = " + round_to(t, value) + ";\n";
        names[&b] = name;
    }
    std::size_t inner = out.empty() ? 1 : out.back(), total = ins.get_shape().elements();
    std::string src = "extern \"C\" void " + fn + "(const void* const* in_, void* out_) {\n";
    for (std::size_t k = 0; k < leaves.size(); ++k) {
        std::string t = c_type(leaves[k].type);
        src += "    const " + t + "* in" + std::to_string(k) + " = static_cast<const " + t + "*>(in_[" + std::to_string(k) + "]);\n";
    }
    std::string yt = c_type(ins.get_shape().type());
    src += "    " + yt + "* y = static_cast<" + yt + "*>(out_);\n    const long INNER = " + std::to_string(inner) + ";\n";
    if (total >= 65536) src += "#pragma omp parallel for\n";
    src += "    for (long o = 0; o < " + std::to_string(total / std::max<std::size_t>(inner, 1)) + "; ++o) {\n" + loads;
    src += "#pragma omp simd\n        for (long i = 0; i < INNER; ++i) {\n" + code + "        }\n    }\n}\n";
    return src;
}

// rms_norm over dims axis..end of a standard float32, float16 or bfloat16 x (the low types loaded
// as float, the sum of squares in float, the result rounded once as ref rounds it): per row, one vectorised pass for the sum
// of squares and one for x * inv * scale (the row in cache between them); rows split over the
// pool for large tensors. The scale may broadcast over the rows (its offset computed per row) but
// must be contiguous or constant along the row.
std::string generate_rms_norm(const instruction& ins, const std::string& fn, std::vector<leaf>& leaves) {
    const auto* op = ins.get_operator().get_if<ops::rms_norm>();
    const shape& x = ins.inputs()[0]->get_shape();
    const shape& sc = ins.inputs()[1]->get_shape();
    if (!op || !x.standard() || !float_kind(x.type()) || !float_kind(sc.type()) || x.ndim() == 0) return "";
    const auto& out = x.lens();
    auto axis = static_cast<std::size_t>(op->axis < 0 ? op->axis + static_cast<std::int64_t>(x.ndim()) : op->axis);
    if (axis >= x.ndim()) return "";
    auto st = strides_at(sc, out);
    if (!st) return "";
    std::size_t row = 1, rows = 1;
    for (std::size_t d = axis; d < out.size(); ++d) row *= out[d];
    for (std::size_t d = 0; d < axis; ++d) rows *= out[d];
    bool contiguous = true, constant = true;
    for (std::size_t d = out.size(), expect = 1; d-- > axis;) {
        if ((*st)[d] != (out[d] == 1 ? (*st)[d] : expect)) contiguous = false;
        if ((*st)[d] != 0) constant = false;
        expect *= out[d];
    }
    if (!contiguous && !constant) return "";
    leaves.push_back({0, nullptr, {}, x.type()});
    leaves.push_back({1, nullptr, *st, sc.type()});
    std::string base = "        long sb = 0;\n";
    for (std::size_t d = 0; d < axis; ++d) {
        std::size_t div = 1;
        for (std::size_t k = d + 1; k < axis; ++k) div *= out[k];
        if ((*st)[d])
            base += "        sb += (r / " + std::to_string(div) + " % " + std::to_string(out[d]) + ") * " +
                    std::to_string((*st)[d]) + "L;\n";
    }
    char eps[32];
    std::snprintf(eps, sizeof eps, "%.9g", static_cast<double>(op->epsilon));
    std::string R = std::to_string(row);
    std::string src = "extern \"C\" void " + fn + "(const void* const* in_, void* out_) {\n";
    std::string xt = c_type(x.type()), st_ = c_type(sc.type()), yt = c_type(ins.get_shape().type());
    src += "    const " + xt + "* x = static_cast<const " + xt + "*>(in_[0]);\n";
    src += "    const " + st_ + "* s = static_cast<const " + st_ + "*>(in_[1]);\n";
    src += "    " + yt + "* y = static_cast<" + yt + "*>(out_);\n";
    if (rows * row >= 65536 && rows > 1) src += "#pragma omp parallel for\n";
    src += "    for (long r = 0; r < " + std::to_string(rows) + "; ++r) {\n" + base;
    src += "        const " + xt + "* xr = x + r * " + R + "L;\n        " + yt + "* yr = y + r * " + R + "L;\n";
    src += "        float ss = 0;\n#pragma omp simd reduction(+ : ss)\n";
    src += "        for (long i = 0; i < " + R + "; ++i) { const float v = " + load(x.type(), "xr[i]") + "; ss += v * v; }\n";
    src += "        const float inv = 1.0f / sqrtf(ss / " + R + ".0f + " + eps + "f);\n";
    std::string scale = load(sc.type(), "s[sb" + (constant ? std::string("") : " + i") + "]");
    src += "#pragma omp simd\n        for (long i = 0; i < " + R + "; ++i) yr[i] = " +
           store(ins.get_shape().type(), load(x.type(), "xr[i]") + " * inv * " + scale) + ";\n";
    src += "    }\n}\n";
    return src;
}

}  // namespace

// float16 as its bits, converted by integer and float operations that GCC vectorises: GCC 12
// vectorises no _Float16 conversion on a CPU without AVX512-FP16 (F16C's vcvtph2ps is scalar
// there), and a region that calls libm's vector functions (vector_math below) would stay scalar
// on the conversions alone. Each is exact (tests/targets/cpu_low_precision_test.cpp; all 2^32
// floats checked against F16C when written): a load rebases the exponent by a multiply by 2^112,
// which also normalises subnormals; a store and a rounding round to nearest even, subnormal
// results through an add of 0.5 (whose ulp is float16's smallest subnormal); NaN stays NaN
// (quieted, payload kept as F16C keeps it), overflow goes to infinity.
const char* const cpu_codegen::low_precision_helpers = R"(
static inline float kiln_ld_bf16(unsigned short b) { unsigned u = (unsigned)b << 16; float f; __builtin_memcpy(&f, &u, 4); return f; }
static inline unsigned short kiln_st_bf16(float f) {
    unsigned u; __builtin_memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
static inline float kiln_rd_bf16(float f) { return kiln_ld_bf16(kiln_st_bf16(f)); }
static inline float kiln_ld_f16(unsigned short h) {
    unsigned em = h & 0x7fffu, u = em << 13, r;
    float f; __builtin_memcpy(&f, &u, 4);
    f *= 0x1p112f;
    __builtin_memcpy(&r, &f, 4);
    r = em >= 0x7c00u ? (u | 0x7f800000u) : r;
    r |= (unsigned)(h & 0x8000u) << 16;
    __builtin_memcpy(&f, &r, 4);
    return f;
}
static inline unsigned short kiln_st_f16(float f) {
    unsigned u, a, sb; __builtin_memcpy(&u, &f, 4);
    a = u & 0x7fffffffu;
    float af; __builtin_memcpy(&af, &a, 4);
    float sub = af + 0.5f; __builtin_memcpy(&sb, &sub, 4);
    unsigned normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;   // exponent rebased by (15 - 127) << 23
    unsigned nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    unsigned r = a > 0x7f800000u ? nan : a >= 0x477ff000u ? 0x7c00u : a < 0x38800000u ? sb - 0x3f000000u : normal;
    return (unsigned short)(r | ((u >> 16) & 0x8000u));
}
static inline float kiln_rd_f16(float f) {
    unsigned u, a, sb; __builtin_memcpy(&u, &f, 4);
    a = u & 0x7fffffffu;
    float af; __builtin_memcpy(&af, &a, 4);
    float sub = (af + 0.5f) - 0.5f; __builtin_memcpy(&sb, &sub, 4);
    unsigned normal = (a + 0xfffu + ((a >> 13) & 1u)) & ~0x1fffu;
    unsigned r = a > 0x7f800000u ? a : a >= 0x477ff000u ? 0x7f800000u : a < 0x38800000u ? sb : normal;
    r |= u & 0x80000000u;
    __builtin_memcpy(&f, &r, 4);
    return f;
}
)";

// The float functions of libm that the scalar helpers call, declared with vector variants so that
// GCC's `omp simd` loops call glibc's libmvec (_ZGVeN16v_expf: AVX-512, 16 lanes; _ZGVdN8v_expf
// under -march=x86-64-v3) instead of keeping the loop scalar, as it does without -ffast-math
// (glibc's <math.h> declares them only under __FAST_MATH__). Not -ffast-math itself: the
// NaN/infinity semantics of the helpers must hold. libmvec's float variants against libm in
// double, every 37th float bit pattern: at most 4.0 ulp (erff; expf 2.5, logf 3.9, tanf 3.8,
// tanhf 1.4; powf 0.6 on 40M pairs), within float32's test tolerance (rtol 1e-5, ~80 ulp). x86_64 only: the variants'
// names follow the x86_64 vector ABI and libmvec exists there on every glibc since 2.22.
const char* const cpu_codegen::vector_math = R"(
#if defined(__x86_64__)
extern "C" {
#define KILN_VECTOR(f) _Pragma("omp declare simd notinbranch") float f(float);
KILN_VECTOR(expf) KILN_VECTOR(logf) KILN_VECTOR(sinf) KILN_VECTOR(cosf) KILN_VECTOR(tanf) KILN_VECTOR(asinf)
KILN_VECTOR(acosf) KILN_VECTOR(atanf) KILN_VECTOR(sinhf) KILN_VECTOR(coshf) KILN_VECTOR(tanhf) KILN_VECTOR(asinhf)
KILN_VECTOR(acoshf) KILN_VECTOR(atanhf) KILN_VECTOR(erff) KILN_VECTOR(log1pf) KILN_VECTOR(expm1f)
#undef KILN_VECTOR
#pragma omp declare simd notinbranch
float powf(float, float);
}
#endif
)";

pointwise_library::~pointwise_library() {
    if (handle_) dlclose(handle_);
}

cpu_kernel pointwise_library::add(const instruction& ins) {
    bool pointwise = ins.get_operator().get_if<ops::pointwise>() != nullptr;
    bool reduce = ins.get_operator().get_if<ops::fused_reduce>() != nullptr;
    bool rms = ins.get_operator().get_if<ops::rms_norm>() != nullptr && ins.inputs().size() == 2;
    if ((!pointwise && !reduce && !rms) || !generated_type(ins.get_shape().type()) || !ins.get_shape().standard() ||
        ins.get_shape().elements() == 0 || ins.get_shape().dynamic())
        return {};
    for (auto in : ins.inputs())
        if (in->get_shape().dynamic() || in->get_shape().is_tuple() || in->get_shape().elements() == 0) return {};
    std::string fn = "kiln_region_" + std::to_string(regions_.size());
    region r;
    std::string src = pointwise ? generate(ins, fn, r.leaves)
                      : reduce  ? generate_fused_reduce(ins, fn, r.leaves)
                                : generate_rms_norm(ins, fn, r.leaves);
    if (src.empty()) return {};
    source_ += src;
    r.fn = fn;
    regions_.push_back(std::move(r));
    auto* self = this;
    std::size_t index = regions_.size() - 1;
    return {[self, index](std::span<const argument> args, const argument& out) { self->run(index, args, out); },
            "generated code"};
}

void pointwise_library::run(std::size_t index, std::span<const argument> args, const argument& out) {
    region& r = regions_[index];
    for (std::size_t k = 0; k < r.leaves.size(); ++k)
        r.pointers[k] = r.leaves[k].arg >= 0 ? args[r.leaves[k].arg].data() : r.leaves[k].constant->data();
    r.call(r.pointers.data(), out.data());
}

namespace {
// The instruction set the generated code may use, from the features this process sees when it
// runs (so a run under valgrind, whose CPU has no AVX-512, gets AVX2 code); the flags are part of
// the cache key.
std::string isa_flags() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return "-march=x86-64-v4 -mtune=native";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "-march=x86-64-v3 -mtune=native";
    return "-mtune=native";
#else
    return "-mcpu=native";
#endif
}
// The libraries the generated code links: libmvec for the vector variants vector_math declares.
std::string libs() {
#if defined(__x86_64__)
    return " -lmvec -lm";
#else
    return "";
#endif
}
}  // namespace

// Compiles every region added into one library (or finds it in the cache) and binds them.
bool pointwise_library::build() {
    if (regions_.empty()) return false;
    // -fno-math-errno: nothing reads errno, and with it GCC wraps some libm calls (powf) in
    // control flow that keeps the loop scalar; no value changes (unlike -ffast-math).
    std::string flags = "-std=c++17 -O3 " + isa_flags() + " -fno-math-errno -fopenmp -shared -fPIC";
    std::string src = std::string(scalar_helpers_source) + cpu_codegen::vector_math + cpu_codegen::low_precision_helpers + "\n" + source_;
    std::size_t h = std::hash<std::string>{}(src + flags);
    const char* home = std::getenv("HOME");
    std::filesystem::path dir = std::getenv("KILN_CACHE_DIR") ? std::getenv("KILN_CACHE_DIR")
                                : std::filesystem::path(home ? home : "/tmp") / ".cache" / "kiln" / "cpu";
    std::filesystem::create_directories(dir);
    auto lib = dir / (std::to_string(h) + ".so");
    if (!std::filesystem::exists(lib)) {
        auto tmp = dir / (std::to_string(h) + "." + std::to_string(getpid()) + ".cpp");
        std::ofstream(tmp) << src;
        auto partial = dir / (std::to_string(h) + "." + std::to_string(getpid()) + ".so");
        std::string cmd = "c++ " + flags + " -o '" + partial.string() + "' '" + tmp.string() + "'" + libs() + " 2>'" + tmp.string() + ".log'";
        int rc = std::system(cmd.c_str());
        if (rc != 0) {
            std::ifstream log(tmp.string() + ".log");
            std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
            fail("cpu: compiling the generated pointwise code failed (", cmd, "):\n", text.substr(0, 2000));
        }
        std::filesystem::remove(tmp.string() + ".log");
        std::filesystem::remove(tmp);
        std::filesystem::rename(partial, lib);   // atomic: a concurrent compile sees all or nothing
    } else {
        ++cache_hits_;
    }
    handle_ = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) fail("cpu: cannot load ", lib.string(), ": ", dlerror());
    for (auto& r : regions_) {
        r.call = reinterpret_cast<void (*)(const void* const*, void*)>(dlsym(handle_, r.fn.c_str()));
        if (!r.call) fail("cpu: ", r.fn, " missing from ", lib.string());
        r.pointers.resize(r.leaves.size());
    }
    return true;
}

}  // namespace kiln
