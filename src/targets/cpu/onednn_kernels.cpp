// oneDNN primitives for the cpu target: convolution, matmul (dot, gemm) and pooling, alone or as
// the contraction of a fused_epilogue whose pointwise tail oneDNN's post-ops express (bias, an
// activation, a residual add, a scale). Primitives are created when the executable is built, in
// the layouts oneDNN prefers (format `any`: blocked for convolutions), constant weights reordered
// into them once; activations are reordered from and to kiln's strided layouts around each
// primitive. A region oneDNN cannot express gets no kernel (the reference runs it) and the
// compile report says so.
#include <dnnl.hpp>

#include <functional>
#include <optional>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "ops/convolution.hpp"
#include "ops/gemm.hpp"
#include "ops/pooling.hpp"
#include "ops/views.hpp"
#include "ops/window.hpp"
#include "targets/cpu/conv_choice.hpp"
#include "targets/cpu/epilogue.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/onednn_util.hpp"
#include "targets/cpu/type_convert.hpp"
#include "targets/cpu/winograd.hpp"

namespace kiln {

cpu_context::cpu_context(std::size_t n) : threads(n), dnnl(std::make_unique<onednn_state>()) {}
cpu_context::~cpu_context() = default;

namespace {

using dnnl::memory;
using dims = memory::dims;

// The same shape regrouped as {G, M/G, rest...} (grouped convolution weights), standard layout.
memory::desc grouped_desc(const shape& s, std::int64_t g) {
    dims d{g, static_cast<memory::dim>(s.lens()[0]) / g};
    for (std::size_t i = 1; i < s.ndim(); ++i) d.push_back(static_cast<memory::dim>(s.lens()[i]));
    dims st(d.size(), 1);
    for (std::size_t i = d.size() - 1; i-- > 0;) st[i] = st[i + 1] * d[i + 1];
    return memory::desc(d, *dnnl_type(s.type()), st);
}

// One operand of a primitive: where its data comes from each run, and the reorder into the
// primitive's layout when that differs (into a buffer the kernel owns).
struct operand {
    int dnnl_arg = 0;
    int arg = -1;                 // index into the kernel's arguments; -1: constant (reordered at load)
    memory user, inner;           // the kiln layout, and the primitive's
    void* bound = nullptr;        // user's data handle
    std::optional<tensor_copy> to_inner;
};

// Sets `m`'s data handle where the buffer moved since the last run. The planned buffers are the
// same every run, and between two primitives oneDNN's memory objects are cold in cache: setting
// them again cost about 0.1 us each.
void set_handle(memory& m, void*& bound, void* data) {
    if (data == bound) return;
    m.set_data_handle(data);
    bound = data;
}

}  // namespace

namespace {

// A name for a constant of `ins` in layout `d`: the instruction's position in main, the
// primitive's argument and the blocked layout itself, so that a saved program made on a CPU whose
// primitives chose another layout is not read as this one. None for opaque layouts.
std::optional<std::string> packed_name(const cpu_context& ctx, const instruction& ins, int dnnl_arg,
                                       const memory::desc& d) {
    auto pos = ctx.position.find(&ins);
    if (pos == ctx.position.end() || d.get_format_kind() != memory::format_kind::blocked) return std::nullopt;
    std::string s = "cpu.weights/" + std::to_string(pos->second) + "/" + std::to_string(dnnl_arg) + "/" +
                    std::to_string(static_cast<int>(d.get_data_type()));
    auto list = [&](const char* tag, const dims& v) {
        s += tag;
        for (auto x : v) s += std::to_string(x) + ",";
    };
    list("/dims:", d.get_dims());
    list("/strides:", d.get_strides());
    list("/blocks:", d.get_inner_blks());
    list("/idxs:", d.get_inner_idxs());
    return s;
}

// The constant `from` in layout `want`: the saved program's copy when it kept one in this layout
// (mapped, no reorder), else reordered now; kept for saving either way.
memory packed_constant(cpu_context& ctx, const instruction& ins, int dnnl_arg, memory from,
                       const memory::desc& want) {
    auto& eng = ctx.dnnl->engine;
    auto name = packed_name(ctx, ins, dnnl_arg, want);
    if (name) {
        auto it = ctx.saved.find(*name);
        if (it != ctx.saved.end() && it->second.get_shape().bytes() == want.get_size()) {
            ++ctx.reused;
            ctx.packed.push_back({*name, it->second});
            return memory(want, eng, it->second.data());
        }
    }
    auto m = std::make_shared<memory>(want, eng);
    tensor_copy(from, *m).execute(ctx.dnnl->stream, from, *m);
    ctx.dnnl->stream.wait();
    ++ctx.reordered;
    argument bytes(shape(dtype::uint8, std::vector<std::size_t>{want.get_size()}),
                   static_cast<std::byte*>(m->get_data_handle()), m);
    ctx.packed.push_back({name.value_or(""), bytes});   // unnamed: kept alive, not saved
    return *m;
}

}  // namespace

// One primitive and the reorders around it (declared in onednn_util.hpp for onednn_state).
class onednn_kernel {
public:
    onednn_kernel(cpu_context& ctx, const instruction& ins) : ctx_(ctx), ins_(ins) {}

