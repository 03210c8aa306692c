#include "arena_check.hpp"

#include <gtest/gtest.h>

#include "pass_check.hpp"

namespace kiln {

void expect_plan_holds(const module& m, const memory_plan& plan, const param_map& inputs) {
    check_memory_plan(m, plan);
    auto want = evaluate(m, inputs);
    auto got = run_with_plan(m, plan, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(relative_l2(got[i], want[i]), 0.0) << "output " << i << " differs when run in the arena";
}

}  // namespace kiln
