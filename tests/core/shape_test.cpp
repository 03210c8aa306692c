// shape: layout queries (standard, transposed, broadcast, packed), indexing, sizes in elements
// and bytes (packed int4 included), dynamic dims and their instantiation, and the printed form.
#include "core/shape.hpp"

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include "core/error.hpp"

namespace kiln {
namespace {

using lens = std::vector<std::size_t>;   // shape(t, {2}) alone is ambiguous with dynamic dims

TEST(shape, standard_layout) {
    shape s(dtype::float32, lens{2, 3, 4});
    EXPECT_EQ(s.strides(), (lens{12, 4, 1}));
    EXPECT_TRUE(s.standard());
    EXPECT_TRUE(s.packed());
    EXPECT_FALSE(s.transposed());
    EXPECT_FALSE(s.broadcasted());
    EXPECT_EQ(s.elements(), 24u);
    EXPECT_EQ(s.element_space(), 24u);
    EXPECT_EQ(s.bytes(), 96u);
    EXPECT_EQ(s.ndim(), 3u);
    // A dim of length 1 may have any stride and the layout is still standard.
    EXPECT_TRUE(shape(dtype::float32, lens{1, 3}, lens{7, 1}).standard());
}

TEST(shape, zero_element_shapes_with_standard_strides_are_standard) {
    // standard_strides counts a 0 dim as 1: {2, 0, 3} gets {3, 3, 1}, {3, 0} gets {1, 1}.
    for (const lens& l : {lens{0}, lens{3, 0}, lens{2, 0, 3}, lens{0, 0, 4}, lens{4, 0, 0}}) {
        shape s(dtype::float32, l);
        EXPECT_TRUE(s.standard()) << to_string(s);
        EXPECT_FALSE(s.transposed()) << to_string(s);
        EXPECT_EQ(s, s.as_standard());
    }
    EXPECT_FALSE(shape(dtype::float32, lens{2, 0, 3}, lens{1, 3, 2}).standard());   // its strides are not standard's
}

TEST(shape, transposed_layout) {
    shape t(dtype::float32, lens{2, 3}, lens{1, 2});   // a {3, 2} tensor transposed
    EXPECT_FALSE(t.standard());
    EXPECT_TRUE(t.packed());
    EXPECT_TRUE(t.transposed());
    EXPECT_EQ(t.element_space(), 6u);
    EXPECT_EQ(t.as_standard().strides(), (lens{3, 1}));
}

TEST(shape, broadcast_and_sliced_layouts) {
    shape b(dtype::float32, lens{2, 3}, lens{0, 1});
    EXPECT_TRUE(b.broadcasted());
    EXPECT_FALSE(b.packed());
    EXPECT_FALSE(b.standard());
    EXPECT_EQ(b.elements(), 6u);
    EXPECT_EQ(b.element_space(), 3u);
    EXPECT_FALSE(shape(dtype::float32, lens{1, 3}, lens{0, 1}).broadcasted());   // stride 0 on a len-1 dim

    shape sliced(dtype::float32, lens{2, 2}, lens{3, 1});   // a 2x2 window of a 2x3 tensor
    EXPECT_FALSE(sliced.packed());
    EXPECT_FALSE(sliced.broadcasted());
    EXPECT_EQ(sliced.element_space(), 5u);
}

TEST(shape, empty_and_scalar) {
    shape e(dtype::float32, lens{0, 3});
    EXPECT_EQ(e.elements(), 0u);
    EXPECT_EQ(e.element_space(), 0u);
    EXPECT_EQ(e.bytes(), 0u);
    EXPECT_TRUE(e.packed());

    shape s(dtype::int64, lens{});
    EXPECT_TRUE(s.scalar());
    EXPECT_EQ(s.elements(), 1u);
    EXPECT_EQ(s.element_space(), 1u);
    EXPECT_EQ(s.bytes(), 8u);
    EXPECT_FALSE(shape(dtype::int64, lens{1}).scalar());
}

TEST(shape, index_and_multi) {
    shape t(dtype::float32, lens{2, 3}, lens{1, 2});
    EXPECT_EQ(t.index(lens{1, 2}), 5u);
    EXPECT_EQ(t.index(5), 5u);    // linear 5 is (1, 2)
    EXPECT_EQ(t.index(1), 2u);    // linear 1 is (0, 1)
    EXPECT_EQ(t.multi(4), (lens{1, 1}));
    shape b(dtype::float32, lens{2, 3}, lens{0, 1});
    EXPECT_EQ(b.index(4), 1u);
    EXPECT_EQ(shape(dtype::float32, lens{}).index(0), 0u);
}

TEST(shape, bytes_by_dtype) {
    EXPECT_EQ(shape(dtype::bool_, lens{3}).bytes(), 3u);
    EXPECT_EQ(shape(dtype::float16, lens{3}).bytes(), 6u);
    EXPECT_EQ(shape(dtype::fp8e5m2, lens{3}).bytes(), 3u);
    EXPECT_EQ(shape(dtype::float64, lens{3}).bytes(), 24u);
    // Packed 4-bit types round up to whole bytes.
    EXPECT_EQ(shape(dtype::int4, lens{4}).bytes(), 2u);
    EXPECT_EQ(shape(dtype::int4, lens{5}).bytes(), 3u);
    EXPECT_EQ(shape(dtype::uint4, lens{1}).bytes(), 1u);
    EXPECT_EQ(shape(dtype::int4, lens{3}).type_bits(), 4u);
    // A broadcast view covers only its element space.
    EXPECT_EQ(shape(dtype::float32, lens{4, 3}, lens{0, 1}).bytes(), 12u);
    shape tuple({shape(dtype::float32, lens{2}), shape(dtype::int8, lens{3})});
    EXPECT_EQ(tuple.bytes(), 11u);
}

TEST(shape, with_type_and_lens) {
    shape t(dtype::float32, lens{2, 3}, lens{1, 2});
    shape h = t.with_type(dtype::float16);
    EXPECT_EQ(h.type(), dtype::float16);
    EXPECT_EQ(h.strides(), t.strides());
    EXPECT_EQ(t.with_lens({6}), shape(dtype::float32, lens{6}));
    EXPECT_NE(t, t.as_standard());   // equality includes strides
}

TEST(shape, mismatched_strides_are_rejected) {
    expect_error([] { shape(dtype::float32, lens{2, 3}, lens{1}); }, "2 lens but 1 strides");
}

TEST(shape, dynamic_dims) {
    shape d(dtype::float32, {dynamic_dim{1, 64, {1, 8}, "batch"}, dynamic_dim{784, 784, {}, ""}});
    EXPECT_TRUE(d.dynamic());
    EXPECT_EQ(d.ndim(), 2u);
    EXPECT_TRUE(d.lens().empty());
    EXPECT_TRUE(d.strides().empty());
    EXPECT_FALSE(d.standard());
    EXPECT_FALSE(d.packed());
    EXPECT_FALSE(d.scalar());
    EXPECT_EQ(d.normalized(), d);
    expect_error([&] { (void)d.elements(); }, "elements() of dynamic shape float_type, {batch[1..64:1,8], 784}");
    expect_error([&] { (void)d.element_space(); }, "element_space() of dynamic shape");

    // Fixed dims only: the shape is static.
    shape f(dtype::float32, {dynamic_dim{2, 2, {}, ""}, dynamic_dim{3, 3, {}, ""}});
    EXPECT_FALSE(f.dynamic());
    EXPECT_EQ(f, shape(dtype::float32, lens{2, 3}));
    EXPECT_EQ(f.dims()[1], (dynamic_dim{3, 3, {}, ""}));
    expect_error([] { shape(dtype::float32, {dynamic_dim{5, 2, {}, ""}}); }, "dynamic dim min 5 > max 2");
}

TEST(shape, instantiate) {
    shape d(dtype::float32, {dynamic_dim{1, 64, {}, "batch"}, dynamic_dim{3, 3, {}, ""}});
    EXPECT_EQ(d.instantiate(lens{8, 3}), shape(dtype::float32, lens{8, 3}));
    EXPECT_EQ(d.instantiate(lens{64, 3}).elements(), 192u);
    expect_error([&] { d.instantiate(lens{65, 3}); }, "dim 0 = 65 is outside batch[1..64]");
    expect_error([&] { d.instantiate(lens{8, 4}); }, "dim 1 = 4 is outside 3");
    expect_error([&] { d.instantiate(lens{8}); }, "1 lens given for 2-d shape");
    shape s(dtype::float32, lens{2, 3});
    EXPECT_EQ(s.instantiate(lens{2, 3}), s);
    expect_error([&] { s.instantiate(lens{3, 2}); }, "lens {3, 2} do not match float_type, {2, 3}, {3, 1}");
}

TEST(shape, printing) {
    EXPECT_EQ(to_string(shape(dtype::float32, lens{1, 784})), "float_type, {1, 784}, {784, 1}");
    EXPECT_EQ(to_string(shape(dtype::int64, lens{})), "int64_type, {}, {}");
    EXPECT_EQ(to_string(shape(dtype::float16, lens{2, 3}, lens{1, 2})), "half_type, {2, 3}, {1, 2}");
    shape d(dtype::float32, {dynamic_dim{1, 64, {1, 8}, "batch"}, dynamic_dim{0, unbounded_dim, {}, ""},
                             dynamic_dim{4, 4, {}, ""}});
    EXPECT_EQ(to_string(d), "float_type, {batch[1..64:1,8], ?[0..inf], 4}");
    shape t({shape(dtype::bool_, lens{2}), shape(dtype::uint4, lens{})});
    EXPECT_TRUE(t.is_tuple());
    EXPECT_EQ(to_string(t), "tuple_type, {bool_type, {2}, {1}; uint4_type, {}, {}}");
    EXPECT_EQ(lens_to_string(lens{}), "{}");
}

}  // namespace
}  // namespace kiln