    // Adds an input: `from` is its kiln descriptor, `want` the primitive's. A constant is
    // reordered now; an argument each run, when the layouts differ.
    void input(int dnnl_arg, int arg, const memory::desc& from, const memory::desc& want, const argument* constant) {
        auto& eng = ctx_.dnnl->engine;
        operand o;
        o.dnnl_arg = dnnl_arg;
        o.arg = constant ? -1 : arg;
        o.user = memory(from, eng, constant ? static_cast<void*>(constant->data()) : nullptr);
        if (from == want) {
            o.inner = o.user;
        } else if (constant) {
            o.inner = o.user = packed_constant(ctx_, ins_, dnnl_arg, o.user, want);
        } else {
            o.inner = memory(want, eng);
            o.to_inner.emplace(o.user, o.inner);
        }
        exec_args_[dnnl_arg] = o.inner;
        inputs_.push_back(std::move(o));
    }
    // The output: the primitive writes `want`, reordered into the kiln layout `to` when different.
    // `accumulate`: the argument whose values a sum post-op adds (copied into dst first).
    void output(const memory::desc& to, const memory::desc& want, int accumulate = -1,
                const memory::desc& accumulate_desc = {}) {
        auto& eng = ctx_.dnnl->engine;
        out_user_ = memory(to, eng, nullptr);
        out_inner_ = to == want ? out_user_ : memory(want, eng);
        if (to != want) from_inner_.emplace(out_inner_, out_user_);
        exec_args_[DNNL_ARG_DST] = out_inner_;
        if (accumulate >= 0) {
            sum_arg_ = accumulate;
            sum_user_ = memory(accumulate_desc, eng, nullptr);
            sum_copy_.emplace(sum_user_, out_inner_);
        }
    }
    // Computes the result from the primitive's arguments (their memories, data handles set) in
    // place of a primitive: kiln's own kernels that take part in the layouts and post-ops above.
    using compute_fn = std::function<void(const std::unordered_map<int, memory>&)>;
    void set_compute(compute_fn f) { compute_ = std::move(f); }
    void set_primitive(dnnl::primitive p, const dnnl::primitive_desc_base& pd) {
        prim_ = std::move(p);
        if (pd.scratchpad_desc().get_size() > 0)
            exec_args_[DNNL_ARG_SCRATCHPAD] = scratch_ = ctx_.dnnl->scratchpad_memory(pd.scratchpad_desc());
    }

    // Blocked layouts between consecutive primitives: the output in the primitive's own layout,
    // which every user reads as is (keep_blocked_layouts checks that they can).
    std::optional<memory::desc> blocked_output() const {
        return from_inner_ ? std::optional(out_inner_.get_desc()) : std::nullopt;
    }
    // The blocked layout this kernel writes into its planned buffer, if it does.
    std::optional<memory::desc> written_blocked() const {
        return direct_ ? std::optional(out_inner_.get_desc()) : std::nullopt;
    }
    void write_blocked() {
        out_inner_ = memory(out_inner_.get_desc(), ctx_.dnnl->engine, nullptr);
        out_inner_bound_ = nullptr;
        onto_.reset();
        exec_args_[DNNL_ARG_DST] = out_inner_;
        c_args_.clear();
        from_inner_.reset();
        direct_ = true;
    }
    // The argument the sum post-op accumulates onto, where the primitive writes the planned buffer
    // in the layout it reads that argument in (accumulates_in_place); -1 otherwise.
    // Not where the primitive reads it as an operand too (conv(r) + r, one argument of the region).
    int accumulates_onto() const {
        if (!onto_) onto_ = find_accumulates_onto();
        return *onto_;
    }
    int find_accumulates_onto() const {
        if (sum_arg_ < 0 || from_inner_ || sum_user_.get_desc() != out_inner_.get_desc()) return -1;
        for (const auto& o : inputs_)
            if (o.arg == sum_arg_) return -1;
        return sum_arg_;
    }
    // Whether argument `arg` can be read in layout `d` without a reorder (every use of it).
    bool reads_as(int arg, const memory::desc& d) const {
        bool used = false;
        for (const auto& o : inputs_)
            if (o.arg == arg) {
                if (o.inner.get_desc() != d) return false;
                used = true;
            }
        if (sum_arg_ == arg) {
            if (out_inner_.get_desc() != d) return false;
            used = true;
        }
        return used;
    }
    void read_blocked(int arg, const memory::desc& d) {
        for (auto& o : inputs_)
            if (o.arg == arg) {
                o.user = o.inner = memory(d, ctx_.dnnl->engine, nullptr);
                o.bound = nullptr;
                o.to_inner.reset();
                exec_args_[o.dnnl_arg] = o.inner;
                c_args_.clear();
            }
        if (sum_arg_ == arg) {
            sum_user_ = memory(d, ctx_.dnnl->engine, nullptr);
            sum_bound_ = nullptr;
            sum_copy_.emplace(sum_user_, out_inner_);   // now a plain copy
        }
        onto_.reset();
    }

