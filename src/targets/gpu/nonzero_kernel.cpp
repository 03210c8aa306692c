// nonzero (ops/generate.hpp) on the GPU: a kernel counts the nonzero elements (NaN counts, as in
// ref; each thread its share, one atomic add per thread), the host reads the count back (one
// synchronisation: the count is the result's shape), then one thread writes the multi-indices in
// row-major order. The write walks the input once, sequentially: correct, not fast.
#include <numeric>

#include "core/error.hpp"
#include "ops/generate.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/elementwise.hpp"
#include "targets/gpu/gpu_error.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

std::string frame(const shape& x) {
    std::vector<std::size_t> dims(x.ndim());
    std::iota(dims.begin(), dims.end(), std::size_t{0});
    return cat("#include \"kiln_elementwise.cuh\"\n",
               "constexpr auto X = ", layout_of(x, dims), ";\n",
               "constexpr kiln::index_t N = ", x.elements(), "ull;\n",
               "template <class T> __device__ __forceinline__ bool nonzero(const T& v) { return kiln::load(v) != 0; }\n");
}

argument run_nonzero(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const shape& x = args[0].get_shape();
    std::string where = cat(ins.name(), ins.source_name().empty() ? "" : cat(" (node '", ins.source_name(), "')"));
    argument count = r.allocate(shape(dtype::uint64, std::vector<std::size_t>{1}));
    KILN_GPU_CHECK(cudaMemsetAsync(count.data(), 0, 8, r.stream()), cat("clearing the count of ", where));
    void* cp = count.data();
    void* xp = args[0].data();
    if (x.elements() > 0) {
        void* a[] = {&cp, &xp};
        launch_dims d = elementwise_launch(x.elements());
        launch_kernel(r.kernel(nonzero_count_kernel(x, where)), d.grid, d.block, a, r.stream(), where);
    }
    auto n = static_cast<std::size_t>(r.read_scalar(count, cat("reading the count of ", where)));
    argument y = r.allocate(shape(dtype::int64, std::vector<std::size_t>{x.ndim(), n}));
    if (n > 0 && x.ndim() > 0) {
        void* yp = y.data();
        unsigned long long cn = n;
        void* a[] = {&yp, &xp, &cn};
        launch_kernel(r.kernel(nonzero_write_kernel(x, where)), 1, 1, a, r.stream(), where);
    }
    return y;
}

const gpu_dynamic_op_registrar nonzero_runs{{
    "nonzero (count, read back, then write)",
    [](const instruction& ins) { return ins.get_operator().get_if<ops::nonzero>() != nullptr; },
    run_nonzero}};

}  // namespace

kernel_source nonzero_count_kernel(const shape& x, const std::string& where) {
    std::string code = cat(frame(x),
                           "extern \"C\" __global__ void __launch_bounds__(256) kiln_nonzero_count(",
                           "unsigned long long* count, const ", device_type(x.type()), "* __restrict__ x) {\n",
                           "    unsigned long long n = 0;\n",
                           "    for (kiln::index_t i = kiln::global_thread(); i < N; i += kiln::grid_threads())\n",
                           "        n += nonzero(x[X.offset(i)]);\n",
                           "    if (n) atomicAdd(count, n);\n}\n");
    return {"kiln_nonzero_count", code, where};
}

kernel_source nonzero_write_kernel(const shape& x, const std::string& where) {
    std::string code = cat(frame(x),
                           "extern \"C\" __global__ void kiln_nonzero_write(kiln::i64* __restrict__ y, const ",
                           device_type(x.type()), "* __restrict__ x, unsigned long long count) {\n",
                           "    unsigned long long j = 0;\n",
                           "    for (kiln::index_t i = 0; i < N; ++i) {\n",
                           "        if (!nonzero(x[X.offset(i)])) continue;\n",
                           "        kiln::index_t rest = i;\n",
                           "        for (int d = ", x.ndim(), " - 1; d >= 0; --d) {\n",
                           "            y[d * count + j] = (kiln::i64)(rest % X.lens[d]);\n",
                           "            rest /= X.lens[d];\n",
                           "        }\n",
                           "        ++j;\n",
                           "    }\n}\n");
    return {"kiln_nonzero_write", code, where};
}

}  // namespace kiln::gpu
