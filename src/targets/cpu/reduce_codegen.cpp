// fused_reduce regions as generated code (float32, float16, bfloat16: the low types loaded as
// float, each op's result rounded to its type as ref rounds it, sums in double): one function over the lanes (the coordinates
// of the dims the reductions keep), the lanes split over the pool for large tensors. Per lane the
// body is walked in order: each reduction is one vectorised pass over the reduced coordinates r
// that computes its input inline from the region's operands (values that vary along r are
// recomputed in each pass that needs them, never stored); values constant along the lane (the
// reductions' results and what is computed from them alone) are computed once per lane; the result
// is stored per element of the lane when it varies along it (softmax), once per lane otherwise
// (a mean). So softmax is three passes over a row in cache: max, sum of exp, the quotient.
//
// Operands are addressed in the frame of the reductions' input X (numpy broadcasting, strides 0
// where they broadcast); a reduction without keepdims gives a lane value that only the result or
// other lane values may use (its consumers are addressed in the kept dims' frame otherwise).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "ops/convert.hpp"
#include "ops/fused.hpp"
#include "targets/cpu/kernels.hpp"
#include "targets/cpu/low_precision.hpp"

namespace kiln {
namespace {

using leaf = pointwise_library::leaf;
using cpu_codegen::float_kind;
using cpu_codegen::round_to;

// How a reduction starts, adds one value v, and ends (acc is double where it sums, for rows of
// any length; float for max and min).
struct reduction_code {
    const char* acc_type;
    const char* init;
    const char* omp;     // the simd reduction clause
    const char* add;     // statement over acc and v
    std::string end;     // expression of acc (and N, the reduced count)
};

std::optional<reduction_code> reduction_of(std::string_view name) {
    if (name == "reduce_sum") return reduction_code{"double", "0", "+", "acc += v;", "(float)acc"};
    if (name == "reduce_mean") return reduction_code{"double", "0", "+", "acc += v;", "(float)(acc / N)"};
    if (name == "reduce_sum_square") return reduction_code{"double", "0", "+", "acc += (double)v * v;", "(float)acc"};
    if (name == "reduce_l1") return reduction_code{"double", "0", "+", "acc += fabs((double)v);", "(float)acc"};
    if (name == "reduce_l2") return reduction_code{"double", "0", "+", "acc += (double)v * v;", "(float)sqrt(acc)"};
    if (name == "reduce_log_sum") return reduction_code{"double", "0", "+", "acc += v;", "(float)log(acc)"};
    if (name == "reduce_prod") return reduction_code{"double", "1", "*", "acc *= v;", "(float)acc"};
    // NaN propagates (as ref): a flag reduced beside acc, since the vector lanes' max drops NaN.
    if (name == "reduce_max")
        return reduction_code{"float", "-__builtin_inff()", "max", "acc = v > acc ? v : acc; accnan |= v != v;",
                              "accnan ? __builtin_nanf(\"\") : acc"};
    if (name == "reduce_min")
        return reduction_code{"float", "__builtin_inff()", "min", "acc = v < acc ? v : acc; accnan |= v != v;",
                              "accnan ? __builtin_nanf(\"\") : acc"};
    return std::nullopt;   // others: the reference runs the region
}

class reduce_generator {
public:
    reduce_generator(const instruction& ins, std::vector<leaf>& leaves) : ins_(ins), leaves_(leaves) {}

