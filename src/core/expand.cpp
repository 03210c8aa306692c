#include "core/expand.hpp"

#include <map>
#include <string>

namespace kiln {
namespace {

std::map<std::string, op_expander, std::less<>>& expanders() {
    static std::map<std::string, op_expander, std::less<>> r;
    return r;
}

}  // namespace

void register_op_expander(std::string_view op_name, op_expander f) { expanders()[std::string(op_name)] = std::move(f); }

const op_expander* find_op_expander(std::string_view op_name) {
    auto it = expanders().find(op_name);
    return it == expanders().end() ? nullptr : &it->second;
}

}  // namespace kiln
