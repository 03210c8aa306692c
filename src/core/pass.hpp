// A pass rewrites one module. The pass manager runs a pipeline over every module of a program,
// (except fused regions' bodies, which
// are kernels' contents, not programs to optimise) removes dead code after each pass by itself, validates the IR after each pass and, when a
// pass throws or breaks the IR, names the pass and dumps the program.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/module.hpp"

namespace kiln {

class pass {
public:
    // Any type with `static constexpr std::string_view name` and either `void apply(module&) const`
    // or, for passes that create submodules (fusion), `void apply(program&, module&) const`.
    template <class P>
    pass(P p) : name_(P::name) {
        if constexpr (requires(module& m) { p.apply(m); })
            apply_ = [p = std::move(p)](program&, module& m) { p.apply(m); };
        else
            apply_ = [p = std::move(p)](program& prog, module& m) { p.apply(prog, m); };
    }
    pass(std::string name, std::function<void(module&)> f)
        : name_(std::move(name)), apply_([f = std::move(f)](program&, module& m) { f(m); }) {}

    const std::string& name() const { return name_; }
    void apply(program& p, module& m) const { apply_(p, m); }

private:
    std::string name_;
    std::function<void(program&, module&)> apply_;
};

struct pass_options {
    bool validate = true;                 // check the IR after every pass
    std::ostream* trace = nullptr;        // print the program after every pass
    std::ostream* timings = nullptr;      // print each pass's time
    // Called after each pass with its name and time (compile reports, progress).
    std::function<void(const std::string& pass, double ms)> on_pass;
    std::vector<std::string> disabled;    // pass names to skip (for bisecting)
    // Where a failing pass's input program is written. Empty: no dump and no per-pass snapshot (a
    // program clone, literals shared) is taken.
    std::string dump_dir = "/tmp/kiln";
};

void run_passes(program& p, const std::vector<pass>& pipeline, const pass_options& opts = {});

}  // namespace kiln
