// Limits on what an input may ask of kiln, checked before kiln acts on it, so that a hostile or
// broken model gets an error that names the problem instead of a crash or an allocation failure.
#pragma once
#include <cstddef>
#include <string>

namespace kiln {

class shape;

// Nesting depth of values (JSON, text IR attributes): deeper input would overflow the stack of the
// recursive readers, writers and destructors of `value`; no real program nests beyond a few levels.
inline constexpr int max_value_depth = 512;

// The largest tensor kiln allocates; by default the machine's physical memory.
std::size_t max_tensor_bytes();
void set_max_tensor_bytes(std::size_t bytes);
// Throws when a tensor of shape `s` would be larger than max_tensor_bytes().
void check_tensor_bytes(const shape& s);

}  // namespace kiln
