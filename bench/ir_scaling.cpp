// How the IR's bookkeeping scales: a value with n users (built, cloned, validated, its uses
// replaced) and n modules created (fusion makes one per region). Each step should be linear in n:
// twice n, twice the time. Built by hand against a build tree:
//   g++ -std=c++20 -O2 -Isrc bench/ir_scaling.cpp -Lbuild -lkiln -Wl,-rpath,$PWD/build -o /tmp/ir_scaling
//   /tmp/ir_scaling 5000; /tmp/ir_scaling 20000
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include "core/module.hpp"
using namespace kiln;
static double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}
int main(int argc, char** argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 20000;
    program p;
    module& m = p.main();
    shape s(dtype::float32, std::vector<std::size_t>{4});
    auto x = m.add_parameter("x", s);
    auto t = std::chrono::steady_clock::now();
    std::vector<instruction_ref> users;
    for (int i = 0; i < n; ++i) users.push_back(m.add_instruction(make_op("neg"), {x}));
    double build = ms_since(t);
    t = std::chrono::steady_clock::now();
    program c = p.clone();
    double clone = ms_since(t);
    t = std::chrono::steady_clock::now();
    p.validate();
    double validate = ms_since(t);
    t = std::chrono::steady_clock::now();
    auto y = m.insert_instruction(users.front(), make_op("relu"), {x});
    m.replace_uses(x, y);
    double replace = ms_since(t);
    t = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) p.create_module("fused_" + std::to_string(i));
    double modules = ms_since(t);
    std::printf("n=%d: %d users built %.1f ms, clone %.1f ms, validate %.1f ms, replace_uses %.1f ms; %d modules created %.1f ms\n",
                n, n, build, clone, validate, replace, n, modules);
}
