// unique (ops/unique.cpp) on the GPU, as ref computes it: the distinct slices along the axis
// (sorted ascending, lexicographically with NaN above numbers and equal to NaN, or in order of
// first occurrence), each slice's first occurrence, the inverse indices and the counts.
// Two kernels, one thread per slice, over the input made standard:
//  - the first finds each slice's first equal slice (its representative) and counts the slices
//    that are their own representative, the distinct ones;
//  - the host reads that count back (one synchronisation: it is the result's length);
//  - the second gives each representative its place (sorted: the distinct slices that compare
//    below it; unsorted: the distinct slices before it) and writes the value slice, the first
//    index and the count there, and each slice's inverse index.
// Each thread compares its slice with every other: quadratic in the axis length, correct, not fast.
#include "core/error.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {
namespace {

// The slice geometry of a standard input: O outer rows, L slices along the axis, K inner elements.
struct slices {
    std::size_t outer = 1, len = 0, inner = 1;
};

slices slices_of(const shape& x, std::size_t axis) {
    slices s;
    for (std::size_t d = 0; d < x.ndim(); ++d) {
        if (d < axis) s.outer *= x.lens()[d];
        if (d > axis) s.inner *= x.lens()[d];
    }
    s.len = x.lens()[axis];
    return s;
}

// Three-way comparison of slices i and j as ref's `compare` (NaN above every number, equal to
// NaN; x != x is NaN's test and false for integers and bool).
std::string frame(dtype t, const slices& s) {
    return cat("#include \"kiln_elementwise.cuh\"\n",
               "typedef ", device_type(t), " T;\n",
               "constexpr kiln::i64 O = ", s.outer, "ll, L = ", s.len, "ll, K = ", s.inner, "ll;\n",
               "__device__ int compare(const T* x, kiln::i64 i, kiln::i64 j) {\n",
               "    for (kiln::i64 o = 0; o < O; ++o)\n",
               "        for (kiln::i64 k = 0; k < K; ++k) {\n",
               "            auto a = kiln::load(x[(o * L + i) * K + k]);\n",
               "            auto b = kiln::load(x[(o * L + j) * K + k]);\n",
               "            bool na = a != a, nb = b != b;\n",
               "            if (na || nb) { if (na != nb) return na ? 1 : -1; continue; }\n",
               "            if (a < b) return -1;\n",
               "            if (b < a) return 1;\n",
               "        }\n",
               "    return 0;\n}\n");
}

std::size_t axis_of(const instruction& ins, std::size_t ndim) {
    std::int64_t a = ins.get_operator().attributes().at("axis").as_int();
    return static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(ndim) : a);
}

argument run_unique(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    std::string where = cat(ins.name(), ins.source_name().empty() ? "" : cat(" (node '", ins.source_name(), "')"));
    argument x = r.standard(ins, args[0]);
    const shape& xs = x.get_shape();
    bool sorted = ins.get_operator().attributes().at("sorted").as_bool();
    slices s = slices_of(xs, axis_of(ins, xs.ndim()));
    auto ints = [](std::size_t n) { return shape(dtype::int64, std::vector<std::size_t>{n}); };
    argument rep = r.allocate(ints(s.len));
    argument groups = r.allocate(shape(dtype::uint64, std::vector<std::size_t>{1}));
    KILN_GPU_CHECK(cudaMemsetAsync(groups.data(), 0, 8, r.stream()), cat("clearing the count of ", where));
    void* xp = x.data();
    void* rp = rep.data();
    void* gp = groups.data();
    launch_dims d = elementwise_launch(s.len);
    if (s.len > 0) {
        void* a[] = {&rp, &gp, &xp};
        launch_kernel(r.kernel(unique_first_kernel(xs.type(), s.outer, s.len, s.inner, where)), d.grid, d.block, a,
                      r.stream(), where);
    }
    auto n = static_cast<std::size_t>(r.read_scalar(groups, cat("reading the count of ", where)));
    auto lens = xs.lens();
    lens[axis_of(ins, xs.ndim())] = n;
    argument values = r.allocate(shape(xs.type(), lens));
    argument first = r.allocate(ints(n)), inverse = r.allocate(ints(s.len)), counts = r.allocate(ints(n));
    if (s.len > 0) {
        void* vp = values.data();
        void* fp = first.data();
        void* ip = inverse.data();
        void* cp = counts.data();
        unsigned long long un = n;
        void* a[] = {&vp, &fp, &ip, &cp, &rp, &xp, &un};
        launch_kernel(r.kernel(unique_write_kernel(xs.type(), s.outer, s.len, s.inner, sorted, where)), d.grid,
                      d.block, a, r.stream(), where);
    }
    return argument(std::vector<argument>{values, first, inverse, counts});
}

const gpu_dynamic_op_registrar unique_runs{{
    "unique (representatives counted, the count read back, then written)",
    [](const instruction& ins) { return ins.name() == "unique"; },
    run_unique}};

}  // namespace

kernel_source unique_first_kernel(dtype t, std::size_t outer, std::size_t len, std::size_t inner,
                                  const std::string& where) {
    std::string code = cat(frame(t, {outer, len, inner}),
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_unique_first(",
                           "kiln::i64* __restrict__ rep, unsigned long long* groups, const T* __restrict__ x) {\n",
                           "    for (kiln::i64 i = kiln::global_thread(); i < L; i += kiln::grid_threads()) {\n",
                           "        kiln::i64 j = 0;\n",
                           "        while (compare(x, j, i) != 0) ++j;\n",
                           "        rep[i] = j;\n",
                           "        if (j == i) atomicAdd(groups, 1ull);\n",
                           "    }\n}\n");
    return {"kiln_unique_first", code, where};
}

kernel_source unique_write_kernel(dtype t, std::size_t outer, std::size_t len, std::size_t inner, bool sorted,
                                  const std::string& where) {
    // The place of the distinct slice r among the distinct slices.
    std::string place = sorted ? "for (kiln::i64 j = 0; j < L; ++j) g += rep[j] == j && compare(x, j, r) < 0;\n"
                               : "for (kiln::i64 j = 0; j < r; ++j) g += rep[j] == j;\n";
    std::string code = cat(frame(t, {outer, len, inner}),
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_unique_write(",
                           "T* __restrict__ values, kiln::i64* __restrict__ first, kiln::i64* __restrict__ inverse, ",
                           "kiln::i64* __restrict__ counts, const kiln::i64* __restrict__ rep, const T* __restrict__ x, ",
                           "unsigned long long n) {\n",
                           "    for (kiln::i64 i = kiln::global_thread(); i < L; i += kiln::grid_threads()) {\n",
                           "        kiln::i64 r = rep[i], g = 0;\n",
                           "        ", place,
                           "        inverse[i] = g;\n",
                           "        if (r != i) continue;\n",
                           "        first[g] = i;\n",
                           "        kiln::i64 c = 0;\n",
                           "        for (kiln::i64 j = i; j < L; ++j) c += rep[j] == i;\n",
                           "        counts[g] = c;\n",
                           "        for (kiln::i64 o = 0; o < O; ++o)\n",
                           "            for (kiln::i64 k = 0; k < K; ++k)\n",
                           "                values[(o * (kiln::i64)n + g) * K + k] = x[(o * L + i) * K + k];\n",
                           "    }\n}\n");
    return {"kiln_unique_write", code, where};
}

}  // namespace kiln::gpu
