// The gpu executable's options and lifecycle, on the device, each against ref on fresh random
// inputs: CUDA graph replays take each run's inputs (timed by perf's device clock), saved programs carry their kernels and library
// plans (loading one compiles nothing, writes nothing to the kernel cache and asks no library
// heuristic) and refuse another architecture,
// --no-cache, --allow-tf32 and --device, caller device buffers through run_into (bound into
// the CUDA graph's replays without a copy, rebound when they change), and programs that run an
// instruction at a time (a Loop).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "targets/gpu/device.hpp"
#include "targets/gpu/dynamic_runner.hpp"
#include "targets/gpu/graph_bindings.hpp"
#include "tools/perf.hpp"
#include "tools/saved_program.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// A matmul (cuBLASLt) and a pointwise tail (a generated kernel).
program dense_program(std::size_t k = 512) {
    return parse_text(cat("x = @param:x -> float_type, {64, ", k, "}\n",
                          "w = @param:w -> float_type, {", k, ", 96}\n",
                          "@0 = dot(x,w)\n"
                          "@1 = relu(@0)\n"
                          "@2 = mul(@1,@0)\n"
                          "@3 = @return(@2)\n"));
}

param_map random_inputs(const program& p, std::uint64_t seed) {
    param_map in;
    std::size_t i = 0;
    for (const auto& name : p.main().parameter_names()) {
        in[name] = random_argument(p.main().get_parameter(name)->get_shape(), seed, i++);
    }
    return in;
}

double rel_l2(const argument& got, const argument& want) {
    auto g = to_doubles(got), w = to_doubles(want);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        num += (g[i] - w[i]) * (g[i] - w[i]);
        den += w[i] * w[i];
    }
    return std::sqrt(num / std::max(den, 1e-30));
}

argument on_ref(const program& p, const param_map& in) { return make_target("ref")->compile(p.clone())->run(in)[0].copy(); }

// Points the kernel cache at a fresh directory for the test's lifetime.
struct temp_cache {
    fs::path dir = fs::temp_directory_path() / cat("kiln-exe-test-", ::getpid(), "-", counter()++);
    temp_cache() { ::setenv("XDG_CACHE_HOME", dir.c_str(), 1); }
    ~temp_cache() {
        ::unsetenv("XDG_CACHE_HOME");
        fs::remove_all(dir);
    }
    std::size_t files() const {
        std::size_t n = 0;
        if (fs::exists(dir))
            for (auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
        return n;
    }
    static int& counter() {
        static int n = 0;
        return n;
    }
};

TEST(gpu_executable, graph_replays_take_each_runs_inputs) {
    program p = dense_program();
    auto exe = make_target("gpu")->compile(p.clone());
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {   // run 1 launches steps and captures; 2-4 replay
        auto in = random_inputs(p, seed);
        EXPECT_LT(rel_l2(exe->run(in)[0], on_ref(p, in)), 1e-5) << "run " << seed;
    }
    auto in = random_inputs(p, 9);
    std::size_t allocs = host_buffer_allocations();
    exe->run(in);
    EXPECT_EQ(host_buffer_allocations(), allocs);
}

// perf's device clock: CUDA events around each run's launches (the graph's replay), without the
// input and output copies, so below the host's time of the same run; results still match ref.
TEST(gpu_executable, device_timing_brackets_each_runs_launches) {
    program p = dense_program(4096);
    auto exe = make_target("gpu")->compile(p.clone());
    EXPECT_EQ(exe->last_run_device_ms(), 0);
    ASSERT_TRUE(exe->enable_device_timing());
    std::vector<param_map> sets{random_inputs(p, 1), random_inputs(p, 2)};
    perf_report r = measure_program(*exe, sets, perf_options{20, 3, false});
    ASSERT_EQ(r.device_run_ms.size(), 20u);
    EXPECT_GT(r.device.min, 0);
    EXPECT_LE(r.device.median, r.median);
    EXPECT_LE(r.device.p10, r.device.median);
    EXPECT_LE(r.device.median, r.device.p90);
    for (const auto& in : sets) EXPECT_LT(rel_l2(exe->run(in)[0], on_ref(p, in)), 1e-5);
    EXPECT_GT(exe->last_run_device_ms(), 0);
    exe->run_observed(sets[0], [](const instruction&, const argument&, double) {});
    EXPECT_EQ(exe->last_run_device_ms(), 0);   // observed runs synchronise per step: not timed
}

TEST(gpu_executable, saved_programs_carry_kernels_and_loading_compiles_nothing) {
    temp_cache cache;
    program p = dense_program();
    auto t = make_target("gpu");
    auto exe = t->compile(p.clone());
    ASSERT_GT(exe->stats().kernels, 0u);
    EXPECT_EQ(exe->stats().saved_kernels, 0u);
    auto path = fs::temp_directory_path() / cat("kiln-exe-test-", ::getpid(), ".kiln");
    saved_program_info info;
    info.target = "gpu";
    info.device_arch = t->device_arch();
    save_program(exe->get_program(), info, path.string(), exe->saved());
    fs::remove_all(cache.dir);   // no cache to fall back on: what loading needs must be in the file
    loaded_program l = load_program(path.string());
    EXPECT_EQ(l.parts.kernels.size(), exe->stats().kernels);
    auto loaded = t->load_saved(std::move(l.prog), l.info.options, l.parts);
    EXPECT_EQ(loaded->stats().kernels, exe->stats().kernels);
    EXPECT_EQ(loaded->stats().saved_kernels, exe->stats().kernels);
    EXPECT_EQ(loaded->stats().cache_hits, 0u);
    EXPECT_TRUE(loaded->stats().compiled_kernels.empty());
    EXPECT_EQ(cache.files(), 0u) << "loading compiled a kernel (and cached it)";
    // The matmul's cuBLASLt algorithm comes from the file: no heuristic is asked.
    auto notes = [](const executable& e) {
        std::string all;
        for (const auto& n : e.stats().notes) all += n + "\n";
        return all;
    };
    EXPECT_NE(notes(*exe).find("library plans: 1 (from the saved program 0, asked of the heuristics 1)"), std::string::npos)
        << notes(*exe);
    EXPECT_NE(notes(*loaded).find("library plans: 1 (from the saved program 1, asked of the heuristics 0)"), std::string::npos)
        << notes(*loaded);
    auto in = random_inputs(p, 5);
    EXPECT_LT(rel_l2(loaded->run(in)[0], on_ref(p, in)), 1e-5);

    info.device_arch = "sm_42";
    save_program(exe->get_program(), info, path.string(), exe->saved());
    try {
        load_program(path.string());
        ADD_FAILURE() << "a program for sm_42 loaded";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("compiled for device architecture sm_42 but this gpu device is " +
                                             t->device_arch()),
                  std::string::npos)
            << e.what();
    }
    fs::remove(path);
}

