// The ref target: runs every op's reference compute on the host, with no lowering. It is the
// oracle every other target and every pass is checked against. Its executable runs inside the
// memory plan (runtime/executor.hpp), so a wrong plan gives wrong answers in every test.
#include "core/target.hpp"
#include "passes/debug_replace_op.hpp"
#include "passes/pipeline.hpp"
#include "runtime/executor.hpp"

namespace kiln {
namespace {

class ref_executable final : public executable {
public:
    explicit ref_executable(program p) : prog_(std::move(p)), exec_(prog_) {
        stats_.arena_bytes = exec_.arena_bytes();
        stats_.memory = exec_.memory_report();
    }
    const program& get_program() const override { return prog_; }
    const executable_stats& stats() const override { return stats_; }
    std::vector<argument> run(const param_map& inputs) override { return exec_.run(inputs); }
    std::vector<argument> run_observed(const param_map& inputs, const instruction_observer& observe) override {
        return exec_.run(inputs, &observe);
    }

private:
    program prog_;
    program_executor exec_;
    executable_stats stats_;
};

class ref_target final : public target {
public:
    std::string name() const override { return "ref"; }
    // No lowering: the generic passes (when asked for) and then the executor.
    std::vector<pass> passes(const compile_options& opts) const override {
        auto ps = generic_passes(opts);
        if (auto broken = debug_replace_op_pass(); broken && opts.optimize) ps.push_back(*broken);
        return ps;
    }
    std::vector<std::string> ignored_options(const compile_options& opts) const override {
        std::vector<std::string> r;
        if (opts.offload_copy) r.push_back("--enable-offload-copy (ref runs in host memory)");
        if (!opts.fast_math) r.push_back("--disable-fast-math (ref's math is exact already)");
        if (opts.exhaustive_tune) r.push_back("--exhaustive-tune (ref has no kernels to tune)");
        for (auto& d : ignored_device_options(opts, "ref")) r.push_back(std::move(d));
        return r;
    }
    std::unique_ptr<executable> load(program lowered, const compile_options&) const override {
        return std::make_unique<ref_executable>(std::move(lowered));
    }
};

const bool registered = [] {
    register_target("ref", [] { return std::unique_ptr<target>(new ref_target()); });
    return true;
}();

}  // namespace
}  // namespace kiln
