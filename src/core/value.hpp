// A small dynamic tree used for op attributes, printing, JSON and serialization.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

class value;
using value_array = std::vector<value>;
using value_object = std::vector<std::pair<std::string, value>>;   // keeps insertion order
struct value_bytes { std::vector<std::uint8_t> data; bool operator==(const value_bytes&) const = default; };

class value {
public:
    using storage = std::variant<std::monostate, bool, std::int64_t, double, std::string,
                                 value_bytes, value_array, value_object>;
    value() = default;
    value(bool b) : v_(b) {}
    value(int i) : v_(std::int64_t{i}) {}
    value(std::int64_t i) : v_(i) {}
    value(std::size_t i) : v_(static_cast<std::int64_t>(i)) {}
    value(double d) : v_(d) {}
    value(float f) : v_(static_cast<double>(f)) {}
    value(const char* s) : v_(std::string(s)) {}
    value(std::string s) : v_(std::move(s)) {}
    value(std::string_view s) : v_(std::string(s)) {}
    value(value_bytes b) : v_(std::move(b)) {}
    value(value_array a) : v_(std::move(a)) {}
    value(value_object o) : v_(std::move(o)) {}
    value(std::initializer_list<std::pair<std::string, value>> o) : v_(value_object(o)) {}

    bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
    bool is_bool() const { return std::holds_alternative<bool>(v_); }
    bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
    bool is_float() const { return std::holds_alternative<double>(v_); }
    bool is_number() const { return is_int() || is_float(); }
    bool is_string() const { return std::holds_alternative<std::string>(v_); }
    bool is_bytes() const { return std::holds_alternative<value_bytes>(v_); }
    bool is_array() const { return std::holds_alternative<value_array>(v_); }
    bool is_object() const { return std::holds_alternative<value_object>(v_); }

    // Accessors throw kiln::error naming the expected kind when the value holds another.
    bool as_bool() const;
    std::int64_t as_int() const;      // floats with an integral value convert
    double as_float() const;          // ints convert
    const std::string& as_string() const;
    const value_bytes& as_bytes() const;
    const value_array& as_array() const;
    const value_object& as_object() const;
    value_array& as_array();
    value_object& as_object();

    // Object access: `contains`, `at` (throws naming the missing key), `set` (insert or replace).
    bool contains(std::string_view key) const;
    const value& at(std::string_view key) const;
    void set(std::string_view key, value v);

    std::string kind_name() const;
    const storage& data() const { return v_; }
    bool operator==(const value& o) const { return v_ == o.v_; }
    std::size_t hash() const;

private:
    storage v_;
};

// Text IR attribute form: ints, floats (shortest round-tripping form), bare words, "quoted"
// strings when needed, {a, b} arrays, {key: v, ...} objects.
std::string to_string(const value& v);
// JSON (objects keep their order; bytes as base64 strings inside {"bytes": "..."}).
std::string to_json(const value& v, int indent = -1);
value parse_json(std::string_view text);

}  // namespace kiln
