// Types of ONNX's sequence and optional values (shape::sequence, shape::optional): the join of
// two types (the narrowest type that holds the values of both: what a loop-carried value, an If
// output or a sequence that grows in a loop is typed with), whether one type holds another, and
// the check of a value against a type. The interpreters and the gpu target's dynamic runner run
// these values; see docs/ir.md.
#pragma once
#include <string>

#include "core/argument.hpp"

namespace kiln {

// The narrowest type holding every value of `a` and of `b`: dims that differ become ranges, ranks
// that differ become any rank. Throws when they differ in kind or element type.
shape join_types(const shape& a, const shape& b);
// Whether every value of type `v` is a value of type `type`.
bool holds_type(const shape& type, const shape& v);
// Throws, naming `what`, unless `a` is a value of `type` (a sequence's elements one by one).
void check_value(const shape& type, const argument& a, const std::string& what);

}  // namespace kiln
