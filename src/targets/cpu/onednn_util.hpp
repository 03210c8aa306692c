// Descriptors of kiln shapes for oneDNN (cpu target sources only: it includes dnnl.hpp).
#pragma once
#include <dnnl.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>
#include <optional>

#include <memory>
#include <unordered_map>

#include "core/error.hpp"
#include "core/module.hpp"

namespace kiln {

using dnnl::memory;
using dims = memory::dims;

class onednn_kernel;

// The engine and stream every kernel of an executable uses, and its primitives by instruction.
struct onednn_state {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::unordered_map<const instruction*, std::shared_ptr<onednn_kernel>> kernels;

    // The scratchpad of the executable's primitives (user_scratchpad), which run one at a time:
    // one buffer as large as the largest, so that it stays in cache from one to the next (as
    // oneDNN's own per-thread one would). A kernel makes its memory with no data and binds it
    // with bind_scratchpad before each call: the buffer grows while the kernels are built.
    memory scratchpad_memory(const memory::desc& d) {
        if (scratchpad_.size() < d.get_size() + 64) scratchpad_.resize(d.get_size() + 64);
        return memory(d, engine, nullptr);
    }
    void bind_scratchpad(memory& m) {
        auto at = reinterpret_cast<std::uintptr_t>(scratchpad_.data());
        void* aligned = reinterpret_cast<void*>((at + 63) / 64 * 64);
        if (m.get_data_handle() != aligned) m.set_data_handle(aligned);
    }

private:
    std::vector<std::byte> scratchpad_;
};

inline std::optional<memory::data_type> dnnl_type(dtype t) {
    switch (t) {
    case dtype::float32: return memory::data_type::f32;
    case dtype::float16: return memory::data_type::f16;
    case dtype::bfloat16: return memory::data_type::bf16;
    default: return std::nullopt;
    }
}

// The strided (plain) descriptor of a shape, right-aligned to `rank` dims (leading 1s added).
inline memory::desc plain_desc(const shape& s, std::size_t rank = 0) {
    rank = std::max(rank, s.ndim());
    dims d(rank, 1), st(rank, 0);
    std::size_t lead = rank - s.ndim();
    for (std::size_t i = 0; i < s.ndim(); ++i) d[lead + i] = s.lens()[i], st[lead + i] = s.strides()[i];
    std::size_t known = lead;                          // dims from here on have their strides
    if (s.ndim() == 0 && rank > 0) st[--known] = 1;    // a scalar: its one element (no stride to copy)
    for (std::size_t i = known; i-- > 0;) st[i] = st[i + 1] * d[i + 1];
    auto t = dnnl_type(s.type());
    if (!t) fail("cpu: oneDNN has no type for ", to_string(s));   // a caller's bug, never a guess
    return memory::desc(d, *t, st);
}

// The type a primitive computes a tensor of type t in: t itself, except float16 (bfloat16) where
// oneDNN's ISA at run time lacks AVX512-FP16 (AVX512-BF16) and so has no optimised kernels for it:
// float32 there, the reorders into and out of the primitive converting (a float16 model on this
// EPYC runs its convolutions and matmuls in float32 instead of on the reference computes).
memory::data_type compute_type(dtype t);   // onednn_kernels.cpp

// Every primitive of the cpu target takes its scratchpad from its caller (each kernel one of its
// own). In oneDNN's default (library) mode a primitive keeps one scratchpad, and the primitive
// cache hands the same primitive to every executable that makes an identical one: two executables
// running at once on separate threads then wrote into each other's (brgconv convolutions gave
// wrong results in cpu_target.separate_executables_run_concurrently).
inline dnnl::primitive_attr user_scratchpad(dnnl::primitive_attr a = dnnl::primitive_attr()) {
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
}

// A strided descriptor with another data type (same dims and strides).
inline memory::desc with_type(const memory::desc& d, memory::data_type t) {
    return memory::desc(d.get_dims(), t, d.get_strides());
}

inline shape transposed(const shape& s) {
    auto lens = s.lens();
    auto strides = s.strides();
    std::swap(lens[lens.size() - 1], lens[lens.size() - 2]);
    std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
    return shape(s.type(), lens, strides);
}

}  // namespace kiln
