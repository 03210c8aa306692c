// Turns the pointwise part of a fused region's body (pointwise ops, broadcast views of its
// inputs, scalar literals) into one elementwise kernel: each op contributes its scalar_expr (the
// helpers of ops/scalar_helpers.h), convert its element cast; values of float16/bfloat16 ops
// are rounded to their type as ref rounds them. Every value is computed at the output's index,
// operands are read through their strides broadcast to the output's lens.
#pragma once
#include <unordered_map>

#include "core/module.hpp"
#include "targets/gpu/lowering.hpp"

namespace kiln::gpu {

// A value the kernel loads: device memory with its strided shape.
struct body_operand {
    std::byte* ptr = nullptr;
    shape s;
};

// The run-time checks of a kernel's integer arithmetic where ref throws and the scalar helpers
// give 0: each integer div or mod's divisor goes through kiln::checked_divisor, each integer pow's
// base through kiln::checked_power_base (0 to a negative power; device/kiln_error.cuh), which
// record the failure in the instruction's error slot, the kernel's parameter `err`; the run then
// fails with ref's message ("div: integer division by zero", "pow: 0 raised to the negative
// power -2").
class divisor_checks {
public:
    // `position`: the kernel's expression of the element being computed ("i").
    explicit divisor_checks(std::string position) : position_(std::move(position)) {}
    // Whether b is an integer div, mod or pow, whose operands need the check.
    static bool needed(const instruction& b);
    // b's operand expressions with the check applied (its divisor, or its base).
    void check(const instruction& b, std::vector<std::string>& args);
    bool any() const { return !messages_.empty() || powers_; }
    // The instruction's error slot, for the kernel's `err` parameter.
    void* slot(lowering_context& ctx, const instruction& ins) const;

private:
    std::string position_;
    std::vector<std::string> messages_;   // ref's message for each checked div or mod, by its number
    bool powers_ = false;                  // an integer pow is checked
};

// The expression of pointwise op `b` over its operands' expressions (its scalar_expr, or its
// cast for convert), rounded to its element type as ref stores it; integer divisions, moduli and
// powers check their operands through `checks`. Throws naming `where`.
std::string pointwise_value(const instruction& b, std::vector<std::string> args, const std::string& where,
                            divisor_checks& checks);
// v as a C++ double constant, exactly (NaN and infinities too).
std::string double_literal(double v);
// A one-element literal as a constant of its compute type.
std::string scalar_literal(const argument& a);
// expr rounded to dtype t's storage and loaded back ("kiln::load(kiln::storer<half>::from(e))").
std::string stored_value(dtype t, const std::string& expr);
// numpy broadcasting: s's dims right-aligned to `lens`, stride 0 where s has none or 1.
shape broadcast_to(const shape& s, const std::vector<std::size_t>& lens);

// What view instruction `b` makes of the operand `src` it aliases: the same memory read through
// the view's strides.
body_operand view_operand(const instruction& b, const body_operand& src);

// Adds the kernel computing `body`'s returned value into `out` (shape `out_shape`), given the
// operands of its parameters and of any other instruction already computed (a fused epilogue's
// anchor). Throws naming the body instruction it cannot express.
void add_body_kernel(lowering_context& ctx, const instruction& ins, const module& body,
                     std::unordered_map<const instruction*, body_operand> known, std::byte* out, const shape& out_shape);

// The fused instruction's inputs as operands of its body's parameters.
std::unordered_map<const instruction*, body_operand> body_params(lowering_context& ctx, const instruction& ins,
                                                                 const module& body);

}  // namespace kiln::gpu
