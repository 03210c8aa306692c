#include "targets/gpu/kernel_compiler.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "targets/gpu/device_library.hpp"
#include "targets/gpu/gpu_error.hpp"

namespace kiln::gpu {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> nvrtc_flags(const kernel_settings& s) {
    std::vector<std::string> f{"--gpu-architecture=" + s.arch, "-std=c++17", "-default-device", "-DKILN_DEVICE=1"};
    if (s.fast_math) f.push_back("--use_fast_math");
    return f;
}

// Two FNV-1a 64-bit hashes with different offsets: 128 bits, so collisions do not happen.
struct hasher {
    std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    void add(std::string_view s) {
        for (unsigned char c : s) {
            a = (a ^ c) * 0x100000001b3ull;
            b = (b ^ c) * 0x100000001b3ull + 1;
        }
        a = (a ^ 0xff) * 0x100000001b3ull;   // separates consecutive fields
    }
    std::string hex() const {
        std::ostringstream os;
        os << std::hex << a << b;
        return os.str();
    }
};

const std::string& library_fingerprint() {
    static const std::string fp = [] {
        hasher h;
        for (const auto& f : device_library()) {
            h.add(f.name);
            h.add(f.text);
        }
        int major = 0, minor = 0;
        nvrtcVersion(&major, &minor);
        h.add(cat("nvrtc ", major, ".", minor));
        return h.hex();
    }();
    return fp;
}

std::string cache_key(const kernel_source& src, const kernel_settings& s) {
    hasher h;
    h.add(library_fingerprint());
    h.add(src.code);
    h.add(src.entry);
    for (const auto& f : nvrtc_flags(s)) h.add(f);
    return h.hex();
}

}  // namespace

std::string read_cache_file(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return {};
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Temp file then rename: a reader sees the whole file or none.
void write_cache_file(const std::string& path, const std::string& bytes) {
    const fs::path p = path;
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    std::random_device rd;
    fs::path tmp = p;
    tmp += cat(".tmp", ::getpid(), "-", rd());
    {
        std::ofstream out(tmp, std::ios::binary);
        if (!out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return;   // a cache that cannot be written is no error
    }
    fs::rename(tmp, p, ec);
    if (ec) fs::remove(tmp, ec);
}

std::string cache_hash(std::initializer_list<std::string_view> fields) {
    hasher h;
    for (auto f : fields) h.add(f);
    return h.hex();
}

std::string kernel_cache_dir(const kernel_settings& s) {
    if (!s.cache_dir.empty()) return s.cache_dir;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "kiln").string();
    if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "kiln").string();
    return (fs::temp_directory_path() / "kiln-cache").string();
}

std::string compile_to_cubin(const kernel_source& src, const kernel_settings& s) {
    std::vector<const char*> names, texts;
    std::vector<std::string> name_store;
    for (const auto& f : device_library()) name_store.emplace_back(f.name);
    std::vector<std::string> text_store;
    for (const auto& f : device_library()) text_store.emplace_back(f.text);
    for (std::size_t i = 0; i < name_store.size(); ++i) {
        names.push_back(name_store[i].c_str());
        texts.push_back(text_store[i].c_str());
    }
    std::string where = cat("compiling the kernel of ", src.where);
    nvrtcProgram prog = nullptr;
    KILN_GPU_CHECK(nvrtcCreateProgram(&prog, src.code.c_str(), (src.entry + ".cu").c_str(), static_cast<int>(names.size()),
                                      texts.data(), names.data()),
                   where);
    std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(&prog, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
    auto flags = nvrtc_flags(s);
    std::vector<const char*> opts;
    for (const auto& f : flags) opts.push_back(f.c_str());
    nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
    if (r != NVRTC_SUCCESS) {
        std::size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        std::string log(n, '\0');
        nvrtcGetProgramLog(prog, log.data());
        fail("gpu: nvrtcCompileProgram failed (", nvrtcGetErrorString(r), ") while ", where, "\n", log, "\nsource:\n",
             src.code);
    }
    std::size_t n = 0;
    KILN_GPU_CHECK(nvrtcGetCUBINSize(prog, &n), where);
    std::string cubin(n, '\0');
    KILN_GPU_CHECK(nvrtcGetCUBIN(prog, cubin.data()), where);
    return cubin;
}

void launch_kernel(cudaKernel_t k, unsigned grid, unsigned block, void** args, cudaStream_t s, const std::string& where) {
    KILN_GPU_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(grid), dim3(block), args, 0, s),
                   cat("launching the kernel of ", where));
}

