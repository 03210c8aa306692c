// The ref target: runs every op's reference compute on the host, with no rewriting. It is the
// oracle every other target and every pass is checked against.
#include "core/target.hpp"
#include "passes/debug_replace_op.hpp"
#include "passes/pipeline.hpp"

namespace kiln {
namespace {

class ref_target final : public target {
public:
    std::string name() const override { return "ref"; }
    // No lowering: the generic passes (when asked for) and then the interpreter.
    std::vector<pass> passes(const compile_options& opts) const override {
        auto ps = generic_passes(opts);
        if (auto broken = debug_replace_op_pass(); broken && opts.optimize) ps.push_back(*broken);
        return ps;
    }
    argument allocate(const shape& s) const override { return argument(s); }
    argument copy_to(const argument& host) const override { return host; }
    argument copy_from(const argument& device) const override { return device; }
    std::vector<argument> run(const program& p, const param_map& inputs) const override {
        return evaluate(p, inputs);
    }
    std::vector<argument> run_observed(const program& p, const param_map& inputs,
                                       const instruction_observer& observe) const override {
        return evaluate(p, inputs, observe);
    }
};

const bool registered = [] {
    register_target("ref", [] { return std::unique_ptr<target>(new ref_target()); });
    return true;
}();

}  // namespace
}  // namespace kiln
