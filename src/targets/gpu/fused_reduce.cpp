// Generated fused_reduce regions: one block per lane (a coordinate of the dims the reductions
// keep), one kernel for the whole region. The body is walked in order: each reduction becomes a
// pass over the lane (its threads striding over the reduced index r, then a block reduction) that
// computes its input inline from the region's operands; the values after a reduction that stay
// constant over the lane are computed once per lane; the result is stored per element of the lane
// when it varies along it (softmax), once per lane otherwise (a mean). Values are recomputed in
// each pass rather than kept, so any lane length fits without shared memory.
//
// Every value is evaluated in one of two frames. `full`: at the coordinate (lane, r) of the
// reductions' input, numpy-broadcast (a value of lens {8} or {2, 3, 1} is read where its dims
// align, so broadcast views are free). `kept`: at the lane's coordinate among the kept dims,
// for the results of reductions without keepdims and what is computed from them.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "ops/fused.hpp"
#include "ops/reduce.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/lane_util.hpp"

namespace kiln::gpu {
namespace {

enum class frame { full, kept };

class fused_reduce_generator {
public:
    fused_reduce_generator(lowering_context& ctx, const instruction& ins)
        : ctx_(ctx), ins_(ins), body_(*ins.module_inputs().at(0)), where_(ctx.where(ins)) {}

    void generate() {
        const instruction* first = nullptr;
        for (const auto& b : body_)
            if (b.get_operator().traits().reduction) {
                first = &b;
                break;
            }
        if (!first) fail("gpu: fused_reduce without a reduction: ", where_);
        x_ = first->inputs()[0]->get_shape().as_standard();
        sx_ = split(x_.ndim(), reduced_axes_of(first->get_operator(), x_.ndim()));
        for (auto d : sx_.kept) kept_lens_.push_back(x_.lens()[d]);
        params_ = cat(device_type(ins_.get_shape().type()), "* __restrict__ y");
        pointers_.push_back(ctx_.address(ins_));
        for (const auto& [b, o] : body_params(ctx_, ins_, body_)) known_[b] = o;

        const instruction* root = &*body_.get_return()->inputs().at(0);
        frame_lanes(*root);
        for (const auto& b : body_)
            if (b.get_operator().traits().reduction) reduce(b);
        store(*root);
        finish();
    }

private:
    // The full frame F: the reductions' input X, or, where the result is larger, the broadcast of
    // the two (a consumer broadcasts the reduced values over more leading dims, or over a kept dim
    // X has as 1: attention scores {2, 3, 4, 6} masked by a reduction over a mask {2, 1, 4, 6}).
    // Lanes are F's kept dims; a kept-frame value (shaped as X's kept dims) reads at the lane's
    // coordinate broadcast onto X's kept dims.
    void frame_lanes(const instruction& root) {
        std::vector<std::size_t> f = x_.lens();
        const auto& rl = root.get_shape().lens();
        if (frame_of(root) == frame::full && rl.size() >= f.size()) {
            f = rl;
            std::size_t off = f.size() - x_.ndim();
            for (std::size_t d = 0; d < x_.ndim(); ++d) {
                std::size_t xl = x_.lens()[d], gl = rl[off + d];
                bool reduced = std::find(sx_.reduced.begin(), sx_.reduced.end(), d) != sx_.reduced.end();
                if (gl == xl || gl == 1) f[off + d] = xl;
                else if (xl != 1 || reduced)
                    fail("gpu: fused_reduce result of lens ", lens_to_string(rl), " is not a broadcast of the reduced ",
                         lens_to_string(x_.lens()), ": ", where_);
            }
        }
        f_lens_ = f;
        std::vector<std::size_t> reduced;
        for (auto d : sx_.reduced) reduced.push_back(d + f.size() - x_.ndim());
        split_ = split(f.size(), reduced);
        std::vector<std::size_t> lane_lens;
        for (auto d : split_.kept) lane_lens.push_back(f[d]);
        if (lane_lens == kept_lens_) {
            kept_lane_ = "lane";
            return;
        }
        std::vector<std::size_t> all(lane_lens.size());
        for (std::size_t d = 0; d < all.size(); ++d) all[d] = d;
        consts_ += cat("    constexpr auto KL = ", layout_of(broadcast_to(shape(x_.type(), kept_lens_), lane_lens), all), ";\n");
        kept_lane_ = "KL.offset(lane)";
    }

    std::string here(const instruction& b) const { return cat(where_, ", body ", describe(body_, b)); }