// cuDNN's choices travel too: a convolution (forward) and a deconvolution (backward data).
TEST(gpu_executable, saved_programs_carry_cudnn_plans) {
    program p = parse_text(
        "x = @param:x -> float_type, {1, 8, 12, 12}\n"
        "w = @param:w -> float_type, {16, 8, 3, 3}\n"
        "v = @param:v -> float_type, {16, 4, 3, 3}\n"
        "@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)\n"
        "@1 = deconvolution[padding={0, 0, 0, 0},stride={2, 2},dilation={1, 1},group=1](@0,v)\n"
        "@2 = @return(@1)\n");
    auto t = make_target("gpu");
    auto exe = t->compile(p.clone());
    auto loaded = t->load_saved(exe->get_program().clone(), {}, exe->saved());
    std::string notes;
    for (const auto& n : loaded->stats().notes) notes += n + "\n";
    EXPECT_NE(notes.find("library plans: 2 (from the saved program 2, asked of the heuristics 0)"), std::string::npos) << notes;
    auto in = random_inputs(p, 6);
    EXPECT_LT(rel_l2(loaded->run(in)[0], on_ref(p, in)), 1e-5);
}

// A Loop whose trip count is an input: the program runs an instruction at a time, matches ref for
// each trip count and compiles its kernels in the first run only (the body's shapes repeat).
TEST(gpu_executable, a_loop_runs_an_instruction_at_a_time_and_repeated_shapes_compile_nothing) {
    temp_cache cache;
    program p = parse_text(
        "n = @param:n -> int64_type, {}\nc = @param:c -> bool_type, {}\nacc = @param:acc -> float_type, {3}\n"
        "inc = @param:inc -> float_type, {3}\n@0 = loop[max_iterations=8](n,c,acc,inc), [body]\n"
        "@1 = get_tuple_elem[index=0](@0)\n@2 = get_tuple_elem[index=2](@0)\n@3 = @return(@1, @2)\n\n"
        "module: \"body\"\ni = @param:i -> int64_type, {}\ncond = @param:cond -> bool_type, {}\n"
        "acc = @param:acc -> float_type, {3}\ninc = @param:inc -> float_type, {3}\n"
        "@0 = convert[target_type=float_type](i)\n@1 = mul(inc,@0)\n@2 = add(acc,@1)\n@3 = @return(cond,@2,inc,@2)\n");
    auto exe = make_target("gpu")->compile(p.clone());
    auto ref = make_target("ref")->compile(p.clone());
    std::size_t kernels = 0;
    for (std::int64_t trips : {4, 1, 6, 0}) {
        param_map in = random_inputs(p, static_cast<std::uint64_t>(trips) + 3);
        in["n"] = from_int64s(shape(dtype::int64), std::vector<std::int64_t>{trips});
        in["c"] = from_int64s(shape(dtype::bool_), std::vector<std::int64_t>{1});
        auto got = exe->run(in);
        auto want = ref->run(in);
        ASSERT_EQ(got.size(), 2u);
        EXPECT_LT(rel_l2(got[0], want[0]), 1e-6) << trips << " trips";
        EXPECT_EQ(got[1].get_shape().lens(), want[1].get_shape().lens()) << trips << " trips";
        if (trips > 0) {
            EXPECT_LT(rel_l2(got[1], want[1]), 1e-6) << trips << " trips";
        }
        if (kernels == 0) kernels = exe->stats().kernels;
        EXPECT_EQ(exe->stats().kernels, kernels) << "a repeated shape compiled a kernel";
    }
    EXPECT_GT(kernels, 0u);
}

