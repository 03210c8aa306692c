// operation: a value type wrapping any op struct (see op.hpp for how an op is written).
// Passes ask an operation its traits, never compare its name to decide behaviour.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "core/argument.hpp"
#include "core/shape.hpp"
#include "core/value.hpp"

namespace kiln {

class module;

struct op_traits {
    bool pointwise = false;     // output element i depends only on input elements i (after broadcast)
    bool commutative = false;   // inputs 0 and 1 may be swapped
    bool side_effects = false;  // never removed as dead code, never folded
    bool reduction = false;     // reduces over some axes
    int output_alias = -1;      // output is a view of this input (-1: fresh buffer)
    bool builtin = false;       // @param, @literal, @return
    bool data_dependent = false;  // output shape depends on input values
    bool fusion = false;        // a fused region: its submodule is one kernel's body
    // A GEMM or convolution (dot, gemm, convolution): libraries compute it and apply a pointwise
    // epilogue before writing; its output is linear in its weights (input 1), so a constant
    // per-channel scale folds into them.
    bool contraction = false;
    bool broadcast_view = false;   // a view of input 0 repeated along some dims (stride 0), never a copy
    // Computes statistics over many elements or must not depend on the float type, so it reads
    // float32 inputs whatever the compute precision (reductions are found by `reduction`).
    bool precision_sensitive = false;
    // Takes sequence and optional values (the sequence ops, control flow); every other op is
    // refused them by compute_shape, so no op or pass reads one as a tensor.
    bool sequences = false;
    // Takes or makes string tensors (the string ops, Cast's string_convert, label_encoder,
    // tfidf_vectorizer); every other op is refused them by compute_shape, because the others'
    // computes, kernels and rewrites handle numbers only.
    bool strings = false;
};

// Runs a submodule on the given inputs (its parameters in declaration order).
using module_runner = std::function<std::vector<argument>(const module& m, std::span<const argument> inputs)>;

class operation {
public:
    struct concept_t;   // the type-erased interface, defined in op.hpp
    operation() = default;
    explicit operation(std::shared_ptr<const concept_t> impl) : impl_(std::move(impl)) {}

    bool empty() const { return impl_ == nullptr; }
    std::string_view name() const;
    op_traits traits() const;
    // Output shape for these input shapes; errors are prefixed with the op's name and attributes.
    shape compute_shape(std::span<const shape> inputs, std::span<module* const> mods = {}) const;
    // Reference compute. `out` is the static output shape (dynamic only for data-dependent ops).
    argument compute(const shape& out, std::span<const argument> args, std::span<module* const> mods = {},
                     const module_runner& run = {}) const;
    // Index of the input whose buffer the output views, or -1.
    int output_alias(std::span<const shape> inputs) const;
    // A pointwise op's scalar function as a C/CUDA expression over `args` (one expression per
    // input), calling the helpers of src/ops/scalar_helpers.h; none when the op has no such form.
    std::optional<std::string> scalar_expr(std::span<const std::string> args) const;

    value attributes() const;                       // {name: value, ...} in declaration order
    operation with_attributes(const value& attrs) const;   // a copy with these attributes set
    bool operator==(const operation& o) const;
    bool operator!=(const operation& o) const { return !(*this == o); }
    std::size_t hash() const;

    // Typed access for lowering: `op.get<ops::convolution>().padding`. The op structs lowering
    // reads are declared in src/ops/<family>.hpp. get throws naming both ops when this is another
    // op; get_if returns null instead.
    template <class Op>
    const Op* get_if() const {
        return static_cast<const Op*>(data_if(typeid(Op)));
    }
    template <class Op>
    const Op& get() const {
        if (const Op* p = get_if<Op>()) return *p;
        wrong_op(Op::name);
    }

private:
    const void* data_if(const std::type_info& type) const;   // the op struct when it has this type
    [[noreturn]] void wrong_op(std::string_view wanted) const;
    std::shared_ptr<const concept_t> impl_;
};

// "reshape[dims={-1, 784}]" (no brackets without attributes).
std::string to_string(const operation& op);

// Registry. make_op throws naming the op when the name or an attribute is unknown or mistyped.
operation make_op(std::string_view name, const value& attrs = value());
bool has_op(std::string_view name);
std::vector<std::string> registered_ops();   // sorted
void register_op(operation prototype);

}  // namespace kiln
