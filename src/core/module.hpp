// instruction: an operation applied to input instructions (and submodules), with its result shape.
// module: an ordered list of instructions with named parameters and one @return.
// program: the modules ("main" first) of one model.
#pragma once
#include <iosfwd>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/argument.hpp"
#include "core/operation.hpp"

namespace kiln {

class instruction;
using instruction_ref = std::list<instruction>::iterator;

class instruction {
public:
    instruction(operation op, shape result, std::vector<instruction_ref> inputs, std::vector<module*> mods);

    const operation& get_operator() const { return op_; }
    std::string_view name() const { return op_.name(); }
    const shape& get_shape() const { return result_; }
    const std::vector<instruction_ref>& inputs() const { return inputs_; }
    const std::vector<instruction_ref>& outputs() const { return outputs_; }   // users
    const std::vector<module*>& module_inputs() const { return mods_; }
    const literal& get_literal() const { return literal_; }
    bool is_param() const;
    bool is_literal() const;
    bool is_return() const;
    // Name given by the frontend (an ONNX node name); used in error messages.
    const std::string& source_name() const { return source_name_; }
    void set_source_name(std::string n) { source_name_ = std::move(n); }

private:
    friend class module;
    operation op_;
    shape result_;
    std::vector<instruction_ref> inputs_;
    std::vector<instruction_ref> outputs_;
    std::vector<module*> mods_;
    literal literal_;
    std::string source_name_;
};

class module {
public:
    explicit module(std::string name) : name_(std::move(name)) {}
    module(const module&) = delete;
    module& operator=(const module&) = delete;

    const std::string& name() const { return name_; }

    instruction_ref add_parameter(const std::string& name, const shape& s);
    instruction_ref add_literal(literal lit);
    instruction_ref add_instruction(const operation& op, std::vector<instruction_ref> inputs,
                                    std::vector<module*> mods = {});
    instruction_ref add_return(std::vector<instruction_ref> inputs);
    instruction_ref insert_instruction(instruction_ref pos, const operation& op, std::vector<instruction_ref> inputs,
                                       std::vector<module*> mods = {});
    instruction_ref insert_literal(instruction_ref pos, literal lit);

    // Makes every user of `ins` use `rep` instead (shapes must match).
    void replace_uses(instruction_ref ins, instruction_ref rep);
    // Changes `ins` in place to a new operation and inputs (its shape must stay the same).
    void replace_instruction(instruction_ref ins, const operation& op, std::vector<instruction_ref> inputs,
                             std::vector<module*> mods = {});
    // Removes an instruction that has no users.
    void remove_instruction(instruction_ref ins);
    // Moves `ins` before `pos`.
    void move_instruction(instruction_ref ins, instruction_ref pos);
    // Removes instructions whose results are unused and that have no side effects; returns the count.
    std::size_t remove_dead_code();

    instruction_ref begin() { return instructions_.begin(); }
    instruction_ref end() { return instructions_.end(); }
    auto begin() const { return instructions_.begin(); }
    auto end() const { return instructions_.end(); }
    std::size_t size() const { return instructions_.size(); }
    bool has(instruction_ref ins) const;

    std::vector<instruction_ref> parameters() const;     // in declaration order
    std::vector<std::string> parameter_names() const;
    instruction_ref get_parameter(std::string_view name) const;   // end() when absent
    std::string parameter_name(const instruction& ins) const;
    instruction_ref get_return() const;                  // end() when absent
    std::vector<shape> output_shapes() const;

    // Checks the invariants (inputs defined before use, user lists consistent, shapes match what
    // their ops compute, one return at the end); throws naming the first bad instruction.
    void validate() const;

private:
    friend class program;
    instruction_ref insert(instruction_ref pos, instruction ins);
    // Appends copies of o's instructions (shapes, literals and source names kept, submodules
    // mapped through `mods`); used by program::clone.
    void copy_from(const module& o, const std::unordered_map<const module*, module*>& mods);
    std::string name_;
    std::list<instruction> instructions_;
};

class program {
public:
    program();
    program(const program&) = delete;
    program& operator=(const program&) = delete;
    program(program&&) = default;
    program& operator=(program&&) = default;

    module& main() { return *modules_.front(); }
    const module& main() const { return *modules_.front(); }
    module& create_module(const std::string& name);   // throws when the name is taken
    module* find_module(std::string_view name) const;
    // Removes the modules created after the first `count` (a frontend's discarded parse of a
    // subgraph); throws when a module that stays calls one of them.
    void remove_modules_after(std::size_t count);
    std::vector<module*> modules() const;             // main first, then in creation order
    // Modules ordered so every module comes after the modules it calls (main last).
    std::vector<module*> modules_in_dependency_order() const;

    void validate() const;
    bool operator==(const program& o) const;   // same printed form
    // A deep copy of the IR; literals share their (immutable) buffers with this program's.
    program clone() const;

private:
    std::vector<std::unique_ptr<module>> modules_;
    // By name: fusion creates a module per region, and a search per creation was quadratic.
    std::unordered_map<std::string, module*> by_name_;
};

// MIGraphX's printed form; parse_text (core/text_parser.hpp) reads it back.
void print(std::ostream& os, const module& m);
void print(std::ostream& os, const program& p);
std::string to_string(const program& p);
std::string to_string(const module& m);

}  // namespace kiln
