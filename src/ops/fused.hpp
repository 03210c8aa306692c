// Fused regions (bodies and the rules their bodies follow in fused.cpp): ops whose one submodule
// is the body of one kernel that a target generates or picks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/op.hpp"

namespace kiln::ops {

// Pointwise ops (and broadcast views of their inputs) computing one value.
struct pointwise {
    static constexpr std::string_view name = "pointwise";
    op_traits traits() const { return {.fusion = true}; }
    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const;
    argument compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const;
};

// Reductions over the same `axes` with their pointwise producers and consumers.
struct fused_reduce {
    std::vector<std::int64_t> axes;
    static constexpr std::string_view name = "fused_reduce";
    auto attributes() { return fields(field("axes", axes)); }
    op_traits traits() const { return {.fusion = true}; }
    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const;
    argument compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const;
};

// One contraction (dot, gemm, convolution) followed by pointwise ops on its result.
struct fused_epilogue {
    static constexpr std::string_view name = "fused_epilogue";
    op_traits traits() const { return {.fusion = true}; }
    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const;
    argument compute(const shape&, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const;
};

}  // namespace kiln::ops
