// Internal to the simplification passes: each op family's rule list and the helpers rules share.
#pragma once
#include <vector>

#include "passes/matcher.hpp"

namespace kiln {

std::vector<rule> arith_rules();      // rules_arith.cpp: identities, reassociation, negation, pow, div
std::vector<rule> fold_rules();       // rules_arith.cpp: constants gather and move towards weights
std::vector<rule> conv_gemm_rules();  // rules_conv_gemm.cpp: scales and biases into weights
std::vector<rule> convert_rules();    // rules_convert.cpp: redundant converts
std::vector<rule> reshape_rules();    // rules_reshape.cpp: view chains and inverse pairs
std::vector<rule> layout_rules();     // rules_layout.cpp: views through pointwise ops, copies

// reshape, flatten, squeeze or unsqueeze (ops that relabel elements keeping their row-major
// order) of an input matching `input`.
match::pattern relabel_of(match::pattern input);

// The permutation of a transpose (an empty attribute reverses the dims).
std::vector<std::int64_t> perm_of(instruction_ref transpose);

// Which uses of a value a layout-changing replacement must move: `some` where the replacement
// already exists (the old value may stay for the rest), `all` where it is new work that must not
// duplicate the old.
enum class uses { some, all };
// Makes the root's users read `with` instead. `with` has the root's lens and type; when its
// strides differ too, only users whose own shape does not change are rewired (never @return,
// whose outputs keep their layout, nor ops with submodules), and with uses::all only when every
// user can be. Returns whether any use moved.
bool replace_where_shape_allows(rewriter& r, instruction_ref with, uses which = uses::some);
// Whether replace_where_shape_allows would move uses of `root` to a value of shape `s`.
bool users_take(instruction_ref root, const shape& s, uses which);

// Whether an op on this instruction's inputs turns into a constant scale that folds away: a
// convolution, gemm or dot whose weights (input 1) are a literal.
bool takes_scale(instruction_ref ins);

// The lens of `c` aligned right to `rank` dims (leading 1s); empty when c has more dims.
std::vector<std::size_t> aligned_lens(const shape& c, std::size_t rank);

// Whether literal `c`, broadcast against a result of `rank` dims, varies along `axis` only and
// has length `len` or 1 there (so that it leaves the result's lens alone).
bool per_axis(const instruction& c, std::size_t rank, std::size_t axis, std::size_t len);
// A literal of c's values laid out as `lens` (which hold as many elements as c, or c holds one
// value that is repeated).
instruction_ref relaid(rewriter& r, instruction_ref c, std::vector<std::size_t> lens);

}  // namespace kiln