    // Operands: the region's inputs, views of them and literals, read through their strides.
    const body_operand* operand(const instruction& b) {
        if (auto it = known_.find(&b); it != known_.end()) return &it->second;
        if (b.is_literal() && b.get_literal().get_argument().get_shape().elements() != 1) {
            return &(known_[&b] = {ctx_.upload(b.get_literal().get_argument(), here(b)), b.get_shape()});
        }
        if (is_view(b)) {
            int alias = view_input(b);
            if (const body_operand* src = operand(*b.inputs()[alias])) return &(known_[&b] = view_operand(b, *src));
        }
        return nullptr;
    }
    static bool is_view(const instruction& b) { return !b.is_param() && !b.is_literal() && !b.is_return() && view_input(b) >= 0; }
    static int view_input(const instruction& b) {
        std::vector<shape> in;
        for (auto i : b.inputs()) in.push_back(i->get_shape());
        return b.get_operator().output_alias(in);
    }

    // The offset expression of operand o in frame f, and whether it varies along the lane.
    std::pair<std::string, bool> offset(const instruction& b, const body_operand& o, frame f) {
        auto key = std::make_pair(&b, f);
        if (auto it = offsets_.find(key); it != offsets_.end()) return it->second;
        std::string k = cat("O", offsets_.size());
        std::pair<std::string, bool> r;
        if (f == frame::kept) {
            shape s = broadcast_checked(o.s, kept_lens_, b);
            std::vector<std::size_t> all(s.ndim());
            for (std::size_t d = 0; d < all.size(); ++d) all[d] = d;
            consts_ += cat("    constexpr auto ", k, " = ", layout_of(s, all), ";\n");
            r = {cat(k, ".offset(", kept_lane_, ")"), false};
        } else {
            shape s = broadcast_checked(o.s, f_lens_, b);
            bool varies = false;
            for (auto d : split_.reduced) varies = varies || s.strides()[d] != 0;
            consts_ += cat("    constexpr auto ", k, "k = ", layout_of(s, split_.kept), ";\n");
            if (varies) consts_ += cat("    constexpr auto ", k, "r = ", layout_of(s, split_.reduced), ";\n");
            r = {varies ? cat(k, "k.offset(lane) + ", k, "r.offset(r)") : cat(k, "k.offset(lane)"), varies};
        }
        return offsets_[key] = r;
    }
    shape broadcast_checked(const shape& s, const std::vector<std::size_t>& lens, const instruction& b) const {
        bool ok = s.ndim() <= lens.size();
        for (std::size_t d = 0; ok && d < s.ndim(); ++d) {
            std::size_t l = lens[lens.size() - s.ndim() + d];
            ok = s.lens()[d] == l || s.lens()[d] == 1;
        }
        if (!ok) fail("gpu: fused_reduce operand of lens ", lens_to_string(s.lens()), " does not broadcast to ",
                      lens_to_string(lens), ": ", here(b));
        return broadcast_to(s, lens);
    }
    std::string pointer(const instruction& b, const body_operand& o) {
        if (auto it = pointer_names_.find(&b); it != pointer_names_.end()) return it->second;
        std::string p = cat("p", pointers_.size());
        params_ += cat(", const ", device_type(o.s.type()), "* __restrict__ ", p);
        pointers_.push_back(o.ptr);
        return pointer_names_[&b] = p;
    }

    // Whether b's value in frame f changes along the lane (so it is computed inside a pass).
    bool varies(const instruction& b, frame f) {
        if (f == frame::kept || b.get_operator().traits().reduction) return false;
        auto key = std::make_pair(&b, f);
        if (auto it = varies_.find(key); it != varies_.end()) return it->second;
        bool v = false;
        if (const body_operand* o = operand(b)) v = offset(b, *o, f).second;
        else if (b.is_literal()) v = false;
        else if (b.get_operator().traits().broadcast_view) v = spread_of(b) == spread::aligned && varies(*b.inputs()[0], f);
        else
            for (auto i : b.inputs()) v = v || varies(*i, f);
        return varies_[key] = v;
    }