// A saved program with a Loop carries the dynamic path's kernels: those its executable built before
// any run (the instructions of static shapes, the body's included) and those its runs built (here
// after one run). Loading it takes every kernel from the file (no cache to fall back on, and none
// written), its runs compile nothing and match ref; one saved for another architecture is refused.
TEST(gpu_executable, saved_programs_with_a_loop_carry_the_dynamic_paths_kernels) {
    temp_cache cache;
    program p = parse_text(
        "n = @param:n -> int64_type, {}\nc = @param:c -> bool_type, {}\nacc = @param:acc -> float_type, {4, 5}\n"
        "inc = @param:inc -> float_type, {4, 5}\n@0 = loop[max_iterations=8](n,c,acc,inc), [body]\n"
        "@1 = get_tuple_elem[index=0](@0)\n@2 = get_tuple_elem[index=2](@0)\n@3 = sigmoid(@1)\n@4 = @return(@3, @2)\n\n"
        "module: \"body\"\ni = @param:i -> int64_type, {}\ncond = @param:cond -> bool_type, {}\n"
        "acc = @param:acc -> float_type, {4, 5}\ninc = @param:inc -> float_type, {4, 5}\n"
        "@0 = convert[target_type=float_type](i)\n@1 = mul(inc,@0)\n@2 = tanh(@1)\n@3 = add(acc,@2)\n"
        "@4 = @return(cond,@3,inc,@3)\n");
    auto t = make_target("gpu");
    auto exe = t->compile(p.clone());
    const std::size_t prepared = exe->stats().kernels;
    EXPECT_GT(prepared, 0u) << "no kernel built before the first run";
    auto ref = make_target("ref")->compile(p.clone());
    auto inputs = [&](std::int64_t trips) {
        param_map in = random_inputs(p, static_cast<std::uint64_t>(trips) + 50);
        in["n"] = from_int64s(shape(dtype::int64), std::vector<std::int64_t>{trips});
        in["c"] = from_int64s(shape(dtype::bool_), std::vector<std::int64_t>{1});
        return in;
    };
    auto check = [&](executable& e, std::int64_t trips) {
        auto in = inputs(trips);
        auto got = e.run(in);
        auto want = ref->run(in);
        for (std::size_t i = 0; i < 2; ++i) EXPECT_LT(rel_l2(got[i], want[i].copy()), 1e-5) << trips << " trips, output " << i;
    };
    check(*exe, 3);
    const std::size_t kernels = exe->stats().kernels;
    auto path = fs::temp_directory_path() / cat("kiln-exe-test-loop-", ::getpid(), ".kiln");
    saved_program_info info;
    info.target = "gpu";
    info.device_arch = t->device_arch();
    save_program(exe->get_program(), info, path.string(), exe->saved());
    fs::remove_all(cache.dir);   // no cache to fall back on: what loading needs must be in the file
    loaded_program l = load_program(path.string());
    EXPECT_EQ(l.parts.kernels.size(), kernels);
    auto loaded = t->load_saved(std::move(l.prog), l.info.options, l.parts);
    EXPECT_EQ(loaded->stats().kernels, prepared);
    EXPECT_EQ(loaded->stats().saved_kernels, prepared);
    for (std::int64_t trips : {3, 5}) check(*loaded, trips);
    EXPECT_EQ(loaded->stats().kernels, kernels);
    EXPECT_EQ(loaded->stats().saved_kernels, kernels) << "a run compiled a kernel the file carries";
    EXPECT_EQ(loaded->stats().cache_hits, 0u);
    EXPECT_EQ(cache.files(), 0u) << "loading or running compiled a kernel (and cached it)";

    info.device_arch = "sm_42";
    save_program(exe->get_program(), info, path.string(), exe->saved());
    try {
        load_program(path.string());
        ADD_FAILURE() << "a program for sm_42 loaded";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("compiled for device architecture sm_42 but this gpu device is " +
                                             t->device_arch()),
                  std::string::npos)
            << e.what();
    }
    fs::remove(path);
}

