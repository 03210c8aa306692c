// How an op is written. An op is plain data plus:
//   static constexpr std::string_view name = "leaky_relu";
//   auto attributes() { return fields(field("alpha", alpha)); }         // optional
//   op_traits traits() const;                                           // optional
//   shape compute_shape(std::span<const shape> in) const;              // or (in, mods)
//   argument compute(const shape& out, std::span<const argument> args) const;   // or (out, args, mods, run)
//   int output_alias(std::span<const shape> in) const;                  // optional, else traits
//   std::string scalar_expr(std::span<const std::string> args) const;    // pointwise ops, optional
// and KILN_REGISTER_OP(leaky_relu) in its .cpp. Op structs that targets lower are declared in
// src/ops/<family>.hpp, which include this header; their compute bodies stay in the .cpp.
#pragma once
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/operation.hpp"
#include "core/reflect.hpp"

namespace kiln {

template <class T>
struct field_ref {
    const char* name;
    T& ref;
};
template <class T>
field_ref<T> field(const char* name, T& ref) { return {name, ref}; }
template <class... Fs>
auto fields(Fs... fs) { return std::make_tuple(fs...); }

struct operation::concept_t {
    virtual ~concept_t() = default;
    virtual std::string_view name() const = 0;
    virtual op_traits traits() const = 0;
    virtual shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const = 0;
    virtual argument compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                             const module_runner& run) const = 0;
    virtual int output_alias(std::span<const shape> in) const = 0;
    virtual std::optional<std::string> scalar_expr(std::span<const std::string> args) const = 0;
    virtual value attributes() const = 0;
    virtual std::shared_ptr<const concept_t> with_attributes(const value& v) const = 0;
    virtual const std::type_info& type() const = 0;   // the op struct's type, for operation::get
    virtual const void* data() const = 0;              // the op struct
};

namespace detail {
template <class Op>
value op_to_value(const Op& op) {
    value v = value_object{};
    if constexpr (requires(Op& o) { o.attributes(); }) {
        auto fs = const_cast<Op&>(op).attributes();
        std::apply([&](auto... f) { (v.set(f.name, to_value(f.ref)), ...); }, fs);
    }
    return v;
}

template <class Op>
void op_from_value(Op& op, const value& v) {
    if (v.is_null()) return;
    for (const auto& kv : v.as_object()) {
        // References, not a structured binding: the lambda below captures them, which clang
        // before 16 rejects for structured bindings (the fuzz build uses Debian's clang 14).
        const auto& key = kv.first;
        const auto& val = kv.second;
        bool found = false;
        if constexpr (requires(Op& o) { o.attributes(); }) {
            std::apply(
                [&](auto... f) {
                    auto one = [&](auto& fr) {
                        if (key != fr.name) return;
                        found = true;
                        try {
                            from_value(val, fr.ref);
                        } catch (const error& e) {
                            fail(Op::name, ": attribute '", key, "': ", e.what());
                        }
                    };
                    (one(f), ...);
                },
                op.attributes());
        }
        if (!found) fail(Op::name, ": unknown attribute '", key, "'");
    }
}

template <class Op>
struct op_model final : operation::concept_t {
    Op op;
    explicit op_model(Op o) : op(std::move(o)) {}
    std::string_view name() const override { return Op::name; }
    op_traits traits() const override {
        if constexpr (requires { op.traits(); }) return op.traits();
        else return {};
    }
    shape compute_shape(std::span<const shape> in, std::span<module* const> mods) const override {
        if constexpr (requires { op.compute_shape(in, mods); }) return op.compute_shape(in, mods);
        else return op.compute_shape(in);
    }
    argument compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                     const module_runner& run) const override {
        if constexpr (requires { op.compute(out, args, mods, run); }) return op.compute(out, args, mods, run);
        else if constexpr (requires { op.compute(out, args); }) return op.compute(out, args);
        else fail(Op::name, ": has no reference compute");
    }
    int output_alias(std::span<const shape> in) const override {
        if constexpr (requires { op.output_alias(in); }) return op.output_alias(in);
        else return traits().output_alias;
    }
    std::optional<std::string> scalar_expr(std::span<const std::string> args) const override {
        if constexpr (requires { op.scalar_expr(args); }) return op.scalar_expr(args);
        else return std::nullopt;
    }
    value attributes() const override { return op_to_value(op); }
    std::shared_ptr<const concept_t> with_attributes(const value& v) const override {
        Op copy = op;
        op_from_value(copy, v);
        return std::make_shared<op_model>(std::move(copy));
    }
    const std::type_info& type() const override { return typeid(Op); }
    const void* data() const override { return &op; }
};

template <class Op>
struct op_registrar {
    op_registrar() { register_op(operation(std::make_shared<op_model<Op>>(Op{}))); }
};
}  // namespace detail

#define KILN_REGISTER_OP(T) static const ::kiln::detail::op_registrar<T> kiln_registrar_##T{};

}  // namespace kiln
