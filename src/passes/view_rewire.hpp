// Moving the users of a value to the same value in another layout (its lens and type, other
// strides): views of it are made again on the new value, so that their strides follow. For the
// rewrites that compute a value in another order and view it back (simplify's heads through a
// transpose, the gpu's patch convolutions and row products).
#pragma once
#include "core/module.hpp"

namespace kiln {

// Whether every user of `v` would take a value of shape `s` with no new copy: views that stay
// views (and their users, in turn), reshapes that copied already, other ops whose result keeps
// its shape; never @return (outputs keep their layout) nor ops with submodules.
bool users_take_layout(instruction_ref v, const shape& s);

// Moves the users of `old` that can read `rep` (old's lens and type, other strides) to it: a view
// is made again on `rep` and its users move in turn; any other op reads `rep` where its own result
// stays the same. Ops with submodules and @return stay on `old`.
void move_users(module& m, instruction_ref old, instruction_ref rep);

}  // namespace kiln