    std::string generate(const std::string& fn) {
        const module& body = *ins_.module_inputs()[0];
        const auto* op = ins_.get_operator().get_if<ops::fused_reduce>();
        const instruction* first = nullptr;
        for (const auto& b : body)
            if (b.get_operator().traits().reduction) {
                first = &b;
                break;
            }
        if (!op || !first) return "";
        x_ = first->inputs()[0]->get_shape().lens();
        std::vector<bool> reduced(x_.size(), false);
        for (auto a : op->axes) {
            auto d = a < 0 ? a + static_cast<std::int64_t>(x_.size()) : a;
            if (d < 0 || d >= static_cast<std::int64_t>(x_.size())) return "";
            reduced[static_cast<std::size_t>(d)] = true;
        }
        for (std::size_t d = 0; d < x_.size(); ++d) (reduced[d] ? red_ : kept_).push_back(d);
        lanes_ = count(kept_), n_ = count(red_);
        if (n_ == 0) return "";
        for (auto p : body.parameters()) params_.push_back(&*p);
        for (const auto& b : body) {
            if (b.is_return()) {
                if (b.inputs().size() != 1 || !store(*b.inputs()[0])) return "";
                break;
            }
            if (!float_kind(b.get_shape().type()) || b.get_shape().dynamic() || !visit(b)) return "";
        }
        return assemble(fn);
    }

private:
    std::size_t count(const std::vector<std::size_t>& dims) const {
        std::size_t p = 1;
        for (auto d : dims) p *= x_[d];
        return p;
    }
    // Coordinate of X dim d from the lane index l (kept dims) or the reduced index r.
    std::string coord(std::size_t d) const {
        bool red = std::find(red_.begin(), red_.end(), d) != red_.end();
        const auto& dims = red ? red_ : kept_;
        std::size_t div = 1;
        bool last = true;
        for (auto k : dims)
            if (k > d) div *= x_[k], last = false;
        const char* i = red ? "r" : "l";
        bool only = dims.size() == 1;
        if (only) return i;   // the one dim of its kind: the index itself
        std::string c = last ? std::string(i) : "(" + std::string(i) + " / " + std::to_string(div) + "L)";
        return "(" + c + " % " + std::to_string(x_[d]) + "L)";
    }
    // sum over dims of coord * stride, for the kept or the reduced dims.
    std::string offset(const std::vector<std::size_t>& strides, bool red) const {
        std::string s;
        for (auto d : red ? red_ : kept_)
            if (strides[d]) s += (s.empty() ? "" : " + ") + coord(d) + " * " + std::to_string(strides[d]) + "L";
        return s.empty() ? "0" : s;
    }
    // A region operand read in X's frame: a lane value when it is constant along r.
    bool add_leaf(const instruction& b, int arg, const argument* constant, const shape& mem) {
        if (!float_kind(mem.type()) || mem.ndim() > x_.size()) return false;
        std::vector<std::size_t> st(x_.size(), 0);
        std::size_t lead = x_.size() - mem.ndim();
        for (std::size_t d = 0; d < mem.ndim(); ++d) {
            if (mem.lens()[d] == x_[lead + d]) st[lead + d] = mem.lens()[d] == 1 ? 0 : mem.strides()[d];
            else if (mem.lens()[d] != 1) return false;
        }
        std::size_t k = leaves_.size();
        leaves_.push_back({arg, constant, st, mem.type()});
        std::string base = "base" + std::to_string(k);
        lane_code_ += "        const long " + base + " = " + offset(st, false) + ";\n";
        std::string off = offset(st, true);
        std::string load =
            cpu_codegen::load(mem.type(), "in" + std::to_string(k) + "[" + base + (off == "0" ? "" : " + " + off) + "]");
        if (off == "0") return lane(b, load);
        full_[&b] = "const float " + name(b) + " = " + load + ";";
        return true;
    }
    std::string name(const instruction& b) {
        auto it = names_.find(&b);
        if (it != names_.end()) return it->second;
        return names_[&b] = "v" + std::to_string(names_.size());
    }
    bool lane(const instruction& b, const std::string& e) {
        lane_code_ += "        const float " + name(b) + " = " + e + ";\n";
        lanes_values_.insert(&b);
        return true;
    }
    bool is_lane(const instruction& b) const { return lanes_values_.count(&b) > 0; }

