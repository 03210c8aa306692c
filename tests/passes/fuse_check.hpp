// Helpers for fusion pass tests: the fused instructions of main and the size of their bodies, and
// the check that a fused program prints, parses back to the same text, validates and has no
// module that nothing calls.
#pragma once
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "core/module.hpp"
#include "core/text_parser.hpp"

namespace kiln {

// Main's instructions of op `name`, in order.
inline std::vector<const instruction*> fused_of(const program& p, std::string_view name) {
    std::vector<const instruction*> r;
    for (const auto& ins : p.main())
        if (ins.name() == name) r.push_back(&ins);
    return r;
}

// Instructions that compute in a fused instruction's body (not parameters, literals, the return).
inline std::size_t body_size(const instruction& fused) {
    std::size_t n = 0;
    for (const auto& ins : *fused.module_inputs().at(0))
        if (!ins.get_operator().traits().builtin) ++n;
    return n;
}

// Ops of this name in a fused instruction's body.
inline std::size_t body_count(const instruction& fused, std::string_view name) {
    std::size_t n = 0;
    for (const auto& ins : *fused.module_inputs().at(0))
        if (ins.name() == name) ++n;
    return n;
}

// Every module but main is called by some instruction (fusion leaves no body behind).
inline void expect_no_orphan_modules(const program& p) {
    for (const module* m : p.modules()) {
        if (m == &p.main()) continue;
        bool called = false;
        for (const module* caller : p.modules())
            for (const auto& ins : *caller)
                for (const module* sub : ins.module_inputs()) called = called || sub == m;
        EXPECT_TRUE(called) << "module '" << m->name() << "' is called by no instruction";
    }
}

inline void expect_text_round_trip(const program& p) {
    std::string text = to_string(p);
    program back = parse_text(text);
    EXPECT_EQ(to_string(back), text);
    EXPECT_NO_THROW(back.validate());
    expect_no_orphan_modules(p);
}

}  // namespace kiln
