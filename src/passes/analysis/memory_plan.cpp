#include "passes/analysis/memory_plan.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "core/eval.hpp"

namespace kiln {

namespace {

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

int alias_of(const instruction& ins) {
    std::vector<shape> in;
    for (auto i : ins.inputs()) in.push_back(i->get_shape());
    return ins.get_operator().output_alias(in);
}

// A tuple's elements are laid out one after another, each aligned.
std::size_t buffer_bytes(const shape& s) {
    if (!s.is_tuple()) return s.bytes();
    std::size_t n = 0;
    for (const auto& sub : s.sub_shapes()) n = align_up(n, buffer_alignment(sub.type())) + buffer_bytes(sub);
    return n;
}

std::size_t alignment_of(const shape& s) { return buffer_alignment(s.is_tuple() ? dtype::uint8 : s.type()); }

bool has_dynamic(const shape& s) {
    return s.dynamic() || std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), has_dynamic);
}

// Sequences and optionals hold a data-dependent number of buffers, which their ops pass along;
// strings own heap memory of data-dependent size.
bool has_container(const shape& s) {
    return s.is_sequence() || s.is_optional() || s.type() == dtype::string ||
           std::any_of(s.sub_shapes().begin(), s.sub_shapes().end(), has_container);
}

struct liveness {
    std::unordered_map<const instruction*, std::size_t> index;
    std::unordered_map<const instruction*, const instruction*> root;   // whose bytes an instruction's result is
    std::unordered_map<const instruction*, std::size_t> last_use;      // of each buffer, views' uses included
    std::vector<const instruction*> buffers;                           // in module order
};

liveness analyse(const module& m) {
    liveness l;
    std::size_t k = 0;
    for (const auto& ins : m) {
        l.index[&ins] = k;
        if (has_container(ins.get_shape()))
            fail("plan_memory: ", describe(m, ins), " holds a sequence, optional or strings; memory is planned for numeric tensors");
        int alias = ins.get_operator().traits().builtin ? -1 : alias_of(ins);
        l.root[&ins] = alias >= 0 ? l.root.at(&*ins.inputs()[static_cast<std::size_t>(alias)]) : &ins;
        if (!ins.get_operator().traits().builtin && alias < 0) {
            if (has_dynamic(ins.get_shape()))
                fail("plan_memory: ", describe(m, ins), " has a dynamic shape; memory is planned for static shapes");
            l.buffers.push_back(&ins);
            l.last_use[&ins] = k;
        }
        // Returned values stay live past the last instruction.
        std::size_t use = ins.is_return() ? m.size() : k;
        for (auto in : ins.inputs()) {
            auto it = l.last_use.find(l.root.at(&*in));
            if (it != l.last_use.end()) it->second = std::max(it->second, use);
        }
        ++k;
    }
    return l;
}

// Whether `ins` may write its result over input `x`: an arena buffer read directly (not through a
// view), laid out as the result, whose last use is `ins`.
bool may_overwrite(const instruction& ins, const instruction* x, const liveness& l) {
    auto last = l.last_use.find(x);
    if (l.root.at(x) != x || last == l.last_use.end() || last->second != l.index.at(&ins)) return false;
    const shape& s = x->get_shape();
    const shape& out = ins.get_shape();
    return s.lens() == out.lens() && s.strides() == out.strides() && s.type_bits() == out.type_bits();
}

// The input buffer an instruction may write its result over (see the header), or null.
const instruction* in_place_input(const instruction& ins, const liveness& l, const in_place_inputs& overwrites) {
    if (l.root.at(&ins) != &ins) return nullptr;
    if (auto k = overwrites.find(&ins); k != overwrites.end()) {
        // A kernel accumulating onto an input reads only that input from its buffer: another
        // input in the same bytes (the same value, or a view of it) would be read after it is
        // overwritten.
        const instruction* x = &*ins.inputs().at(k->second);
        for (std::size_t i = 0; i < ins.inputs().size(); ++i)
            if (i != k->second && l.root.at(&*ins.inputs()[i]) == x) return nullptr;
        return may_overwrite(ins, x, l) ? x : nullptr;
    }
    if (!ins.get_operator().traits().pointwise) return nullptr;
    for (auto in : ins.inputs()) {
        const instruction* x = &*in;
        if (!may_overwrite(ins, x, l)) continue;
        bool read_through_view = std::any_of(ins.inputs().begin(), ins.inputs().end(),
                                             [&](instruction_ref o) { return &*o != x && l.root.at(&*o) == x; });
        if (!read_through_view) return x;
    }
    return nullptr;
}

// Instructions sharing one arena range: a buffer and the pointwise results written over it.
struct buffer {
    std::size_t start = 0, end = 0, bytes = 0, align = 1, offset = 0;
    std::vector<const instruction*> members;
};

bool lifetimes_meet(std::size_t s1, std::size_t e1, std::size_t s2, std::size_t e2) { return s1 <= e2 && s2 <= e1; }

