// The printed form with long literals shortened, for reports: a literal of more than
// `max_literal_values` values prints as "@literal{ ... }" without formatting its values (a model's
// weights take seconds to format). Kept out of module.hpp so that few files include it.
#pragma once
#include <cstddef>
#include <iosfwd>

namespace kiln {

class program;
void print(std::ostream& os, const program& p, std::size_t max_literal_values);

}  // namespace kiln
