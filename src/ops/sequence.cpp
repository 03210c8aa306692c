// ONNX sequences and optionals (types in core/container.hpp). A sequence value is an argument of
// shape sequence(element type) holding its tensors; an optional holds none or one value. These
// ops only move whole tensors, except split_to_sequence and concat_from_sequence, which run the
// split, squeeze, unsqueeze and concat computes on the elements. Their results are never planned
// (plan_memory refuses sequences and optionals), so the ref interpreter runs them.
#include <numeric>

#include "core/container.hpp"
#include "core/eval.hpp"
#include "core/module.hpp"
#include "ops/common.hpp"
#include "ops/sequence.hpp"

namespace kiln::ops {

std::vector<std::int64_t> split_to_sequence_lens(const argument* split, std::size_t len) {
    if (!split) return std::vector<std::int64_t>(len, 1);
    auto lens = to_int64s(*split);
    if (split->get_shape().ndim() == 1) {
        std::int64_t total = std::accumulate(lens.begin(), lens.end(), std::int64_t{0});
        for (auto s : lens)
            if (s < 0) fail("split has a negative length ", s);
        if (total != static_cast<std::int64_t>(len)) fail("split sums to ", total, " but the axis has ", len);
        return lens;
    }
    if (lens.at(0) <= 0) fail("split is ", lens[0], "; a piece length must be positive");
    std::vector<std::int64_t> r;
    for (std::int64_t left = static_cast<std::int64_t>(len); left > 0; left -= lens[0])
        r.push_back(std::min(left, lens[0]));
    return r;
}

std::size_t sequence_position(std::int64_t p, std::size_t n, bool inserting) {
    auto len = static_cast<std::int64_t>(n);
    std::int64_t hi = inserting ? len : len - 1;
    if (p < -len || p > hi)
        fail("position ", p, " is out of range for a sequence of ", n, " (valid: ", -len, " to ", hi, ")");
    return static_cast<std::size_t>(p < 0 ? p + len : p);
}

namespace {

void check_sequence(const shape& s, const char* what) {
    if (!s.is_sequence()) fail(what, " is ", to_string(s), "; expected a sequence");
}

void check_tensor(const shape& s, const char* what) {
    if (!s.is_tensor()) fail(what, " is ", to_string(s), "; expected a tensor");
}

// A position input: an int32 or int64 scalar (or one element), counting from the end when negative.
void check_position(const shape& s) {
    check_tensor(s, "the position");
    if ((s.type() != dtype::int32 && s.type() != dtype::int64) || s.dynamic() || s.elements() != 1)
        fail("the position is ", to_string(s), "; expected an int32 or int64 scalar");
}

std::size_t position(const argument& a, std::size_t n, bool inserting) {
    return sequence_position(to_int64s(a).at(0), n, inserting);
}

// The element an element-taking op returns must have a known rank.
const shape& known_element(const shape& seq) {
    if (!seq.element().rank_known())
        fail("the sequence's elements have unknown rank (", to_string(seq),
             "); the model must declare their shape for kiln to type what reads them");
    return seq.element();
}

// The elements own their memory: a view would tie a sequence to a buffer its producer reuses.
argument owned(const argument& a) { return a.copy(); }

// SequenceConstruct: a sequence of its inputs (one or more tensors of one type).
struct sequence_construct {
    static constexpr std::string_view name = "sequence_construct";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        if (in.empty()) fail("expected at least 1 input");
        shape element = in[0];
        for (std::size_t i = 0; i < in.size(); ++i) {
            check_tensor(in[i], "an input");
            if (in[i].type() != in[0].type())
                fail("input ", i, " is ", dtype_name(in[i].type()), " but input 0 is ", dtype_name(in[0].type()));
            element = join_types(element, in[i]);
        }
        return shape::sequence(element.as_standard());
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        std::vector<argument> elements;
        for (const auto& a : args) elements.push_back(owned(a));
        return argument(out, std::move(elements));
    }
};
KILN_REGISTER_OP(sequence_construct)

// SequenceEmpty: an empty sequence of element type `type`, of unknown rank.
struct sequence_empty {
    dtype type = dtype::float32;
    static constexpr std::string_view name = "sequence_empty";
    auto attributes() { return fields(field("type", type)); }
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 0);
        return shape::sequence(shape::any_rank(type));
    }
    argument compute(const shape& out, std::span<const argument>) const { return argument(out, {}); }
};
KILN_REGISTER_OP(sequence_empty)

