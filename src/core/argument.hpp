// argument: a shape plus a buffer (owning, or a view sharing its owner's buffer).
// literal: a constant host tensor with standard layout, the payload of @literal instructions.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/shape.hpp"

namespace kiln {

class argument {
public:
    argument() = default;
    // Allocates a zero-filled host buffer for the shape's element space.
    explicit argument(const shape& s);
    // Wraps existing memory; `owner` keeps it alive (may be null for borrowed memory).
    argument(const shape& s, std::byte* data, std::shared_ptr<void> owner);
    // A tuple of arguments.
    explicit argument(std::vector<argument> elements);
    // A sequence (any number of elements) or an optional (none or one element) of type `type`;
    // the elements are not checked against it (check_value in core/container.hpp does).
    argument(const shape& type, std::vector<argument> elements);

    const shape& get_shape() const { return shape_; }
    // No value at all (a default-constructed argument); an empty sequence or optional is a value.
    bool empty() const { return data_ == nullptr && subs_.empty() && !shape_.is_sequence() && !shape_.is_optional(); }
    std::byte* data() const { return data_; }
    template <class T> T* as() const { return reinterpret_cast<T*>(data_); }
    const std::vector<argument>& sub_arguments() const { return subs_; }   // a tuple's, sequence's or optional's

    // A view of the same buffer with another shape, starting `element_offset` elements in.
    argument view(const shape& s, std::size_t element_offset = 0) const;
    // A deep copy in standard layout (packed int4 stays packed).
    argument copy() const;
    // True when both hold the same shape and the same element values (bitwise, NaN == NaN).
    bool same_values(const argument& o) const;

private:
    shape shape_;
    std::byte* data_ = nullptr;
    std::shared_ptr<void> owner_;
    std::vector<argument> subs_;
};

// Buffers planned for one op's result. An executor opens a result_buffer_scope around each op's
// compute; while it is open on this thread, the next host buffers allocated for exactly these
// sizes (in order: a tuple's elements one by one) are made in these buffers instead, so the
// reference computes, which allocate their results, write where the memory plan says. The
// executor checks afterwards that the result is in its buffer.
struct planned_buffer {
    std::byte* data = nullptr;
    std::size_t bytes = 0;
    bool zero = true;                 // zero-fill as a fresh buffer would be (false: the op writes every byte)
    std::shared_ptr<void> owner;      // keeps the arena alive as long as the result
};
class result_buffer_scope {
public:
    explicit result_buffer_scope(std::span<const planned_buffer> buffers);
    ~result_buffer_scope();
    result_buffer_scope(const result_buffer_scope&) = delete;
    result_buffer_scope& operator=(const result_buffer_scope&) = delete;
    // Takes the open scope's next buffer when it has `bytes` bytes (and leaves it otherwise).
    static const planned_buffer* take(std::size_t bytes);

private:
    std::span<const planned_buffer> pending_;
    result_buffer_scope* previous_;
};

// Host buffers allocated so far by this process (planned buffers not counted): a test checks
// that an executable allocates nothing after its first run.
std::size_t host_buffer_allocations();

class literal {
public:
    literal() = default;
    // Takes a standard-layout copy of the argument's elements.
    explicit literal(const argument& a);
    // From values converted to the shape's dtype (round to nearest even, saturating fp8).
    literal(const shape& s, std::span<const double> values);
    literal(const shape& s, std::span<const std::int64_t> values);
    // Shares the argument's buffer instead of copying it (a saved program's weights borrow its
    // file mapping this way); the argument must be standard and not a tuple.
    static literal borrow(argument a);

    const shape& get_shape() const { return arg_.get_shape(); }
    const argument& get_argument() const { return arg_; }
    operator const argument&() const { return arg_; }
    bool operator==(const literal& o) const { return arg_.same_values(o.arg_); }

private:
    argument arg_;
};

// Every element converted to double, in row-major order of the shape (strided reads).
std::vector<double> to_doubles(const argument& a);
// Same, to int64 (exact for integer types).
std::vector<std::int64_t> to_int64s(const argument& a);
// A new standard argument of `s` filled from doubles / int64s (converted to s's dtype).
argument from_doubles(const shape& s, std::span<const double> values);
argument from_int64s(const shape& s, std::span<const std::int64_t> values);

// The elements of a string tensor in row-major order, and a new standard string tensor of them.
std::vector<std::string> to_strings(const argument& a);
argument from_strings(const shape& s, std::span<const std::string> values);
// A string tensor's elements as bytes (saved programs' payloads) and back; decoding checks lengths.
std::vector<std::byte> encode_strings(const argument& a);
argument decode_strings(const shape& s, std::span<const std::byte> bytes);

}  // namespace kiln