    void run(std::span<const argument> args, const argument& out) {
        auto& s = ctx_.dnnl->stream;
        for (auto& o : inputs_) {
            if (o.arg < 0) continue;
            set_handle(o.user, o.bound, args[o.arg].data());
            if (o.to_inner) o.to_inner->execute(s, o.user, o.inner);
        }
        set_handle(out_user_, out_user_bound_, out.data());
        if (direct_) set_handle(out_inner_, out_inner_bound_, out.data());
        // Planned over the residual, dst holds it already.
        if (sum_copy_ && !(args[sum_arg_].data() == out.data() && accumulates_onto() >= 0)) {
            set_handle(sum_user_, sum_bound_, args[sum_arg_].data());
            sum_copy_->execute(s, sum_user_, out_inner_);
        }
        if (scratch_) ctx_.dnnl->bind_scratchpad(scratch_);
        if (compute_) {
            compute_(exec_args_);
        } else {
            // Through the C API with the argument list built once: the C++ execute converts its
            // map into a fresh list on every call.
            if (c_args_.empty())
                for (const auto& [arg, m] : exec_args_) c_args_.push_back({arg, m.get()});
            dnnl::error::wrap_c_api(
                dnnl_primitive_execute(prim_.get(), s.get(), static_cast<int>(c_args_.size()), c_args_.data()),
                "could not execute a primitive");
        }
        if (from_inner_) from_inner_->execute(s, out_inner_, out_user_);
        s.wait();
    }

private:
    cpu_context& ctx_;
    const instruction& ins_;
    std::vector<operand> inputs_;
    memory out_user_, out_inner_, sum_user_, scratch_;
    void *out_user_bound_ = nullptr, *out_inner_bound_ = nullptr, *sum_bound_ = nullptr;   // their data handles
    mutable std::optional<int> onto_;   // accumulates_onto(), once the layouts are settled
    std::optional<tensor_copy> from_inner_, sum_copy_;
    int sum_arg_ = -1;
    bool direct_ = false;   // writes its blocked layout straight into the planned buffer
    dnnl::primitive prim_;
    compute_fn compute_;
    std::unordered_map<int, memory> exec_args_;
    std::vector<dnnl_exec_arg_t> c_args_;   // exec_args_ as the C API takes them (set before the first run)
};

namespace {

// The post-ops of an epilogue tail, and the binary operands they read. `sum_as_binary`: the
// residual is a binary add reading it in place, not a sum post-op onto a copy of it in dst (for
// matmuls, whose plain dst gains nothing from accumulating in place: the copy was 2% of the
// decoder's run).
// The operands are listed in their own (kiln) descriptors; the post-ops read them in type `t`.
dnnl::primitive_attr make_attr(const epilogue_plan& e, std::size_t rank, memory::data_type t,
                               std::vector<std::pair<int, memory::desc>>& binaries, bool sum_as_binary = false) {
    dnnl::post_ops po;
    for (const auto& step : e.steps) {
        switch (step.kind) {
        case epilogue_step::eltwise: po.append_eltwise(static_cast<dnnl::algorithm>(step.alg), step.alpha, step.beta); break;
        case epilogue_step::sum:
            if (sum_as_binary) {
                memory::desc d = plain_desc(e.sum_shape, rank);
                binaries.emplace_back(po.len(), d);
                po.append_binary(dnnl::algorithm::binary_add, with_type(d, t));
            } else {
                po.append_sum(1.0f);
            }
            break;
        case epilogue_step::binary: {
            memory::desc d = plain_desc(step.operand, rank);
            binaries.emplace_back(po.len(), d);
            po.append_binary(static_cast<dnnl::algorithm>(step.alg), with_type(d, t));
            break;
        }
        }
    }
    dnnl::primitive_attr attr = user_scratchpad();
    attr.set_post_ops(po);
    return attr;
}

// Binary post-op operands: constants (literals) or the kernel's arguments, read in type t.
void add_binaries(onednn_kernel& k, const epilogue_plan& e, memory::data_type t,
                  const std::vector<std::pair<int, memory::desc>>& binaries, bool sum_as_binary = false) {
    std::size_t b = 0;
    for (const auto& step : e.steps) {
        if (step.kind != epilogue_step::binary && !(sum_as_binary && step.kind == epilogue_step::sum)) continue;
        auto [index, d] = binaries[b++];
        k.input(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, step.arg, d, with_type(d, t), step.constant);
    }
}

memory::desc sum_desc(const contraction_region& r) {
    return r.epilogue.sum_arg < 0 ? memory::desc() : plain_desc(r.epilogue.sum_shape, r.out.ndim());
}

host_kernel wrap(std::shared_ptr<onednn_kernel> k, const instruction& ins, cpu_context& ctx) {
    ctx.dnnl->kernels[&ins] = k;
    return [k](std::span<const argument> args, const argument& out) { k->run(args, out); };
}

std::vector<memory::dim> to_dims(const std::vector<std::size_t>& v) { return {v.begin(), v.end()}; }

// The channels-last layout of 4- and 5-dim float32 activations (nhwc, ndhwc), which oneDNN's
// convolutions choose for float32 on AVX-512; none for other ranks and types (bf16 convolutions
// choose blocked layouts).
std::optional<memory::desc> channels_last(const dims& d, memory::data_type t) {
    if (t != memory::data_type::f32) return std::nullopt;
    if (d.size() == 4) return memory::desc(d, t, memory::format_tag::acdb);
    if (d.size() == 5) return memory::desc(d, t, memory::format_tag::acdeb);
    return std::nullopt;
}

// The epilogue as Winograd steps; none where a step is not one of them (a binary operand, another
// activation: the direct convolution's post-ops take those).
std::optional<std::vector<winograd_step>> winograd_steps(const epilogue_plan& e) {
    std::vector<winograd_step> out;
    for (const auto& s : e.steps) {
        auto alg = static_cast<dnnl::algorithm>(s.alg);
        if (s.kind == epilogue_step::sum) out.push_back({winograd_step::sum});
        else if (s.kind != epilogue_step::eltwise) return std::nullopt;
        else if (alg == dnnl::algorithm::eltwise_relu) out.push_back({winograd_step::relu, s.alpha});
        else if (alg == dnnl::algorithm::eltwise_clip_v2) out.push_back({winograd_step::clip, s.alpha, s.beta});
        else if (alg == dnnl::algorithm::eltwise_linear) out.push_back({winograd_step::linear, s.alpha, s.beta});
        else return std::nullopt;
    }
    return out;
}

// The transformed inputs and GEMM results of one chunk of tiles take at most this many bytes
// (winograd_input), so that they stay in L2/L3 whatever the batch.
constexpr std::size_t winograd_chunk_bytes = 8u << 20;

// A float32 3x3 stride-1 convolution as Winograd F(4x4, 3x3) (winograd.hpp), channels-last like
// the direct ones, so that it takes part in their layouts and in-place residuals. Alone, one
// thread, warm (these transforms around oneDNN's matmul in a standalone probe, docs/performance.md),
// against oneDNN's direct brgconv at 119 GFLOP/s:
// 64 channels at 56x56 0.72 against 1.94 ms, 128 at 28x28 0.62 against 1.87, 256 at 14x14 0.77
// against 1.92; 512 at 7x7 1.55 (4 tiles: the GEMMs read 4x the weights for little work) against
// 1.74, so images under 9 tiles (12x12) stay direct, as do convolutions of fewer than 16 channels.
// Results differ from the direct sum by rounding (~5e-6 relative on random data):
// --disable-fast-math keeps every convolution direct.
host_kernel winograd_kernel(const contraction_region& r, cpu_context& ctx) {
    const auto* conv = r.contraction->get_operator().get_if<ops::convolution>();
    if (conv == nullptr) return {};
    const ops::convolution& op = *conv;
    const shape& xs = r.input_shape(0);
    const shape& ws = r.input_shape(1);
    const shape& ys = r.out;
    if (!ctx.fast_math || xs.ndim() != 4 || op.group != 1 || xs.type() != dtype::float32 ||
        ys.type() != dtype::float32 || r.constant(1) == nullptr || ws.lens()[2] != 3 || ws.lens()[3] != 3 ||
        !winograd_available())
        return {};
    auto win = ops::window::make(2, op.padding, op.stride, op.dilation);
    for (std::size_t d = 0; d < 2; ++d)
        if (win.stride[d] != 1 || win.dilation[d] != 1) return {};
    auto steps = winograd_steps(r.epilogue);
    if (!steps) return {};
    winograd_geometry g;
    g.n = xs.lens()[0], g.c = xs.lens()[1], g.h = xs.lens()[2], g.w = xs.lens()[3];
    g.k = ys.lens()[1], g.oh = ys.lens()[2], g.ow = ys.lens()[3];
    g.pad_top = static_cast<std::ptrdiff_t>(win.pad_begin[0]), g.pad_left = static_cast<std::ptrdiff_t>(win.pad_begin[1]);
    if (g.c < 16 || g.k < 16 || g.tiles_h() * g.tiles_w() < 9) return {};

    auto& eng = ctx.dnnl->engine;
    const auto f32 = memory::data_type::f32;
    auto c = static_cast<memory::dim>(g.c), k = static_cast<memory::dim>(g.k);
    std::size_t chunk = std::max<std::size_t>(1, winograd_chunk_bytes / (36 * (g.c + g.k) * sizeof(float)));
    chunk = std::min(chunk, g.tiles());
    // The GEMMs of a full chunk, and of the last one where it is shorter.
    std::vector<std::pair<std::size_t, dnnl::matmul::primitive_desc>> gemms;
    for (std::size_t tiles : {chunk, g.tiles() % chunk}) {
        if (tiles == 0) continue;
        auto t = static_cast<memory::dim>(tiles);
        gemms.emplace_back(tiles, dnnl::matmul::primitive_desc(eng, memory::desc({36, t, c}, f32, memory::format_tag::abc),
                                                               memory::desc({36, c, k}, f32, memory::format_tag::any),
                                                               memory::desc({36, t, k}, f32, memory::format_tag::abc),
                                                               user_scratchpad()));
    }
    // One packing of the weights serves both; where the short chunk's GEMM wants another, the
    // convolution stays direct (not worth a second copy).
    if (gemms.size() > 1 && gemms[1].second.weights_desc() != gemms[0].second.weights_desc()) return {};
    struct gemm_call {
        std::size_t tiles = 0;
        dnnl::matmul prim;
        memory v, m, scratch;
    };
    struct state {
        winograd_geometry g;
        std::vector<winograd_step> steps;
        memory u;
        std::size_t chunk = 0, m_offset = 0;
        std::vector<gemm_call> calls;   // as gemms
    };
    auto st = std::make_shared<state>();
    st->g = g, st->steps = *steps, st->chunk = chunk;
    {
        // The weights in standard [k][c][3][3], transformed, then packed for the GEMMs.
        std::vector<float> w(g.k * g.c * 9), u(36 * g.c * g.k);
        memory from(plain_desc(ws), eng, r.constant(1)->data());
        memory to(memory::desc(plain_desc(ws).get_dims(), f32, memory::format_tag::abcd), eng, w.data());
        tensor_copy(from, to).execute(ctx.dnnl->stream, from, to);
        ctx.dnnl->stream.wait();
        winograd_weights(w.data(), g.k, g.c, u.data());
        st->u = packed_constant(ctx, *r.ins, DNNL_ARG_WEIGHTS,
                                memory(memory::desc({36, c, k}, f32, memory::format_tag::abc), eng, u.data()),
                                gemms[0].second.weights_desc());
    }
    for (const auto& [tiles, pd] : gemms) {
        gemm_call call{tiles, dnnl::matmul(pd), memory(pd.src_desc(), eng, nullptr), memory(pd.dst_desc(), eng, nullptr), {}};
        if (pd.scratchpad_desc().get_size() > 0) call.scratch = ctx.dnnl->scratchpad_memory(pd.scratchpad_desc());
        st->calls.push_back(std::move(call));
    }
    st->m_offset = (36 * chunk * g.c + 15) / 16 * 16;   // m 64-byte aligned after v
    std::size_t floats = st->m_offset + 36 * chunk * g.k + 16;
    if (ctx.winograd_scratch.size() < floats) ctx.winograd_scratch.resize(floats);

    auto kern = std::make_shared<onednn_kernel>(ctx, *r.ins);
    auto nhwc = [&](const shape& s) { return *channels_last(plain_desc(s).get_dims(), f32); };
    kern->input(DNNL_ARG_SRC, r.arg(0), plain_desc(xs), nhwc(xs), r.constant(0));
    if (r.epilogue.bias) {
        memory::desc bias_d({k}, f32, memory::format_tag::a);
        kern->input(DNNL_ARG_BIAS, r.epilogue.bias->arg, bias_d, bias_d, r.epilogue.bias->constant);
    }
    kern->output(plain_desc(ys), nhwc(ys), r.epilogue.sum_arg, sum_desc(r));
    kern->set_compute([st, &ctx](const std::unordered_map<int, memory>& args) {
        const auto* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
        auto* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
        auto b = args.find(DNNL_ARG_BIAS);
        const auto* bias = b == args.end() ? nullptr : static_cast<const float*>(b->second.get_data_handle());
        auto at = reinterpret_cast<std::uintptr_t>(ctx.winograd_scratch.data());
        auto* v = reinterpret_cast<float*>((at + 63) / 64 * 64);
        float* m = v + st->m_offset;
        const std::size_t tiles = st->g.tiles();
        for (std::size_t first = 0; first < tiles; first += st->chunk) {
            std::size_t count = std::min(st->chunk, tiles - first);
            auto& call = count == st->chunk ? st->calls.front() : st->calls.back();
            winograd_input(st->g, x, first, count, v);
            call.v.set_data_handle(v);
            call.m.set_data_handle(m);
            std::unordered_map<int, memory> gemm_args{
                {DNNL_ARG_SRC, call.v}, {DNNL_ARG_WEIGHTS, st->u}, {DNNL_ARG_DST, call.m}};
            if (call.scratch) {
                ctx.dnnl->bind_scratchpad(call.scratch);
                gemm_args[DNNL_ARG_SCRATCHPAD] = call.scratch;
            }
            call.prim.execute(ctx.dnnl->stream, gemm_args);
            ctx.dnnl->stream.wait();
            winograd_output(st->g, m, bias, st->steps, first, count, y);
        }
    });
    return wrap(kern, *r.ins, ctx);
}

host_kernel convolution_kernel(const ops::convolution& op, const contraction_region& r, cpu_context& ctx) {
    const shape& xs = r.input_shape(0);
    const shape& ws = r.input_shape(1);
    const shape& ys = r.out;
    std::size_t nd = xs.ndim() - 2;
    auto win = ops::window::make(nd, op.padding, op.stride, op.dilation);
    dims stride = to_dims(win.stride), dil, pl = to_dims(win.pad_begin), pr = to_dims(win.pad_end);
    for (auto d : win.dilation) dil.push_back(static_cast<memory::dim>(d) - 1);
    auto t = compute_type(xs.type());
    auto any = memory::format_tag::any;
    dims wd = op.group > 1 ? grouped_desc(ws, op.group).get_dims() : plain_desc(ws).get_dims();
    memory::desc x_any(plain_desc(xs).get_dims(), t, any), w_any(wd, t, any), y_any(plain_desc(ys).get_dims(), t, any);
    std::vector<std::pair<int, memory::desc>> binaries;
    auto attr = make_attr(r.epilogue, ys.ndim(), t, binaries);
    auto& eng = ctx.dnnl->engine;
    std::optional<dnnl::convolution_forward::primitive_desc> pd;
    memory::desc bias_d, bias_from;
    if (r.epilogue.bias) {
        bias_d = memory::desc({static_cast<memory::dim>(ys.lens()[1])}, t, memory::format_tag::a);
        bias_from = memory::desc(bias_d.get_dims(), *dnnl_type(ys.type()), memory::format_tag::a);
    }
    auto make = [&](const memory::desc& y, const memory::desc& x) {
        if (r.epilogue.bias)
            pd.emplace(eng, dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x, w_any, bias_d,
                       y, stride, dil, pl, pr, attr);
        else
            pd.emplace(eng, dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x, w_any, y,
                       stride, dil, pl, pr, attr);
    };
    make(y_any, x_any);
    // Where oneDNN picks another layout than channels-last for the output (the first convolution
    // of an image model, 3 input channels: nChw16c), the output in channels-last when an optimised
    // implementation writes it: the layout the following convolutions and poolings read, so that
    // no reorder sits between them (resnet18: ~0.5 ms of reorders and an NCHW max pool per run).
    if (auto cl = channels_last(plain_desc(ys).get_dims(), t); cl && pd->dst_desc() != *cl) {
        auto chosen = *pd;
        try {
            make(*cl, x_any);
            if (std::string(pd->impl_info_str()).find("ref") != std::string::npos) pd = chosen;
        } catch (const dnnl::error&) {
            pd = chosen;
        }
    }
    if (op.group > 1 && ws.lens()[0] == static_cast<std::size_t>(op.group) && ws.lens()[1] == 1) prefer_jit_dw(pd, make);
    else prefer_measured(pd, make, static_cast<double>(ys.elements()) * static_cast<double>(ws.elements() / ws.lens()[0]),
                         !binaries.empty(), ctx);
    auto k = std::make_shared<onednn_kernel>(ctx, *r.ins);
    k->input(DNNL_ARG_SRC, r.arg(0), plain_desc(xs), pd->src_desc(), r.constant(0));
    memory::desc w_from = op.group > 1 ? grouped_desc(ws, op.group) : plain_desc(ws);
    if (r.constant(1) == nullptr && !ws.standard()) return {};   // grouped view of strided weights
    k->input(DNNL_ARG_WEIGHTS, r.arg(1), w_from, pd->weights_desc(), r.constant(1));
    if (r.epilogue.bias) k->input(DNNL_ARG_BIAS, r.epilogue.bias->arg, bias_from, bias_d, r.epilogue.bias->constant);
    add_binaries(*k, r.epilogue, t, binaries);
    k->output(plain_desc(ys), pd->dst_desc(), r.epilogue.sum_arg, sum_desc(r));
    k->set_primitive(dnnl::convolution_forward(*pd), *pd);
    return wrap(k, *r.ins, ctx);
}

// Matmul over [batch..., M, K] x [batch..., K, N] (numpy batch broadcasting; both right-aligned
// to the output's rank). gemm's transposes are strides; its alpha is an eltwise_linear post-op
// before the epilogue and its C a binary add (beta = 1 only; others run on the reference).
host_kernel matmul_kernel(shape a, shape b, const contraction_region& r, cpu_context& ctx) {
    const shape& ys = r.out;
    std::size_t rank = ys.ndim();
    auto t = compute_type(ys.type());
    memory::desc ad = plain_desc(a, rank), bd = plain_desc(b, rank);
    memory::desc b_want = with_type(bd, t);
    bool const_b = r.constant(1) != nullptr;
    if (const_b) b_want = memory::desc(bd.get_dims(), t, memory::format_tag::any);   // packed once
    std::vector<std::pair<int, memory::desc>> binaries;
    auto attr = make_attr(r.epilogue, rank, t, binaries, true);
    auto& eng = ctx.dnnl->engine;
    dnnl::matmul::primitive_desc pd(eng, with_type(ad, t), b_want, with_type(plain_desc(ys), t), attr);
    auto k = std::make_shared<onednn_kernel>(ctx, *r.ins);
    k->input(DNNL_ARG_SRC, r.arg(0), ad, pd.src_desc(), r.constant(0));
    k->input(DNNL_ARG_WEIGHTS, r.arg(1), bd, pd.weights_desc(), r.constant(1));
    add_binaries(*k, r.epilogue, t, binaries, true);
    k->output(plain_desc(ys), pd.dst_desc());
    k->set_primitive(dnnl::matmul(pd), pd);
    return wrap(k, *r.ins, ctx);
}

// ONNX ConvTranspose weights are [C_in, C_out / group, k...]; oneDNN's deconvolution reads
// {C_out, C_in, k...} (grouped {G, C_out / G, C_in / G, k...}): the same memory with its dims
// permuted, whatever its strides.
memory::desc deconvolution_weights(const shape& w, std::int64_t group) {
    const auto& l = w.lens();
    const auto& s = w.strides();
    auto g = static_cast<memory::dim>(group);
    auto in_g = static_cast<memory::dim>(l[0]) / g;
    dims d, st;
    if (group > 1) d = {g, static_cast<memory::dim>(l[1]), in_g}, st = {in_g * static_cast<memory::dim>(s[0]),
                                                                     static_cast<memory::dim>(s[1]),
                                                                     static_cast<memory::dim>(s[0])};
    else d = {static_cast<memory::dim>(l[1]), in_g}, st = {static_cast<memory::dim>(s[1]), static_cast<memory::dim>(s[0])};
    for (std::size_t i = 2; i < l.size(); ++i) d.push_back(static_cast<memory::dim>(l[i])), st.push_back(static_cast<memory::dim>(s[i]));
    return memory::desc(d, *dnnl_type(w.type()), st);
}

host_kernel deconvolution_kernel(const ops::deconvolution& op, const instruction& ins, cpu_context& ctx) {
    const shape& xs = ins.inputs()[0]->get_shape();
    const shape& ws = ins.inputs()[1]->get_shape();
    const shape& ys = ins.get_shape();
    std::size_t nd = xs.ndim() - 2;
    auto win = ops::window::make(nd, op.padding, op.stride, op.dilation);
    dims stride = to_dims(win.stride), dil, pl = to_dims(win.pad_begin), pr;
    for (std::size_t d = 0; d < nd; ++d) {
        dil.push_back(static_cast<memory::dim>(win.dilation[d]) - 1);
        // The end padding that gives kiln's output length (output_padding makes it shorter).
        auto full = (static_cast<memory::dim>(xs.lens()[d + 2]) - 1) * stride[d] +
                    static_cast<memory::dim>(win.extent(d, ws.lens()[d + 2]));
        pr.push_back(full - pl[d] - static_cast<memory::dim>(ys.lens()[d + 2]));
    }
    auto t = compute_type(xs.type());
    auto any = memory::format_tag::any;
    memory::desc w_from = deconvolution_weights(ws, op.group);
    memory::desc x_any(plain_desc(xs).get_dims(), t, any), w_any(w_from.get_dims(), t, any),
        y_any(plain_desc(ys).get_dims(), t, any);
    dnnl::deconvolution_forward::primitive_desc pd(ctx.dnnl->engine, dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::deconvolution_direct, x_any, w_any, y_any, stride,
                                                   dil, pl, pr, user_scratchpad());
    auto k = std::make_shared<onednn_kernel>(ctx, ins);
    const argument* w_const = ins.inputs()[1]->is_literal() ? &ins.inputs()[1]->get_literal().get_argument() : nullptr;
    const argument* x_const = ins.inputs()[0]->is_literal() ? &ins.inputs()[0]->get_literal().get_argument() : nullptr;
    k->input(DNNL_ARG_SRC, 0, plain_desc(xs), pd.src_desc(), x_const);
    k->input(DNNL_ARG_WEIGHTS, 1, w_from, pd.weights_desc(), w_const);
    k->output(plain_desc(ys), pd.dst_desc());
    k->set_primitive(dnnl::deconvolution_forward(pd), pd);
    return wrap(k, ins, ctx);
}

// A reshape that is not a view (its input is strided, a transpose say) copies the input in
// row-major order: oneDNN's reorder from the strided layout into the standard one, written straight
// into the reshape's buffer (same bytes, other lens).
host_kernel reshape_copy_kernel(const instruction& ins, cpu_context& ctx) {
    const shape& xs = ins.inputs()[0]->get_shape();
    std::vector<shape> in{xs};
    if (ins.get_operator().output_alias(in) >= 0) return {};   // a view: the executor aliases it
    if (xs.ndim() == 0 || ins.inputs()[0]->is_literal() || !ins.get_shape().standard()) return {};
    memory::desc from = plain_desc(xs);
    memory::desc to(from.get_dims(), from.get_data_type(), plain_desc(xs.as_standard()).get_strides());
    auto& eng = ctx.dnnl->engine;
    struct state {
        memory src, dst;
        std::optional<tensor_copy> r;   // float16 on oneDNN's jitted 16-bit copy (type_convert.hpp)
    };
    auto st = std::make_shared<state>();
    st->src = memory(from, eng, nullptr);
    st->dst = memory(to, eng, nullptr);
    st->r.emplace(st->src, st->dst);
    return [st, &ctx](std::span<const argument> args, const argument& out) {
        st->src.set_data_handle(args[0].data());
        st->dst.set_data_handle(out.data());
        st->r->execute(ctx.dnnl->stream, st->src, st->dst);
        ctx.dnnl->stream.wait();
    };
}

host_kernel pooling_kernel(const ops::pooling& op, const instruction& ins, cpu_context& ctx) {
    const shape& xs = ins.inputs()[0]->get_shape();
    const shape& ys = ins.get_shape();
    std::size_t nd = xs.ndim() - 2;
    dnnl::algorithm alg;
    if (op.mode == "max") alg = dnnl::algorithm::pooling_max;
    else if (op.mode == "average")
        alg = op.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding : dnnl::algorithm::pooling_avg_exclude_padding;
    else return {};
    if (op.ceil_mode && alg == dnnl::algorithm::pooling_avg_include_padding) return {};   // ONNX counts differ
    dims kernel, stride, dil, pl, pr;
    if (op.global) {
        for (std::size_t d = 0; d < nd; ++d) kernel.push_back(xs.lens()[d + 2]), stride.push_back(1), dil.push_back(0),
            pl.push_back(0), pr.push_back(0);
    } else {
        auto win = ops::window::make(nd, op.padding, op.stride, op.dilations, "stride", "dilations");
        for (std::size_t d = 0; d < nd; ++d) {
            auto k = static_cast<memory::dim>(op.lengths.at(d));
            kernel.push_back(k), stride.push_back(win.stride[d]), dil.push_back(win.dilation[d] - 1);
            pl.push_back(win.pad_begin[d]);
            // The end padding that makes oneDNN's output length kiln's (ceil mode adds some).
            auto extent = (k - 1) * static_cast<memory::dim>(win.dilation[d]) + 1;
            pr.push_back((static_cast<memory::dim>(ys.lens()[d + 2]) - 1) * stride.back() + extent -
                         static_cast<memory::dim>(xs.lens()[d + 2]) - pl.back());
        }
    }
    auto& eng = ctx.dnnl->engine;
    // In channels-last, the convolutions' layout, so that a pooling between two of them reads and
    // writes their layout (no reorders; a max pool over NCHW is also 3x slower). Plain where the
    // rank has none.
    auto t = compute_type(xs.type());
    memory::desc xd = channels_last(plain_desc(xs).get_dims(), t).value_or(with_type(plain_desc(xs), t));
    memory::desc yd = channels_last(plain_desc(ys).get_dims(), t).value_or(with_type(plain_desc(ys), t));
    dnnl::pooling_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference, alg, xd, yd, stride, kernel, dil,
                                             pl, pr, user_scratchpad());
    auto k = std::make_shared<onednn_kernel>(ctx, ins);
    k->input(DNNL_ARG_SRC, 0, plain_desc(xs), pd.src_desc(), nullptr);
    k->output(plain_desc(ys), pd.dst_desc());
    k->set_primitive(dnnl::pooling_forward(pd), pd);
    return wrap(k, ins, ctx);
}

bool supported_types(const instruction& ins) {
    if (!dnnl_type(ins.get_shape().type())) return false;
    bool attention = ins.get_operator().get_if<ops::attention>() != nullptr;
    for (std::size_t i = 0; i < ins.inputs().size(); ++i) {
        const shape& s = ins.inputs()[i]->get_shape();
        bool bool_mask = attention && i == 3 && s.type() == dtype::bool_;   // converted to a float bias
        if (s.is_tuple() || s.dynamic() || (!dnnl_type(s.type()) && !bool_mask) || s.elements() == 0)
            return false;   // empty tensors: the reference handles them
    }
    return !ins.get_shape().dynamic() && ins.get_shape().elements() > 0;
}

host_kernel contraction_kernel(const contraction_region& r, cpu_context& ctx) {
    const operation& op = r.contraction->get_operator();
    if (const auto* conv = op.get_if<ops::convolution>()) return convolution_kernel(*conv, r, ctx);
    if (op.get_if<ops::dot>()) return matmul_kernel(r.input_shape(0), r.input_shape(1), r, ctx);
    if (const auto* g = op.get_if<ops::gemm>()) {
        if (g->alpha != 1.0f) return {};   // alpha: reference (C is the epilogue's first step)
        shape a = r.input_shape(0), b = r.input_shape(1);
        return matmul_kernel(g->trans_a ? transposed(a) : a, g->trans_b ? transposed(b) : b, r, ctx);
    }
    return {};
}

}  // namespace

