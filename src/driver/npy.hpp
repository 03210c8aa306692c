// numpy's .npy files (format versions 1.0, 2.0 and 3.0): little-endian, C order, the dtypes
// numpy has (<f2 <f4 <f8, <i1..<i8, <u1..<u8, |b1). bfloat16, fp8 and int4 have no numpy dtype.
#pragma once
#include <string>

#include "core/argument.hpp"

namespace kiln::driver {

// Reads a .npy file into a standard-layout argument; throws naming the file and what is wrong
// (not a .npy file, Fortran order, big-endian, an unsupported dtype, too few bytes).
argument read_npy(const std::string& path);

// Writes `a` (any layout) as a C-order .npy file: version 1.0, or 2.0 when the header needs it.
// Throws for types numpy lacks (bfloat16, fp8, int4) and tuples.
void write_npy(const std::string& path, const argument& a);

// The numpy dtype string of a kiln dtype ("<f4"), or "" when numpy has none.
std::string npy_descr(dtype t);

}  // namespace kiln::driver
