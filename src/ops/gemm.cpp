// Matrix products: dot (numpy matmul, batched) and gemm (ONNX Gemm). Floats accumulate in
// double and round once; integers accumulate in 64 bits and wrap to the element type. Each output
// element sums its products in k order; the loops run i, k, j over a row of accumulators so that
// the innermost loop walks B's row (contiguous in the usual layout) instead of a column: verify
// runs the transformers' GEMMs on ref, and the summation order, hence every result, is the same.
#include "ops/gemm.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "ops/common.hpp"

namespace kiln::ops {
namespace {

// `s` as a [batch..., rows, cols] view broadcast to `batch`. A 1-D operand becomes one row
// (`as_row`, numpy's rule for the left operand) or one column (the right operand).
shape matrix_view(const shape& s, std::span<const std::size_t> batch, bool as_row) {
    std::vector<std::size_t> lens = s.lens(), strides = s.strides();
    if (lens.size() == 1) {
        lens.insert(as_row ? lens.begin() : lens.end(), 1);
        strides.insert(as_row ? strides.begin() : strides.end(), 0);
    }
    std::vector<std::size_t> full(batch.begin(), batch.end());
    full.push_back(lens[lens.size() - 2]);
    full.push_back(lens.back());
    return broadcast_to(shape(s.type(), lens, strides), full);
}

// The batch dims of a product: both operands' dims before their last two, broadcast.
std::vector<std::size_t> batch_lens(const shape& a, const shape& b) {
    auto batch_of = [](const shape& s) {
        std::size_t n = s.ndim() < 2 ? 0 : s.ndim() - 2;
        return shape(s.type(),
                     std::vector<std::size_t>(s.lens().begin(), s.lens().begin() + static_cast<std::ptrdiff_t>(n)));
    };
    std::vector<shape> batches{batch_of(a), batch_of(b)};
    return broadcast_lens(batches);
}

// One strided matrix product: acc[j] = sum over k of a[i, k] * b[k, j] (k ascending) for each
// row i, handed to `store(i, acc)`. Strides are in elements.
struct strided_matrix {
    std::size_t row_stride, col_stride;
};
template <class C, class T, class Store>
void product_rows(const T* a, strided_matrix as, const T* b, strided_matrix bs, std::size_t rows, std::size_t inner,
                  std::size_t cols, Store&& store) {
    std::unique_ptr<C[]> acc(new C[cols]);   // not std::vector: C may be bool
    for (std::size_t i = 0; i < rows; ++i) {
        std::fill(acc.get(), acc.get() + cols, C{});
        for (std::size_t k = 0; k < inner; ++k) {
            const C aik = cast<C>(a[i * as.row_stride + k * as.col_stride]);
            const T* brow = b + k * bs.row_stride;
            if (bs.col_stride == 1) {
                for (std::size_t j = 0; j < cols; ++j) acc[j] += aik * cast<C>(brow[j]);
            } else {
                for (std::size_t j = 0; j < cols; ++j) acc[j] += aik * cast<C>(brow[j * bs.col_stride]);
            }
        }
        store(i, acc.get());
    }
}

}  // namespace

shape dot::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 2);
    check_static(in);
    check_same_type(in);
    check_type(in, 0, numeric_type, "a numeric (integer or float) type");
    check_rank(in, 0, 1, true);
    check_rank(in, 1, 1, true);
    const auto& a = in[0].lens();
    const auto& b = in[1].lens();
    std::size_t ka = a.back(), kb = b.size() == 1 ? b[0] : b[b.size() - 2];
    if (ka != kb)
        fail("inner dims differ: input 0 ", lens_to_string(a), " has ", ka, " columns but input 1 ",
             lens_to_string(b), " has ", kb, " rows");
    std::vector<std::size_t> out = batch_lens(in[0], in[1]);
    if (a.size() > 1) out.push_back(a[a.size() - 2]);
    if (b.size() > 1) out.push_back(b.back());
    return {in[0].type(), out};
}