cpu_kernel make_onednn_kernel(const instruction& ins, cpu_context& ctx) {
    if (!supported_types(ins)) return {};
    try {
        if (auto k = make_onednn_transformer_kernel(ins, ctx)) return {std::move(k), "onednn"};
        if (const auto* pool = ins.get_operator().get_if<ops::pooling>()) return {pooling_kernel(*pool, ins, ctx), "onednn"};
        if (ins.get_operator().get_if<ops::reshape>()) return {reshape_copy_kernel(ins, ctx), "onednn"};
        if (const auto* dc = ins.get_operator().get_if<ops::deconvolution>())
            return {deconvolution_kernel(*dc, ins, ctx), "onednn"};
        auto region = find_contraction_region(ins);
        if (!region) return {};
        if (auto k = winograd_kernel(*region, ctx)) return {std::move(k), "winograd"};
        if (auto k = contraction_kernel(*region, ctx)) return {std::move(k), "onednn"};
    } catch (const dnnl::error&) {
        return {};   // a configuration oneDNN has no implementation for: the reference runs it
    }
    return {};
}

memory::data_type compute_type(dtype t) {
    if ((t == dtype::float16 && !native_precision(compute_precision::fp16)) ||
        (t == dtype::bfloat16 && !native_precision(compute_precision::bf16)))
        return memory::data_type::f32;
    return *dnnl_type(t);
}

