// Test helper: expects f() to throw a kiln::error whose message contains `want`.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace kiln {

template <class F>
void expect_error(F f, const std::string& want) {
    try {
        f();
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
        return;
    }
    ADD_FAILURE() << "no error; expected one containing '" << want << "'";
}

}  // namespace kiln