// A program that runs an instruction at a time on caller device buffers: device inputs are read in
// place, an output a lowering computes (tanh) is written straight into the caller's buffer, a
// Loop's scan output is copied on the device and a transposed view made dense by a copy kernel;
// each run against ref on fresh inputs. A mis-shaped output buffer and a host pointer given as
// device memory are errors naming them.
TEST(gpu_executable, a_dynamic_program_reads_and_writes_caller_device_buffers) {
    program p = parse_text(
        "n = @param:n -> int64_type, {}\nc = @param:c -> bool_type, {}\nacc = @param:acc -> float_type, {2, 3}\n"
        "inc = @param:inc -> float_type, {2, 3}\n@0 = loop[max_iterations=8](n,c,acc,inc), [body]\n"
        "@1 = get_tuple_elem[index=0](@0)\n@2 = get_tuple_elem[index=2](@0)\n@3 = tanh(@1)\n"
        "@4 = transpose[permutation={1, 0}](@3)\n@5 = @return(@3, @2, @4)\n\n"
        "module: \"body\"\ni = @param:i -> int64_type, {}\ncond = @param:cond -> bool_type, {}\n"
        "acc = @param:acc -> float_type, {2, 3}\ninc = @param:inc -> float_type, {2, 3}\n"
        "@0 = convert[target_type=float_type](i)\n@1 = mul(inc,@0)\n@2 = add(acc,@1)\n@3 = @return(cond,@2,inc,@2)\n");
    auto exe = make_target("gpu")->compile(p.clone());
    auto ref = make_target("ref")->compile(p.clone());
    const shape xs(dtype::float32, std::vector<std::size_t>{2, 3});
    gpu::device_buffer acc(xs.bytes(), "acc"), inc(xs.bytes(), "inc"), y0(xs.bytes(), "y0"), y2(xs.bytes(), "y2");
    for (std::int64_t trips : {4, 2}) {
        param_map in = random_inputs(p, static_cast<std::uint64_t>(trips) + 20);
        in["n"] = from_int64s(shape(dtype::int64), std::vector<std::int64_t>{trips});
        in["c"] = from_int64s(shape(dtype::bool_), std::vector<std::int64_t>{1});
        gpu::copy_to_device(acc.data(), in["acc"].data(), xs.bytes(), "acc");
        gpu::copy_to_device(inc.data(), in["inc"].data(), xs.bytes(), "inc");
        const shape ss(dtype::float32, std::vector<std::size_t>{static_cast<std::size_t>(trips), 2, 3});
        const shape ts(dtype::float32, std::vector<std::size_t>{3, 2});
        gpu::device_buffer y1(ss.bytes(), "y1");
        caller_inputs ci{{"n", caller_buffer{in["n"]}},
                         {"c", caller_buffer{in["c"]}},
                         {"acc", caller_buffer{argument(xs, acc.data(), nullptr), true}},
                         {"inc", caller_buffer{argument(xs, inc.data(), nullptr), true}}};
        std::vector<caller_buffer> out{{argument(xs, y0.data(), nullptr), true},
                                       {argument(ss, y1.data(), nullptr), true},
                                       {argument(ts, y2.data(), nullptr), true}};
        auto before = gpu::in_place_counts(*exe);
        exe->run_into(ci, out);
        auto after = gpu::in_place_counts(*exe);
        EXPECT_EQ(after.inputs, before.inputs + 2) << "the device inputs were copied";
        EXPECT_EQ(after.outputs, before.outputs + 1) << "tanh did not write the caller's buffer";
        auto want = ref->run(in);
        for (std::size_t i = 0; i < 3; ++i) {
            argument got(out[i].arg.get_shape());
            gpu::copy_to_host(got.data(), out[i].arg.data(), got.get_shape().bytes(), "y");
            EXPECT_LT(rel_l2(got, want[i].copy()), 1e-5) << trips << " trips, output " << i;
        }
        // The scan output has a stacked length of `trips`: a buffer of another length is refused.
        std::vector<caller_buffer> wrong = out;
        wrong[1].arg = argument(shape(dtype::float32, std::vector<std::size_t>{7, 2, 3}), y1.data(), nullptr);
        try {
            exe->run_into(ci, wrong);
            ADD_FAILURE() << "a mis-shaped output buffer was written";
        } catch (const error& e) {
            EXPECT_NE(std::string(e.what()).find("output 1 (module main: @2 = get_tuple_elem[index=2]) computes float_type, {"),
                      std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find("but its buffer is float_type, {7, 2, 3}"), std::string::npos) << e.what();
        }
    }
    param_map in = random_inputs(p, 30);
    caller_inputs ci;
    for (const auto& [name, a] : in) ci[name] = caller_buffer{a};
    ci["acc"].on_device = true;   // host memory claimed as device memory
    try {
        std::vector<caller_buffer> host(3, caller_buffer{argument(xs)});
        exe->run_into(ci, host);
        ADD_FAILURE() << "a host pointer ran as device memory";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("input 'acc' is given as a device buffer, but"), std::string::npos) << e.what();
    }
}

