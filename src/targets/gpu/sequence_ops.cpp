// ONNX sequences and optionals on the GPU (dynamic_runner.hpp): a sequence is a list of device
// tensors, an optional none or one value, as ref holds them (ops/sequence.cpp), so the runner's
// values carry them through If, Loop and sequence_map and back to the caller like ref's. These ops
// move whole tensors: elements are standard device values (a copy kernel only where one is a
// view), split_to_sequence's pieces are views of its input made standard, concat_from_sequence is
// the concat lowering over the elements. The host reads back only what decides what runs next:
// a position (sequence_at, sequence_insert, sequence_erase) and split_to_sequence's split, one
// synchronisation each (docs/gpu.md lists them). Counts the host already knows (sequence_length,
// optional_has_element) are written to the device.
#include "core/error.hpp"
#include "core/reflect.hpp"
#include "ops/common.hpp"
#include "ops/sequence.hpp"
#include "targets/gpu/dynamic_runner.hpp"

namespace kiln::gpu {
namespace {

std::string node_of(const instruction& ins) {
    return ins.source_name().empty() ? std::string(ins.name()) : cat(ins.name(), " (node '", ins.source_name(), "')");
}

// The position input `k` read back (a synchronisation) and checked as ref checks it.
std::size_t position(dynamic_runner& r, const instruction& ins, const argument& a, std::size_t n, bool inserting) {
    return ops::sequence_position(r.read_scalar(a, cat("reading the position of ", node_of(ins))), n, inserting);
}

argument construct(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    std::vector<argument> elements;
    for (const auto& a : args) elements.push_back(r.standard(ins, a));
    return argument(ins.get_shape(), std::move(elements));
}

argument empty(dynamic_runner&, const instruction& ins, std::span<const argument>) {
    return argument(ins.get_shape(), {});
}

argument at(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const auto& elements = args[0].sub_arguments();
    return elements[position(r, ins, args[1], elements.size(), false)];
}

argument insert(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    std::vector<argument> elements = args[0].sub_arguments();
    std::size_t pos = args.size() == 3 ? position(r, ins, args[2], elements.size(), true) : elements.size();
    elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(pos), r.standard(ins, args[1]));
    return argument(ins.get_shape(), std::move(elements));
}

argument erase(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    std::vector<argument> elements = args[0].sub_arguments();
    if (elements.empty()) fail("cannot erase from an empty sequence");
    std::size_t pos = args.size() == 2 ? position(r, ins, args[1], elements.size(), false) : elements.size() - 1;
    elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(pos));
    return argument(ins.get_shape(), std::move(elements));
}

argument length(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    return r.scalar(ins.get_shape(), static_cast<std::int64_t>(args[0].sub_arguments().size()));
}

// Pieces of x along the axis as views (lens from ops::split_to_sequence_lens, the split read back
// when given), each made standard; without a split and keepdims=0 the axis is dropped.
argument split(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const value attrs = ins.get_operator().attributes();
    const shape& x = args[0].get_shape();
    const std::size_t a = ops::normalize_axis(attrs.at("axis").as_int(), x.ndim());
    argument sizes;
    if (args.size() == 2) sizes = r.to_host(args[1], cat("reading back the split of ", node_of(ins)));
    auto lens = ops::split_to_sequence_lens(args.size() == 2 ? &sizes : nullptr, x.lens()[a]);
    const bool squeeze = args.size() == 1 && attrs.at("keepdims").as_int() == 0;
    std::vector<argument> elements;
    std::size_t start = 0;
    for (std::int64_t len : lens) {
        auto piece_lens = x.lens();
        auto strides = x.strides();
        piece_lens[a] = static_cast<std::size_t>(len);
        if (squeeze) {
            piece_lens.erase(piece_lens.begin() + static_cast<std::ptrdiff_t>(a));
            strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(a));
        }
        argument piece = args[0].view(shape(x.type(), piece_lens, strides), start * x.strides()[a]);
        elements.push_back(r.standard(ins, piece));
        start += static_cast<std::size_t>(len);
    }
    return argument(ins.get_shape(), std::move(elements));
}

