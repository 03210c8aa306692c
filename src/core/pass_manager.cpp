#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <unordered_set>

#include "core/error.hpp"
#include "core/pass.hpp"

namespace kiln {

namespace {
// Saves the program as it was before the failing pass, so the failure can be replayed.
std::string dump(const std::optional<program>& before, const std::string& dir, const std::string& pass_name) {
    if (!before || dir.empty()) return "(not saved: no dump directory)";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::string path = dir + "/" + pass_name + ".kir";
    std::ofstream f(path);
    f << to_string(*before);
    return f ? path : std::string("(could not write ") + path + ")";
}

// The modules a pass rewrites: every module but fused regions' bodies.
std::vector<module*> modules_to_rewrite(const program& p) {
    std::unordered_set<const module*> bodies;
    for (const module* m : p.modules())
        for (const auto& ins : *m)
            if (ins.get_operator().traits().fusion) bodies.insert(ins.module_inputs().begin(), ins.module_inputs().end());
    std::vector<module*> mods;
    for (module* m : p.modules_in_dependency_order())
        if (!bodies.contains(m)) mods.push_back(m);
    return mods;
}
}  // namespace

void run_passes(program& p, const std::vector<pass>& pipeline, const pass_options& opts) {
    for (const auto& ps : pipeline) {
        if (std::find(opts.disabled.begin(), opts.disabled.end(), ps.name()) != opts.disabled.end()) continue;
        // The snapshot shares the literals' buffers (printing every pass's input would cost far more than
        // the passes on a model with real weights); it is printed only when a pass fails.
        std::optional<program> before;
        if (!opts.dump_dir.empty()) before = p.clone();
        auto start = std::chrono::steady_clock::now();
        try {
            for (module* m : modules_to_rewrite(p)) {
                ps.apply(p, *m);
                m->remove_dead_code();
            }
        } catch (const error& e) {
            fail("pass '", ps.name(), "' failed: ", e.what(), "\nits input program is in ",
                 dump(before, opts.dump_dir, ps.name()));
        }
        if (opts.validate) {
            try {
                p.validate();
            } catch (const error& e) {
                fail("pass '", ps.name(), "' broke the IR: ", e.what(), "\nits input program is in ",
                     dump(before, opts.dump_dir, ps.name()));
            }
        }
        auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (opts.on_pass) opts.on_pass(ps.name(), ms);
        if (opts.timings) *opts.timings << ps.name() << ": " << ms << " ms\n";
        if (opts.trace) *opts.trace << "after " << ps.name() << ":\n" << to_string(p) << "\n";
    }
}

}  // namespace kiln