// SequenceAt: the element at a position.
struct sequence_at {
    static constexpr std::string_view name = "sequence_at";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 2);
        check_sequence(in[0], "input 0");
        check_position(in[1]);
        return known_element(in[0]);
    }
    argument compute(const shape&, std::span<const argument> args) const {
        const auto& elements = args[0].sub_arguments();
        return elements[position(args[1], elements.size(), false)];
    }
};
KILN_REGISTER_OP(sequence_at)

// SequenceInsert: the sequence with a tensor inserted at a position (default: at the end).
struct sequence_insert {
    static constexpr std::string_view name = "sequence_insert";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 2, 3);
        check_sequence(in[0], "input 0");
        check_tensor(in[1], "input 1");
        if (in[1].type() != in[0].element().type())
            fail("input 1 is ", dtype_name(in[1].type()), " but the sequence holds ", dtype_name(in[0].element().type()));
        if (in.size() == 3) check_position(in[2]);
        return shape::sequence(join_types(in[0].element(), in[1].as_standard()));
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        std::vector<argument> elements = args[0].sub_arguments();
        std::size_t at = args.size() == 3 ? position(args[2], elements.size(), true) : elements.size();
        elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), owned(args[1]));
        return argument(out, std::move(elements));
    }
};
KILN_REGISTER_OP(sequence_insert)

// SequenceErase: the sequence without the element at a position (default: the last).
struct sequence_erase {
    static constexpr std::string_view name = "sequence_erase";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1, 2);
        check_sequence(in[0], "input 0");
        if (in.size() == 2) check_position(in[1]);
        return in[0];
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        std::vector<argument> elements = args[0].sub_arguments();
        if (elements.empty()) fail("cannot erase from an empty sequence");
        std::size_t at = args.size() == 2 ? position(args[1], elements.size(), false) : elements.size() - 1;
        elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(at));
        return argument(out, std::move(elements));
    }
};
KILN_REGISTER_OP(sequence_erase)

// SequenceLength: the number of elements, an int64 scalar.
struct sequence_length {
    static constexpr std::string_view name = "sequence_length";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_sequence(in[0], "input 0");
        return shape(dtype::int64);
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        std::int64_t n = static_cast<std::int64_t>(args[0].sub_arguments().size());
        return from_int64s(out, std::span<const std::int64_t>(&n, 1));
    }
};
KILN_REGISTER_OP(sequence_length)

