// The saved-program container. All integers little-endian:
//   bytes  0..7   magic "\x89KILN\r\n\x1a\n" (binary, and text tools see it is not text)
//   bytes  8..11  format version (u32), so that a reader can refuse another layout first
//   bytes 12..15  zero
//   bytes 16..23  header length H (u64)
//   bytes 24..31  header checksum (u64)
//   bytes 32..    header: JSON {kiln_version, target, device_arch, compile_options,
//                 options_hash, sections: [{kind, name, offset, size, checksum}], output_names?}
//   then the sections, each at a multiple of 64 bytes; offsets count from the first multiple
//   of 64 after the header. Kinds: "program" (the program as JSON, literals by payload index),
//   "literal" (one literal's standard-layout bytes, payload index = order of these sections),
//   "kernel" (a kernel binary, named), "blob" (target data kept from the executable, named, e.g.
//   the cpu target's reordered weights; mapped, not copied, when loaded).
// Checksums are FNV-1a 64 over little-endian 64-bit words (the tail zero-padded): fast enough to
// check every byte at load, and any change of one word changes the sum.
#include "tools/saved_program.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "tools/program_serial.hpp"

#ifndef KILN_VERSION
#define KILN_VERSION "unknown"
#endif

namespace kiln {

namespace {

constexpr char magic[8] = {'\x89', 'K', 'I', 'L', 'N', '\r', '\n', '\x1a'};
constexpr std::size_t preamble_bytes = 32;
constexpr std::size_t alignment = 64;

std::uint64_t checksum(const std::byte* data, std::size_t n) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, data + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    if (i < n) {
        std::uint64_t w = 0;
        std::memcpy(&w, data + i, n - i);
        h = (h ^ w) * 0x100000001b3ull;
    }
    return h;
}

std::string hex(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::size_t align_up(std::size_t n) { return (n + alignment - 1) / alignment * alignment; }

const char* precision_name(compute_precision p) {
    return p == compute_precision::fp16 ? "fp16" : p == compute_precision::bf16 ? "bf16" : "fp32";
}

struct section {
    std::string kind, name;
    const std::byte* data = nullptr;
    std::size_t size = 0;
};

std::string header_json(const saved_program_info& info, const std::vector<section>& sections) {
    value_array table;
    std::size_t offset = 0;
    for (const auto& s : sections) {
        value e{{"kind", s.kind}, {"offset", offset}, {"size", s.size}, {"checksum", hex(checksum(s.data, s.size))}};
        if (!s.name.empty()) e.set("name", s.name);
        table.push_back(std::move(e));
        offset = align_up(offset + s.size);
    }
    value h{{"kiln_version", info.kiln_version},
            {"target", info.target},
            {"device_arch", info.device_arch},
            {"compile_options", to_value(info.options)},
            {"options_hash", options_hash(info.options)},
            {"sections", value(std::move(table))}};
    if (!info.output_names.empty()) h.set("output_names", value(value_array(info.output_names.begin(), info.output_names.end())));
    return to_json(h, 1);
}

void put_u64(std::byte* at, std::uint64_t v) { std::memcpy(at, &v, 8); }

}  // namespace

std::string kiln_version() { return KILN_VERSION; }

value to_value(const compile_options& o) {
    return value{{"optimize", o.optimize},
                 {"precision", precision_name(o.precision)},
                 {"fast_math", o.fast_math},
                 {"exhaustive_tune", o.exhaustive_tune},
                 {"offload_copy", o.offload_copy},
                 {"threads", static_cast<std::int64_t>(o.threads)},
                 {"kernel_cache", o.kernel_cache},
                 {"allow_tf32", o.allow_tf32},
                 {"device", static_cast<std::int64_t>(o.device)}};
}

compile_options compile_options_from_value(const value& v) {
    compile_options o;
    o.optimize = v.at("optimize").as_bool();
    const std::string& p = v.at("precision").as_string();
    if (p == "fp16") o.precision = compute_precision::fp16;
    else if (p == "bf16") o.precision = compute_precision::bf16;
    else if (p != "fp32") fail("unknown precision '", p, "'");
    o.fast_math = v.at("fast_math").as_bool();
    o.exhaustive_tune = v.at("exhaustive_tune").as_bool();
    o.offload_copy = v.at("offload_copy").as_bool();
    if (v.contains("threads")) o.threads = static_cast<std::size_t>(v.at("threads").as_int());
    if (v.contains("kernel_cache")) o.kernel_cache = v.at("kernel_cache").as_bool();
    if (v.contains("allow_tf32")) o.allow_tf32 = v.at("allow_tf32").as_bool();
    if (v.contains("device")) o.device = static_cast<int>(v.at("device").as_int());
    return o;
}

std::string options_hash(const compile_options& o) {
    std::string j = to_json(to_value(o));
    return hex(checksum(reinterpret_cast<const std::byte*>(j.data()), j.size()));
}

void save_program(const program& p, const saved_program_info& info, const std::string& path,
                  const saved_parts& parts) {
    std::vector<const literal*> payloads;
    std::string ir = to_json(program_to_value(p, payloads));
    std::vector<section> sections{{"program", "", reinterpret_cast<const std::byte*>(ir.data()), ir.size()}};
    std::vector<std::vector<std::byte>> encoded;   // string literals, which own their bytes elsewhere
    encoded.reserve(payloads.size());
    for (const literal* l : payloads) {
        if (l->get_shape().type() == dtype::string) {
            encoded.push_back(encode_strings(l->get_argument()));
            sections.push_back({"literal", "", encoded.back().data(), encoded.back().size()});
        } else {
            sections.push_back({"literal", "", l->get_argument().data(), l->get_shape().bytes()});
        }
    }
    for (const auto& k : parts.kernels)
        sections.push_back({"kernel", k.name, reinterpret_cast<const std::byte*>(k.code.data()), k.code.size()});
    for (const auto& b : parts.blobs) sections.push_back({"blob", b.name, b.bytes.data(), b.bytes.get_shape().bytes()});
    std::string header = header_json(info, sections);

    std::byte pre[preamble_bytes] = {};
    std::memcpy(pre, magic, 8);
    std::uint32_t version = info.format_version;
    std::memcpy(pre + 8, &version, 4);
    put_u64(pre + 16, header.size());
    put_u64(pre + 24, checksum(reinterpret_cast<const std::byte*>(header.data()), header.size()));

    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) fail("cannot write the saved program '", path, "'");
    static const char zeros[alignment] = {};
    f.write(reinterpret_cast<const char*>(pre), preamble_bytes);
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    std::size_t written = preamble_bytes + header.size();
    for (const auto& s : sections) {
        f.write(zeros, static_cast<std::streamsize>(align_up(written) - written));
        f.write(reinterpret_cast<const char*>(s.data), static_cast<std::streamsize>(s.size));
        written = align_up(written) + s.size;
    }
    f.write(zeros, static_cast<std::streamsize>(align_up(written) - written));
    if (!f.flush()) fail("cannot write the saved program '", path, "'");
}

