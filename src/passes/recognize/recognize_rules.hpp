// The rule families of recognize_patterns and the checks they share. Every rule declines (leaves
// the program as it is) unless the match computes exactly what the op computes: constants must be
// within a relative 1e-4 of the exact value, reductions must be over the axes the op uses, and
// every intermediate must be used only inside the pattern (otherwise it would be computed twice:
// once for its other user, once inside the op).
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "passes/matcher.hpp"

namespace kiln {

std::vector<rule> normalization_rules();  // layernorm, rms_norm (recognize_layernorm.cpp)
std::vector<rule> activation_rules();     // gelu, silu, hard_swish (recognize_activations.cpp)
std::vector<rule> softmax_rules();        // softmax (recognize_softmax.cpp)
std::vector<rule> attention_rules();      // attention (recognize_attention.cpp)

namespace recognize {

// The value of a literal whose elements are all equal; nullopt for anything else.
std::optional<double> scalar_value(instruction_ref ins);
// Static shapes of the same lens and type (strides may differ: ops the rules create have standard
// results, like the instructions they replace).
bool same_dims(const shape& a, const shape& b);
// A literal whose elements all lie within a relative 1e-4 of v.
bool near_scalar(instruction_ref ins, double v);
// True when every user of each instruction in `inner` is in `inner` or is `root`: replacing
// `root` then leaves them all dead.
bool used_only_within(std::span<const instruction_ref> inner, instruction_ref root);
// The named bindings that are bound (optional parts of a pattern may be absent).
std::vector<instruction_ref> bound(const bindings& b, std::initializer_list<const char*> names);
// The factors of a product: the leaves of the tree of muls under `root`, looking through inner
// muls that are used only by the tree (those are appended to `inner`). At most `limit` leaves;
// an empty result when there are more.
std::vector<instruction_ref> product_factors(instruction_ref root, std::vector<instruction_ref>& inner,
                                             std::size_t limit = 6);
// Axes of a reduction, normalized to [0, rank) and sorted; nullopt when it does not keep dims.
std::optional<std::vector<std::int64_t>> kept_reduce_axes(instruction_ref reduce);

}  // namespace recognize
}  // namespace kiln