bool native_precision(compute_precision p) {
    if (p == compute_precision::fp32) return true;
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto need = static_cast<unsigned>(p == compute_precision::bf16 ? dnnl::cpu_isa::avx512_core_bf16
                                                                   : dnnl::cpu_isa::avx512_core_fp16);
    return (isa & need) == need;   // ISA values are sets of feature bits
}

void keep_blocked_layouts(const module& m, cpu_context& ctx) {
    auto& kernels = ctx.dnnl->kernels;
    for (const auto& ins : m) {
        auto p = kernels.find(&ins);
        if (p == kernels.end() || !p->second->blocked_output() || ins.outputs().empty()) continue;
        const memory::desc d = *p->second->blocked_output();
        if (d.get_size() > ins.get_shape().bytes()) continue;   // padded channels: larger than its buffer
        bool all = true;
        for (auto user : ins.outputs()) {
            auto u = kernels.find(&*user);
            if (u == kernels.end()) {
                all = false;
                break;
            }
            for (std::size_t i = 0; i < user->inputs().size() && all; ++i)
                if (&*user->inputs()[i] == &ins) all = u->second->reads_as(static_cast<int>(i), d);
        }
        if (!all) continue;
        p->second->write_blocked();
        for (auto user : ins.outputs())
            for (std::size_t i = 0; i < user->inputs().size(); ++i)
                if (&*user->inputs()[i] == &ins) kernels.at(&*user)->read_blocked(static_cast<int>(i), d);
    }
}

