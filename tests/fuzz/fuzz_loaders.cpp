// libFuzzer harnesses for every loader of untrusted bytes, one binary each (KILN_FUZZ_TARGET picks
// the loader). A kiln::error is the expected outcome for bad bytes; anything else (a crash, a
// sanitizer report, another exception type, a hang) is a finding. Built by tests/fuzz/CMakeLists.txt
// when KILN_FUZZ=ON (clang); run with scripts/fuzz.sh NAME SECONDS.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text_parser.hpp"
#include "core/value.hpp"
#include "driver/npy.hpp"
#include "frontends/onnx/onnx.hpp"
#include "tools/saved_program.hpp"

namespace {

// The file loaders read paths: the bytes go to a per-process file first.
std::string as_file(const std::uint8_t* data, std::size_t size, const char* ext) {
    std::string path = "/tmp/kiln_fuzz_" + std::to_string(getpid()) + ext;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path;
}

void load(const std::uint8_t* data, std::size_t size) {
    using namespace kiln;
#if KILN_FUZZ_TARGET == 1
    onnx_options o;
    o.warn = [](const std::string&) {};
    parse_onnx_buffer(data, size, o);
#elif KILN_FUZZ_TARGET == 2
    parse_text(std::string_view(reinterpret_cast<const char*>(data), size));
#elif KILN_FUZZ_TARGET == 3
    load_program(as_file(data, size, ".kiln"));
#elif KILN_FUZZ_TARGET == 4
    driver::read_npy(as_file(data, size, ".npy"));
#elif KILN_FUZZ_TARGET == 5
    read_onnx_tensor_file(as_file(data, size, ".pb"));
#elif KILN_FUZZ_TARGET == 6
    parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
#else
#error "KILN_FUZZ_TARGET must be 1..6"
#endif
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // Far below the machine's memory: the fuzzer's own RSS limit (2 GiB) must not be what stops a
    // size bomb; kiln's limit must.
    kiln::set_max_tensor_bytes(std::size_t{256} << 20);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        load(data, size);
    } catch (const kiln::error&) {
    }
    return 0;
}
