#include "core/container.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace kiln {

namespace {

dynamic_dim join_dims(const dynamic_dim& a, const dynamic_dim& b) {
    if (a == b) return a;
    return {std::min(a.min, b.min), std::max(a.max, b.max), {}, a.symbol == b.symbol ? a.symbol : ""};
}

bool dim_holds(const dynamic_dim& type, const dynamic_dim& v) { return v.min >= type.min && v.max <= type.max; }

}  // namespace

shape join_types(const shape& a, const shape& b) {
    if (a.type() != b.type())
        fail("cannot join ", to_string(a), " and ", to_string(b), ": their types differ");
    if (a.is_sequence()) return shape::sequence(join_types(a.element(), b.element()));
    if (a.is_optional()) return shape::optional(join_types(a.element(), b.element()));
    if (a.is_tuple()) {
        if (a.sub_shapes().size() != b.sub_shapes().size())
            fail("cannot join ", to_string(a), " and ", to_string(b), ": tuples of different sizes");
        std::vector<shape> subs;
        for (std::size_t i = 0; i < a.sub_shapes().size(); ++i)
            subs.push_back(join_types(a.sub_shapes()[i], b.sub_shapes()[i]));
        return shape(std::move(subs));
    }
    if (!a.rank_known() || !b.rank_known() || a.ndim() != b.ndim()) return shape::any_rank(a.type());
    if (!a.dynamic() && !b.dynamic() && a.lens() == b.lens()) return a.as_standard();
    auto da = a.dims(), db = b.dims();
    std::vector<dynamic_dim> dims;
    for (std::size_t i = 0; i < da.size(); ++i) dims.push_back(join_dims(da[i], db[i]));
    return shape(a.type(), std::move(dims)).normalized();
}

bool holds_type(const shape& type, const shape& v) {
    if (type.type() != v.type()) return false;
    if (type.is_sequence() || type.is_optional()) return holds_type(type.element(), v.element());
    if (type.is_tuple()) {
        if (type.sub_shapes().size() != v.sub_shapes().size()) return false;
        for (std::size_t i = 0; i < v.sub_shapes().size(); ++i)
            if (!holds_type(type.sub_shapes()[i], v.sub_shapes()[i])) return false;
        return true;
    }
    if (!type.rank_known()) return true;
    if (!v.rank_known() || type.ndim() != v.ndim()) return false;
    auto dt = type.dims(), dv = v.dims();
    for (std::size_t i = 0; i < dt.size(); ++i)
        if (!dim_holds(dt[i], dv[i])) return false;
    return true;
}

void check_value(const shape& type, const argument& a, const std::string& what) {
    const shape& s = a.get_shape();
    if (s.type() != type.type()) fail(what, " is a ", dtype_name(s.type()), "; expected ", to_string(type));
    if (type.is_sequence() || type.is_optional()) {
        for (std::size_t i = 0; i < a.sub_arguments().size(); ++i)
            check_value(type.element(), a.sub_arguments()[i], cat(what, type.is_sequence() ? " element " : " value ", i));
        return;
    }
    if (!type.is_tensor()) return;
    if (!holds_type(type, s)) fail(what, " is ", to_string(s), "; expected ", to_string(type));
}

}  // namespace kiln