// A Loop of 1,000 iterations runs in the device memory of 10: its runner's caching allocator holds
// and uses at most what it did after 10 iterations (each instruction gives back its scratch, here
// det's working matrices, at once, and takes one error slot per run for its checked mod, not one
// per iteration), and the result matches ref.
TEST(gpu_executable, a_long_loop_does_not_grow_device_memory) {
    program p = parse_text(
        "n = @param:n -> int64_type, {}\nc = @param:c -> bool_type, {}\nacc = @param:acc -> float_type, {2}\n"
        "m = @param:m -> float_type, {2, 3, 3}\n@0 = loop[max_iterations=5000](n,c,acc,m), [body]\n"
        "@1 = get_tuple_elem[index=0](@0)\n@2 = @return(@1)\n\n"
        "module: \"body\"\ni = @param:i -> int64_type, {}\ncond = @param:cond -> bool_type, {}\n"
        "acc = @param:acc -> float_type, {2}\nm = @param:m -> float_type, {2, 3, 3}\n"
        "@0 = det(m)\n@1 = @literal{3} -> int64_type, {}\n@2 = mod(i,@1)\n@3 = convert[target_type=float_type](@2)\n"
        "@4 = mul(@0,@3)\n@5 = add(acc,@4)\n@6 = @return(cond,@5,m)\n");
    auto exe = make_target("gpu")->compile(p.clone());
    auto ref = make_target("ref")->compile(p.clone());
    std::vector<gpu::dynamic_memory> after;
    for (std::int64_t trips : {10, 1000}) {
        param_map in = random_inputs(p, static_cast<std::uint64_t>(trips));
        in["n"] = from_int64s(shape(dtype::int64), std::vector<std::int64_t>{trips});
        in["c"] = from_int64s(shape(dtype::bool_), std::vector<std::int64_t>{1});
        EXPECT_LT(rel_l2(exe->run(in)[0], ref->run(in)[0]), 1e-5) << trips << " trips";
        after.push_back(gpu::dynamic_memory_of(*exe).value());
    }
    EXPECT_GT(after[0].reserved, 0u);
    EXPECT_EQ(after[1].reserved, after[0].reserved) << "1,000 iterations took more device memory than 10";
    EXPECT_EQ(after[1].peak_in_use, after[0].peak_in_use) << "1,000 iterations used more device memory than 10";
    EXPECT_EQ(after[1].in_use, after[0].in_use);
}

// A Reshape whose target shape an iteration computes (an onnx_node: divisor d = divisors[i mod 30]
// of 720, shape {d, -1}) is expanded once per distinct shape read back; the runner keeps the 16 most
// recently used expansions, not one per value a long Loop ever read, and the result matches ref.
TEST(gpu_executable, a_loop_keeps_a_bounded_number_of_expansions) {
    program p = parse_text(
        "module: \"main\"\n"
        "trips = @param:trips -> int64_type, {}, {}\n"
        "cond = @param:cond -> bool_type, {}, {}\n"
        "acc0 = @param:acc0 -> float_type, {}, {}\n"
        "x = @param:x -> float_type, {720}, {1}\n"
        "@0 = loop[max_iterations=4611686018427387903](trips,cond,acc0,x), [Loop_0_body] -> tuple_type, {float_type, {}, {}; float_type, {720}, {1}}\n"
        "@1 = get_tuple_elem[index=0](@0) -> float_type, {}, {}\n"
        "@2 = @return(@1)\n"
        "\n"
        "module: \"Loop_0_body\"\n"
        "i = @param:i -> int64_type, {}, {}\n"
        "c = @param:c -> bool_type, {}, {}\n"
        "acc = @param:acc -> float_type, {}, {}\n"
        "capture:x = @param:capture:x -> float_type, {720}, {1}\n"
        "@0 = @literal{0} -> int64_type, {1}, {1}\n"
        "@1 = @literal{1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20, 24, 30, 36, 40, 45, 48, 60, 72, 80, 90, 120, 144, 180, 240, 360, 720} -> int64_type, {30}, {1}\n"
        "@2 = @literal{30} -> int64_type, {}, {}\n"
        "@3 = @literal{-1} -> int64_type, {1}, {1}\n"
        "@4 = mod[fmod=false](i,@2) -> int64_type, {}, {}\n"
        "@5 = unsqueeze[axes={0}](@4) -> int64_type, {1}, {1}\n"
        "@6 = gather[axis=0](@1,@5) -> int64_type, {1}, {1}\n"
        "@7 = concat[axis=0](@6,@3) -> int64_type, {2}, {1}\n"
        "@8 = onnx_node[op_type=Reshape,node=bytes:CgF4CgNzaHASAXkaFHJlc2hhcGVfYnlfaXRlcmF0aW9uIgdSZXNoYXBl,opsets={\"\": 18},outputs={{type: float_type, dyn_dims: {{min: 0, max: 4611686018427387903, optimals: {}, symbol: \"\"}, {min: 0, max: 4611686018427387903, optimals: {}, symbol: \"\"}}}},captures={}](capture:x,@7) -> float_type, {?[0..inf], ?[0..inf]}\n"
        "@9 = reduce_sum[axes={0},keepdims=false,noop_with_empty_axes=false](@8) -> float_type, {?[0..inf]}\n"
        "@10 = reduce_sum[axes={},keepdims=false,noop_with_empty_axes=false](@9) -> float_type, {}, {}\n"
        "@11 = add(acc,@10) -> float_type, {}, {}\n"
        "@12 = @return(c,@11,capture:x)\n");
    auto exe = make_target("gpu")->compile(p.clone());
    auto ref = make_target("ref")->compile(p.clone());
    for (std::int64_t trips : {10, 100}) {
        param_map in = random_inputs(p, static_cast<std::uint64_t>(trips));
        in["trips"] = from_int64s(shape(dtype::int64), std::vector<std::int64_t>{trips});
        in["cond"] = from_int64s(shape(dtype::bool_), std::vector<std::int64_t>{1});
        EXPECT_LT(rel_l2(exe->run(in)[0], ref->run(in)[0]), 1e-5) << trips << " trips";
        EXPECT_EQ(gpu::dynamic_memory_of(*exe).value().expanded_programs, trips == 10 ? 10u : 16u) << trips << " trips";
    }
}

