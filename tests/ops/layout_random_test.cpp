// Randomized layout test: for random shapes, an op applied to non-standard views (permuted,
// sliced with steps, broadcast) must give exactly what it gives on standard copies of the same
// values. Each seed is printed on failure so a case can be replayed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "core/eval.hpp"
#include "core/module.hpp"
#include "core/target.hpp"
#include "core/text_parser.hpp"

namespace kiln {
namespace {

using lens_t = std::vector<std::size_t>;

struct layout_rng {
    std::mt19937 gen;
    explicit layout_rng(unsigned seed) : gen(seed) {}
    std::size_t uniform(std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(gen); }
    lens_t lens(std::size_t rank) {
        lens_t l(rank);
        for (auto& x : l) x = uniform(1, 4);
        return l;
    }
};

// Random values in a fresh standard argument.
argument random_tensor(layout_rng& r, dtype t, const lens_t& lens) {
    shape s(t, lens);
    std::vector<double> v(s.elements());
    std::uniform_real_distribution<double> d(-3, 3);
    for (auto& x : v) x = t == dtype::float32 ? d(r.gen) : std::round(d(r.gen) * 10);
    return from_doubles(s, v);
}

// The same values as `a` in a random non-standard layout: a permuted buffer, viewed through a
// strided slice of a larger buffer.
argument random_layout(layout_rng& r, const argument& a) {
    const shape& s = a.get_shape();
    std::size_t rank = s.lens().size();
    if (rank == 0) return a;
    std::vector<std::size_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), r.gen);
    std::vector<std::size_t> step(rank);
    for (auto& x : step) x = r.uniform(1, 2);
    // Buffer dims in permuted order, each `step` times longer; strides skip the gaps.
    std::vector<std::size_t> big(rank), strides(rank);
    std::size_t acc = 1;
    for (std::size_t k = rank; k-- > 0;) {
        std::size_t d = perm[k];
        big[k] = s.lens()[d] * step[d];
        strides[d] = acc * step[d];
        acc *= big[k];
    }
    argument buf(shape(s.type(), lens_t{acc}));
    argument view = buf.view(shape(s.type(), s.lens(), strides));
    std::size_t esize = s.type_bits() / 8;
    for (std::size_t i = 0; i < s.elements(); ++i)
        std::memcpy(view.data() + view.get_shape().index(i) * esize, a.data() + i * esize, esize);
    return view;
}

// A size-1 dim broadcast to n with stride 0 (the values are those of `a` repeated).
argument broadcast_layout(const argument& a, std::size_t axis, std::size_t n, argument& standard) {
    const shape& s = a.get_shape();
    lens_t lens = s.lens();
    std::vector<std::size_t> strides = s.strides();
    lens[axis] = n;
    strides[axis] = 0;
    argument v = a.view(shape(s.type(), lens, strides));
    standard = v.copy();
    return v;
}

std::vector<argument> run_op(const std::string& op, const value& attrs, const std::vector<argument>& args) {
    program p;
    module& m = p.main();
    std::vector<instruction_ref> ps;
    param_map inputs;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string n = "x" + std::to_string(i);
        ps.push_back(m.add_parameter(n, args[i].get_shape().as_standard()));
        inputs[n] = args[i];
    }
    m.add_return({m.add_instruction(make_op(op, attrs), ps)});
    return evaluate(p, inputs);
}

void expect_same(const std::string& what, const std::vector<argument>& a, const std::vector<argument>& b) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(a[i].same_values(b[i])) << what << ": output " << i << " differs between layouts";
}

struct op_spec {
    std::string name;
    value attrs;
    std::size_t inputs;
    bool same_lens;   // inputs share lens (else only input 0 is random-shaped)
};