namespace {

// The whole file mapped copy-on-write: literals borrow it, and a write to one (no op writes to
// its inputs) would stay private instead of changing the file.
struct mapping {
    std::shared_ptr<std::byte> base;
    std::size_t size = 0;
};

mapping map_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) fail("cannot read the saved program '", path, "': ", std::strerror(errno));
    struct stat st {};
    ::fstat(fd, &st);
    auto size = static_cast<std::size_t>(st.st_size);
    if (size < preamble_bytes) {
        char head[preamble_bytes] = {};
        auto n = ::read(fd, head, preamble_bytes);
        ::close(fd);
        if (n < 0 || std::memcmp(head, magic, std::min<std::size_t>(static_cast<std::size_t>(n), 8)) != 0 || n == 0)
            fail("'", path, "' is not a kiln saved program (wrong magic bytes)");
        fail("'", path, "' is truncated: ", size, " bytes, less than the ", preamble_bytes, "-byte preamble");
    }
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) fail("cannot map the saved program '", path, "': ", std::strerror(errno));
    return {std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [size](std::byte* b) { ::munmap(b, size); }), size};
}

std::uint64_t get_u64(const std::byte* at) {
    std::uint64_t v;
    std::memcpy(&v, at, 8);
    return v;
}

// Checks the preamble; returns the header JSON.
value read_header(const std::string& path, const mapping& m) {
    const std::byte* b = m.base.get();
    if (std::memcmp(b, magic, 8) != 0) fail("'", path, "' is not a kiln saved program (wrong magic bytes)");
    std::uint32_t version;
    std::memcpy(&version, b + 8, 4);
    if (version != saved_program_format_version)
        fail("'", path, "' has saved-program format version ", version, "; this kiln (", kiln_version(),
             ") reads version ", saved_program_format_version, ": compile the model again");
    std::uint64_t n = get_u64(b + 16);
    if (n > m.size - preamble_bytes)
        fail("'", path, "' is truncated: its header needs ", n, " bytes after the preamble, the file has ",
             m.size - preamble_bytes);
    if (checksum(b + preamble_bytes, n) != get_u64(b + 24))
        fail("'", path, "' is corrupted: the header's checksum does not match");
    try {
        return parse_json(std::string_view(reinterpret_cast<const char*>(b + preamble_bytes), n));
    } catch (const error& e) {
        fail("'", path, "' has an unreadable header: ", e.what());
    }
}

saved_program_info read_info(const value& h) {
    saved_program_info info;
    info.kiln_version = h.at("kiln_version").as_string();
    info.target = h.at("target").as_string();
    info.device_arch = h.at("device_arch").as_string();
    info.options = compile_options_from_value(h.at("compile_options"));
    info.options_hash = h.at("options_hash").as_string();
    if (h.contains("output_names"))
        for (const auto& n : h.at("output_names").as_array()) info.output_names.push_back(n.as_string());
    return info;
}

