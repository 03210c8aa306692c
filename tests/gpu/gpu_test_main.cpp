// The GPU tests' main. Without a CUDA device it runs only the tests that need none (NVRTC
// compiles, lowering checks) and says in one line why the rest are skipped.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/error.hpp"
#include "core/target.hpp"

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    try {
        kiln::make_target("gpu");
    } catch (const kiln::error& e) {
        std::printf("GPU tests skipped (only gpu_no_device.* run): %s\n", e.what());
        ::testing::GTEST_FLAG(filter) = "gpu_no_device.*";
    }
    return RUN_ALL_TESTS();
}
