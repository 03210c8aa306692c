#include "targets/gpu/layout_nhwc.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "core/eval.hpp"
#include "core/reflect.hpp"
#include "ops/convolution.hpp"
#include "ops/fused.hpp"
#include "ops/pooling.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {

shape channels_last(const shape& s) {
    const auto& l = s.lens();
    std::size_t c = l[1], h = l[2], w = l[3];
    return shape(s.type(), l, {h * w * c, 1, w * c, c});
}

bool is_channels_last(const shape& s) { return s.ndim() == 4 && same_layout(s, channels_last(s)); }

bool same_layout(const shape& a, const shape& b) {
    if (a.type() != b.type() || a.lens() != b.lens()) return false;
    for (std::size_t d = 0; d < a.ndim(); ++d)
        if (a.lens()[d] > 1 && a.strides()[d] != b.strides()[d]) return false;
    return true;
}

const instruction* convolution_of(const instruction& ins) {
    if (ins.get_operator().get_if<ops::convolution>()) return &ins;
    if (!ins.get_operator().get_if<ops::fused_epilogue>()) return nullptr;
    for (const auto& b : *ins.module_inputs().at(0))
        if (b.get_operator().get_if<ops::convolution>()) return &b;
    return nullptr;
}

bool channels_last_convolution(const shape& x, std::int64_t group) {
    static const bool enabled = [] {
        const char* v = std::getenv("KILN_GPU_NHWC");
        return !v || std::string_view(v) != "0";
    }();
    return enabled && x.ndim() == 4 && (x.type() == dtype::float16 || x.type() == dtype::bfloat16) && group >= 1;
}

bool nhwc_convolution(const instruction& ins) {
    const instruction* c = convolution_of(ins);
    return c && channels_last_convolution(c->inputs().at(0)->get_shape(), c->get_operator().get<ops::convolution>().group);
}

namespace {

const gpu_lowering* lowering_of(const instruction& ins) {
    if (ins.is_param() || ins.is_literal() || ins.is_return() || needs_no_step(ins)) return nullptr;
    return find_lowering(ins);
}

// Every user reads its inputs through their strides (ctx.layout); main does not return it.
bool read_by_stride_readers(const instruction& ins) {
    if (ins.outputs().empty()) return false;
    return std::all_of(ins.outputs().begin(), ins.outputs().end(), [](auto u) {
        const gpu_lowering* l = lowering_of(*u);
        return l && l->reads_layouts;
    });
}

bool may_be_channels_last(const instruction& ins) {
    const shape& s = ins.get_shape();
    if (s.is_tuple() || s.dynamic() || s.ndim() != 4 || !is_float(s.type())) return false;
    const gpu_lowering* l = lowering_of(ins);
    return l && l->writes_layouts && read_by_stride_readers(ins);
}

}  // namespace

std::unordered_map<const instruction*, shape> choose_layouts(const module& main) {
    std::unordered_map<const instruction*, shape> r;
    auto nhwc = [&](const instruction& i) { return r.count(&i) > 0; };
    // Forward: the NHWC convolutions, and kernels computing from an NHWC value of their size (the
    // activations, residual adds and poolings between convolutions).
    for (const auto& ins : main) {
        if (!may_be_channels_last(ins)) continue;
        bool from_nhwc = std::any_of(ins.inputs().begin(), ins.inputs().end(), [&](auto i) {
            return nhwc(*i) && (i->get_shape().lens() == ins.get_shape().lens() || ins.get_operator().get_if<ops::pooling>());
        });
        if (convolution_of(ins) ? nhwc_convolution(ins) : from_nhwc) r.emplace(&ins, channels_last(ins.get_shape()));
    }
    // Backward: a kernel feeding an NHWC convolution from NCHW values writes NHWC itself, so the
    // transpose at the edge costs no kernel of its own.
    for (auto it = main.end(); it != main.begin();) {
        const instruction& ins = *--it;
        if (nhwc(ins) || convolution_of(ins) || !may_be_channels_last(ins)) continue;
        if (std::any_of(ins.outputs().begin(), ins.outputs().end(), [](auto u) { return nhwc_convolution(*u); }))
            r.emplace(&ins, channels_last(ins.get_shape()));
    }
    return r;
}

namespace {

// The input of `ins` that is its convolution's filter, or -1 (a fused epilogue's body may also
// hold it as a literal of its own, or compute it).
int filter_input(const instruction& ins, const instruction& conv) {
    if (&conv == &ins) return 1;
    const instruction& w = *conv.inputs().at(1);
    if (!w.is_param()) return -1;
    const module& body = *ins.module_inputs().at(0);
    auto names = body.parameter_names();
    auto at = std::find(names.begin(), names.end(), body.parameter_name(w));
    return at == names.end() ? -1 : static_cast<int>(at - names.begin());
}

}  // namespace

void nhwc_weights::apply(module& m) const {
    for (auto ins = m.begin(); ins != m.end(); ++ins) {
        if (!nhwc_convolution(*ins)) continue;
        int k = filter_input(*ins, *convolution_of(*ins));
        if (k < 0) continue;
        instruction_ref w = ins->inputs()[static_cast<std::size_t>(k)];
        if (!w->is_literal() || !w->get_shape().standard()) continue;
        // {M, C, kH, kW} -> {M, kH, kW, C} as a new literal, viewed back as {M, C, kH, kW}.
        const argument& a = w->get_literal().get_argument();
        argument khwc = compute_op(make_op("transpose", value{{"permutation", to_value(std::vector<std::int64_t>{0, 2, 3, 1})}}),
                                   std::span(&a, 1));
        auto lit = m.insert_literal(ins, literal(khwc));
        auto view = m.insert_instruction(ins, make_op("transpose", value{{"permutation", to_value(std::vector<std::int64_t>{0, 3, 1, 2})}}),
                                         {lit});
        std::vector<instruction_ref> inputs = ins->inputs();
        inputs[static_cast<std::size_t>(k)] = view;
        m.replace_instruction(ins, ins->get_operator(), inputs, ins->module_inputs());
    }
}

}  // namespace kiln::gpu