// SplitToSequence: pieces of x along axis. Without `split`, pieces of length 1 (squeezed away
// unless keepdims); a scalar split gives pieces of that length (the last may be shorter), a 1-D
// split the lengths it lists. Lengths are values, so with a split the axis is typed 0..len.
struct split_to_sequence {
    std::int64_t axis = 0;
    std::int64_t keepdims = 1;
    static constexpr std::string_view name = "split_to_sequence";
    auto attributes() { return fields(field("axis", axis), field("keepdims", keepdims)); }
    op_traits traits() const { return {.sequences = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1, 2);
        check_static(in);
        std::size_t a = normalize_axis(axis, in[0].ndim());
        auto dims = in[0].dims();
        if (in.size() == 2) {
            if (!is_integral(in[1].type()) || in[1].ndim() > 1)
                fail("input 1 (split) is ", to_string(in[1]), "; expected an integer scalar or 1-D tensor");
            dims[a] = {0, dims[a].max, {}, {}};
        } else if (keepdims) {
            dims[a] = {1, 1, {}, {}};
        } else {
            dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(a));
        }
        return shape::sequence(shape(in[0].type(), dims).normalized());
    }

    argument compute(const shape& out, std::span<const argument> args) const {
        std::size_t a = normalize_axis(axis, args[0].get_shape().ndim());
        auto lens = split_to_sequence_lens(args.size() == 2 ? &args[1] : nullptr, args[0].get_shape().lens()[a]);
        std::vector<argument> elements;
        if (!lens.empty()) {
            argument pieces = compute_op(make_op("split", value{{"axis", static_cast<std::int64_t>(a)},
                                                               {"sizes", to_value(lens)}}),
                                         std::span<const argument>(args.data(), 1));
            operation squeeze = make_op("squeeze", value{{"axes", to_value(std::vector<std::int64_t>{
                                                                     static_cast<std::int64_t>(a)})}});
            for (const auto& p : pieces.sub_arguments())
                elements.push_back(owned(args.size() == 1 && !keepdims ? compute_op(squeeze, std::span(&p, 1)) : p));
        }
        return argument(out, std::move(elements));
    }
};
KILN_REGISTER_OP(split_to_sequence)

// ConcatFromSequence: the elements concatenated along axis, or stacked along a new axis.
struct concat_from_sequence {
    std::int64_t axis = 0;
    std::int64_t new_axis = 0;
    static constexpr std::string_view name = "concat_from_sequence";
    auto attributes() { return fields(field("axis", axis), field("new_axis", new_axis)); }
    op_traits traits() const { return {.sequences = true}; }

    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        check_sequence(in[0], "input 0");
        auto dims = known_element(in[0]).dims();
        std::size_t rank = dims.size() + (new_axis ? 1 : 0);
        std::size_t a = normalize_axis(axis, rank);
        // The element count is a value: the axis spans every length it could reach.
        if (new_axis) dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(a), dynamic_dim{1, unbounded_dim, {}, {}});
        else dims[a] = {dims[a].min, unbounded_dim, {}, {}};
        return shape(in[0].element().type(), dims);
    }

    argument compute(const shape&, std::span<const argument> args) const {
        const auto& elements = args[0].sub_arguments();
        if (elements.empty()) fail("cannot concatenate an empty sequence");
        std::size_t rank = elements[0].get_shape().ndim() + (new_axis ? 1 : 0);
        auto a = static_cast<std::int64_t>(normalize_axis(axis, rank));
        std::vector<argument> parts;
        operation unsqueeze = make_op("unsqueeze", value{{"axes", to_value(std::vector<std::int64_t>{a})}});
        for (const auto& e : elements) parts.push_back(new_axis ? compute_op(unsqueeze, std::span(&e, 1)) : e);
        return compute_op(make_op("concat", value{{"axis", a}}), parts);
    }
};
KILN_REGISTER_OP(concat_from_sequence)

// SequenceMap: runs the body once per position of the sequence inputs (input 0 and any other
// sequence input, all of one length); tensor inputs go to every run as they are. The body's
// outputs at each position form the output sequences, returned as a tuple.
struct sequence_map {
    std::int64_t captures = 0;   // trailing inputs (values the body captures) that every run takes whole
    static constexpr std::string_view name = "sequence_map";
    auto attributes() { return fields(field("captures", captures)); }
    op_traits traits() const { return {.sequences = true}; }
    bool mapped(std::span<const shape> in, std::size_t i) const {
        return in[i].is_sequence() && i + static_cast<std::size_t>(captures) < in.size();
    }

    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const {
        if (in.empty()) fail("expected at least 1 input (a sequence)");
        if (mods.size() != 1) fail("expects 1 module (the body), got ", mods.size());
        check_sequence(in[0], "input 0");
        const module& body = *mods[0];
        auto params = body.parameters();
        if (params.size() != in.size())
            fail("body '", body.name(), "' takes ", params.size(), " parameters; expected ", in.size());
        if (captures < 0 || static_cast<std::size_t>(captures) >= in.size())
            fail("captures=", captures, " leaves no sequence input");
        for (std::size_t i = 0; i < in.size(); ++i) {
            shape given = mapped(in, i) ? known_element(in[i]) : in[i];
            if (!holds_type(params[i]->get_shape(), given))
                fail("body '", body.name(), "' parameter ", i, " is ", to_string(params[i]->get_shape()), " but input ",
                     i, " gives ", to_string(given));
        }
        std::vector<shape> outs;
        for (const auto& o : body.output_shapes()) {
            if (!o.is_tensor()) fail("body output ", outs.size(), " is ", to_string(o), "; expected a tensor");
            outs.push_back(shape::sequence(o.as_standard()));
        }
        return shape(std::move(outs));
    }

