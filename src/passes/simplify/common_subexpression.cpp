#include "passes/simplify/common_subexpression.hpp"

#include <cstring>
#include <functional>
#include <unordered_map>

namespace kiln {

namespace {

std::size_t combine(std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

std::size_t literal_hash(const instruction& ins) {
    const argument& a = ins.get_literal().get_argument();
    std::size_t h = std::hash<std::string>{}(to_string(ins.get_shape()));
    // A string tensor's bytes are std::string objects (pointers); its first string stands in.
    if (ins.get_shape().type() == dtype::string)
        return combine(h, ins.get_shape().elements() ? std::hash<std::string>{}(*a.as<std::string>()) : 0);
    // Hashing a prefix is enough to spread buckets; equality compares every value.
    std::size_t n = std::min<std::size_t>(ins.get_shape().bytes(), 256);
    return combine(h, std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(a.data()), n)));
}

std::size_t instruction_hash(const instruction& ins) {
    if (ins.is_literal()) return literal_hash(ins);
    std::size_t h = ins.get_operator().hash();
    for (auto in : ins.inputs()) h = combine(h, std::hash<const void*>{}(&*in));
    for (const module* sub : ins.module_inputs()) h = combine(h, std::hash<const void*>{}(sub));
    return h;
}

bool same(const instruction& a, const instruction& b) {
    if (a.is_literal() || b.is_literal())
        return a.is_literal() && b.is_literal() && a.get_shape() == b.get_shape() && a.get_literal() == b.get_literal();
    return a.get_operator() == b.get_operator() && a.inputs() == b.inputs() && a.module_inputs() == b.module_inputs() &&
           a.get_shape() == b.get_shape();
}

bool mergeable(const instruction& ins) {
    if (ins.is_param() || ins.is_return()) return false;
    return !ins.get_operator().traits().side_effects;
}

}  // namespace

void eliminate_common_subexpression::apply(module& m) const {
    // Instructions come in order, so an instruction's inputs are already merged when it is seen.
    std::unordered_multimap<std::size_t, instruction_ref> seen;
    for (auto ins = m.begin(); ins != m.end(); ++ins) {
        if (!mergeable(*ins)) continue;
        std::size_t h = instruction_hash(*ins);
        auto [lo, hi] = seen.equal_range(h);
        bool merged = false;
        for (auto it = lo; it != hi; ++it) {
            if (!same(*it->second, *ins)) continue;
            m.replace_uses(ins, it->second);
            merged = true;
            break;
        }
        if (!merged) seen.emplace(h, ins);
    }
}

}  // namespace kiln
