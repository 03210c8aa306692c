// Control flow (ONNX If and Loop), declared here for typed access (lowering); bodies in control.cpp.
// Submodules are closed: they see only their parameters, which the op passes in order. Both ops
// return a tuple (read with get_tuple_elem) whose elements are in standard layout.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

// ONNX If: input 0 is the condition; the other inputs are passed to the branch that runs.
struct if_op {
    static constexpr std::string_view name = "if";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const;
    argument compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const;
};

// ONNX Loop: inputs max_trip_count, cond and N loop-carried values; the body takes (iteration
// number, cond, N carried values) and returns (cond, N carried values, K scan outputs). The
// result holds the N final carried values, then the K scan outputs stacked over the iterations
// that ran. A carried value has its body parameter's type, which holds both its initial value
// and what the body returns for it (the frontend types it with the join of the two: a sequence
// that grows, a tensor whose dims change between iterations). Their count depends on the data,
// so scan outputs get a first dim {0..max_iterations}; running more iterations than that is an
// error, not a truncation.
// The lens of Loop's scan output `output` stacked from `parts` (one per iteration, equal lens)
// along a new first dim; with no iteration, the inner dims' minimum lens of `stacked` (any inner
// lens give an empty tensor; the minimum fits the shape). Parts of other lens are an error.
std::vector<std::size_t> stacked_lens(const std::vector<argument>& parts, const shape& stacked, std::size_t output);

struct loop {
    std::int64_t max_iterations = 0;
    static constexpr std::string_view name = "loop";
    auto attributes() { return fields(field("max_iterations", max_iterations)); }
    op_traits traits() const { return {.data_dependent = true, .sequences = true}; }
    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const;
    argument compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const;
};

}  // namespace kiln::ops