// An op expanded at run time (TopK with k read back) computes in float32 under --bf16, as
// convert_precision left it and as ref computes it: its inputs are not rounded, so elements
// that only tie in bfloat16 (1 and 1 + 2^-10) keep their float32 order.
TEST(gpu_executable, an_expanded_op_computes_in_float32_under_a_low_precision) {
    program p = parse_text(
        "v = @param:v -> float_type, {2, 5}, {5, 1}\n"
        "k = @param:k -> int64_type, {1}, {1}\n"
        "@0 = onnx_node[op_type=TopK,node=bytes:CgF2CgFrEgZ2YWx1ZXMSB2luZGljZXMiBFRvcEs=,opsets={\"\": 11},"
        "outputs={{type: float_type, any_rank: true}, {type: int64_type, any_rank: true}},captures={}](v,k)"
        " -> tuple_type, {float_type, {...}; int64_type, {...}}\n"
        "@1 = get_tuple_elem[index=0](@0) -> float_type, {...}\n"
        "@2 = get_tuple_elem[index=1](@0) -> int64_type, {...}\n"
        "@3 = @return(@1,@2)\n");
    compile_options opts;
    opts.precision = compute_precision::bf16;
    auto exe = make_target("gpu")->compile(p.clone(), opts);
    auto ref = make_target("ref")->compile(p.clone(), opts);
    const float up = 1.0f + 0x1p-10f;
    const std::vector<double> v{0.5, 0.25, 1.0, up, 0.1, up, -3.0, 1.0, 2.5, -0.5};
    const std::vector<std::int64_t> k{2};
    param_map in;
    in["v"] = from_doubles(shape(dtype::float32, std::vector<std::size_t>{2, 5}), v);
    in["k"] = from_int64s(shape(dtype::int64, std::vector<std::size_t>{1}), k);
    auto got = exe->run(in);
    auto want = ref->run(in);
    EXPECT_EQ(to_doubles(got[1]), to_doubles(want[1]));
    EXPECT_EQ(to_doubles(got[1]), (std::vector<double>{3, 2, 3, 0}));
    EXPECT_EQ(to_doubles(got[0]), to_doubles(want[0]));
}

TEST(gpu_executable, no_cache_compiles_every_kernel_and_writes_nothing) {
    temp_cache cache;
    program p = dense_program();
    compile_options opts;
    auto first = make_target("gpu")->compile(p.clone(), opts);
    std::size_t files = cache.files();
    EXPECT_GT(files, 0u);
    // The compile report's breakdown: an empty cache compiles every kernel, each timed; the
    // threads compile at once, at most one per kernel.
    const executable_stats& st = first->stats();
    EXPECT_EQ(st.compiled_kernels.size(), st.kernels);
    EXPECT_GE(st.compile_threads, 1u);
    EXPECT_LE(st.compile_threads, st.kernels);
    EXPECT_GT(st.kernel_build_ms, 0);
    for (const auto& [where, ms] : st.compiled_kernels) EXPECT_GT(ms, 0) << where;
    ASSERT_EQ(st.build_phases.size(), 4u);
    EXPECT_EQ(st.build_phases.back().first, "kernels");
    auto warm = make_target("gpu")->compile(p.clone(), opts);
    EXPECT_EQ(warm->stats().cache_hits, first->stats().kernels);
    EXPECT_TRUE(warm->stats().compiled_kernels.empty());   // every kernel from the cache
    fs::remove_all(cache.dir);
    opts.kernel_cache = false;
    auto uncached = make_target("gpu")->compile(p.clone(), opts);
    EXPECT_EQ(uncached->stats().cache_hits, 0u);
    EXPECT_EQ(uncached->stats().compiled_kernels.size(), uncached->stats().kernels);
    EXPECT_EQ(cache.files(), 0u);
    auto in = random_inputs(p, 6);
    EXPECT_LT(rel_l2(uncached->run(in)[0], on_ref(p, in)), 1e-5);
}

