// Sequences, optionals and strings in the gpu target's dynamic runner, on the device, against ref
// on fresh random inputs: chains of sequence ops whose elements are views (made standard on the
// device) and whose outputs come back as sequences, and string host steps whose numbers go on to
// device kernels and come back as strings.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "tools/compare.hpp"

namespace kiln {
namespace {

using lens = std::vector<std::size_t>;

std::vector<argument> copies(const std::vector<argument>& outs) {
    std::vector<argument> r;
    for (const auto& o : outs) r.push_back(o.copy());
    return r;
}

void expect_same(const std::vector<argument>& got, const std::vector<argument>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        auto c = compare_results(got[i], want[i], default_tolerances(dtype::float32, compute_precision::fp32));
        EXPECT_TRUE(c.pass) << "output " << i << ":\n" << describe(c);
    }
}

// split_to_sequence with a split read back, an insert of a transposed (strided) view at a
// position read back, length, erase and concat_from_sequence: the sequence itself, its length
// and the concatenation are outputs.
TEST(gpu_sequences, sequence_chains_run_on_the_device_and_come_back_as_sequences) {
    program p = parse_text(
        "x = @param:x -> float_type, {4, 3}\n"
        "s = @param:s -> int64_type, {2}\n"
        "k = @param:k -> int64_type, {1}\n"
        "@0 = split_to_sequence[axis=0,keepdims=1](x,s)\n"
        "@1 = transpose[permutation={1, 0}](x)\n"
        "@2 = slice[axes={1},starts={0},ends={3}](@1)\n"
        "@3 = sequence_insert(@0,@2,k)\n"
        "@4 = sequence_length(@3)\n"
        "@5 = sequence_erase(@3)\n"
        "@6 = concat_from_sequence[axis=0,new_axis=0](@5)\n"
        "@7 = @return(@3,@4,@6)\n");
    auto gpu = make_target("gpu")->compile(p.clone());
    auto ref = make_target("ref")->compile(p.clone());
    for (std::uint64_t seed : {1u, 2u}) {
        param_map in;
        in["x"] = random_argument(shape(dtype::float32, lens{4, 3}), seed, 0);
        in["s"] = from_int64s(shape(dtype::int64, lens{2}), std::vector<std::int64_t>{1, 3});
        in["k"] = from_int64s(shape(dtype::int64, lens{1}), std::vector<std::int64_t>{seed == 1 ? 0 : -1});
        auto want = copies(ref->run(in));
        auto got = gpu->run(in);
        ASSERT_TRUE(got[0].get_shape().is_sequence());
        EXPECT_EQ(got[0].sub_arguments().size(), 3u);
        expect_same(got, want);
    }
}

// A position out of range is ref's error, naming the instruction.
TEST(gpu_sequences, a_position_out_of_range_is_refs_error) {
    program p = parse_text(
        "x = @param:x -> float_type, {2}\n"
        "k = @param:k -> int64_type, {1}\n"
        "@0 = sequence_construct(x,x)\n"
        "@1 = sequence_at(@0,k)\n"
        "@2 = @return(@1)\n");
    auto gpu = make_target("gpu")->compile(p.clone());
    param_map in{{"x", random_argument(shape(dtype::float32, lens{2}), 3, 0)},
                 {"k", from_int64s(shape(dtype::int64, lens{1}), std::vector<std::int64_t>{2})}};
    try {
        gpu->run(in);
        FAIL() << "expected an error";
    } catch (const error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("sequence_at"), std::string::npos) << msg;
        EXPECT_NE(msg.find("position 2 is out of range for a sequence of 2"), std::string::npos) << msg;
    }
}

// Strings to numbers on the host (a host step), the numbers uploaded and added on the device,
// then back to strings on the host; the report lists both host steps and nothing else.
TEST(gpu_sequences, string_host_steps_feed_device_kernels) {
    program p = parse_text(
        "x = @param:x -> string_type, {4}\n"
        "y = @param:y -> float_type, {4}\n"
        "@0 = string_convert[target_type=float_type](x)\n"
        "@1 = add(@0,y)\n"
        "@2 = string_convert[target_type=string_type](@1)\n"
        "@3 = @return(@1,@2)\n");
    auto gpu = make_target("gpu")->compile(p.clone());
    auto ref = make_target("ref")->compile(p.clone());
    bool reported = false;
    for (const auto& n : gpu->stats().notes) reported |= n.rfind("host steps: 2 (string_convert, string_convert;", 0) == 0;
    EXPECT_TRUE(reported);
    std::vector<std::string> words{"1.5", " -2.5e2 ", "inf", "7"};
    param_map in{{"x", from_strings(shape(dtype::string, lens{4}), words)},
                 {"y", random_argument(shape(dtype::float32, lens{4}), 4, 1)}};
    auto want = copies(ref->run(in));
    auto got = gpu->run(in);
    expect_same(got, want);
}

}  // namespace
}  // namespace kiln