std::vector<buffer> group_buffers(const liveness& l, const in_place_inputs& overwrites, std::size_t& in_place) {
    std::vector<buffer> bufs;
    std::unordered_map<const instruction*, std::size_t> group;
    for (const instruction* b : l.buffers) {
        std::size_t k = l.index.at(b), end = l.last_use.at(b);
        if (const instruction* x = in_place_input(*b, l, overwrites)) {
            buffer& g = bufs[group.at(x)];
            g.end = std::max(g.end, end);
            g.members.push_back(b);
            group[b] = group.at(x);
            ++in_place;
            continue;
        }
        group[b] = bufs.size();
        bufs.push_back({k, end, buffer_bytes(b->get_shape()), alignment_of(b->get_shape()), 0, {b}});
    }
    return bufs;
}

// Largest first, each at the lowest aligned offset clear of placed buffers live at the same time.
void place(std::vector<buffer>& bufs) {
    std::vector<buffer*> order;
    for (auto& b : bufs) order.push_back(&b);
    std::stable_sort(order.begin(), order.end(), [](const buffer* a, const buffer* b) { return a->bytes > b->bytes; });
    std::vector<const buffer*> placed;
    for (buffer* b : order) {
        std::vector<std::pair<std::size_t, std::size_t>> busy;
        for (const buffer* p : placed)
            if (lifetimes_meet(b->start, b->end, p->start, p->end)) busy.emplace_back(p->offset, p->offset + p->bytes);
        std::sort(busy.begin(), busy.end());
        std::size_t off = 0;
        for (auto [first, last] : busy) {
            if (off + b->bytes <= first) break;
            off = std::max(off, align_up(last, b->align));
        }
        b->offset = off;
        placed.push_back(b);
    }
}

}  // namespace

std::size_t buffer_alignment(dtype t) { return std::max<std::size_t>(256, (dtype_bits(t) + 7) / 8); }

std::size_t tuple_element_offset(const shape& tuple, std::size_t i) {
    std::size_t n = 0;
    const auto& subs = tuple.sub_shapes();
    for (std::size_t k = 0; k < i; ++k) n = align_up(n, buffer_alignment(subs[k].type())) + buffer_bytes(subs[k]);
    return align_up(n, buffer_alignment(subs[i].type()));
}

memory_plan plan_memory(const module& m, const in_place_inputs& overwrites) {
    liveness l = analyse(m);
    memory_plan plan;
    for (const instruction* b : l.buffers) plan.intermediate_bytes += buffer_bytes(b->get_shape());
    std::vector<buffer> bufs = group_buffers(l, overwrites, plan.in_place);
    place(bufs);
    for (const auto& b : bufs) {
        for (const instruction* ins : b.members) plan.offsets[ins] = b.offset;
        plan.arena_bytes = std::max(plan.arena_bytes, b.offset + b.bytes);
    }
    return plan;
}

std::string memory_plan::report() const {
    double pct = intermediate_bytes == 0 ? 100.0 : 100.0 * static_cast<double>(arena_bytes) / intermediate_bytes;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", pct);
    return cat("arena ", arena_bytes, " bytes (sum of intermediates ", intermediate_bytes, " bytes, ", buf, ")");
}

void check_memory_plan(const module& m, const memory_plan& plan, const in_place_inputs& overwrites) {
    liveness l = analyse(m);
    auto offset_of = [&](const instruction* b) {
        auto it = plan.offsets.find(b);
        if (it == plan.offsets.end()) fail("memory plan: ", describe(m, *b), " has no arena offset");
        std::size_t align = alignment_of(b->get_shape());
        if (it->second % align != 0)
            fail("memory plan: ", describe(m, *b), " is at offset ", it->second, ", not a multiple of ", align);
        if (it->second + buffer_bytes(b->get_shape()) > plan.arena_bytes)
            fail("memory plan: ", describe(m, *b), " ends past the arena's ", plan.arena_bytes, " bytes");
        return it->second;
    };
    for (std::size_t i = 0; i < l.buffers.size(); ++i) {
        const instruction* a = l.buffers[i];
        std::size_t oa = offset_of(a), ea = oa + buffer_bytes(a->get_shape());
        for (std::size_t j = i + 1; j < l.buffers.size(); ++j) {
            const instruction* b = l.buffers[j];
            std::size_t ob = offset_of(b), eb = ob + buffer_bytes(b->get_shape());
            if (ea <= ob || eb <= oa || oa == ea || ob == eb) continue;
            std::size_t sb = l.index.at(b);
            if (!lifetimes_meet(l.index.at(a), l.last_use.at(a), sb, l.last_use.at(b))) continue;
            if (in_place_input(*b, l, overwrites) == a) continue;
            fail("memory plan: ", describe(m, *a), " and ", describe(m, *b), " are both live at instruction ", sb,
                 " but share arena bytes [", std::max(oa, ob), ", ", std::min(ea, eb), ")");
        }
    }
}

}  // namespace kiln
