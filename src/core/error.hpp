// kiln reports every failure as kiln::error: a message that names what failed and what was expected.
#pragma once
#include <stdexcept>
#include <string>
#include <sstream>

namespace kiln {

struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Builds a message from any streamable parts: throw error(cat("reshape: input 0 has ", n, " elements")).
template <class... Ts>
std::string cat(const Ts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
}

template <class... Ts>
[[noreturn]] void fail(const Ts&... parts) {
    throw error(cat(parts...));
}

}  // namespace kiln
