// Attention in float16/bfloat16 as one flash-attention kernel (device/kiln_flash.cuh): tensor-core
// Q·Kᵀ and P·V with fp32 accumulation and an online fp32 softmax, tiled over keys, so the scores
// never reach memory. It takes head sizes that are multiples of 16 up to 128. float32 and float64
// run as GEMMs (gemm_attention.cpp); other attention (other head sizes, empty tensors) stays on
// window_kernels.cpp's kernel, and the compile report counts which kernel each attention got.
#include "targets/gpu/flash_attention.hpp"
#include "targets/gpu/gemm_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/error.hpp"
#include "core/eval.hpp"
#include "ops/attention.hpp"
#include "targets/gpu/body_kernel.hpp"
#include "targets/gpu/elementwise.hpp"

namespace kiln::gpu {
namespace {

bool head_size_fits(std::size_t d) { return d >= 16 && d <= 128 && d % 16 == 0; }

// Strides as "PB = .., PH = .., PS = .., PD = ..," for the configuration.
std::string strides(const char* p, const shape& s) {
    return cat("    static constexpr long long ", p, "B = ", s.strides()[0], ", ", p, "H = ", s.strides()[1], ", ", p, "S = ",
               s.strides()[2], ", ", p, "D = ", s.strides()[3], ";\n");
}

// Whether 16-byte loads read every row of `s` at `ptr`: unit-stride rows, 8-element row strides
// and a 16-byte-aligned start (the arena's and the caller's buffers are 256-byte aligned; a view
// may start inside them).
bool vector_rows(const shape& s, const std::byte* ptr) {
    return s.strides()[3] == 1 && s.strides()[0] % 8 == 0 && s.strides()[1] % 8 == 0 && s.strides()[2] % 8 == 0 &&
           reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
}

void lower_flash_attention(lowering_context& ctx, const instruction& ins) {
    const auto& op = ins.get_operator().get<ops::attention>();
    const shape &q = ins.inputs()[0]->get_shape(), &k = ins.inputs()[1]->get_shape(), &v = ins.inputs()[2]->get_shape();
    const shape& y = ins.get_shape();
    const std::size_t B = q.lens()[0], H = q.lens()[1], S = q.lens()[2], D = q.lens()[3];
    const std::size_t Hkv = k.lens()[1], Skv = k.lens()[2], Dv = v.lens()[3];
    // Four warps of 16 query rows; key tiles of 64 rows, 32 where a head of 128 would overflow the
    // 48 KiB of static shared memory. Heads up to 64 fit 128 registers a thread (no spills, ptxas
    // for sm_90), so four blocks share an SM instead of three (the 168 registers ptxas takes
    // unasked), which hides more of the tile loads' latency.
    const std::size_t warps = 4, br = 16 * warps, bc = std::max(D, Dv) > 64 ? 32 : 64;
    const std::size_t min_blocks = std::max(D, Dv) <= 64 ? 4 : 1;
    const std::size_t blocks = B * H * ((S + br - 1) / br);
    if (blocks >= (1ull << 31)) fail("gpu: attention over ", blocks, " query tiles exceeds the grid: ", ctx.where(ins));
    // The kernel counts rows and keys in 32-bit integers.
    if (S + br >= (1ull << 31) || Skv + bc >= (1ull << 31))
        fail("gpu: attention over ", S, " queries and ", Skv, " keys exceeds the flash kernel's 2^31: ",
             ctx.where(ins));
    std::vector<void*> ptrs{ctx.address(ins)};
    for (std::size_t i = 0; i < 3; ++i) ptrs.push_back(ctx.address(*ins.inputs()[i]));
    bool vec = true;
    for (std::size_t i = 0; i < 3; ++i) vec = vec && vector_rows(ins.inputs()[i]->get_shape(), ctx.address(*ins.inputs()[i]));
    const bool yvec = vector_rows(y, ctx.address(ins));
    const std::string t = device_type(q.type());
    std::string mask_type = "bool", mask_strides = "0, MH = 0, MS = 0, MJ = 0";
    int mask_kind = 0;
    if (ins.inputs().size() > 3) {
        const shape m = broadcast_to(ins.inputs()[3]->get_shape(), {B, H, S, Skv});
        mask_kind = m.type() == dtype::bool_ ? 2 : 1;
        mask_type = device_type(m.type());
        mask_strides = cat(m.strides()[0], ", MH = ", m.strides()[1], ", MS = ", m.strides()[2], ", MJ = ", m.strides()[3]);
        ptrs.push_back(ctx.address(*ins.inputs()[3]));
    }
    const double scale = op.scale != 0 ? op.scale : 1.0 / std::sqrt(static_cast<double>(D));
    std::string code = cat(
        "#include \"kiln_flash.cuh\"\n",
        "struct cfg {\n",
        "    typedef ", t, " T;\n    typedef ", mask_type, " M;\n",
        "    static constexpr int WARPS = ", warps, ", BC = ", bc, ", D = ", D, ", DV = ", Dv, ", MASK = ", mask_kind, ";\n",
        "    static constexpr long long B = ", B, ", H = ", H, ", S = ", S, ", HKV = ", Hkv, ", SKV = ", Skv,
        ", CAUSAL_OFFSET = ", op.causal_offset, ";\n",
        "    static constexpr bool CAUSAL = ", op.is_causal ? "true" : "false", ", VEC = ", vec ? "true" : "false",
        ", YVEC = ", yvec ? "true" : "false", ";\n",
        "    static constexpr float SCALE = ", flit(scale), ", SOFTCAP = ", flit(op.softcap > 0 ? op.softcap : 0.0), ";\n",
        strides("Q", q), strides("K", k), strides("V", v), strides("Y", y),
        "    static constexpr long long MB = ", mask_strides, ";\n};\n",
        "extern \"C\" __global__ void __launch_bounds__(", warps * 32, ", ", min_blocks, ") kiln_flash_attention(", t,
        "* __restrict__ y, const ", t, "* __restrict__ q, const ", t, "* __restrict__ k, const ", t, "* __restrict__ v",
        mask_kind ? cat(", const ", mask_type, "* __restrict__ mask") : std::string(), ") {\n",
        "    kiln::flash::attention<cfg>(y, q, k, v, ", mask_kind ? "mask" : "nullptr", ");\n}\n");
    ctx.add_kernel(ins, {"kiln_flash_attention", code, ctx.where(ins)},
                   {static_cast<unsigned>(blocks), static_cast<unsigned>(warps * 32)}, std::move(ptrs));
}

const gpu_lowering_registrar flash_attention_lowering{{
    "attention (flash kernel)", flash_attention_takes,
    [](lowering_context& ctx, const instruction& ins) { lower_flash_attention(ctx, ins); }}};

}  // namespace

std::string flash_attention_declines(const instruction& ins) {
    const shape &q = ins.inputs()[0]->get_shape(), &k = ins.inputs()[1]->get_shape(), &v = ins.inputs()[2]->get_shape();
    if (q.type() != dtype::float16 && q.type() != dtype::bfloat16) return cat(dtype_name(q.type()), " (half_type/bf16_type only)");
    if (k.type() != q.type() || v.type() != q.type() || ins.get_shape().type() != q.type()) return "mixed element types";
    if (q.dynamic() || k.dynamic() || v.dynamic() || ins.get_shape().dynamic()) return "dynamic shape";
    if (!head_size_fits(q.lens()[3]) || !head_size_fits(v.lens()[3]))
        return cat("head size ", q.lens()[3], "/", v.lens()[3], " (multiples of 16 up to 128 only)");
    if (q.lens()[0] == 0 || q.lens()[1] == 0 || q.lens()[2] == 0 || k.lens()[2] == 0) return "empty";
    return {};
}

bool flash_attention_takes(const instruction& ins) {
    return ins.get_operator().get_if<ops::attention>() != nullptr && flash_attention_declines(ins).empty();
}

std::string attention_kernels_note(const module& m) {
    std::size_t flash = 0, gemms = 0, rows = 0;
    std::string why;
    for (const auto& ins : m) {
        if (ins.get_operator().get_if<ops::attention>() == nullptr) continue;
        std::string reason = flash_attention_declines(ins);
        if (reason.empty()) {
            ++flash;
            continue;
        }
        if (gemm_attention_takes(ins)) {
            ++gemms;
            continue;
        }
        if (rows++ < 3) why += cat(rows > 1 ? "; " : "", describe(m, ins), ": ", reason, ", ", gemm_attention_declines(ins));
    }
    if (flash + gemms + rows == 0) return {};
    auto count = [](std::size_t n, const char* what) { return cat(n, " ", what, n == 1 ? "" : "s"); };
    return cat("attention: ", count(flash, "flash kernel"), ", ", count(gemms, "GEMM pair"), ", ", count(rows, "row kernel"),
               rows ? cat(" (", why, rows > 3 ? "; ..." : "", ")") : std::string());
}

}  // namespace kiln::gpu