    // The expression of b in frame f, emitting the statements it needs into `out` (a pass's
    // loop body for values that vary, the lane's code otherwise); memo holds what `out` has.
    std::string value(const instruction& b, frame f, std::string& out, std::map<std::pair<const instruction*, frame>, std::string>& memo) {
        if (!varies(b, f) && &memo != &lane_memo_) return value(b, f, lane_, lane_memo_);
        auto key = std::make_pair(&b, f);
        if (auto it = memo.find(key); it != memo.end()) return it->second;
        std::string indent = &out == &lane_ ? "        " : "            ";
        std::string expr;
        if (const body_operand* o = operand(b)) {
            expr = cat("kiln::load(", pointer(b, *o), "[", offset(b, *o, f).first, "])");
        } else if (b.is_literal()) {
            return memo[key] = scalar_literal(b.get_literal().get_argument());
        } else if (b.get_operator().traits().reduction) {
            auto it = reduced_.find(&b);
            if (it == reduced_.end()) fail("gpu: a reduction used before it is computed: ", here(b));
            return it->second;
        } else if (b.get_operator().traits().broadcast_view) {
            if (spread_of(b) == spread::from_kept) return memo[key] = value(*b.inputs()[0], frame::kept, lane_, lane_memo_);
            if (f == frame::kept && b.inputs()[0]->get_shape().lens() != b.get_shape().lens())
                fail("gpu: fused_reduce broadcast the generated kernel cannot follow: ", here(b));
            return memo[key] = value(*b.inputs()[0], f, out, memo);
        } else if (b.get_operator().traits().pointwise) {
            std::vector<std::string> args;
            for (auto i : b.inputs()) args.push_back(value(*i, f, out, memo));
            expr = pointwise_value(b, args, here(b), checks_);
        } else {
            fail("gpu: fused_reduce body op the generated kernel does not take: ", here(b));
        }
        std::string v = cat("v", counter_++);
        out += cat(indent, "const ", compute_type(b.get_shape().type()), " ", v, " = ", expr, ";\n");
        return memo[key] = v;
    }
    // How a broadcast view of a computed value reads its source: at the same coordinate
    // (numpy-style), or, for a view that spreads a value of the kept frame (a reduction without
    // keepdims) back over the lane, at the lane's coordinate. Anything else is an error.
    enum class spread { aligned, from_kept };
    spread spread_of(const instruction& b) {
        if (auto it = spreads_.find(&b); it != spreads_.end()) return it->second;
        static std::byte base[1];
        shape src = b.inputs()[0]->get_shape().as_standard();
        body_operand v = view_operand(b, {base, src});
        if (v.ptr == base && v.s.strides() == broadcast_to(src, b.get_shape().lens()).strides())
            return spreads_[&b] = spread::aligned;
        bool onto_kept = v.ptr == base && v.s.lens() == x_.lens() && src.lens() == kept_lens_;
        for (std::size_t i = 0; onto_kept && i < sx_.kept.size(); ++i)
            onto_kept = v.s.strides()[sx_.kept[i]] == src.strides()[i] || src.lens()[i] == 1;
        for (auto d : sx_.reduced) onto_kept = onto_kept && v.s.strides()[d] == 0;
        if (!onto_kept) fail("gpu: fused_reduce broadcast the generated kernel cannot follow: ", here(b));
        return spreads_[&b] = spread::from_kept;
    }

    // Values depending on a reduction without keepdims are in the kept frame.
    frame frame_of(const instruction& b) {
        if (auto it = frames_.find(&b); it != frames_.end()) return it->second;
        frame f = frame::full;
        if (b.get_operator().traits().reduction) {
            if (b.get_shape().ndim() != x_.ndim()) f = frame::kept;
        } else if (b.get_operator().traits().broadcast_view && !operand(b)) {
            if (spread_of(b) == spread::aligned) f = frame_of(*b.inputs()[0]);
        } else if (!operand(b) && !b.is_literal()) {
            for (auto i : b.inputs())
                if (frame_of(*i) == frame::kept) f = frame::kept;
        }
        return frames_[&b] = f;
    }

    void reduce(const instruction& b) {
        if (!lane_reducible(b) || b.inputs()[0]->get_shape().lens() != x_.lens() ||
            reduced_axes_of(b.get_operator(), x_.ndim()) != sx_.reduced)
            fail("gpu: fused_reduce reduction the generated kernel does not take: ", here(b));
        dtype in = b.inputs()[0]->get_shape().type();
        std::string acc = acc_type(in);
        auto k = *kind_of(b.get_operator(), in);
        if (!smem_.count(acc)) smem_[acc] = cat("smem", smem_.size());
        std::string loop;
        std::map<std::pair<const instruction*, frame>, std::string> memo;
        std::string x = value(*b.inputs()[0], frame::full, loop, memo);
        std::string r = cat("l", counter_++);
        std::string combine = cat("[](", acc, " a, ", acc, " b) { return ", k.combine, "; }");
        lane_ += cat("        ", compute_type(b.get_shape().type()), " ", r, ";\n",
                     "        {\n            ", acc, " acc = ", k.init, ";\n",
                     "            for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) {\n", indent(loop),
                     "                const ", acc, " v = (", acc, ")(", x, ");\n",
                     "                acc = ", combine, "(acc, ", k.map, ");\n            }\n",
                     "            acc = kiln::block_reduce(acc, ", combine, ", (", acc, ")(", k.init, "), ", smem_[acc], ");\n",
                     "            ", r, " = ", stored_value(b.get_shape().type(), k.final), ";\n        }\n");
        reduced_[&b] = r;
    }
    static std::string indent(const std::string& s) {
        std::string r;
        std::size_t pos = 0;
        while (pos < s.size()) {
            std::size_t e = s.find('\n', pos);
            r += "    " + s.substr(pos, e - pos + 1);
            pos = e + 1;
        }
        return r;
    }

