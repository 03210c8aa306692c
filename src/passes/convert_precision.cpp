#include "passes/convert_precision.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "ops/convert.hpp"

namespace kiln {

namespace {

// Ops that read float32 inputs whatever the precision: reductions, and ops marked precision
// sensitive because their result keeps the input's shape:
//  - statistics over many elements, which overflow or lose all precision in 16 bits: softmax's
//    exp sums, batch/instance/group norms' statistics, running sums and products, LRN's window
//    sums of squares, DFT's sums over an axis, a determinant's products;
//  - ops whose result must not depend on the float type: bitcast reinterprets the bits, and
//    quantizelinear's integers would move by one step with a 16-bit x / scale.
// layernorm and rms_norm are not among them: their kernels keep float32 statistics themselves
// (the contract in convert_precision.hpp).
bool reads_float32(const instruction& ins) {
    if (!ins.module_inputs().empty() || ins.is_return()) return true;   // interfaces stay float32
    auto t = ins.get_operator().traits();
    return t.reduction || t.precision_sensitive || t.sequences;   // sequences keep their element types
}

bool declares_float32(const shape& s) {
    return s.type() == dtype::float32 || std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), declares_float32);
}

operation convert_to(dtype t) { return make_op("convert", {{"target_type", std::string(dtype_name(t))}}); }

// Rebuilds a module instruction by instruction. Each original instruction has a primary
// version (what it became) and versions in other types, made by converts on first request.
class converter {
public:
    converter(module& m, dtype low) : m_(m), low_(low) {}

    void run() {
        std::vector<instruction_ref> order;
        for (auto ins = m_.begin(); ins != m_.end(); ++ins) order.push_back(ins);
        std::vector<instruction_ref> replaced;
        for (auto ins : order) {
            instruction_ref now = convert_one(ins);
            if (now != ins) replaced.push_back(ins);
        }
        // Their users were all rebuilt, so they go in reverse order (side effects included).
        for (auto it = replaced.rbegin(); it != replaced.rend(); ++it)
            if ((*it)->outputs().empty()) m_.remove_instruction(*it);
    }

private:
    struct versions {
        instruction_ref primary;
        std::vector<std::pair<dtype, instruction_ref>> others;
    };

    // `orig`'s value in type `want`, converted before `pos` on first request.
    instruction_ref get(instruction_ref orig, dtype want, instruction_ref pos) {
        versions& v = versions_.at(&*orig);
        if (v.primary->get_shape().is_tuple() || v.primary->get_shape().type() == want) return v.primary;
        for (auto [t, ins] : v.others)
            if (t == want) return ins;
        auto c = m_.insert_instruction(pos, convert_to(want), {v.primary});
        v.others.emplace_back(want, c);
        return c;
    }

    instruction_ref convert_one(instruction_ref ins) {
        if (ins->is_param()) return record(ins, ins);
        if (ins->is_literal()) return convert_literal(ins);
        bool float32_inputs = reads_float32(*ins);
        instruction_ref rep = rebuild(ins, float32_inputs);
        // An op that still declares float32 results for low inputs has a fixed interface (a
        // deferred ONNX node checks its declared output types): it reads float32 instead.
        if (!float32_inputs && rep != ins && declares_float32(rep->get_shape())) {
            m_.remove_instruction(rep);
            rep = rebuild(ins, true);
        }
        return record(ins, rep);
    }

    // `ins` with its inputs in the types it reads: `ins` itself when nothing changes, else a new
    // instruction before it (a new @return too: converted views come back standard, so returned
    // strides may change); the original goes once its users are rebuilt.
    instruction_ref rebuild(instruction_ref ins, bool float32_inputs) {
        std::vector<instruction_ref> inputs;
        for (auto in : ins->inputs()) {
            dtype t = in->get_shape().type();
            inputs.push_back(get(in, t == dtype::float32 && !float32_inputs ? low_ : t, ins));
        }
        operation op = ins->get_operator();
        // A conversion into float32 (from integers, say) converts into the low type instead.
        if (op.get_if<ops::convert>() && ins->get_shape().type() == dtype::float32 && !float32_inputs)
            op = op.with_attributes({{"target_type", std::string(dtype_name(low_))}});
        if (inputs == ins->inputs() && op == ins->get_operator()) return ins;
        try {
            auto rep = m_.insert_instruction(ins, op, inputs, ins->module_inputs());
            rep->set_source_name(ins->source_name());
            return rep;
        } catch (const error& e) {
            fail(describe(m_, *ins), " in ", dtype_name(low_), ": ", e.what());
        }
    }

    instruction_ref convert_literal(instruction_ref ins) {
        if (ins->get_shape().type() != dtype::float32) return record(ins, ins);
        argument a = compute_op(convert_to(low_), std::span(&ins->get_literal().get_argument(), 1));
        auto rep = m_.insert_literal(ins, literal::borrow(std::move(a)));   // a new buffer: no copy
        record(ins, rep);
        versions_.at(&*ins).others.emplace_back(dtype::float32, ins);   // the original, for float32 readers
        return rep;
    }

    instruction_ref record(instruction_ref orig, instruction_ref now) {
        versions_[&*orig] = {now, {}};
        return now;
    }

    module& m_;
    dtype low_;
    std::unordered_map<const instruction*, versions> versions_;
};

}  // namespace

void convert_precision::apply(module& m) const {
    if (low != dtype::float16 && low != dtype::bfloat16)
        fail("convert_precision: low type is ", dtype_name(low), "; expected half_type or bf16_type");
    converter(m, low).run();
}

dtype low_type(compute_precision p) {
    switch (p) {
    case compute_precision::fp16: return dtype::float16;
    case compute_precision::bf16: return dtype::bfloat16;
    case compute_precision::fp32: break;
    }
    fail("low_type: precision fp32 has no low type");
}

}  // namespace kiln