    argument compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const {
        if (!run) fail("needs a module runner to call its body");
        std::vector<shape> in_shapes;
        for (const auto& a : args) in_shapes.push_back(a.get_shape());
        std::size_t n = args[0].sub_arguments().size();
        for (std::size_t i = 1; i < args.size(); ++i)
            if (mapped(in_shapes, i) && args[i].sub_arguments().size() != n)
                fail("input ", i, " has ", args[i].sub_arguments().size(), " elements but input 0 has ", n);
        std::vector<std::vector<argument>> results(out.sub_shapes().size());
        for (std::size_t k = 0; k < n; ++k) {
            std::vector<argument> in;
            for (std::size_t i = 0; i < args.size(); ++i) in.push_back(mapped(in_shapes, i) ? args[i].sub_arguments()[k] : args[i]);
            auto outs = run(*mods[0], in);
            for (std::size_t j = 0; j < outs.size(); ++j) results[j].push_back(owned(outs[j]));
        }
        std::vector<argument> seqs;
        for (std::size_t j = 0; j < results.size(); ++j) seqs.emplace_back(out.sub_shapes()[j], std::move(results[j]));
        return argument(std::move(seqs));
    }
};
KILN_REGISTER_OP(sequence_map)

// Optional: a value of its input's type, or with no input an empty optional of type `type`.
struct optional_op {
    shape type;
    static constexpr std::string_view name = "optional";
    auto attributes() { return fields(field("type", type)); }
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 0, 1);
        if (in.empty()) return shape::optional(type);
        return shape::optional(in[0].is_tensor() ? in[0].as_standard() : in[0]);
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        std::vector<argument> held;
        if (!args.empty()) held.push_back(owned(args[0]));
        return argument(out, std::move(held));
    }
};
KILN_REGISTER_OP(optional_op)

// OptionalHasElement: whether the optional holds a value (a bool scalar).
struct optional_has_element {
    static constexpr std::string_view name = "optional_has_element";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        if (!in[0].is_optional()) fail("input 0 is ", to_string(in[0]), "; expected an optional");
        return shape(dtype::bool_);
    }
    argument compute(const shape& out, std::span<const argument> args) const {
        std::int64_t has = args[0].sub_arguments().empty() ? 0 : 1;
        return from_int64s(out, std::span<const std::int64_t>(&has, 1));
    }
};
KILN_REGISTER_OP(optional_has_element)

// OptionalGetElement: the optional's value; an empty optional is an error.
struct optional_get_element {
    static constexpr std::string_view name = "optional_get_element";
    op_traits traits() const { return {.sequences = true}; }
    shape compute_shape(std::span<const shape> in) const {
        check_input_count(in, 1);
        if (!in[0].is_optional()) fail("input 0 is ", to_string(in[0]), "; expected an optional");
        const shape& e = in[0].element();
        if (e.is_tensor() && !e.rank_known())
            fail("the optional's tensor has unknown rank; the model must declare its shape");
        return e;
    }
    argument compute(const shape&, std::span<const argument> args) const {
        if (args[0].sub_arguments().empty()) fail("the optional is empty");
        return args[0].sub_arguments()[0];
    }
};
KILN_REGISTER_OP(optional_get_element)

}  // namespace
}  // namespace kiln::ops
