// String tensors on the gpu target (dynamic_runner.hpp). Strings have no device representation,
// so the dynamic runner holds string tensors on the host and runs the ops that compute on them
// (string_convert, string_normalizer, string_concat, string_split, regex_full_match, string_equal,
// label_encoder and tfidf_vectorizer over strings, and the ops that move string elements) with the
// ref compute: a host step. It is explicit, never a fallback: only an op that takes strings
// (op_traits::strings) and has a string tensor among its inputs or results runs here, every other
// op is refused; the compile report lists each host step ("host steps: 2 (string_normalizer
// 'norm', ...)"), and docs/gpu.md says so. A numeric input of a host step is read back (one
// synchronisation), a numeric result (a cast from string, a match's bools) is uploaded.
#include <algorithm>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "targets/gpu/dynamic_runner.hpp"

namespace kiln::gpu {
namespace {

bool has_strings(const shape& s) {
    if (s.is_tuple()) return std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), has_strings);
    return s.is_tensor() && s.type() == dtype::string;
}

std::string node_of(const instruction& ins) {
    return ins.source_name().empty() ? std::string(ins.name()) : cat(ins.name(), " (node '", ins.source_name(), "')");
}

argument run_host_step(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    if (!host_step(ins))
        fail("gpu: ", node_of(ins), " is not a string op; only ops on string tensors run on the host");
    std::vector<argument> in;
    for (std::size_t k = 0; k < args.size(); ++k)
        in.push_back(args[k].get_shape().type() == dtype::string
                         ? args[k]
                         : r.to_host(args[k], cat("reading back input ", k, " of ", node_of(ins), " for its host step")));
    argument out = compute_op(ins.get_operator(), in, ins.module_inputs());
    return r.upload(out, cat("uploading the result of the host step ", node_of(ins)));
}

const gpu_dynamic_op_registrar host_steps{
    {"a string op (the ref compute on the host: strings have no device form)", host_step, run_host_step}};

void collect(const module& m, std::vector<std::string>& steps) {
    for (const auto& ins : m) {
        if (host_step(ins))
            steps.push_back(cat(ins.name(), ins.source_name().empty() ? "" : cat(" '", ins.source_name(), "'")));
        for (const module* body : ins.module_inputs()) collect(*body, steps);
    }
}

}  // namespace

bool host_step(const instruction& ins) {
    if (ins.is_param() || ins.is_literal() || ins.is_return()) return false;
    const op_traits t = ins.get_operator().traits();
    if (!t.strings || t.output_alias >= 0) return false;   // views over strings are computed where they point
    return has_strings(ins.get_shape()) ||
           std::any_of(ins.inputs().begin(), ins.inputs().end(), [](auto i) { return has_strings(i->get_shape()); });
}

std::string host_steps_report(const module& m) {
    std::vector<std::string> steps;
    collect(m, steps);
    if (steps.empty()) return "";
    std::string r = cat("host steps: ", steps.size(), " (");
    for (std::size_t i = 0; i < steps.size(); ++i) r += (i ? ", " : "") + steps[i];
    return r + "; string tensors have no device form, so these run on the host with the ref compute)";
}

}  // namespace kiln::gpu