// --exhaustive-tune times cuBLASLt's candidates once and keeps the winner in the cache's tuning
// folder: the next compile takes it from there, times nothing, and both compute what ref does.
TEST(gpu_executable, exhaustive_tune_times_once_and_stores_the_choice) {
    temp_cache cache;
    program p = dense_program();
    compile_options opts;
    opts.exhaustive_tune = true;
    auto notes = [](const executable& e) {
        std::string all;
        for (const auto& n : e.stats().notes) all += n + "\n";
        return all;
    };
    auto in = random_inputs(p, 8);
    argument want = on_ref(p, in);
    auto first = make_target("gpu")->compile(p.clone(), opts);
    EXPECT_NE(notes(*first).find("exhaustive tune: 1 library calls (timed now 1, from the tuning store 0)"), std::string::npos)
        << notes(*first);
    EXPECT_TRUE(fs::exists(cache.dir / "kiln" / "tuning"));
    auto second = make_target("gpu")->compile(p.clone(), opts);
    EXPECT_NE(notes(*second).find("exhaustive tune: 1 library calls (timed now 0, from the tuning store 1)"), std::string::npos)
        << notes(*second);
    EXPECT_LT(rel_l2(first->run(in)[0], want), 1e-5);
    EXPECT_LT(rel_l2(second->run(in)[0], want), 1e-5);
    opts.kernel_cache = false;   // --no-cache: timed again, nothing written
    fs::remove_all(cache.dir);
    auto uncached = make_target("gpu")->compile(p.clone(), opts);
    EXPECT_NE(notes(*uncached).find("timed now 1"), std::string::npos) << notes(*uncached);
    EXPECT_EQ(cache.files(), 0u);
    EXPECT_LT(rel_l2(uncached->run(in)[0], want), 1e-5);
}

// fp32 stays fp32 by default (error ~1e-7 over K = 4096); --allow-tf32 rounds the GEMM's inputs
// to 10-bit mantissas (error ~1e-4), so the two differ measurably.
TEST(gpu_executable, tf32_only_when_allowed) {
    program p = dense_program(4096);
    auto in = random_inputs(p, 7);
    argument want = on_ref(p, in);
    compile_options opts;
    double exact = rel_l2(make_target("gpu")->compile(p.clone(), opts)->run(in)[0], want);
    opts.allow_tf32 = true;
    double tf32 = rel_l2(make_target("gpu")->compile(p.clone(), opts)->run(in)[0], want);
    EXPECT_LT(exact, 1e-5);
    EXPECT_GT(tf32, 1e-5);
    EXPECT_LT(tf32, 1e-2);
}

TEST(gpu_executable, device_selection) {
    compile_options opts;
    opts.device = 64;
    try {
        make_target("gpu")->compile(dense_program(), opts);
        ADD_FAILURE() << "device 64 compiled";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("--device 64: this machine has"), std::string::npos) << e.what();
    }
}

// run_into with device buffers: inputs read and outputs written on the device, an output buffer
// of another device program's memory, and a host pointer claimed as device memory refused.
TEST(gpu_executable, run_into_device_buffers) {
    program p = dense_program();
    auto exe = make_target("gpu")->compile(p.clone());
    auto in = random_inputs(p, 8);
    shape ys = p.main().output_shapes()[0];
    gpu::device_buffer dx(in["x"].get_shape().bytes(), "x"), dy(ys.bytes(), "y");
    gpu::copy_to_device(dx.data(), in["x"].data(), in["x"].get_shape().bytes(), "x");
    caller_inputs ci{{"x", caller_buffer{argument(in["x"].get_shape(), dx.data(), nullptr), true}},
                     {"w", caller_buffer{in["w"]}}};
    std::vector<caller_buffer> out{{argument(ys, dy.data(), nullptr), true}};
    exe->run_into(ci, out);
    argument got(ys);
    gpu::copy_to_host(got.data(), dy.data(), ys.bytes(), "y");
    EXPECT_LT(rel_l2(got, on_ref(p, in)), 1e-5);
    ci["x"].arg = in["x"];   // host memory claimed as device memory
    ci["x"].on_device = true;
    try {
        exe->run_into(ci, out);
        ADD_FAILURE() << "a host pointer ran as device memory";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("input 'x' is given as a device buffer, but"), std::string::npos) << e.what();
    }
}

