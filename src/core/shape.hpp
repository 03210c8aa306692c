// A tensor's type: dtype, lens and explicit strides (in elements), so that transpose, broadcast
// and slice are views. A dim may be dynamic: a range {min, max} with optimal sizes and a symbol
// name; a shape with any dynamic dim has no strides until it is made static. A shape is also the
// type of the values that are not tensors: a tuple (sub-shapes), and ONNX's sequence and
// optional, which hold one sub-shape, their element type (core/container.hpp).
#pragma once
#include <cstddef>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace kiln {

struct dynamic_dim {
    std::size_t min = 0;
    std::size_t max = 0;
    std::vector<std::size_t> optimals;
    std::string symbol;   // "batch", "seq"; empty when unnamed
    bool is_fixed() const { return min == max; }
    bool operator==(const dynamic_dim&) const = default;
};

// Largest value of an unbounded dynamic dim (a data-dependent size such as NonZero's count).
inline constexpr std::size_t unbounded_dim = static_cast<std::size_t>(-1) / 4;

class shape {
public:
    shape() = default;                                   // scalar float32
    explicit shape(dtype t) : type_(t) {}                // scalar
    shape(dtype t, std::vector<std::size_t> lens);       // standard (row-major packed) strides
    shape(dtype t, std::vector<std::size_t> lens, std::vector<std::size_t> strides);
    shape(dtype t, std::vector<dynamic_dim> dims);       // dynamic unless every dim is fixed
    explicit shape(std::vector<shape> sub_shapes);       // tuple
    static shape sequence(shape element);                // any number of values of type `element`
    static shape optional(shape element);                // a value of type `element`, or none
    // A tensor type of unknown rank: a sequence's or optional's element declared without a
    // shape, or the result of a node whose rank depends on values (an If whose branches return
    // different ranks, a Squeeze without axes of dims that may be 1). It counts as dynamic: it has
    // no lens or strides until a value binds it, so only the interpreter and the ops that build
    // their program when they run (the frontend's deferred onnx_node) take it.
    static shape any_rank(dtype t);

    static std::vector<std::size_t> standard_strides(std::span<const std::size_t> lens);

    dtype type() const { return type_; }
    const std::vector<std::size_t>& lens() const { return lens_; }
    const std::vector<std::size_t>& strides() const { return strides_; }
    const std::vector<dynamic_dim>& dyn_dims() const { return dyn_; }
    const std::vector<shape>& sub_shapes() const { return subs_; }
    std::size_t ndim() const { return dynamic() ? dyn_.size() : lens_.size(); }

    bool dynamic() const { return !dyn_.empty() || any_rank_; }
    bool is_tuple() const { return type_ == dtype::tuple; }
    bool is_sequence() const { return type_ == dtype::sequence; }
    bool is_optional() const { return type_ == dtype::optional; }
    bool is_tensor() const { return !is_tuple() && !is_sequence() && !is_optional(); }
    bool rank_known() const { return !any_rank_; }
    const shape& element() const;   // of a sequence or optional
    bool scalar() const { return lens_.empty() && !dynamic() && is_tensor(); }

    std::size_t elements() const;        // product of lens (1 for a scalar)
    std::size_t element_space() const;   // elements the strides reach: 1 + sum((len-1)*stride)
    std::size_t bytes() const;           // bytes of the element space; packed int4 rounds up
    std::size_t type_bits() const { return dtype_bits(type_); }

    bool standard() const;      // row-major packed strides
    bool packed() const;        // no gaps and no overlap (a permutation of standard)
    bool transposed() const;    // packed but not standard
    bool broadcasted() const;   // some stride is 0 on a dim longer than 1

    // Offset (in elements) of the element with the given multi-index / row-major linear index.
    std::size_t index(std::span<const std::size_t> idx) const;
    std::size_t index(std::size_t linear) const;
    // Multi-index of a row-major linear index.
    std::vector<std::size_t> multi(std::size_t linear) const;

    shape with_type(dtype t) const;
    shape with_lens(std::vector<std::size_t> lens) const;  // standard strides
    shape as_standard() const;                               // same type and lens, standard strides
    // A static dynamic shape (all dims fixed) converted to a static shape; others unchanged.
    shape normalized() const;
    // The static shape these concrete lens give this dynamic shape; throws if a len is out of range.
    shape instantiate(std::span<const std::size_t> lens) const;
    // Dims as dynamic_dims (fixed dims become {n, n}); works for static and dynamic shapes.
    std::vector<dynamic_dim> dims() const;

    bool operator==(const shape& o) const;
    bool operator!=(const shape& o) const { return !(*this == o); }

private:
    dtype type_ = dtype::float32;
    std::vector<std::size_t> lens_;
    std::vector<std::size_t> strides_;
    std::vector<dynamic_dim> dyn_;
    std::vector<shape> subs_;
    bool any_rank_ = false;
};

// Printed form: "float_type, {1, 784}, {784, 1}"; dynamic dims as "batch[1..64:1,8]" or "?[1..64]";
// "sequence_type, {float_type, {?[0..inf], 3}}", "optional_type, {int64_type, {...}}" (any rank).
std::string to_string(const shape& s);
std::string to_string(const dynamic_dim& d);
std::ostream& operator<<(std::ostream& os, const shape& s);
std::string lens_to_string(std::span<const std::size_t> lens);   // "{1, 784}"

}  // namespace kiln