TEST(layout_random, ops_agree_across_layouts) {
    const std::vector<op_spec> ops = {
        {"add", {}, 2, true},        {"mul", {}, 2, true},          {"max", {}, 2, true},
        {"sigmoid", {}, 1, true},    {"relu", {}, 1, true},         {"where", {}, 3, true},
        {"reduce_sum", value{{"axes", value_array{value(0)}}}, 1, true},
        {"reduce_max", value{{"axes", value_array{value(-1)}}}, 1, true},
        {"softmax", value{{"axis", -1}}, 1, true},
        {"contiguous", {}, 1, true}, {"concat", value{{"axis", 0}}, 2, true},
        {"cumsum", value{{"axis", 0}}, 1, true},
    };
    for (unsigned seed = 0; seed < 200; ++seed) {
        layout_rng r(seed);
        const op_spec& spec = ops[seed % ops.size()];
        lens_t lens = r.lens(r.uniform(1, 4));
        std::vector<argument> standard, strided;
        for (std::size_t i = 0; i < spec.inputs; ++i) {
            dtype t = (spec.name == "where" && i == 0) ? dtype::bool_ : dtype::float32;
            argument a = random_tensor(r, t, lens);
            standard.push_back(a);
            strided.push_back(random_layout(r, a));
        }
        SCOPED_TRACE("seed " + std::to_string(seed) + ", op " + spec.name + ", lens " + lens_to_string(lens));
        expect_same("permuted/sliced", run_op(spec.name, spec.attrs, standard), run_op(spec.name, spec.attrs, strided));

        // Broadcast: a size-1 dim of input 0 stretched with stride 0.
        std::size_t axis = r.uniform(0, lens.size() - 1);
        lens_t one = lens;
        one[axis] = 1;
        argument small = random_tensor(r, standard[0].get_shape().type(), one), copy;
        argument b = broadcast_layout(small, axis, lens[axis], copy);
        standard[0] = copy;
        strided[0] = b;
        expect_same("broadcast", run_op(spec.name, spec.attrs, standard), run_op(spec.name, spec.attrs, strided));
    }
}

// Random lens of `n` elements: random divisors of what is left, with length-1 dims here and there.
lens_t random_lens_of(layout_rng& r, std::size_t n) {
    lens_t l;
    while (n > 1) {
        std::vector<std::size_t> divisors;
        for (std::size_t d = 2; d <= n; ++d)
            if (n % d == 0) divisors.push_back(d);
        std::size_t d = divisors[r.uniform(0, divisors.size() - 1)];
        l.push_back(d), n /= d;
        if (r.uniform(0, 5) == 0) l.push_back(1);
    }
    if (l.empty()) l.push_back(1);
    return l;
}

std::string list_text(const lens_t& l) {
    std::string t;
    for (std::size_t i = 0; i < l.size(); ++i) t += (i ? ", " : "") + std::to_string(l[i]);
    return t;
}

// A reshape of a random strided view made in the IR (a transpose, then a slice with steps and
// offsets) to random lens: a view where view_shape finds strides, else a copy; either way the
// values of a reshape of the standard copy (contiguous first), on ref and on cpu.
TEST(layout_random, reshape_of_strided_views_agrees_with_a_copy) {
    std::size_t views = 0, copies = 0;
    for (unsigned seed = 0; seed < 300; ++seed) {
        layout_rng r(seed);
        std::size_t rank = r.uniform(1, 4);
        lens_t big = r.lens(rank), perm(rank), starts(rank), ends(rank), steps(rank), lens(rank);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), r.gen);
        std::size_t n = 1;
        for (std::size_t d = 0; d < rank; ++d) {
            std::size_t len = big[perm[d]];
            steps[d] = r.uniform(1, 2), starts[d] = r.uniform(0, len - 1), ends[d] = r.uniform(starts[d] + 1, len);
            lens[d] = (ends[d] - starts[d] + steps[d] - 1) / steps[d], n *= lens[d];
        }
        lens_t to = random_lens_of(r, n);
        lens_t axes(rank);
        std::iota(axes.begin(), axes.end(), 0);
        std::string head = "x = @param:x -> float_type, {" + list_text(big) + "}\n@0 = transpose[permutation={" + list_text(perm) +
               "}](x)\n@1 = slice[axes={" + list_text(axes) + "},starts={" + list_text(starts) + "},ends={" +
               list_text(ends) + "},steps={" + list_text(steps) + "}](@0)\n";
        std::string reshape = "reshape[dims={" + list_text(to) + "}]";
        std::string viewed = head + "@2 = " + reshape + "(@1)\n@3 = @return(@2)\n";
        std::string copied = head + "@2 = contiguous(@1)\n@3 = " + reshape + "(@2)\n@4 = @return(@3)\n";
        SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + viewed);
        program p = parse_text(viewed);
        (std::prev(p.main().end(), 2)->get_shape().standard() ? copies : views) += 1;
        param_map in{{"x", random_tensor(r, dtype::float32, big)}};
        auto want = evaluate(parse_text(copied), in);
        expect_same("ref", evaluate(p, in), want);
        for (const char* target : {"ref", "cpu"}) {
            auto got = make_target(target)->compile(parse_text(viewed))->run(in);
            expect_same(target, {got[0].copy()}, want);
        }
    }
    // Both ways are taken (a standard result counts as a copy here, its input's layout aside).
    EXPECT_GT(views, 30u);
    EXPECT_GT(copies, 30u);
}

}  // namespace
}  // namespace kiln
