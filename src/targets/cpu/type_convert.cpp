// tensor_copy: reorders that convert float16/bfloat16 <-> float32 on F16C (8 elements an
// instruction) or a shift (bfloat16), exact both ways (round to nearest even) as oneDNN's and ref's
// conversions; to float16/bfloat16 through numeric_bulk's loops, so a NaN becomes the quiet NaN of
// its sign exactly as ref makes it; layout changes stay on oneDNN's jitted reorders.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "core/numeric_bulk.hpp"
#include "targets/cpu/onednn_util.hpp"
#include "targets/cpu/type_convert.hpp"

namespace kiln {
namespace {

constexpr std::size_t parallel_elements = 1 << 16;   // below this the pool's wake-up costs more

__attribute__((target("avx2,f16c"))) void f16_to_f32_block(const std::uint16_t* s, float* d, std::size_t n) {
    for (std::size_t i = 0; i < n / 8 * 8; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
    for (std::size_t i = n / 8 * 8; i < n; ++i) d[i] = _cvtsh_ss(s[i]);
}

// The vector code lives in the blocks: clang outlines an OpenMP loop's body into a function
// without the caller's target attribute, where AVX intrinsics do not compile.
template <class From, class To>
void in_blocks(const From* s, To* d, std::size_t n, void (*block)(const From*, To*, std::size_t)) {
    constexpr std::size_t chunk = 1 << 13;
#pragma omp parallel for if (n >= parallel_elements)
    for (std::size_t i = 0; i < n; i += chunk) block(s + i, d + i, std::min(chunk, n - i));
}

void f16_to_f32(const std::uint16_t* s, float* d, std::size_t n) { in_blocks(s, d, n, f16_to_f32_block); }
void f32_to_f16(const float* s, std::uint16_t* d, std::size_t n) {
    in_blocks(s, d, n, +[](const float* x, std::uint16_t* y, std::size_t k) { floats_to_half(x, y, k); });
}
void f32_to_bf16(const float* s, std::uint16_t* d, std::size_t n) {
    in_blocks(s, d, n, +[](const float* x, std::uint16_t* y, std::size_t k) { floats_to_bfloat16(x, y, k); });
}

// bfloat16 is the high half of a float: this loop vectorises as it is.
void bf16_to_f32(const std::uint16_t* s, float* d, std::size_t n) {
#pragma omp parallel for simd if (n >= parallel_elements)
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t u = static_cast<std::uint32_t>(s[i]) << 16;
        std::memcpy(d + i, &u, 4);
    }
}

bool has_f16c() {
    return best_simd_level() != simd_level::scalar;   // AVX2 with F16C, or AVX-512
}

// Whether convert_elements takes from -> to on this CPU (float16 needs F16C).
bool fast_convert(dtype from, dtype to) {
    bool f32 = from == dtype::float32, g32 = to == dtype::float32;
    bool low = from == dtype::float16 || from == dtype::bfloat16 || to == dtype::float16 || to == dtype::bfloat16;
    if (f32 == g32 || !low) return false;
    return (from != dtype::float16 && to != dtype::float16) || has_f16c();
}

void convert_elements(const void* src, dtype from, void* dst, dtype to, std::size_t n) {
    const auto* s16 = static_cast<const std::uint16_t*>(src);
    auto* d16 = static_cast<std::uint16_t*>(dst);
    if (from == dtype::float16) f16_to_f32(s16, static_cast<float*>(dst), n);
    else if (from == dtype::bfloat16) bf16_to_f32(s16, static_cast<float*>(dst), n);
    else if (to == dtype::float16) f32_to_f16(static_cast<const float*>(src), d16, n);
    else f32_to_bf16(static_cast<const float*>(src), d16, n);
}

using dnnl::memory;

dtype kiln_type(memory::data_type t) {
    switch (t) {
    case memory::data_type::f16: return dtype::float16;
    case memory::data_type::bf16: return dtype::bfloat16;
    default: return dtype::float32;
    }
}

// A plain layout with no gaps (strides a permutation of a dense one), so its bytes are its
// elements in some order.
bool dense(const memory::desc& d) {
    if (d.get_format_kind() != memory::format_kind::blocked || d.get_inner_nblks() != 0) return false;
    std::size_t n = 1;
    for (auto x : d.get_dims()) n *= static_cast<std::size_t>(x);
    return d.get_size() == n * memory::data_type_size(d.get_data_type());
}

// The standard (row-major) layout of d's dims, type t.
memory::desc standard(const memory::desc& d, memory::data_type t) {
    auto dims = d.get_dims();
    memory::dims st(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) st[i - 1] = st[i] * dims[i];
    return memory::desc(dims, t, st);
}

// Float16 as bfloat16 for a reorder that only moves elements: the same bits, on the jitted copy.
memory::desc as_moved(const memory::desc& d) {
    if (d.get_data_type() != memory::data_type::f16) return d;
    if (d.get_format_kind() != memory::format_kind::blocked || d.get_inner_nblks() != 0) return d;
    return memory::desc(d.get_dims(), memory::data_type::bf16, d.get_strides());
}

}  // namespace

tensor_copy::stage tensor_copy::layout_change(const memory::desc& from, const memory::desc& to, const dnnl::engine& eng) {
    memory::desc f = as_moved(from), t = as_moved(to);
    if (f.get_data_type() != t.get_data_type()) f = from, t = to;   // one side blocked: no aliasing
    dnnl::reorder::primitive_desc pd(eng, f, eng, t, user_scratchpad());
    memory scratch;
    if (pd.scratchpad_desc().get_size() > 0) scratch = memory(pd.scratchpad_desc(), eng);
    return {dnnl::reorder(pd), memory(f, eng, nullptr), memory(t, eng, nullptr), scratch};
}

tensor_copy::tensor_copy(const memory& from, const memory& to) {
    const memory::desc& fd = from.get_desc();
    const memory::desc& td = to.get_desc();
    auto eng = from.get_engine();
    from_type = kiln_type(fd.get_data_type()), to_type = kiln_type(td.get_data_type());
    if (fd.get_data_type() == td.get_data_type() || !fast_convert(from_type, to_type)) {
        whole = layout_change(fd, td, eng);
        return;
    }
    elements = 1;
    for (auto x : fd.get_dims()) elements *= static_cast<std::size_t>(x);
    // The conversion runs between two dense buffers of one layout: the source's own when it is
    // dense, else the standard one; the target's own when it is dense and in that layout.
    memory::desc a = dense(fd) ? fd : standard(fd, fd.get_data_type());
    memory::desc b(a.get_dims(), td.get_data_type(), a.get_strides());
    if (a != fd) {
        before = layout_change(fd, a, eng);
        mid_from = memory(a, eng);
    }
    if (b != td) {
        after = layout_change(b, td, eng);
        mid_to = memory(b, eng);
    }
}

void tensor_copy::run(stage& st, dnnl::stream& s, void* from, void* to) {
    st.from.set_data_handle(from);
    st.to.set_data_handle(to);
    std::unordered_map<int, memory> args{{DNNL_ARG_FROM, st.from}, {DNNL_ARG_TO, st.to}};
    if (st.scratch) args[DNNL_ARG_SCRATCHPAD] = st.scratch;
    st.r.execute(s, args);
}

void tensor_copy::execute(dnnl::stream& s, const memory& from, const memory& to) {
    if (whole) {
        run(*whole, s, from.get_data_handle(), to.get_data_handle());
        return;
    }
    void* src = from.get_data_handle();
    if (before) {
        run(*before, s, src, mid_from.get_data_handle());
        src = mid_from.get_data_handle();
    }
    s.wait();   // the conversion runs on this thread: what the stream wrote must be there
    void* dst = after ? mid_to.get_data_handle() : to.get_data_handle();
    convert_elements(src, from_type, dst, to_type, elements);
    if (after) run(*after, s, dst, to.get_data_handle());
}

}  // namespace kiln
