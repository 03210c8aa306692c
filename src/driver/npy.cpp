#include "driver/npy.hpp"

#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace kiln::driver {

static_assert(std::endian::native == std::endian::little, "kiln's buffers are little-endian, as .npy files");

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_size = 6;

const std::pair<dtype, const char*> descrs[] = {
    {dtype::float16, "<f2"}, {dtype::float32, "<f4"}, {dtype::float64, "<f8"}, {dtype::int8, "|i1"},
    {dtype::int16, "<i2"},   {dtype::int32, "<i4"},   {dtype::int64, "<i8"},   {dtype::uint8, "|u1"},
    {dtype::uint16, "<u2"},  {dtype::uint32, "<u4"},  {dtype::uint64, "<u8"},  {dtype::bool_, "|b1"},
};

// The dtype of a descr; one-byte types may say '<' or '|' (both mean "no byte order").
dtype parse_descr(const std::string& d) {
    if (d.size() >= 2 && d[0] == '>' && d != ">i1" && d != ">u1" && d != ">b1")
        fail("dtype '", d, "' is big-endian; kiln reads little-endian .npy files (numpy: a.astype(a.dtype.newbyteorder('<')))");
    std::string le = d;
    if (!le.empty() && (le[0] == '|' || le[0] == '>')) le[0] = '<';
    for (const auto& [t, s] : descrs) {
        std::string want = s;
        want[0] = '<';
        if (le == want) return t;
    }
    fail("dtype '", d, "' is not supported (kiln reads <f2 <f4 <f8 <i1..<i8 <u1..<u8 |b1)");
}

// The text after `'key':` in a header dict (numpy writes single quotes; accept double too).
std::size_t find_value(const std::string& header, const std::string& key) {
    for (const char* q : {"'", "\""}) {
        auto k = header.find(q + key + q);
        if (k == std::string::npos) continue;
        auto colon = header.find(':', k + key.size() + 2);
        if (colon == std::string::npos) break;
        auto v = header.find_first_not_of(" ", colon + 1);
        if (v != std::string::npos) return v;
    }
    fail("the header has no '", key, "' entry");
}

std::string parse_descr_value(const std::string& h) {
    auto v = find_value(h, "descr");
    char q = h[v];
    if (q != '\'' && q != '"') fail("'descr' is not a simple dtype string (structured dtypes are not supported)");
    auto end = h.find(q, v + 1);
    if (end == std::string::npos) fail("unterminated 'descr' string");
    return h.substr(v + 1, end - v - 1);
}

std::vector<std::size_t> parse_shape_value(const std::string& h) {
    auto v = find_value(h, "shape");
    auto end = h.find(')', v);
    if (h[v] != '(' || end == std::string::npos) fail("'shape' is not a tuple");
    std::vector<std::size_t> lens;
    std::string item;
    std::istringstream in(h.substr(v + 1, end - v - 1));
    while (std::getline(in, item, ',')) {
        auto first = item.find_first_not_of(" ");
        if (first == std::string::npos) continue;   // the empty item after "(3,)"
        auto last = item.find_last_not_of(" ");
        std::string num = item.substr(first, last - first + 1);
        if (num.empty() || num.size() > 18 || num.find_first_not_of("0123456789") != std::string::npos)
            fail("'shape' has an entry that is not a dim size: '", num, "'");
        lens.push_back(std::stoull(num));
    }
    return lens;
}

shape parse_header(const std::string& h) {
    dtype t = parse_descr(parse_descr_value(h));
    auto fo = find_value(h, "fortran_order");
    if (h.compare(fo, 4, "True") == 0)
        fail("the array is in Fortran order; kiln reads C-order arrays (numpy: np.save(f, np.ascontiguousarray(a)))");
    if (h.compare(fo, 5, "False") != 0) fail("'fortran_order' is neither True nor False");
    return shape(t, parse_shape_value(h));
}

std::uint32_t read_le(const std::string& bytes, std::size_t at, std::size_t n) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
}

// Far above any real header (a shape of thousands of dims), far below what would hurt to read.
constexpr std::size_t max_header_size = std::size_t{1} << 20;

// Reads `n` bytes; the caller has checked that the file holds them.
std::string read_exactly(std::istream& in, std::size_t n) {
    std::string s(n, '\0');
    if (!in.read(s.data(), static_cast<std::streamsize>(n))) fail("the file could not be read");
    return s;
}