void check_target(const std::string& path, const saved_program_info& info) {
    auto built = built_targets();
    if (std::find(built.begin(), built.end(), info.target) == built.end()) {
        std::string names;
        for (const auto& n : built) names += (names.empty() ? "" : ", ") + n;
        fail("'", path, "' was compiled for the ", info.target, " target, which is not built into this kiln (built targets: ",
             names, ")");
    }
    std::string arch = make_target(info.target)->device_arch();
    if (!info.device_arch.empty() && arch != info.device_arch)
        fail("'", path, "' was compiled for device architecture ", info.device_arch, " but this ", info.target,
             " device is ", arch.empty() ? "(none)" : arch, ": compile the model again for this device");
}

// Every section's bytes, checked against the file's end and its checksum.
std::vector<section> read_sections(const std::string& path, const mapping& m, const value& h) {
    std::size_t data_start = align_up(preamble_bytes + static_cast<std::size_t>(get_u64(m.base.get() + 16)));
    std::vector<section> out;
    const auto& table = h.at("sections").as_array();
    for (std::size_t i = 0; i < table.size(); ++i) {
        const value& e = table[i];
        section s{e.at("kind").as_string(), e.contains("name") ? e.at("name").as_string() : "", nullptr,
                  static_cast<std::size_t>(e.at("size").as_int())};
        std::size_t begin = data_start + static_cast<std::size_t>(e.at("offset").as_int());
        std::string what = cat("section ", i, " (", s.kind, s.name.empty() ? "" : " " + s.name, ")");
        if (begin > m.size || s.size > m.size - begin)
            fail("'", path, "' is truncated: ", what, " ends at byte ", begin + s.size, " but the file has ", m.size,
                 " bytes");
        s.data = m.base.get() + begin;
        if (hex(checksum(s.data, s.size)) != e.at("checksum").as_string())
            fail("'", path, "' is corrupted: the checksum of ", what, " does not match");
        out.push_back(s);
    }
    if (out.empty() || out[0].kind != "program") fail("'", path, "' has no program section");
    return out;
}

}  // namespace

loaded_program load_program(const std::string& path) {
    auto start = std::chrono::steady_clock::now();
    check_input_file(path);
    mapping m = map_file(path);
    value h = read_header(path, m);
    loaded_program r;
    std::vector<section> sections;
    try {
        r.info = read_info(h);
        check_target(path, r.info);
        sections = read_sections(path, m, h);
    } catch (const error& e) {
        std::string msg = e.what();
        if (msg.starts_with("'" + path + "'")) throw;
        fail("'", path, "' has an unreadable header: ", msg);
    }
    std::vector<const section*> literals;
    for (const auto& s : sections) {
        if (s.kind == "literal") literals.push_back(&s);
        if (s.kind == "kernel") r.parts.kernels.push_back({s.name, {reinterpret_cast<const std::uint8_t*>(s.data),
                                                             reinterpret_cast<const std::uint8_t*>(s.data) + s.size}});
    }
    std::shared_ptr<void> owner = m.base;
    for (const auto& s : sections)
        if (s.kind == "blob")
            r.parts.blobs.push_back({s.name, argument(shape(dtype::uint8, std::vector<std::size_t>{s.size}), const_cast<std::byte*>(s.data), owner)});
    auto payload = [&](std::size_t i, const shape& s) {
        if (i >= literals.size()) fail("literal payload ", i, " is missing (", literals.size(), " literal sections)");
        if (s.type() == dtype::string) return literal(decode_strings(s, {literals[i]->data, literals[i]->size}));
        if (literals[i]->size != s.bytes())
            fail("literal payload ", i, " has ", literals[i]->size, " bytes, its shape ", to_string(s), " needs ", s.bytes());
        r.mapped_bytes += s.bytes();
        return literal::borrow(argument(s, const_cast<std::byte*>(literals[i]->data), owner));
    };
    const section& ir = sections[0];
    try {
        r.prog = program_from_value(parse_json({reinterpret_cast<const char*>(ir.data), ir.size}), payload);
    } catch (const error& e) {
        fail("'", path, "' holds an invalid program: ", e.what());
    }
    std::size_t outputs = r.prog.main().output_shapes().size();
    if (!r.info.output_names.empty() && r.info.output_names.size() != outputs)
        fail("'", path, "' is corrupted: its header names ", r.info.output_names.size(),
             " outputs but its program returns ", outputs);
    r.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return r;
}

bool is_saved_program(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    char buf[8] = {};
    f.read(buf, 8);
    return f.gcount() == 8 && std::memcmp(buf, magic, 8) == 0;
}

}  // namespace kiln
