// ONNX Scan (opset 9 on), declared here for typed access (lowering); bodies in scan.cpp. It runs
// a body submodule once per slice of the scan inputs along their scan axes, threads state values
// through the iterations, and stacks what each iteration returns into the scan outputs. The
// iteration count is the scan inputs' length, so every result shape is static. The body takes the
// states, one slice of each scan input, then the extra inputs, and returns the new states, then
// one slice of each scan output.
#pragma once
#include "ops/common.hpp"

namespace kiln::ops {

struct scan {
    std::int64_t num_states = 0;
    std::int64_t num_scan_inputs = 1;
    std::vector<std::int64_t> scan_input_axes;         // per scan input; empty: all 0
    std::vector<std::int64_t> scan_input_directions;   // 0 forward, 1 reverse; empty: all forward
    std::vector<std::int64_t> scan_output_axes;        // per scan output; empty: all 0
    std::vector<std::int64_t> scan_output_directions;  // 1: the last iteration's slice comes first
    static constexpr std::string_view name = "scan";
    auto attributes() {
        return fields(field("num_states", num_states), field("num_scan_inputs", num_scan_inputs),
                      field("scan_input_axes", scan_input_axes), field("scan_input_directions", scan_input_directions),
                      field("scan_output_axes", scan_output_axes),
                      field("scan_output_directions", scan_output_directions));
    }

    // How the inputs split: states, scan inputs, extras.
    struct layout {
        std::size_t states, scans, extras;
        std::vector<std::size_t> in_axes;
        std::size_t length;  // the number of iterations
    };
    layout split_inputs(std::span<const shape> in) const;
    // The attributes per scan input or output, defaults filled in and checked.
    std::vector<std::int64_t> input_directions(std::size_t scans) const;
    std::vector<std::int64_t> output_directions(std::size_t outputs) const;
    std::vector<std::int64_t> output_axes(std::size_t outputs) const;

    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const;
    argument compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const;

    // The shapes the body's parameters receive.
    static std::vector<shape> body_inputs(std::span<const shape> in, const layout& l);
    static void check_body(const module& body, std::span<const shape> values);
};

}  // namespace kiln::ops