    void store(const instruction& root) {
        frame f = frame_of(root);
        const shape y = ins_.get_shape();
        std::string ty = device_type(y.type());
        if (varies(root, f)) {
            std::string loop;
            std::map<std::pair<const instruction*, frame>, std::string> memo;
            std::string v = value(root, f, loop, memo);
            shape ys = broadcast_to(y, f_lens_);
            consts_ += cat("    constexpr auto Yk = ", layout_of(ys, split_.kept), ";\n    constexpr auto Yr = ",
                           layout_of(ys, split_.reduced), ";\n");
            lane_ += cat("        for (kiln::index_t r = threadIdx.x; r < R; r += blockDim.x) {\n", loop,
                         "            y[Yk.offset(lane) + Yr.offset(r)] = kiln::storer<", ty, ">::from(", v, ");\n        }\n");
            return;
        }
        std::string v = value(root, f, lane_, lane_memo_);
        shape ys = f == frame::kept ? broadcast_to(y, kept_lens_) : broadcast_to(y, f_lens_);
        std::vector<std::size_t> dims = split_.kept;
        if (f == frame::kept) {
            dims.clear();
            for (std::size_t d = 0; d < ys.ndim(); ++d) dims.push_back(d);
        }
        consts_ += cat("    constexpr auto Yk = ", layout_of(ys, dims), ";\n");
        lane_ += cat("        if (threadIdx.x == 0) y[Yk.offset(lane)] = kiln::storer<", ty, ">::from(", v, ");\n");
    }

    void finish() {
        if (checks_.any()) {
            params_ += ", kiln::error_slot* err";
            pointers_.push_back(checks_.slot(ctx_, ins_));
        }
        shape fs(x_.type(), f_lens_);
        std::size_t lanes = product(fs, split_.kept);
        std::string shared;
        for (const auto& [acc, name] : smem_) shared += cat("    __shared__ ", acc, " ", name, "[32];\n");
        std::string code = cat("#include \"kiln_lane.cuh\"\n", checks_.any() ? "#include \"kiln_error.cuh\"\n" : "",
                               "#include \"scalar_helpers.h\"\n",
                               "extern \"C\" __global__ void __launch_bounds__(256) kiln_fused_reduce(", params_, ") {\n",
                               shared, consts_, "    constexpr kiln::index_t R = ", product(fs, split_.reduced), "ull;\n",
                               "    for (kiln::index_t lane = blockIdx.x; lane < ", lanes, "ull; lane += gridDim.x) {\n", lane_,
                               "    }\n}\n");
        ctx_.add_kernel(ins_, {"kiln_fused_reduce", code, where_}, lane_launch(lanes), pointers_);
    }

    lowering_context& ctx_;
    const instruction& ins_;
    const module& body_;
    std::string where_;
    shape x_;                                   // the reductions' input X, standard
    lane_split sx_;                             // X's kept and reduced dims
    std::vector<std::size_t> kept_lens_;        // X's kept lens
    std::vector<std::size_t> f_lens_;           // the full frame F
    lane_split split_;                          // F's kept and reduced dims
    std::string kept_lane_;                     // the lane's index among X's kept dims (an expression)
    std::unordered_map<const instruction*, body_operand> known_;
    std::map<std::pair<const instruction*, frame>, std::pair<std::string, bool>> offsets_;
    std::map<std::pair<const instruction*, frame>, bool> varies_;
    std::unordered_map<const instruction*, frame> frames_;
    std::unordered_map<const instruction*, spread> spreads_;
    std::unordered_map<const instruction*, std::string> pointer_names_, reduced_;
    std::map<std::string, std::string> smem_;   // accumulator type -> its shared buffer
    std::map<std::pair<const instruction*, frame>, std::string> lane_memo_;
    std::string params_, consts_, lane_;
    std::vector<void*> pointers_;
    divisor_checks checks_{"lane"};   // a zero divisor is recorded with its lane
    std::size_t counter_ = 0;
};

const gpu_lowering_registrar fused_reduce_lowering{{
    "fused reduction region (one generated lane kernel)",
    [](const instruction& ins) {
        if (!ins.get_operator().get_if<ops::fused_reduce>()) return false;
        for (const auto& b : *ins.module_inputs().at(0))
            if (b.get_operator().traits().reduction && !lane_reducible(b)) return false;
        return true;
    },
    [](lowering_context& ctx, const instruction& ins) { fused_reduce_generator(ctx, ins).generate(); },
    false,
    false,
    true,
}};

}  // namespace
}  // namespace kiln::gpu
