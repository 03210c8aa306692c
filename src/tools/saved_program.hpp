// Saved compiled programs: `kiln compile -o model.kiln` writes one and `kiln run model.kiln` loads
// it without compiling again. The container (layout in saved_program.cpp) is versioned, records
// where the program was compiled for, checksums every section, and keeps weights in 64-byte
// aligned sections that loading maps instead of copying.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/target.hpp"

namespace kiln {

// 2: a reshape of a strided view records the view's strides (it was a copy, standard), so a
// version-1 program's shapes no longer match what its instructions compute.
inline constexpr std::uint32_t saved_program_format_version = 2;

// "0.1.0": the version of this kiln library.
std::string kiln_version();

struct saved_program_info {
    std::uint32_t format_version = saved_program_format_version;
    std::string kiln_version = kiln::kiln_version();
    std::string target = "ref";
    std::string device_arch;       // what the kernels were compiled for; "" for ref
    compile_options options;
    std::string options_hash;      // filled in when saving (options_hash(options))
    std::vector<std::string> output_names;   // the model's output names (the APIs'); may be empty
};

struct loaded_program {
    program prog;
    saved_program_info info;
    saved_parts parts;              // blobs borrowed from the file mapping
    double load_ms = 0;             // reading, checking and rebuilding the program
    std::size_t mapped_bytes = 0;   // literal bytes borrowed from the file mapping, not copied
};

// Writes the container; throws naming the file when it cannot be written.
void save_program(const program& p, const saved_program_info& info, const std::string& path,
                  const saved_parts& parts = {});
// Maps and checks the file: wrong magic, another format version, a target not built into this
// kiln or a device architecture other than its device's, a truncated file and a checksum
// mismatch each throw an error naming the file and what is wrong.
loaded_program load_program(const std::string& path);
// Whether `path` starts with the container's magic (for telling formats apart).
bool is_saved_program(const std::string& path);

// The options as JSON, and a hash of that (16 hex digits).
value to_value(const compile_options& o);
compile_options compile_options_from_value(const value& v);
std::string options_hash(const compile_options& o);

}  // namespace kiln