int accumulates_in_place(const instruction& ins, const cpu_context& ctx) {
    auto k = ctx.dnnl->kernels.find(&ins);
    return k == ctx.dnnl->kernels.end() ? -1 : k->second->accumulates_onto();
}

argument logical_value(cpu_context& ctx, const instruction& ins, const argument& value) {
    auto k = ctx.dnnl->kernels.find(&ins);
    if (k == ctx.dnnl->kernels.end() || !k->second->written_blocked()) return value;
    // One buffer per instruction, kept: an observer's value is valid only during its call, and a
    // fresh allocation per run (page faults over megabytes) would slow the next instruction that
    // perf times.
    auto [it, fresh] = ctx.observed.try_emplace(&ins);
    if (fresh) it->second = argument(ins.get_shape());
    const argument& plain = it->second;
    auto& eng = ctx.dnnl->engine;
    memory from(*k->second->written_blocked(), eng, value.data()), to(plain_desc(ins.get_shape()), eng, plain.data());
    tensor_copy(from, to).execute(ctx.dnnl->stream, from, to);
    ctx.dnnl->stream.wait();
    return plain;
}

cpu_kernel make_cpu_kernel(const instruction& ins, cpu_context& ctx) {
    if (auto k = make_attention_kernel(ins, ctx); k.run) return k;
    if (auto k = make_onednn_kernel(ins, ctx); k.run) return k;
    if (auto k = make_gather_kernel(ins); k.run) return k;
    if (auto k = make_concat_kernel(ins); k.run) return k;
    return ctx.pointwise.add(ins);
}

}  // namespace kiln
