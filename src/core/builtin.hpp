// The builtin ops: @param, @literal and @return. They mark the ends of a module's dataflow.
#pragma once
#include <string>

#include "core/operation.hpp"

namespace kiln {

operation make_param_op(const std::string& name, const shape& s);
operation make_literal_op();
operation make_return_op();

}  // namespace kiln
