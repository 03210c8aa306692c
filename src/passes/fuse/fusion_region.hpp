// What the fusion passes share: growing a region of instructions backward from a root, and
// replacing a region by one fused instruction whose submodule holds it.
//
// A region has one output, its root (the last member). Every other member has all its users
// inside the region, which is what makes fusion safe: no path leaves the region except through
// the root, so no path can leave it and come back (merging never creates a cycle), and no member
// other than the root is needed outside it. A producer with users outside the region therefore
// stays outside and its result becomes an input of the fused instruction (it is not duplicated:
// recomputing it in every consumer's kernel would re-read its inputs once per consumer).
// Broadcast views and small literals are the exception: they cost nothing to repeat, so the
// fused body gets its own copy and reads the view's source directly. So are producers that
// worth_duplicating accepts (the cost model below): fuse_pointwise copies them into each
// consumer's region, and the producer's own kernel goes away.
#pragma once
#include <functional>
#include <string>
#include <unordered_map>
#include <string_view>
#include <vector>

#include "core/module.hpp"

namespace kiln {

// Views that only repeat elements (the broadcast_view trait).
bool is_broadcast_view(const instruction& ins);
// A literal copied into fused bodies rather than passed in (scalars and a few elements).
bool is_small_literal(const instruction& ins);
// A pointwise op a fused kernel can compute: no side effects, static non-tuple standard result,
// no packed 4-bit types.
bool is_fusible_pointwise(const instruction& ins);

// The cost model for recomputing instead of reading: a pointwise producer with several users is
// copied into its users' regions when every user is a pointwise op (so each region can take the
// copy and the producer's kernel, its write and the users' reads of it disappear: one launch and
// 1 + users passes over its result fewer) and what the copy reads (its inputs other than small
// literals, broadcast views counted at their source's size) is no more bytes than its result (so
// no region reads more than before). A producer that is returned, or read by anything else,
// would stay, and copying it would save nothing: it is not copied.
bool worth_duplicating(const instruction& ins);

// Passes remove dead code before growing regions: a fused instruction that the pass manager
// removed afterwards would leave a body that nothing calls.
//
// Grows regions backward from a root in one module: an input of a member joins when all its users
// are members and then can_join accepts it (so can_join may record what joined). Inputs are visited from the latest in program order,
// so a producer is judged after all its users have been. Instructions added to the module after
// the grower was made (the fused ones) never join.
class region_grower {
public:
    explicit region_grower(module& m);
    // Members in program order, root last. An input with users outside the region that can_copy
    // accepts goes into *copies (once) instead: the region computes it again from its inputs.
    std::vector<instruction_ref> grow(instruction_ref root, const std::function<bool(instruction_ref)>& can_join,
                                      const std::function<bool(instruction_ref)>& can_copy = {},
                                      std::vector<instruction_ref>* copies = nullptr) const;
    // Whether a comes before b in program order (both known to the grower).
    bool before(instruction_ref a, instruction_ref b) const { return position_.at(&*a) < position_.at(&*b); }
    // Drops members about to be removed (a new instruction may reuse their address).
    void forget(const std::vector<instruction_ref>& members);

private:
    std::unordered_map<const instruction*, std::size_t> position_;
};

// "pointwise0", "pointwise1", ...: names that no module of the program has. It counts on from the
// last name it gave, so naming n bodies takes n lookups, not n^2.
class module_namer {
public:
    module_namer(const program& p, std::string prefix) : p_(p), prefix_(std::move(prefix)) {}
    std::string next();

private:
    const program& p_;
    std::string prefix_;
    std::size_t n_ = 0;
};

// Replaces the region (members in program order, root last) by one instruction of `op` whose
// submodule, named by `names`, computes the members. The instruction's inputs are the region's
// inputs in order of first use (a parameter x<i> each); broadcast views of non-members and small
// literals are copied into the body, and so are `copies` (non-members the body computes again from
// their inputs). Returns the new instruction, which takes the root's place.
instruction_ref fuse_region(program& p, module& m, const std::vector<instruction_ref>& members,
                            const operation& op, module_namer& names,
                            const std::vector<instruction_ref>& copies = {});

}  // namespace kiln