// Reads the array from a file of `size` bytes, checking each size against the file before it
// reads on: the magic, then the header length, then the data size the header gives.
argument parse_npy(std::istream& in, std::size_t size) {
    if (size < magic_size + 4)
        fail("not a .npy file (", size, " bytes, too short for the \\x93NUMPY magic and version)");
    std::string prefix = read_exactly(in, magic_size + 2);
    if (prefix.compare(0, magic_size, magic, magic_size) != 0)
        fail("not a .npy file (it does not start with \\x93NUMPY)");
    int major = static_cast<unsigned char>(prefix[6]);
    if (major < 1 || major > 3)
        fail("format version ", major, ".", static_cast<int>(prefix[7]), " is not supported (1.0 to 3.0)");
    std::size_t len_size = major == 1 ? 2 : 4, start = magic_size + 2 + len_size;
    if (size < start) fail("the header is cut short");
    std::size_t header_len = read_le(read_exactly(in, len_size), 0, len_size);
    if (header_len > max_header_size)
        fail("the header announces ", header_len, " bytes; kiln reads headers of up to ", max_header_size);
    if (size - start < header_len) fail("the header is cut short (", header_len, " bytes announced)");
    shape s = parse_header(read_exactly(in, header_len));
    std::size_t data = start + header_len, want = s.bytes();
    if (size - data != want) fail("the data has ", size - data, " bytes; ", to_string(s), " needs ", want);
    argument a(s);
    if (want && !in.read(reinterpret_cast<char*>(a.data()), static_cast<std::streamsize>(want)))
        fail("the file could not be read");
    return a;
}

std::string npy_header(const shape& s) {
    std::string lens;   // as Python prints a tuple: "()", "(3,)", "(2, 3)"
    for (auto l : s.lens()) lens += (lens.empty() ? "" : ", ") + std::to_string(l);
    if (s.lens().size() == 1) lens += ",";
    std::string dict = "{'descr': '" + npy_descr(s.type()) + "', 'fortran_order': False, 'shape': (" + lens + "), }";
    // Pad with spaces and end with a newline so that the data starts 64-byte aligned; a header
    // too long for version 1.0's 2-byte length takes version 2.0's 4 bytes.
    bool v2 = dict.size() + 64 > 65535;
    std::size_t len_size = v2 ? 4 : 2, prefix = magic_size + 2 + len_size;
    std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    dict += std::string(total - prefix - dict.size() - 1, ' ') + "\n";
    std::string h(magic, magic_size);
    h += static_cast<char>(v2 ? 2 : 1);
    h += '\0';
    for (std::size_t i = 0; i < len_size; ++i) h += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
    return h + dict;
}

}  // namespace

std::string npy_descr(dtype t) {
    for (const auto& [d, s] : descrs)
        if (d == t) return s;
    return "";
}

argument read_npy(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) fail("cannot read '", path, "'");
    // A device (/dev/zero) or a pipe has no size to check the header against and may never end.
    if (fs::is_directory(st)) fail(path, ": is a directory, not a .npy file");
    if (!fs::is_regular_file(st)) fail(path, ": is not a regular file; kiln reads .npy files");
    std::ifstream f(path, std::ios::binary);
    if (!f) fail("cannot read '", path, "'");
    try {
        return parse_npy(f, static_cast<std::size_t>(fs::file_size(path)));
    } catch (const error& e) {
        fail(path, ": ", e.what());
    }
}

void write_npy(const std::string& path, const argument& a) {
    const shape& s = a.get_shape();
    if (s.is_tuple()) fail("cannot write a tuple to '", path, "'; write each element");
    if (npy_descr(s.type()).empty())
        fail("cannot write ", dtype_name(s.type()), " to '", path, "': numpy has no such dtype");
    argument c = s.standard() ? a : a.copy();
    std::ofstream f(path, std::ios::binary);
    if (!f) fail("cannot open '", path, "' for writing");
    f << npy_header(c.get_shape());
    f.write(reinterpret_cast<const char*>(c.data()), static_cast<std::streamsize>(c.get_shape().bytes()));
    f.close();
    if (!f) fail("could not write '", path, "'");
}

}  // namespace kiln::driver
