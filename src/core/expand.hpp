// Ops whose computation is a program known only once some of their input values are (the ONNX
// frontend's onnx_node: a node whose mapping needs run-time values). Their reference compute
// builds and evaluates that program on the host; a target that runs on its own device asks the
// op's expander for the program instead, reads back only the inputs it asks for, and runs the
// program itself. The frontend that defines such an op registers its expander.
#pragma once
#include <functional>
#include <span>
#include <string_view>

#include "core/module.hpp"

namespace kiln {

// Input k's value, on the host (a target reads it back from its device when asked).
using input_value = std::function<argument(std::size_t k)>;
// Fills `p` with the op's computation for inputs of these (static) shapes: each input whose value
// it needs (read through `value_of`) is a literal, every other input k is the parameter "x<k>".
// Its main returns the op's results in order.
using op_expander = std::function<void(const operation& op, std::span<const shape> inputs,
                                       const input_value& value_of, program& p)>;

void register_op_expander(std::string_view op_name, op_expander f);
// The expander of an op, or null when it has none.
const op_expander* find_op_expander(std::string_view op_name);

}  // namespace kiln
