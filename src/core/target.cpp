#include "core/target.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace kiln {

namespace {
std::map<std::string, std::unique_ptr<target> (*)(), std::less<>>& targets() {
    static std::map<std::string, std::unique_ptr<target> (*)(), std::less<>> t;
    return t;
}
}  // namespace

void register_target(std::string name, std::unique_ptr<target> (*factory)()) { targets()[std::move(name)] = factory; }

std::vector<std::string> built_targets() {
    std::vector<std::string> names;
    for (const auto& [n, f] : targets()) names.push_back(n);
    return names;
}

std::unique_ptr<target> make_target(std::string_view name) {
    auto it = targets().find(name);
    if (it == targets().end()) {
        std::string built;
        for (const auto& n : built_targets()) built += (built.empty() ? "" : ", ") + n;
        fail("target '", name, "' is not built into this kiln (built targets: ", built, ")");
    }
    return it->second();
}

std::string default_target() {
    auto built = built_targets();
    auto has = [&](const char* n) { return std::find(built.begin(), built.end(), n) != built.end(); };
    if (has("gpu")) {
        try {
            make_target("gpu");   // its constructor finds the device, or throws saying why there is none
            return "gpu";
        } catch (const std::exception&) {
        }
    }
    return has("cpu") ? "cpu" : "ref";
}

void lower(program& p, const target& t, const compile_options& opts, const pass_options& popts) {
    run_passes(p, t.passes(opts), popts);
}

std::unique_ptr<executable> target::compile(program p, const compile_options& opts, const pass_options& popts) const {
    lower(p, *this, opts, popts);
    return load(std::move(p), opts);
}

}  // namespace kiln
