// The host side of the run-time checks of generated kernels (device/kiln_error.cuh): one error
// slot per instruction whose kernel checks its data, in one device array that a run clears before
// its first launch and copies back with its outputs, so the checks cost one memset and one small
// copy per run. A slot found set after the run is an error naming the instruction (its ONNX node)
// in the words its lowering gave, as the reference compute would have said it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

typedef struct CUstream_st* cudaStream_t;

namespace kiln {
class instruction;
}

namespace kiln::gpu {

// Matches kiln::error_slot in device/kiln_error.cuh.
struct error_slot {
    std::uint32_t code = 0;
    std::uint32_t pad = 0;
    std::int64_t value = 0;
    std::uint64_t position = 0;
};
static_assert(sizeof(error_slot) == 24);

enum class error_code : std::uint32_t { index_out_of_range = 1, division_by_zero = 2, zero_to_negative_power = 3 };

// Words a recorded failure (without the instruction, which the error adds).
using error_explainer = std::function<std::string(const error_slot&)>;

// The reference's words (ops/indexing.hpp) for a recorded index_out_of_range of dim `dim`, of
// `len` elements: "index 5 (indices element 1) is out of range for dim 0 of size 3 (valid: ...)".
std::string index_out_of_range(const error_slot& s, std::size_t dim, std::size_t len);

class device_error_flags {
public:
    // `slots`: device memory for `capacity` slots (the executable's; stand-in addresses where
    // kernels are only compiled). One instruction takes at most one slot.
    device_error_flags(void* slots, std::size_t capacity) : base_(static_cast<error_slot*>(slots)), capacity_(capacity) {}

    // The device address of `ins`'s slot (the same for every kernel of `ins`); `where` names it.
    error_slot* slot(const instruction& ins, const std::string& where, error_explainer explain);

    std::size_t used() const { return entries_.size(); }
    std::size_t bytes() const { return entries_.size() * sizeof(error_slot); }
    // Enqueue on `s`: clearing the used slots (before a run's first launch), and copying them into
    // `host` (pinned, bytes() long) after its last.
    void clear(cudaStream_t s) const;
    void read(void* host, cudaStream_t s) const;
    // Once the stream is synchronised: throws kiln::error naming the first instruction (in launch
    // order) whose slot `host` shows set.
    void check(const void* host) const;

private:
    struct entry {
        const instruction* ins;
        std::string where;
        error_explainer explain;
    };
    error_slot* base_;
    std::size_t capacity_;
    std::vector<entry> entries_;
};

}  // namespace kiln::gpu