    bool visit(const instruction& b) {
        if (b.is_param() || b.is_literal()) {
            for (auto u : b.outputs())   // read through broadcast views: the view is the leaf
                if (!u->get_operator().traits().broadcast_view) return add_leaf(b, arg_of(b), constant_of(b), mem_of(b));
            return true;
        }
        const operation& op = b.get_operator();
        if (op.traits().broadcast_view) {
            const instruction& in = *b.inputs()[0];
            if (in.is_param() || in.is_literal()) {
                if (in.is_param() && !mem_of(in).standard()) return false;   // view strides assume standard
                return add_leaf(b, arg_of(in), constant_of(in), b.get_shape());
            }
            if (b.get_shape().lens() != x_) return false;
            if (no_keepdims_.count(&in) && !spreads_lanes(b.get_shape())) return false;
            names_[&b] = name(in);
            if (is_lane(in)) lanes_values_.insert(&b);
            else full_[&b] = "";   // an alias: its input's statement defines the name
            alias_[&b] = &in;
            return true;
        }
        if (op.traits().reduction) return reduce(b);
        std::vector<std::string> args;
        bool lane_only = true, x_frame = false;
        for (auto in : b.inputs()) {
            args.push_back(name(*in));
            lane_only = lane_only && is_lane(*in);
            if (no_keepdims_.count(&*in)) no_keepdims_.insert(&b);
            else x_frame = x_frame || in->get_shape().elements() > 1;
        }
        std::optional<std::string> e;
        if (const auto* c = op.get_if<ops::convert>()) {   // between float types: a rounding
            if (b.inputs().size() == 1 && float_kind(c->target_type) && float_kind(b.inputs()[0]->get_shape().type()))
                e = args[0];
        } else {
            e = op.scalar_expr(args);
        }
        if (!e) return false;
        std::string value = round_to(b.get_shape().type(), "float(" + *e + ")");
        // A kept-frame value meets only kept-frame values and scalars (frames never mix).
        if (no_keepdims_.count(&b) && (!lane_only || x_frame)) return false;
        if (!lane_only && b.get_shape().lens() != x_) return false;
        if (lane_only) return lane(b, value);
        full_[&b] = "const float " + name(b) + " = " + value + ";";
        return true;
    }
    // Whether a view of a kept-frame value onto X puts the kept dims in place (a broadcast of a
    // mean without keepdims back over the reduced dims): then each element of X reads its lane.
    bool spreads_lanes(const shape& view) const {
        std::size_t expect = 1;
        for (std::size_t k = kept_.size(); k-- > 0;) {
            std::size_t d = kept_[k];
            if (x_[d] != 1 && view.strides()[d] != expect) return false;
            expect *= x_[d];
        }
        for (auto d : red_)
            if (x_[d] != 1 && view.strides()[d] != 0) return false;
        return true;
    }
    // A pass over r computing its input, then its result as a lane value.
    bool reduce(const instruction& b) {
        const instruction& in = *b.inputs()[0];
        if (in.get_shape().lens() != x_ || no_keepdims_.count(&in)) return false;
        value attrs = b.get_operator().attributes();
        if (attrs.contains("keepdims") && !attrs.at("keepdims").as_bool()) no_keepdims_.insert(&b);
        if (b.name() == "reduce_log_sum_exp") return log_sum_exp(b, in);
        auto code = reduction_of(b.name());
        if (!code) return false;
        std::string acc = "acc" + std::to_string(names_.size());
        std::string add = code->add;
        auto replace = [](std::string s, const std::string& from, const std::string& to) {
            for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
            return s;
        };
        add = replace(replace(add, "acc", acc), "v", "VALUE");
        add = replace(add, "VALUE", name(in));
        std::string end = replace(replace(code->end, "acc", acc), "N", std::to_string(n_) + ".0");
        lane_code_ += std::string("        ") + code->acc_type + " " + acc + " = " + code->init + ";\n";
        bool nan = add.find(acc + "nan") != std::string::npos;
        if (nan) lane_code_ += "        int " + acc + "nan = 0;\n";
        if (is_lane(in)) {   // constant along r: n equal values
            lane_code_ += "        for (long r = 0; r < " + std::to_string(n_) + "L; ++r) { " + add + " }\n";
        } else {
            lane_code_ += std::string("#pragma omp simd reduction(") + code->omp + " : " + acc + ")" +
                          (nan ? " reduction(| : " + acc + "nan)" : "") + "\n";
            lane_code_ += "        for (long r = 0; r < " + std::to_string(n_) + "L; ++r) {\n" + statements(in) +
                          "            " + add + "\n        }\n";
        }
        return lane(b, round_to(b.get_shape().type(), end));
    }
    // log(sum exp(v - m)) + m with m the max (as ref: an infinite or NaN max is the result): a
    // pass for the max, then one for the sum, in double.
    bool log_sum_exp(const instruction& b, const instruction& in) {
        std::string k = std::to_string(names_.size()), v = name(in), body = statements(in), n = std::to_string(n_);
        std::string m = "lsem" + k, nan = "lsen" + k, sum = "lses" + k;
        lane_code_ += "        float " + m + " = -__builtin_inff();\n        int " + nan + " = 0;\n";
        lane_code_ += "#pragma omp simd reduction(max : " + m + ") reduction(| : " + nan + ")\n";
        lane_code_ += "        for (long r = 0; r < " + n + "L; ++r) {\n" + body + "            " + m + " = " + v + " > " + m +
                      " ? " + v + " : " + m + "; " + nan + " |= " + v + " != " + v + ";\n        }\n";
        lane_code_ += "        if (" + nan + ") " + m + " = __builtin_nanf(\"\");\n";
        lane_code_ += "        double " + sum + " = 0;\n        if (!__builtin_isinf(" + m + ") && " + m + " == " + m + ") {\n";
        lane_code_ += "#pragma omp simd reduction(+ : " + sum + ")\n";
        lane_code_ += "        for (long r = 0; r < " + n + "L; ++r) {\n" + body + "            " + sum + " += exp((double)" + v +
                      " - " + m + ");\n        }\n        }\n";
        return lane(b, round_to(b.get_shape().type(), "((__builtin_isinf(" + m + ") || " + m + " != " + m + ") ? " + m +
                                                          " : (float)(log(" + sum + ") + " + m + "))"));
    }
    // The statements computing full value `root` inside a pass, in body order.
    std::string statements(const instruction& root) {
        std::unordered_set<const instruction*> need;
        std::vector<const instruction*> stack{&root};
        while (!stack.empty()) {
            const instruction* i = stack.back();
            stack.pop_back();
            if (is_lane(*i) || !need.insert(i).second) continue;
            if (auto a = alias_.find(i); a != alias_.end()) stack.push_back(a->second);
            else if (!i->is_param() && !i->is_literal() && !i->get_operator().traits().broadcast_view)
                for (auto in : i->inputs()) stack.push_back(&*in);
        }
        std::string s;
        for (const auto& b : *ins_.module_inputs()[0])
            if (need.count(&b) && full_.count(&b) && !full_[&b].empty()) s += "            " + full_[&b] + "\n";
        return s;
    }
    bool store(const instruction& root) {
        const shape& out = ins_.get_shape();
        if (!float_kind(out.type())) return false;
        if (is_lane(root)) {
            if (out.elements() != lanes_) return false;
            lane_code_ += "        y[l] = " + cpu_codegen::store(out.type(), name(root)) + ";\n";
            return true;
        }
        if (out.lens() != x_) return false;
        std::vector<std::size_t> st = out.as_standard().strides();
        std::string base = offset(st, false), off = offset(st, true);
        lane_code_ += "#pragma omp simd\n        for (long r = 0; r < " + std::to_string(n_) + "L; ++r) {\n" +
                      statements(root) + "            y[" + base + " + " + off + "] = " + cpu_codegen::store(out.type(), name(root)) +
                      ";\n        }\n";
        return true;
    }
    std::string assemble(const std::string& fn) {
        std::string src = "extern \"C\" void " + fn + "(const void* const* in_, void* out_) {\n";
        for (std::size_t k = 0; k < leaves_.size(); ++k) {
            std::string t = cpu_codegen::c_type(leaves_[k].type);
            src += "    const " + t + "* in" + std::to_string(k) + " = static_cast<const " + t + "*>(in_[" + std::to_string(k) + "]);\n";
        }
        std::string yt = cpu_codegen::c_type(ins_.get_shape().type());
        src += "    " + yt + "* y = static_cast<" + yt + "*>(out_);\n";
        if (lanes_ > 1 && lanes_ * n_ >= 65536) src += "#pragma omp parallel for\n";
        src += "    for (long l = 0; l < " + std::to_string(lanes_) + "L; ++l) {\n" + lane_code_ + "    }\n}\n";
        return src;
    }
    int arg_of(const instruction& b) const {
        for (std::size_t i = 0; i < params_.size(); ++i)
            if (params_[i] == &b) return static_cast<int>(i);
        return -1;
    }
    const argument* constant_of(const instruction& b) const {
        return b.is_literal() ? &b.get_literal().get_argument() : nullptr;
    }
    const shape& mem_of(const instruction& b) const {
        int i = arg_of(b);
        return i >= 0 ? ins_.inputs()[static_cast<std::size_t>(i)]->get_shape() : b.get_shape();
    }

    const instruction& ins_;
    std::vector<leaf>& leaves_;
    std::vector<std::size_t> x_, kept_, red_;
    std::size_t lanes_ = 1, n_ = 1;
    std::vector<const instruction*> params_;
    std::unordered_map<const instruction*, std::string> names_, full_;
    std::unordered_map<const instruction*, const instruction*> alias_;
    std::unordered_set<const instruction*> lanes_values_, no_keepdims_;
    std::string lane_code_;
};

}  // namespace

std::string generate_fused_reduce(const instruction& ins, const std::string& fn, std::vector<pointwise_library::leaf>& leaves) {
    std::vector<pointwise_library::leaf> mine;
    std::string src = reduce_generator(ins, mine).generate(fn);
    if (!src.empty()) leaves = std::move(mine);
    return src;
}

}  // namespace kiln
