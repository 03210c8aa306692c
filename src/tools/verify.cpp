#include "tools/verify.hpp"

#include <iterator>
#include <optional>

#include "core/error.hpp"
#include "tools/program_tools.hpp"

namespace kiln {

namespace {

param_map inputs_of(const module& m, const param_map& all) {
    param_map r;
    for (const auto& name : m.parameter_names()) {
        auto it = all.find(name);
        if (it == all.end()) fail("verify: no value for input '", name, "'");
        r.emplace(name, it->second);
    }
    return r;
}

struct run_pair {
    std::vector<argument> got, ref;
    std::string last_kernel;   // the compiled instruction producing the first output
};

run_pair run_both(const program& p, const target& t, const param_map& all, const verify_options& o) {
    param_map in = inputs_of(p.main(), all);
    auto exe = t.compile(p.clone(), o.options);
    run_pair r;
    // Copied: the outputs live in the executable, which ends here.
    for (const auto& out : exe->run(in)) r.got.push_back(out.copy());
    r.ref = evaluate(p, in);
    const module& m = exe->get_program().main();
    auto ret = m.get_return();
    if (ret != m.end() && !ret->inputs().empty()) r.last_kernel = instruction_line(m, *ret->inputs()[0], instruction_names(m));
    return r;
}

comparison compare_one(const argument& got, const argument& ref, const verify_options& o) {
    dtype t = ref.get_shape().is_tuple() ? dtype::float32 : ref.get_shape().type();
    return compare_results(got, ref, o.tolerances.apply(default_tolerances(t, o.options.precision)));
}

verify_result compare_all(const run_pair& r, const std::vector<std::string>& labels, const verify_options& o) {
    verify_result v;
    if (r.got.size() != r.ref.size()) fail("verify: the target gives ", r.got.size(), " outputs, ref ", r.ref.size());
    for (std::size_t i = 0; i < r.got.size(); ++i) {
        checked_value c{labels.at(i), compare_one(r.got[i], r.ref[i], o)};
        v.pass = v.pass && c.cmp.pass;
        v.outputs.push_back(std::move(c));
    }
    return v;
}

std::vector<std::string> output_labels(std::size_t n) {
    std::vector<std::string> l;
    for (std::size_t i = 0; i < n; ++i) l.push_back("#output_" + std::to_string(i));
    return l;
}

// Compiles and compares the prefix ending at `position`.
struct prefix_check {
    const program& p;
    const target& t;
    const param_map& inputs;
    const verify_options& o;
    std::size_t count = 0;

    std::pair<comparison, std::string> operator()(std::size_t position) {
        ++count;
        program prefix = program_prefix(p, position);
        run_pair r = run_both(prefix, t, inputs, o);
        return {compare_one(r.got.at(0), r.ref.at(0), o), r.last_kernel};
    }
};

}  // namespace

verify_result verify_program(const program& p, const target& t, const param_map& inputs, const verify_options& o) {
    run_pair r = run_both(p, t, inputs, o);
    return compare_all(r, output_labels(r.ref.size()), o);
}

verify_result verify_instructions(const program& p, const target& t, const param_map& inputs,
                                  const verify_options& o) {
    const module& m = p.main();
    std::vector<argument> values(m.size());
    std::unordered_map<const instruction*, std::size_t> position;
    for (const auto& ins : m) position[&ins] = position.size();
    evaluate(p, inputs_of(m, inputs), [&](const instruction& ins, const argument& a, double) {
        values[position.at(&ins)] = a;
    });
    auto names = instruction_names(m);
    verify_result v;
    std::size_t pos = 0;
    for (const auto& ins : m) {
        std::size_t here = pos++;
        if (!is_computing(ins)) continue;
        isolated_instruction iso = isolate_instruction(p, here);
        param_map in;
        for (const auto& [name, source] : iso.inputs) in.emplace(name, values.at(source).copy());
        run_pair r = run_both(iso.prog, t, in, o);
        checked_value c{instruction_line(m, ins, names), compare_one(r.got.at(0), r.ref.at(0), o)};
        v.pass = v.pass && c.cmp.pass;
        v.outputs.push_back(std::move(c));
    }
    return v;
}

bisect_result bisect_program(const program& p, const target& t, const param_map& inputs, const verify_options& o) {
    const module& m = p.main();
    std::vector<const instruction*> at;
    for (const auto& ins : m) at.push_back(&ins);
    std::unordered_map<const instruction*, std::size_t> position;
    for (std::size_t i = 0; i < at.size(); ++i) position[at[i]] = i;
    prefix_check check{p, t, inputs, o};
    bisect_result b;
    // The first failing output, then the lowest failing position found by halving the range
    // [first computing instruction, that output].
    auto ret = m.get_return();
    if (ret == m.end()) fail("bisect: module main has no @return");
    std::optional<std::size_t> hi;
    std::pair<comparison, std::string> hi_check;
    for (auto out : ret->inputs()) {
        if (!is_computing(*out)) continue;
        auto c = check(position.at(&*out));
        if (!c.first.pass) {
            hi = position.at(&*out);
            hi_check = c;
            break;
        }
    }
    if (!hi) {
        b.checks = check.count;
        return b;
    }
    std::size_t lo = 0;
    while (lo < *hi) {
        std::size_t mid = lo + (*hi - lo) / 2;
        while (mid < *hi && !is_computing(*at[mid])) ++mid;
        if (mid == *hi) break;
        auto c = check(mid);
        if (c.first.pass) lo = mid + 1;
        else {
            hi = mid;
            hi_check = c;
        }
    }
    // Walk back while an input diverges too.
    for (bool moved = true; moved;) {
        moved = false;
        for (auto in : at[*hi]->inputs()) {
            if (!is_computing(*in)) continue;
            auto c = check(position.at(&*in));
            if (!c.first.pass) {
                hi = position.at(&*in);
                hi_check = c;
                moved = true;
                break;
            }
        }
    }
    auto names = instruction_names(m);
    b.found = true;
    b.position = *hi;
    b.instruction = instruction_line(m, *at[*hi], names);
    b.node = at[*hi]->source_name();
    for (auto in : at[*hi]->inputs()) b.inputs.push_back(names.at(&*in) + ": " + to_string(in->get_shape()));
    b.cmp = hi_check.first;
    b.kernel = hi_check.second;
    b.checks = check.count;
    return b;
}

program reduce_program(const program& p, const bisect_result& b) {
    if (!b.found) fail("reduce: the program passes, so there is nothing to reduce");
    return program_prefix(p, b.position);
}

}  // namespace kiln