// An output that is a strided view (a transpose of a computed value, a slice of the input) written
// into a caller's dense device buffer lands in row-major order (a copy kernel, never the raw
// strided bytes), on the first run and on the graph's replays, against ref on fresh inputs.
TEST(gpu_executable, strided_view_outputs_are_made_dense_in_caller_buffers) {
    program p = parse_text("x = @param:x -> float_type, {5, 7}\n"
                           "@0 = relu(x)\n"
                           "@1 = transpose[permutation={1, 0}](@0)\n"
                           "@2 = slice[axes={1},starts={1},ends={6}](x)\n"
                           "@3 = transpose[permutation={1, 0}](x)\n"
                           "@4 = @return(@1,@2,@3)\n");
    auto exe = make_target("gpu")->compile(p.clone());
    auto outs = exe->get_program().main().output_shapes();
    ASSERT_EQ(outs.size(), 3u);
    EXPECT_FALSE(outs[0].standard() && outs[1].standard() && outs[2].standard()) << "no strided output left to test";
    std::vector<gpu::device_buffer> ys;
    std::vector<caller_buffer> into;
    for (const auto& s : outs) {
        shape dense(s.type(), s.lens());
        ys.emplace_back(dense.bytes(), "y");
        into.push_back({argument(dense, ys.back().data(), nullptr), true});
    }
    for (std::uint64_t run = 1; run <= 3; ++run) {
        auto in = random_inputs(p, 40 + run);
        caller_inputs ci{{"x", caller_buffer{in["x"]}}};
        exe->run_into(ci, into);
        auto want = make_target("ref")->compile(p.clone())->run(in);
        for (std::size_t i = 0; i < outs.size(); ++i) {
            argument got(shape(outs[i].type(), outs[i].lens()));
            gpu::copy_to_host(got.data(), ys[i].data(), got.get_shape().bytes(), "y");
            EXPECT_EQ(to_doubles(got), to_doubles(want[i])) << "run " << run << ", output " << i;
        }
    }
}

// Caller device buffers in a CUDA graph replay are read and written in place: cuBLASLt (dense),
// cuDNN (conv) and generated kernels (the pointwise tails, a view output of the input) take the
// caller's pointers, rebound when the buffers change between runs and back to the executable's own
// for a host input, a misaligned buffer is copied instead; every run against ref on fresh inputs.
void check_in_place(const program& p, const std::string& input) {
    SCOPED_TRACE(to_string(p));
    auto exe = make_target("gpu")->compile(p.clone());
    const shape xs = p.main().get_parameter(input)->get_shape();
    const auto outs = p.main().output_shapes();
    struct buffers {
        gpu::device_buffer x;
        std::vector<gpu::device_buffer> y;
    };
    std::vector<buffers> sets(2);
    for (auto& b : sets) {
        b.x = gpu::device_buffer(xs.bytes() + 256, "x");   // + 256: room for a misaligned copy
        for (const auto& s : outs) b.y.emplace_back(s.bytes(), "y");
    }
    std::size_t bound_runs = 0;
    for (std::uint64_t run = 1; run <= 8; ++run) {
        auto in = random_inputs(p, run);
        auto& b = sets[run % 2];
        bool host_input = run == 5, misaligned = run == 6;
        std::byte* xp = b.x.data() + (misaligned ? 64 : 0);
        gpu::copy_to_device(xp, in[input].data(), xs.bytes(), "x");
        caller_inputs ci;
        for (const auto& [name, a] : in) ci[name] = caller_buffer{a};
        if (!host_input) ci[input] = caller_buffer{argument(xs, xp, nullptr), true};
        std::vector<caller_buffer> out;
        for (std::size_t i = 0; i < outs.size(); ++i) {
            gpu::copy_to_device(b.y[i].data(), std::vector<float>(outs[i].elements(), NAN).data(), outs[i].bytes(), "y");
            out.push_back({argument(outs[i], b.y[i].data(), nullptr), true});
        }
        auto before = gpu::in_place_counts(*exe);
        exe->run_into(ci, out);
        auto after = gpu::in_place_counts(*exe);
        auto want = make_target("ref")->compile(p.clone())->run(in);
        for (std::size_t i = 0; i < outs.size(); ++i) {
            argument got(outs[i]);
            gpu::copy_to_host(got.data(), b.y[i].data(), outs[i].bytes(), "y");
            EXPECT_LT(rel_l2(got, want[i]), 1e-5) << "run " << run << ", output " << i;
        }
        // Run 1 launches the steps one by one (and captures the graph): copies. Later device
        // inputs are bound unless misaligned; the outputs are bound where the plan lets them.
        if (run == 1 || host_input || misaligned) {
            EXPECT_EQ(after.inputs, before.inputs) << "run " << run;
        } else {
            EXPECT_EQ(after.inputs, before.inputs + 1) << "run " << run;
            EXPECT_GT(after.outputs, before.outputs) << "run " << run;
            ++bound_runs;
        }
    }
    EXPECT_EQ(bound_runs, 5u);
}

TEST(gpu_executable, caller_buffers_are_bound_into_graph_replays) {
    check_in_place(dense_program(), "x");
    check_in_place(parse_text("x = @param:x -> float_type, {1, 8, 12, 12}\n"
                              "w = @param:w -> float_type, {16, 8, 3, 3}\n"
                              "@0 = convolution[padding={1, 1, 1, 1},stride={1, 1},dilation={1, 1},group=1](x,w)\n"
                              "@1 = tanh(@0)\n"
                              "@2 = @return(@1)\n"),
                   "x");
    // Output 0 is a view of the input: it is read from the caller's input buffer.
    check_in_place(parse_text("x = @param:x -> float_type, {4, 6}\n"
                              "@0 = reshape[dims={6, 4}](x)\n"
                              "@1 = exp(x)\n"
                              "@2 = @return(@0,@1)\n"),
                   "x");
}

}  // namespace
}  // namespace kiln
