// Helpers of the cpu target tests (cpu_test_util.hpp).
#include "cpu_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/random.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"
#include "tools/verify.hpp"

namespace kiln::cpu_test {

void expect_close(const argument& got, const argument& want) {
    auto g = to_doubles(got), w = to_doubles(want);
    ASSERT_EQ(g.size(), w.size());
    for (std::size_t i = 0; i < g.size(); ++i)
        ASSERT_NEAR(g[i], w[i], 1e-4 + 1e-4 * std::abs(w[i])) << "element " << i;
}

// Compiles `text` for cpu (-O) and ref (no passes) and compares on the same random inputs.
executable_stats check_stats_against_ref(const std::string& text, bool column_major) {
    param_map in;
    program p = parse_text(text);
    std::size_t k = 0;
    for (const auto& name : p.main().parameter_names()) {
        shape s;
        for (auto prm : p.main().parameters())
            if (p.main().parameter_name(*prm) == name) s = prm->get_shape();
        argument a = random_argument(s, 0, k++);
        if (column_major && s.ndim() > 1) {
            auto lens = s.lens();
            std::vector<std::size_t> strides(lens.size());
            std::size_t st = 1;
            for (std::size_t d = 0; d < lens.size(); ++d) strides[d] = st, st *= lens[d];
            argument c(shape(s.type(), lens, strides));
            shape cs = c.get_shape();
            for (std::size_t i = 0; i < s.elements(); ++i)
                std::memcpy(c.data() + cs.index(i) * 4, a.data() + i * 4, 4);
            a = c;
        }
        in[name] = a;
    }
    auto cpu = make_target("cpu")->compile(parse_text(text));
    auto ref = make_target("ref")->compile(parse_text(text), {.optimize = false});
    auto got = cpu->run(in);
    auto want = ref->run(in);
    EXPECT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i]);
    return cpu->stats();
}

std::vector<std::string> check_against_ref(const std::string& text, bool column_major) {
    return check_stats_against_ref(text, column_major).placement;
}

param_map random_inputs(const program& p, std::uint64_t seed) {
    param_map in;
    std::size_t k = 0;
    for (auto prm : p.main().parameters()) in[p.main().parameter_name(*prm)] = random_argument(prm->get_shape(), seed, k++);
    return in;
}

bool placed(const std::vector<std::string>& placement, const std::string& what) {
    for (const auto& p : placement)
        if (p.find(what) != std::string::npos) return true;
    return false;
}

// `text` with every float_type made `type`, compiled for cpu (-O) and ref (no passes) and run on
// the same random inputs (seeds 0 and 1); the results agree within the type's tolerance (ref
// computes each op in double and rounds its result to the type, the cpu code in float).
std::vector<std::string> check_low_against_ref(std::string text, const std::string& type) {
    for (std::size_t p = 0; (p = text.find("float_type", p)) != std::string::npos; p += type.size()) text.replace(p, 10, type);
    bool half = type == "half_type";
    double rtol = half ? 4e-3 : 3.2e-2, atol = half ? 1e-3 : 1e-2;
    program prog = parse_text(text);
    auto cpu = make_target("cpu")->compile(parse_text(text));
    auto ref = make_target("ref")->compile(parse_text(text), {.optimize = false});
    for (std::uint64_t seed : {0, 1}) {
        param_map in = random_inputs(prog, seed);
        auto got = cpu->run(in);
        auto want = ref->run(in);
        EXPECT_EQ(got.size(), want.size());
        for (std::size_t o = 0; o < got.size() && o < want.size(); ++o) {
            EXPECT_EQ(got[o].get_shape().type(), want[o].get_shape().type());
            auto g = to_doubles(got[o]), w = to_doubles(want[o]);
            EXPECT_EQ(g.size(), w.size());
            for (std::size_t i = 0; i < g.size() && i < w.size(); ++i)
                EXPECT_NEAR(g[i], w[i], atol + rtol * std::abs(w[i])) << type << " seed " << seed << " output " << o << " element " << i;
        }
    }
    return cpu->stats().placement;
}

// A literal of `n` values in [-1, 1] (seeded), in text IR.
std::string literal_text(std::size_t n, unsigned seed) {
    std::string s = "@literal{";
    unsigned v = seed * 2654435761u + 1;
    for (std::size_t i = 0; i < n; ++i) {
        v = v * 1664525u + 1013904223u;
        s += (i ? ", " : "") + std::to_string(static_cast<double>(v >> 8) / (1u << 23) - 1.0);
    }
    return s + "}";
}

}  // namespace kiln::cpu_test
