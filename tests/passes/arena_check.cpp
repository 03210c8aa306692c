#include "arena_check.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <unordered_map>

#include "pass_check.hpp"

namespace kiln {

std::vector<argument> run_in_arena(const module& m, const memory_plan& plan, const param_map& inputs) {
    std::vector<std::byte> storage(plan.arena_bytes + 256);
    auto* base = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(storage.data()) + 255) / 256 * 256);
    std::unordered_map<const instruction*, argument> values;
    for (const auto& ins : m) {
        if (ins.is_param()) {
            values[&ins] = inputs.at(m.parameter_name(ins));
            continue;
        }
        if (ins.is_literal()) {
            values[&ins] = ins.get_literal().get_argument();
            continue;
        }
        std::vector<argument> args;
        for (auto in : ins.inputs()) args.push_back(values.at(&*in));
        if (ins.is_return()) {
            std::vector<argument> outs;
            for (const auto& a : args) outs.push_back(literal(a).get_argument());   // copied out of the arena
            return outs;
        }
        argument r = compute_op(ins.get_operator(), args, ins.module_inputs());
        auto at = plan.offsets.find(&ins);
        if (at == plan.offsets.end()) {   // a view: of its input's arena (or parameter, literal) bytes
            values[&ins] = r;
            continue;
        }
        literal packed(r);
        const shape& s = packed.get_shape();
        EXPECT_LE(s.bytes(), ins.get_shape().bytes()) << describe(m, ins);
        std::memcpy(base + at->second, packed.get_argument().data(), s.bytes());
        values[&ins] = argument(s, base + at->second, nullptr);
    }
    ADD_FAILURE() << "module has no @return";
    return {};
}

void expect_plan_holds(const module& m, const memory_plan& plan, const param_map& inputs) {
    check_memory_plan(m, plan);
    auto want = evaluate(m, inputs);
    auto got = run_in_arena(m, plan, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(relative_l2(got[i], want[i]), 0.0) << "output " << i << " differs when run in the arena";
}

}  // namespace kiln
