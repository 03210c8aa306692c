#include "arena_check.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <unordered_map>

#include "pass_check.hpp"

namespace kiln {

namespace {

// Copies `r` into the arena at `offset` (a tuple's elements one after another, each aligned, as
// plan_memory lays them out) and returns the copy; `offset` moves past it.
argument copy_into(const argument& r, std::byte* base, std::size_t& offset) {
    const shape& s = r.get_shape();
    if (s.is_tuple()) {
        std::vector<argument> elements;
        for (const auto& sub : r.sub_arguments()) {
            std::size_t a = buffer_alignment(sub.get_shape().type());
            offset = (offset + a - 1) / a * a;
            elements.push_back(copy_into(sub, base, offset));
        }
        return argument(std::move(elements));
    }
    literal packed(r);
    std::size_t bytes = packed.get_shape().bytes();
    std::memcpy(base + offset, packed.get_argument().data(), bytes);
    argument copy(packed.get_shape(), base + offset, nullptr);
    offset += bytes;
    return copy;
}

}  // namespace

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
        std::size_t end = at->second;
        values[&ins] = copy_into(r, base, end);
        EXPECT_LE(end, plan.arena_bytes) << describe(m, ins) << " overruns the arena";
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