kernel_set::~kernel_set() {
    for (auto lib : libs_) cudaLibraryUnload(lib);
}

std::vector<cudaKernel_t> kernel_set::build(const std::vector<kernel_source>& sources, const kernel_settings& s,
                                            kernel_build_stats& stats, const std::map<std::string, std::string>& saved) {
    auto t0 = std::chrono::steady_clock::now();
    // Distinct sources, each compiled once.
    std::map<std::string, std::size_t> index;   // key -> distinct position
    std::vector<std::size_t> which(sources.size());
    std::vector<std::size_t> firsts;
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        std::string key = cache_key(sources[i], s);
        auto [it, fresh] = index.emplace(key, firsts.size());
        if (fresh) {
            firsts.push_back(i);
            keys.push_back(key);
        }
        which[i] = it->second;
    }
    const fs::path dir = kernel_cache_dir(s);
    std::vector<std::string> cubins(firsts.size());
    std::vector<double> nvrtc_ms(firsts.size(), -1);   // -1: not compiled here
    std::vector<std::exception_ptr> errors(firsts.size());
    std::atomic<std::size_t> next{0}, hits{0}, from_saved{0};
    auto work = [&] {
        for (std::size_t k; (k = next++) < firsts.size();) {
            try {
                if (auto it = saved.find(keys[k]); it != saved.end()) {
                    cubins[k] = it->second;
                    ++from_saved;
                    continue;
                }
                const fs::path file = dir / (keys[k] + ".cubin");
                if (s.use_cache) cubins[k] = read_cache_file(file.string());
                if (!cubins[k].empty()) {
                    ++hits;
                    continue;
                }
                auto c0 = std::chrono::steady_clock::now();
                cubins[k] = compile_to_cubin(sources[firsts[k]], s);
                nvrtc_ms[k] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
                if (s.use_cache) write_cache_file(file.string(), cubins[k]);
            } catch (...) {
                errors[k] = std::current_exception();
            }
        }
    };
    std::size_t threads = std::min<std::size_t>(firsts.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);

    std::vector<cudaKernel_t> distinct(firsts.size());
    for (std::size_t k = 0; k < firsts.size(); ++k) {
        const auto& src = sources[firsts[k]];
        std::string where = cat("loading the kernel of ", src.where);
        cudaLibrary_t lib = nullptr;
        KILN_GPU_CHECK(cudaLibraryLoadData(&lib, cubins[k].data(), nullptr, nullptr, 0, nullptr, nullptr, 0), where);
        libs_.push_back(lib);
        KILN_GPU_CHECK(cudaLibraryGetKernel(&distinct[k], lib, src.entry.c_str()), where);
        binaries_.emplace_back(keys[k], std::move(cubins[k]));
    }
    std::vector<cudaKernel_t> r(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) r[i] = distinct[which[i]];
    for (std::size_t k = 0; k < firsts.size(); ++k)
        if (nvrtc_ms[k] >= 0) stats.compiled.emplace_back(sources[firsts[k]].where, nvrtc_ms[k]);
    stats.threads = std::max(stats.threads, threads);
    stats.kernels += firsts.size();
    stats.cache_hits += hits;
    stats.from_saved += from_saved;
    stats.compile_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace kiln::gpu
