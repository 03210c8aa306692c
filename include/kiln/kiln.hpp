// A header-only C++ wrapper over kiln's C API (kiln/kiln.h): RAII handles that throw
// kiln::client::c_error (status + message) when a call fails. The namespace is kiln::client
// because kiln:: itself holds the compiler's internal classes (kiln::shape, kiln::program).
//
//   namespace kc = kiln::client;
//   kc::onnx_options opts;
//   opts.set_dim_param("batch", 1);
//   kc::program p = kc::program::parse_onnx_file("model.onnx", opts);
//   p.compile();   // the default target: gpu where a GPU is found, else cpu
//   std::vector<float> in(p.input_shape(0).elements()), out(p.output_shape(0).elements());
//   p.run({{p.input_name(0), kc::argument(p.input_shape(0), in.data())}},
//         {kc::argument(p.output_shape(0), out.data())});
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::client {

class c_error : public std::runtime_error {
public:
    c_error(kiln_status s, const std::string& msg) : std::runtime_error(msg), status_(s) {}
    kiln_status status() const { return status_; }

private:
    kiln_status status_;
};

inline void check(kiln_status s) {
    if (s != KILN_STATUS_SUCCESS) throw c_error(s, std::string(kiln_status_string(s)) + ": " + kiln_last_error_message());
}

namespace detail {
// Owns a C handle and destroys it with `Destroy`.
template <class T, kiln_status (*Destroy)(T)>
class handle {
public:
    handle() = default;
    explicit handle(T h) : h_(h, [](T p) { Destroy(p); }) {}
    T get() const { return h_.get(); }
    explicit operator bool() const { return h_ != nullptr; }

private:
    std::shared_ptr<std::remove_pointer_t<T>> h_;
};
}  // namespace detail

class shape {
public:
    explicit shape(kiln_shape_t s) : h_(s) {}
    shape(kiln_dtype t, const std::vector<size_t>& lens) : h_(make(t, lens)) {}

    kiln_shape_t get() const { return h_.get(); }
    kiln_dtype type() const {
        kiln_dtype t;
        check(kiln_shape_type(get(), &t));
        return t;
    }
    bool dynamic() const {
        int d;
        check(kiln_shape_is_dynamic(get(), &d));
        return d != 0;
    }
    std::vector<size_t> lens() const {
        size_t n;
        const size_t* l;
        check(kiln_shape_ndim(get(), &n));
        check(kiln_shape_lens(get(), &l));
        return std::vector<size_t>(l, l + n);
    }
    size_t elements() const {
        size_t n;
        check(kiln_shape_elements(get(), &n));
        return n;
    }
    size_t bytes() const {
        size_t n;
        check(kiln_shape_bytes(get(), &n));
        return n;
    }
    std::string str() const {
        const char* s;
        check(kiln_shape_string(get(), &s));
        return s;
    }

private:
    static kiln_shape_t make(kiln_dtype t, const std::vector<size_t>& lens) {
        kiln_shape_t s;
        check(kiln_shape_create(&s, t, lens.data(), lens.size()));
        return s;
    }
    detail::handle<kiln_shape_t, kiln_shape_destroy> h_;
};

class argument {
public:
    // Borrows `data` (kept alive by the caller); with nullptr, owns a zeroed buffer.
    argument(const shape& s, void* data = nullptr) : h_(make(s, data)) {}
    // Borrows device memory the caller owns (a CUDA device pointer; see kiln_argument_create_device).
    static argument device(const shape& s, void* device_data) {
        kiln_argument_t a;
        check(kiln_argument_create_device(&a, s.get(), device_data));
        return argument(a);
    }
    kiln_argument_t get() const { return h_.get(); }
    void* data() const {
        void* d;
        check(kiln_argument_data(get(), &d));
        return d;
    }
    client::shape get_shape() const {
        kiln_shape_t s;
        check(kiln_argument_shape(get(), &s));
        return client::shape(s);
    }

private:
    explicit argument(kiln_argument_t a) : h_(a) {}
    static kiln_argument_t make(const shape& s, void* data) {
        kiln_argument_t a;
        check(kiln_argument_create(&a, s.get(), data));
        return a;
    }
    detail::handle<kiln_argument_t, kiln_argument_destroy> h_;
};

class onnx_options {
public:
    onnx_options() : h_(make()) {}
    kiln_onnx_options_t get() const { return h_.get(); }
    onnx_options& set_input_dims(const std::string& input, const std::vector<size_t>& lens) {
        check(kiln_onnx_options_set_input_dims(get(), input.c_str(), lens.data(), lens.size()));
        return *this;
    }
    onnx_options& set_dim_param(const std::string& symbol, size_t n) { return set_dim_range(symbol, n, n); }
    onnx_options& set_dim_range(const std::string& symbol, size_t min, size_t max) {
        check(kiln_onnx_options_set_dim_param(get(), symbol.c_str(), min, max));
        return *this;
    }
    onnx_options& set_default_dim(size_t n) {
        check(kiln_onnx_options_set_default_dim(get(), n));
        return *this;
    }
    onnx_options& set_skip_unknown_operators(bool skip) {
        check(kiln_onnx_options_set_skip_unknown_operators(get(), skip ? 1 : 0));
        return *this;
    }

private:
    static kiln_onnx_options_t make() {
        kiln_onnx_options_t o;
        check(kiln_onnx_options_create(&o));
        return o;
    }
    detail::handle<kiln_onnx_options_t, kiln_onnx_options_destroy> h_;
};

class compile_options {
public:
    compile_options() : h_(make()) {}
    kiln_compile_options_t get() const { return h_.get(); }
    compile_options& set_optimize(bool on) { return set(kiln_compile_options_set_optimize, on); }
    compile_options& set_fast_math(bool on) { return set(kiln_compile_options_set_fast_math, on); }
    compile_options& set_exhaustive_tune(bool on) { return set(kiln_compile_options_set_exhaustive_tune, on); }
    compile_options& set_offload_copy(bool on) { return set(kiln_compile_options_set_offload_copy, on); }
    compile_options& set_precision(kiln_precision p) {
        check(kiln_compile_options_set_precision(get(), p));
        return *this;
    }
    compile_options& set_kernel_cache(bool on) { return set(kiln_compile_options_set_kernel_cache, on); }
    compile_options& set_allow_tf32(bool on) { return set(kiln_compile_options_set_allow_tf32, on); }
    compile_options& set_device(int device) {
        check(kiln_compile_options_set_device(get(), device));
        return *this;
    }

private:
    compile_options& set(kiln_status (*f)(kiln_compile_options_t, int), bool on) {
        check(f(get(), on ? 1 : 0));
        return *this;
    }
    static kiln_compile_options_t make() {
        kiln_compile_options_t o;
        check(kiln_compile_options_create(&o));
        return o;
    }
    detail::handle<kiln_compile_options_t, kiln_compile_options_destroy> h_;
};

class program {
public:
    static program parse_onnx_file(const std::string& path, const onnx_options& o = {}) {
        kiln_program_t p;
        check(kiln_parse_onnx_file(&p, path.c_str(), o.get()));
        return program(p);
    }
    static program parse_onnx_buffer(const void* data, size_t size, const onnx_options& o = {}) {
        kiln_program_t p;
        check(kiln_parse_onnx_buffer(&p, data, size, o.get()));
        return program(p);
    }

    // A program saved by save(), compiled.
    static program load(const std::string& path) {
        kiln_program_t p;
        check(kiln_load(&p, path.c_str()));
        return program(p);
    }

    kiln_program_t get() const { return h_.get(); }
    void save(const std::string& path) const { check(kiln_program_save(get(), path.c_str())); }
    // Thread-safe: stops a compile or run in progress on another thread (kiln_program_cancel).
    void cancel() const { check(kiln_program_cancel(get())); }
    // "" : the default target (gpu where a GPU is found, else cpu).
    void compile(const std::string& target = "", const compile_options& o = {}) {
        check(kiln_program_compile(get(), target.c_str(), o.get()));
    }
    std::string target() const {
        const char* t;
        check(kiln_program_target(get(), &t));
        return t;
    }
    size_t input_count() const { return count(kiln_program_input_count); }
    size_t output_count() const { return count(kiln_program_output_count); }
    std::string input_name(size_t i) const { return name(kiln_program_input_name, i); }
    std::string output_name(size_t i) const { return name(kiln_program_output_name, i); }
    client::shape input_shape(size_t i) const { return shape_of(kiln_program_input_shape, i); }
    client::shape output_shape(size_t i) const { return shape_of(kiln_program_output_shape, i); }

    // Runs on named inputs, writing the results into `outputs` (caller-owned buffers, in order).
    void run(const std::vector<std::pair<std::string, argument>>& inputs, const std::vector<argument>& outputs) {
        std::vector<const char*> names;
        std::vector<kiln_argument_t> in, out;
        for (const auto& [n, a] : inputs) {
            names.push_back(n.c_str());
            in.push_back(a.get());
        }
        for (const auto& a : outputs) out.push_back(a.get());
        check(kiln_program_run(get(), names.data(), in.data(), in.size(), out.data(), out.size()));
    }
    std::string str() const {
        const char* s;
        check(kiln_program_string(get(), &s));
        return s;
    }

private:
    explicit program(kiln_program_t p) : h_(p) {}
    size_t count(kiln_status (*f)(kiln_program_t, size_t*)) const {
        size_t n;
        check(f(get(), &n));
        return n;
    }
    std::string name(kiln_status (*f)(kiln_program_t, size_t, const char**), size_t i) const {
        const char* s;
        check(f(get(), i, &s));
        return s;
    }
    client::shape shape_of(kiln_status (*f)(kiln_program_t, size_t, kiln_shape_t*), size_t i) const {
        kiln_shape_t s;
        check(f(get(), i, &s));
        return client::shape(s);
    }
    detail::handle<kiln_program_t, kiln_program_destroy> h_;
};

}  // namespace kiln::client