argument dot::compute(const shape& out, std::span<const argument> args) const {
    const shape& as = args[0].get_shape();
    const shape& bs = args[1].get_shape();
    std::vector<std::size_t> batch = batch_lens(as, bs);
    shape av = matrix_view(as, batch, true);
    shape bv = matrix_view(bs, batch, false);
    std::size_t rows = av.lens()[batch.size()], inner = av.lens().back(), cols = bv.lens().back();
    argument r(out);
    visit_type(out.type(), [&](auto t) {
        using T = decltype(t);
        using C = compute_t<T>;
        const T* a = args[0].as<T>();
        const T* b = args[1].as<T>();
        T* y = r.as<T>();
        const std::size_t nb = batch.size();
        strided_matrix am{av.strides()[nb], av.strides()[nb + 1]}, bm{bv.strides()[nb], bv.strides()[nb + 1]};
        std::vector<std::size_t> at(nb + 2, 0), bt(nb + 2, 0);   // each matrix's first element
        for_each_index(batch, [&](std::span<const std::size_t> bidx) {
            std::copy(bidx.begin(), bidx.end(), at.begin());
            std::copy(bidx.begin(), bidx.end(), bt.begin());
            product_rows<C>(a + av.index(at), am, b + bv.index(bt), bm, rows, inner, cols,
                            [&](std::size_t, const C* acc) {
                                for (std::size_t j = 0; j < cols; ++j) *y++ = cast<T>(acc[j]);
                            });
        });
    });
    return r;
}
KILN_REGISTER_OP(dot)

namespace {

// Whether `from` broadcasts to `to` one way (ONNX's unidirectional broadcast): each of its dims,
// aligned right, is 1 or equal, and it has no more dims.
bool broadcasts_to(std::span<const std::size_t> from, std::span<const std::size_t> to) {
    if (from.size() > to.size()) return false;
    std::size_t off = to.size() - from.size();
    for (std::size_t i = 0; i < from.size(); ++i)
        if (from[i] != 1 && from[i] != to[off + i]) return false;
    return true;
}

// alpha * acc + beta * c. Integers stay exact when alpha and beta are whole numbers; otherwise
// they go through double and truncate, as ONNX's reference does.
template <class C>
C scale_add(double alpha, C acc, double beta, C c) {
    if constexpr (!std::is_integral_v<C>) {
        return alpha * acc + beta * c;
    } else {
        if (alpha == std::trunc(alpha) && beta == std::trunc(beta))
            return static_cast<C>(static_cast<std::int64_t>(alpha)) * acc +
                   static_cast<C>(static_cast<std::int64_t>(beta)) * c;
        return cast<C>(alpha * static_cast<double>(acc) + beta * static_cast<double>(c));
    }
}

}  // namespace

shape gemm::compute_shape(std::span<const shape> in) const {
    check_input_count(in, 2, 3);
    check_static(in);
    check_same_type(in);
    check_type(in, 0, numeric_type, "a numeric (integer or float) type");
    check_rank(in, 0, 2);
    check_rank(in, 1, 2);
    const auto& a = in[0].lens();
    const auto& b = in[1].lens();
    std::size_t ka = a[trans_a ? 0 : 1], kb = b[trans_b ? 1 : 0];
    if (ka != kb)
        fail("inner dims differ: input 0 ", lens_to_string(a), trans_a ? " transposed" : "", " has ", ka,
             " columns but input 1 ", lens_to_string(b), trans_b ? " transposed" : "", " has ", kb, " rows");
    shape out(in[0].type(), {a[trans_a ? 1 : 0], b[trans_b ? 0 : 1]});
    if (in.size() == 3 && !broadcasts_to(in[2].lens(), out.lens()))
        fail("input 2 ", lens_to_string(in[2].lens()), " does not broadcast to the result ",
             lens_to_string(out.lens()));
    return out;
}

argument gemm::compute(const shape& out, std::span<const argument> args) const {
    const shape& as = args[0].get_shape();
    const shape& bs = args[1].get_shape();
    bool has_c = args.size() == 3 && beta != 0;
    shape cs = has_c ? broadcast_to(args[2].get_shape(), out.lens()) : out;
    std::size_t rows = out.lens()[0], cols = out.lens()[1], inner = as.lens()[trans_a ? 0 : 1];
    argument r(out);
    visit_type(out.type(), [&](auto t) {
        using T = decltype(t);
        using C = compute_t<T>;
        const T* a = args[0].as<T>();
        const T* b = args[1].as<T>();
        T* y = r.as<T>();
        // A transposed operand is the same memory read with its two strides swapped.
        strided_matrix am{as.strides()[trans_a ? 1 : 0], as.strides()[trans_a ? 0 : 1]};
        strided_matrix bm{bs.strides()[trans_b ? 1 : 0], bs.strides()[trans_b ? 0 : 1]};
        const T* cdata = has_c ? args[2].as<T>() : nullptr;
        product_rows<C>(a, am, b, bm, rows, inner, cols, [&](std::size_t i, const C* acc) {
            for (std::size_t j = 0; j < cols; ++j) {
                C c = has_c ? cast<C>(cdata[i * cs.strides()[0] + j * cs.strides()[1]]) : C{};
                y[i * cols + j] = cast<T>(scale_add<C>(alpha, acc[j], has_c ? beta : 0, c));
            }
        });
    });
    return r;
}
KILN_REGISTER_OP(gemm)

}  // namespace kiln::ops
