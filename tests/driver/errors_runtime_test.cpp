// The rows of docs/errors.md's "Runs" table: bad data met while a program runs, given to the
// `kiln` binary on each target built here (ref; cpu with its kernels, -O). Each must print the
// message naming the node and exit with the row's status. The gpu target's side (its device
// error slots, a cancel between launches) is tests/gpu/gpu_device_test.cpp, run on a GPU.
#include <fstream>

#include "driver_util.hpp"

namespace kiln {
namespace {

using namespace driver_test;

class errors_runtime : public driver_fixture {
protected:
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(tmp / name, std::ios::binary) << text;
        return (tmp / name).string();
    }
    // Runs `kiln run FILE ARGS` on ref and on cpu (-O: its kernels and fusions); each must exit
    // with `status` and print `message`.
    void expect_on_each_target(const std::string& file_args, int status, const std::string& message) const {
        for (std::string target : {"--ref", "--cpu -O"}) {
            auto r = kiln("run " + file_args + " --quiet " + target);
            EXPECT_EQ(r.status, status) << target << "\n" << r.err;
            EXPECT_NE(r.err.find(message), std::string::npos) << target << "\nmissing '" << message << "' in:\n" << r.err;
        }
    }
};

TEST_F(errors_runtime, gather_index_out_of_range) {
    std::string f = write("g.kir",
                          "x = @param:x -> float_type, {3}\n@0 = @literal{1, 5} -> int64_type, {2}\n"
                          "@1 = gather[axis=0](x,@0)\n@2 = @return(@1)\n");
    expect_on_each_target(f, 1, "@1 = gather[axis=0]: index 5 (indices element 1) is out of range for dim 0 of size 3 (valid: -3 to 2)");
}

TEST_F(errors_runtime, scatter_index_out_of_range) {
    std::string f = write("s.kir",
                          "x = @param:x -> float_type, {4}\nu = @param:u -> float_type, {2}\n"
                          "@0 = @literal{1, -5} -> int64_type, {2}\n@1 = scatter_elements[axis=0](x,@0,u)\n@2 = @return(@1)\n");
    expect_on_each_target(f, 1, "index -5 (indices element 1) is out of range for dim 0 of size 4 (valid: -4 to 3)");
}

TEST_F(errors_runtime, integer_division_by_zero) {
    std::string f = write("d.kir",
                          "a = @param:a -> int32_type, {4}\nb = @param:b -> int32_type, {4}\n@0 = div(a,b)\n@1 = @return(@0)\n");
    expect_on_each_target(f + " --fill0 b", 1, "@0 = div: div: integer division by zero");
}

TEST_F(errors_runtime, integer_modulus_by_zero) {
    std::string f = write("m.kir",
                          "a = @param:a -> int64_type, {4}\nb = @param:b -> int64_type, {4}\n@0 = mod(a,b)\n@1 = @return(@0)\n");
    expect_on_each_target(f + " --fill0 b", 1, "mod: integer modulus by zero");
}

TEST_F(errors_runtime, input_shape_mismatch) {
    std::string f = write("r.kir", "x = @param:x -> float_type, {2, 3}\n@0 = relu(x)\n@1 = @return(@0)\n");
    // A .npy of shape (3, 2), float32: magic, version 1.0, header, 24 bytes of zeros.
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }";
    header += std::string(63 - header.size(), ' ') + "\n";
    std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + std::string(24, '\0');
    expect_on_each_target(f + " --input x=" + write("x.npy", npy), 1,
                          "{3, 2} differs from the static shape of input 'x' (float_type, {2, 3}, {3, 1})");
}

TEST_F(errors_runtime, timeout) {
    for (std::string target : {"--ref", "--cpu -O"}) {
        auto r = kiln("run " + data_dir + "endless_loop.kir --quiet --timeout 0.5 " + target);
        EXPECT_EQ(r.status, 3) << target << "\n" << r.err;
        for (std::string part : {"kiln: error: module main: @2 = loop", ": iteration ", ": timed out after 0.5 s"})
            EXPECT_NE(r.err.find(part), std::string::npos) << target << "\nmissing '" << part << "' in:\n" << r.err;
    }
    EXPECT_EQ(kiln("run " + data_dir + "endless_loop.kir --timeout 0").status, 2);
}

}  // namespace
}  // namespace kiln
