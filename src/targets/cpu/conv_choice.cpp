// The cpu target's choice among oneDNN's convolution implementations (conv_choice.hpp).
#include "targets/cpu/conv_choice.hpp"

#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "targets/cpu/kernels.hpp"

namespace kiln {

namespace {

// A convolution primitive ready to time: the activations' buffers are the ones every candidate
// shares (same layouts: allocating and zeroing them per candidate cost more page faults than the
// timing), its weights and scratchpad its own, zeroed.
struct timed_convolution {
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward prim;
    std::unordered_map<int, memory> args;
    double best = std::numeric_limits<double>::infinity();

    // A clone of `d`: next_impl() moves a descriptor and every copy of it (they share one).
    timed_convolution(const dnnl::convolution_forward::primitive_desc& d, const std::unordered_map<int, memory>& shared,
                      cpu_context& ctx)
        : pd(clone(d)), prim(pd), args(shared) {
        for (const auto& [arg, md] : {std::pair{DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}})
            if (md.get_size() > 0) args[arg] = zeroed(md, ctx);
    }
    static memory zeroed(const memory::desc& md, cpu_context& ctx) {
        memory m(md, ctx.dnnl->engine);
        std::memset(m.get_data_handle(), 0, md.get_size());
        return m;
    }
    // Made from the C handle, the C++ descriptor is a clone of it.
    static dnnl::convolution_forward::primitive_desc clone(const dnnl::convolution_forward::primitive_desc& d) {
        return dnnl::convolution_forward::primitive_desc(d.get());
    }
    void run(cpu_context& ctx, bool count) {
        auto t0 = std::chrono::steady_clock::now();
        prim.execute(ctx.dnnl->stream, args);
        ctx.dnnl->stream.wait();
        if (count) best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
};

}  // namespace

// A depthwise convolution in channels-last on oneDNN's jit_dw implementation where oneDNN 3.2
// picks brdgmm_dw and jit_dw of the same ISA takes the same layouts: on this EPYC (AVX-512), one
// thread, warm cache, mobilenet_v2's depthwise shapes took 0.0745 against 0.116 ms (32 channels,
// 112x112), 0.091 against 0.129 (144, 56x56), 0.031 against 0.044 (192, 28x28), 0.0185 against
// 0.0216 (384, 14x14); level (within 0.001 ms) on 960 at 7x7 and 576 at stride 2.
void prefer_jit_dw(std::optional<conv_pd>& pd, const conv_remake& make) {
    std::string impl = pd->impl_info_str();
    const std::string brdgmm = "brdgmm_dw:";
    if (impl.rfind(brdgmm, 0) != 0) return;
    std::string want = "jit_dw:" + impl.substr(brdgmm.size());
    auto chosen = *pd;
    make(pd->dst_desc(), pd->src_desc());   // the same layouts, so that no reorder appears
    while (pd->impl_info_str() != want)
        if (!pd->next_impl()) {
            pd = chosen;
            return;
        }
}

// Convolutions of at most this many multiply-adds have their implementation measured (below).
constexpr double measured_choice_work = 3e7;

// oneDNN's heuristic picks one implementation per convolution; others it lists for the same
// activation layouts are at times clearly faster on this CPU, at this thread count. One thread,
// warm: the AVX2 1x1 kernels on mobilenet_v2's 96->24 and 144->24 at 56x56 (AVX-512 pads 24
// channels to 32 lanes; this EPYC's 512-bit operations run at 256-bit width) 128 and 193 us
// against 167 and 250; two threads: 16->96 at 112x112 183 (jit_1x1 AVX2) against 214 (brgconv),
// 960->320 at 7x7 130 (jit_1x1 AVX-512) against 165; its other 1x1 shapes level within 2-5%. So
// the optimised implementations listed for the chosen layouts (not the reference, SSE4.1 or gemm
// ones) run in turn, six rounds, on zeroed buffers when the executable is built, and the fastest
// by its minimum is kept where it beats oneDNN's pick by 5%. Only for convolutions of at most
// measured_choice_work multiply-adds (mobilenet_v2's all, resnet18's none: ~0.5 ms each at most,
// so the timing stays a fraction of the compile), and not with binary post-ops (their operands
// would need buffers too).
void prefer_measured(std::optional<conv_pd>& pd, const conv_remake& make, double work,
                     bool binaries, cpu_context& ctx) {
    if (work > measured_choice_work || binaries) return;
    // One executable measures at a time: timings taken while another measures on the other core
    // would measure each other, and candidates timed from several threads at once corrupted
    // memory in 1 of 16 runs of cpu_target.separate_executables_run_concurrently (a result of
    // 5.8e34, then a crash; not understood), 0 of 40 serialised.
    static std::mutex timing;
    std::lock_guard<std::mutex> one_at_a_time(timing);
    std::unordered_map<int, memory> shared;
    for (const auto& [arg, md] : {std::pair{DNNL_ARG_SRC, pd->src_desc()}, {DNNL_ARG_BIAS, pd->bias_desc()}, {DNNL_ARG_DST, pd->dst_desc()}})
        if (md.get_size() > 0) shared[arg] = timed_convolution::zeroed(md, ctx);
    std::vector<timed_convolution> cands;
    cands.emplace_back(*pd, shared, ctx);
    const std::string chosen = pd->impl_info_str();
    make(pd->dst_desc(), pd->src_desc());   // the same activation layouts
    do {
        std::string impl = pd->impl_info_str();
        if (impl == chosen || impl.find("ref") != std::string::npos || impl.find("sse41") != std::string::npos ||
            impl.find("gemm") != std::string::npos)
            continue;
        cands.emplace_back(*pd, shared, ctx);
    } while (pd->next_impl());
    // Round 0 warms up; after round 1 a candidate 1.5x slower than oneDNN's pick is out (the
    // reference-like ones take 2-4x: timing them on would double the compile).
    for (int round = 0; round < 6; ++round)
        for (auto& c : cands)
            if (round < 2 || c.best < 1.5 * cands[0].best) c.run(ctx, round > 0);
    std::size_t best = 0;
    for (std::size_t i = 1; i < cands.size(); ++i)
        if (cands[i].best < cands[best].best) best = i;
    pd = best > 0 && cands[best].best < 0.95 * cands[0].best ? cands[best].pd : cands[0].pd;
}

}  // namespace kiln
