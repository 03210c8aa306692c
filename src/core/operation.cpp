#include "core/operation.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "core/op.hpp"

namespace kiln {

std::string_view operation::name() const { return impl_ ? impl_->name() : std::string_view("<empty>"); }

op_traits operation::traits() const { return impl_ ? impl_->traits() : op_traits{}; }

shape operation::compute_shape(std::span<const shape> inputs, std::span<module* const> mods) const {
    try {
        op_traits t = traits();
        if (!t.sequences && !t.builtin)
            for (std::size_t i = 0; i < inputs.size(); ++i)
                if (inputs[i].is_sequence() || inputs[i].is_optional())
                    fail("input ", i, " is a ", dtype_name(inputs[i].type()), " (", to_string(inputs[i]),
                         "); this op takes tensors");
        // Control flow and the sequence ops pass string values along without reading them.
        bool strings_ok = t.strings || t.sequences || t.builtin;
        if (!strings_ok)
            for (std::size_t i = 0; i < inputs.size(); ++i)
                if (inputs[i].type() == dtype::string) fail("input ", i, " is a string tensor; this op takes numbers");
        shape r = impl_->compute_shape(inputs, mods);
        if (!strings_ok && r.type() == dtype::string) fail("makes a string tensor; this op makes numbers");
        return r;
    } catch (const error& e) {
        std::string msg = e.what();
        std::string prefix = std::string(name()) + ":";
        if (msg.rfind(prefix, 0) == 0) throw;   // already names the op
        fail(to_string(*this), ": ", msg);
    }
}

argument operation::compute(const shape& out, std::span<const argument> args, std::span<module* const> mods,
                            const module_runner& run) const {
    return impl_->compute(out, args, mods, run);
}

int operation::output_alias(std::span<const shape> inputs) const { return impl_->output_alias(inputs); }

const void* operation::data_if(const std::type_info& type) const {
    return impl_ && impl_->type() == type ? impl_->data() : nullptr;
}

void operation::wrong_op(std::string_view wanted) const {
    fail("operation::get: the op is ", to_string(*this), ", not ", wanted);
}

std::optional<std::string> operation::scalar_expr(std::span<const std::string> args) const {
    return impl_ ? impl_->scalar_expr(args) : std::nullopt;
}

value operation::attributes() const { return impl_ ? impl_->attributes() : value(value_object{}); }

operation operation::with_attributes(const value& attrs) const { return operation(impl_->with_attributes(attrs)); }

bool operation::operator==(const operation& o) const { return name() == o.name() && attributes() == o.attributes(); }

std::size_t operation::hash() const { return std::hash<std::string_view>{}(name()) ^ attributes().hash(); }

std::string to_string(const operation& op) {
    std::string s(op.name());
    value attrs = op.attributes();
    if (attrs.as_object().empty()) return s;
    s += "[";
    bool first = true;
    for (const auto& [k, v] : attrs.as_object()) {
        s += (first ? "" : ",") + k + "=" + to_string(v);
        first = false;
    }
    return s + "]";
}

namespace {
std::map<std::string, operation, std::less<>>& registry() {
    static std::map<std::string, operation, std::less<>> r;
    return r;
}
}  // namespace

void register_op(operation prototype) {
    std::string n(prototype.name());
    if (!registry().emplace(n, std::move(prototype)).second) fail("op '", n, "' registered twice");
}

bool has_op(std::string_view name) { return registry().count(name) > 0; }

operation make_op(std::string_view name, const value& attrs) {
    auto it = registry().find(name);
    if (it == registry().end()) fail("unknown op '", name, "'");
    if (attrs.is_null()) return it->second;
    return it->second.with_attributes(attrs);
}

std::vector<std::string> registered_ops() {
    std::vector<std::string> names;
    for (const auto& [n, op] : registry()) names.push_back(n);
    return names;
}

value to_value(const shape& s) {
    value v = value_object{};
    v.set("type", to_value(s.type()));
    if (s.is_sequence() || s.is_optional()) {
        v.set("element", to_value(s.element()));
        return v;
    }
    if (!s.rank_known()) {
        v.set("any_rank", true);
        return v;
    }
    if (s.dynamic()) {
        value_array dims;
        for (const auto& d : s.dyn_dims())
            dims.push_back(value{{"min", to_value(d.min)}, {"max", to_value(d.max)},
                                 {"optimals", to_value(d.optimals)}, {"symbol", value(d.symbol)}});
        v.set("dyn_dims", value(std::move(dims)));
        return v;
    }
    v.set("lens", to_value(s.lens()));
    v.set("strides", to_value(s.strides()));
    return v;
}

void from_value(const value& v, shape& s) {
    dtype t;
    from_value(v.at("type"), t);
    if (t == dtype::sequence || t == dtype::optional) {
        shape element;
        from_value(v.at("element"), element);
        s = t == dtype::sequence ? shape::sequence(std::move(element)) : shape::optional(std::move(element));
        return;
    }
    if (v.contains("any_rank") && v.at("any_rank").as_bool()) {
        s = shape::any_rank(t);
        return;
    }
    if (v.contains("dyn_dims")) {
        std::vector<dynamic_dim> dims;
        for (const auto& d : v.at("dyn_dims").as_array()) {
            dynamic_dim dd;
            from_value(d.at("min"), dd.min);
            from_value(d.at("max"), dd.max);
            if (d.contains("optimals")) from_value(d.at("optimals"), dd.optimals);
            if (d.contains("symbol")) dd.symbol = d.at("symbol").as_string();
            dims.push_back(dd);
        }
        s = shape(t, std::move(dims));
        return;
    }
    std::vector<std::size_t> lens, strides;
    from_value(v.at("lens"), lens);
    if (v.contains("strides")) {
        from_value(v.at("strides"), strides);
        s = shape(t, lens, strides);
    } else {
        s = shape(t, lens);
    }
}

}  // namespace kiln
