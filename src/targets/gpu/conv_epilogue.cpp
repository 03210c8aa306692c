#include "targets/gpu/conv_epilogue.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "ops/binary.hpp"
#include "ops/convolution.hpp"
#include "ops/unary.hpp"
#include "targets/gpu/contraction.hpp"
#include "targets/gpu/layout_nhwc.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {
namespace {

// KILN_GPU_CUDNN_EPILOGUE=0 (a debugging variable, docs/gpu.md) keeps every epilogue a generated
// kernel, to measure what the fused call saves.
bool enabled() {
    static const bool on = [] {
        const char* v = std::getenv("KILN_GPU_CUDNN_EPILOGUE");
        return !v || std::string_view(v) != "0";
    }();
    return on;
}

// Whether `v` (numpy-broadcast to `lens`, {N, C, spatial...}) is one value per channel: what
// cuDNN's bias {1, C, 1...} holds.
bool per_channel(const shape& v, const std::vector<std::size_t>& lens) {
    shape b = broadcast_to(v, lens);
    for (std::size_t d = 0; d < lens.size(); ++d)
        if (d != 1 && lens[d] > 1 && b.strides()[d] != 0) return false;
    return lens[1] == 1 || b.strides()[1] == 1;
}

// What the body reads for `i`: a region input or a view of one, or a literal of the body
// (uploaded where `ctx` is given; at a null address otherwise). None for a computed value.
std::optional<body_operand> operand_of(const instruction& i, const std::unordered_map<const instruction*, body_operand>& known,
                                       lowering_context* ctx = nullptr, const instruction* ins = nullptr) {
    if (!i.is_literal()) return aliased_operand(i, known);
    const argument& a = i.get_literal().get_argument();
    return body_operand{ctx ? ctx->upload(a, ctx->where(*ins)) : nullptr, a.get_shape().as_standard()};
}

conv_epilogue_match declined(std::string why) {
    conv_epilogue_match r;
    r.why_not = std::move(why);
    return r;
}

}  // namespace

conv_epilogue_match match_conv_epilogue(const module& body, const instruction& anchor, const shape& out,
                                        const std::unordered_map<const instruction*, body_operand>& known) {
    if (!enabled()) return declined("KILN_GPU_CUDNN_EPILOGUE=0");
    const shape& product = anchor.get_shape();
    const auto& lens = product.lens();
    shape computed = nhwc_convolution(anchor) ? channels_last(product) : product.as_standard();
    // cuDNN writes the output in the convolution's layout and type, with nothing reshaping it.
    if (!same_layout(out, computed)) return declined("an output in another layout, type or shape");
    // Measured on the H100: mobilenet_v3_large at batch 64 ran 3.66 ms with its depthwise
    // convolutions' epilogues in cuDNN's fused call, 1.28 ms with them in a kernel after cuDNN's
    // depthwise kernel (the fused call has none; at batch 1, 0.365 against 0.373 ms).
    if (anchor.get_operator().get<ops::convolution>().group != 1)
        return declined("a grouped convolution");
    conv_epilogue_match r;
    const instruction* prev = &anchor;
    for (const auto& b : body) {
        if (b.is_param() || b.is_return() || &b == &anchor) continue;
        bool reads_prev = std::any_of(b.inputs().begin(), b.inputs().end(), [&](auto i) { return &*i == prev; });
        if (!reads_prev && operand_of(b, known)) continue;   // a literal (the bias) or a view of an input
        if (!reads_prev) return declined("a body that is not one chain after the convolution");
        if (r.relu) return declined(cat(b.get_operator().name(), " after the relu"));
        const auto& op = b.get_operator();
        if (op.get_if<ops::add>() && b.inputs().size() == 2 && &*b.inputs()[0] != &*b.inputs()[1]) {
            const instruction& other = &*b.inputs()[0] == prev ? *b.inputs()[1] : *b.inputs()[0];
            auto o = operand_of(other, known);
            if (!o || o->s.type() != out.type() || b.get_shape().lens() != lens)
                return declined("an add of a computed value, another type or a broadcast product");
            if (!r.bias && per_channel(o->s, lens))
                r.bias = &other;
            else if (!r.residual && same_layout(o->s, out))
                r.residual = &other;
            else
                return declined("an add of neither a bias nor a residual in the output's layout");
        } else if (op.get_if<ops::relu>()) {
            r.relu = true;
        } else {
            return declined(std::string(op.name()));
        }
        prev = &b;
    }
    if (prev == &anchor || &*std::prev(body.end())->inputs().at(0) != prev)
        return declined("a body returning another value than the chain's end");
    return r;
}

bool lower_conv_epilogue(lowering_context& ctx, const instruction& ins, const module& body, const instruction& anchor,
                         const std::vector<body_operand>& in, std::unordered_map<const instruction*, body_operand>& known) {
    if (&*std::prev(body.end())->inputs().at(0) == &anchor) return false;   // nothing after the convolution
    const shape& out = ctx.layout(ins);
    conv_epilogue_match m = match_conv_epilogue(body, anchor, out, known);
    if (!m.why_not.empty()) {
        ++ctx.conv_epilogues[m.why_not];
        return false;
    }
    std::byte* y = ctx.address(ins);
    conv_epilogue epi;
    epi.relu = m.relu;
    if (m.residual) {
        epi.residual = operand_of(*m.residual, known, &ctx, &ins)->ptr;
        // cuDNN reads z and writes y element by element: the same memory or apart, never overlapping.
        if (epi.residual != y && epi.residual < y + out.bytes() && y < epi.residual + out.bytes()) {
            ++ctx.conv_epilogues["a residual overlapping the output"];
            return false;
        }
    }
    if (m.bias) epi.bias = operand_of(*m.bias, known, &ctx, &ins)->ptr;
    body_operand result{y, out};
    if (lower_convolution(ctx, ins, anchor.get_operator(), in, result, &epi)) {
        ++ctx.conv_epilogues[""];
        return true;
    }
    // cuDNN has no engine: the convolution wrote the output, the rest is a kernel over it in place.
    ++ctx.conv_epilogues["cuDNN has no engine for the fusion"];
    known[&anchor] = result;
    add_body_kernel(ctx, ins, body, known, y, out);
    return true;
}

std::string conv_epilogue_note(const std::unordered_map<std::string, std::size_t>& counts) {
    std::size_t fused = 0, kernel = 0;
    std::vector<std::pair<std::string, std::size_t>> why;
    for (const auto& [reason, n] : counts) {
        (reason.empty() ? fused : kernel) += n;
        if (!reason.empty()) why.emplace_back(reason, n);
    }
    if (fused + kernel == 0) return {};
    std::sort(why.begin(), why.end(), [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    std::string r = cat("convolution epilogues: ", fused, " in cuDNN's fused call, ", kernel, " in a generated kernel");
    for (std::size_t i = 0; i < why.size(); ++i) r += cat(i ? ", " : " (", why[i].first, ": ", why[i].second);
    return why.empty() ? r : r + ")";
}

}  // namespace kiln::gpu
