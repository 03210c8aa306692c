// Turns every op A into op B (KILN_DEBUG_REPLACE_OP=A:B), breaking results on purpose; see the
// header. Assumes B takes A's inputs and computes A's shape (checked: an error names both).
#include "passes/debug_replace_op.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace kiln {

namespace {
// Also inside fused regions' bodies, which the pass manager does not hand to passes: a broken
// kernel is what the tools must find.
void replace_op(module& m, const std::string& from, const operation& to) {
    for (auto it = m.begin(); it != m.end(); ++it) {
        for (module* sub : it->module_inputs()) replace_op(*sub, from, to);
        if (it->name() != from) continue;
        std::vector<instruction_ref> inputs(it->inputs());
        m.replace_instruction(it, to, inputs);
    }
}
}  // namespace

std::optional<pass> debug_replace_op_pass() {
    const char* env = std::getenv("KILN_DEBUG_REPLACE_OP");
    if (!env || !*env) return std::nullopt;
    std::string v = env;
    auto colon = v.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == v.size())
        fail("KILN_DEBUG_REPLACE_OP expects A:B (two op names, e.g. mul:add), got '", v, "'");
    std::string from = v.substr(0, colon);
    operation to = make_op(v.substr(colon + 1));
    return pass("debug_replace_op", [from, to](module& m) { replace_op(m, from, to); });
}

}  // namespace kiln