// The elements (unsqueezed as views for new_axis) concatenated by the concat lowering.
argument concat(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const value attrs = ins.get_operator().attributes();
    const auto& elements = args[0].sub_arguments();
    if (elements.empty()) fail("cannot concatenate an empty sequence");
    const bool new_axis = attrs.at("new_axis").as_int() != 0;
    const std::size_t rank = elements[0].get_shape().ndim() + (new_axis ? 1 : 0);
    const auto a = static_cast<std::int64_t>(ops::normalize_axis(attrs.at("axis").as_int(), rank));
    const operation unsqueeze = make_op("unsqueeze", value{{"axes", to_value(std::vector<std::int64_t>{a})}});
    std::vector<argument> parts;
    for (const auto& e : elements) parts.push_back(new_axis ? r.view(unsqueeze, std::span(&e, 1)) : e);
    return r.launch(ins, make_op("concat", value{{"axis", a}}), parts);
}

// The body once per position of the sequence inputs (input 0 and the other sequences before the
// captures), on the device; each output a sequence of the runs' results.
argument map(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    const auto captures = static_cast<std::size_t>(ins.get_operator().attributes().at("captures").as_int());
    auto mapped = [&](std::size_t i) { return args[i].get_shape().is_sequence() && i + captures < args.size(); };
    const std::size_t n = args[0].sub_arguments().size();
    for (std::size_t i = 1; i < args.size(); ++i)
        if (mapped(i) && args[i].sub_arguments().size() != n)
            fail("input ", i, " has ", args[i].sub_arguments().size(), " elements but input 0 has ", n);
    const shape& out = ins.get_shape();
    std::vector<std::vector<argument>> results(out.sub_shapes().size());
    for (std::size_t k = 0; k < n; ++k) {
        std::vector<argument> in;
        for (std::size_t i = 0; i < args.size(); ++i) in.push_back(mapped(i) ? args[i].sub_arguments()[k] : args[i]);
        auto outs = r.run(*ins.module_inputs()[0], in);
        for (std::size_t j = 0; j < outs.size(); ++j) results[j].push_back(r.standard(ins, outs[j]));
    }
    std::vector<argument> seqs;
    for (std::size_t j = 0; j < results.size(); ++j) seqs.emplace_back(out.sub_shapes()[j], std::move(results[j]));
    return argument(std::move(seqs));
}

argument optional(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    std::vector<argument> held;
    if (!args.empty()) held.push_back(r.standard(ins, args[0]));
    return argument(ins.get_shape(), std::move(held));
}

argument has_element(dynamic_runner& r, const instruction& ins, std::span<const argument> args) {
    return r.scalar(ins.get_shape(), args[0].sub_arguments().empty() ? 0 : 1);
}

argument get_element(dynamic_runner&, const instruction&, std::span<const argument> args) {
    if (args[0].sub_arguments().empty()) fail("the optional is empty");
    return args[0].sub_arguments()[0];
}

#define KILN_SEQUENCE_OP(op, fn, what)                                                              \
    const gpu_dynamic_op_registrar fn##_runs{                                                      \
        {what, [](const instruction& ins) { return ins.name() == std::string_view(op); }, fn}};

KILN_SEQUENCE_OP("sequence_construct", construct, "sequence_construct (a list of device tensors)")
KILN_SEQUENCE_OP("sequence_empty", empty, "sequence_empty")
KILN_SEQUENCE_OP("sequence_at", at, "sequence_at (its position read back)")
KILN_SEQUENCE_OP("sequence_insert", insert, "sequence_insert (its position read back)")
KILN_SEQUENCE_OP("sequence_erase", erase, "sequence_erase (its position read back)")
KILN_SEQUENCE_OP("sequence_length", length, "sequence_length")
KILN_SEQUENCE_OP("split_to_sequence", split, "split_to_sequence (its split read back; pieces copied on the device)")
KILN_SEQUENCE_OP("concat_from_sequence", concat, "concat_from_sequence (the concat lowering)")
KILN_SEQUENCE_OP("sequence_map", map, "sequence_map (its body run on the device per element)")
KILN_SEQUENCE_OP("optional", optional, "optional")
KILN_SEQUENCE_OP("optional_has_element", has_element, "optional_has_element")
KILN_SEQUENCE_OP("optional_get_element", get_element, "optional_get_element")

#undef KILN_SEQUENCE_OP

}  // namespace
}  // namespace kiln::gpu
