package dev.infertop.process;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Of the barrier calls inside the graph node loop's function, the ones the loop itself makes: after each node
 * group ({@code if (node_n + 1 < n_nodes) ggml_barrier(...)}) and once after the loop. Barrier calls of op code
 * inlined into the function (a mul_mat's or mul_mat_id's own) must not be counted as node arrivals.
 *
 * <p>Why the shape of the code and not the address order: compilers lay the loop out differently. GCC on
 * x86-64 puts the after-loop call first and the in-loop one second, with the inlined op code's calls further
 * on; GCC on aarch64 duplicates the after-loop call into two tails and places the in-loop one third.
 * What holds in both is the loop's shape:
 * <ul>
 * <li>an <b>after-loop</b> call is followed straight on (no call, no condition but the stack protector's) by the
 *     function's return;
 * <li>an <b>in-loop</b> call is followed straight on by one condition (the loop's: another node?) one side of
 *     which leads straight on to an after-loop call;
 * <li>an inlined op's call is followed by the op's own code or the node loop's checks after an op (the abort
 *     callback's), never directly by the loop's condition.
 * </ul>
 * Where the code has no such shape (an older loop, another compiler), the first two calls in address order are
 * taken, as every build seen before this rule had them; graphs then show up as unattributed if that was wrong.
 */
public final class NodeLoopBarriers {
    /** How the loop's calls were chosen, for the probe listing. */
    public enum Rule {
        LOOP_SHAPE("the node loop's shape"), FIRST_TWO("the first two in address order");

        private final String description;

        Rule(String description) {
            this.description = description;
        }

        public String description() {
            return description;
        }
    }

    /** The chosen calls in address order, and by which rule. */
    public record Choice(List<CallSite> sites, Rule rule) {}

    private static final int FALLBACK_SITES = 2;

    private NodeLoopBarriers() {}

    /** Chooses among {@code barrierCalls}, all inside {@code caller}, sorted by address. */
    public static Choice choose(ElfFile elf, ElfSymbol caller, List<CallSite> barrierCalls) throws TargetException {
        List<CallSite> calls = new ArrayList<>(barrierCalls);
        calls.sort(java.util.Comparator.comparingLong(CallSite::vaddr));
        if (calls.isEmpty()) {
            return new Choice(List.of(), Rule.LOOP_SHAPE);
        }
        BranchWalk walk = new BranchWalk(elf, caller);
        Set<Long> afterLoop = new HashSet<>();
        for (CallSite call : calls) {
            if (returns(walk, call.returnVaddr())) {
                afterLoop.add(call.vaddr());
            }
        }
        Set<Long> inLoop = new HashSet<>();
        for (CallSite call : calls) {
            if (!afterLoop.contains(call.vaddr())
                    && walk.from(call.returnVaddr()) instanceof BranchWalk.Branch(long fallThrough, long taken)
                    && (leadsTo(walk, fallThrough, afterLoop) || leadsTo(walk, taken, afterLoop))) {
                inLoop.add(call.vaddr());
            }
        }
        if (afterLoop.isEmpty() || inLoop.isEmpty()) {
            return new Choice(List.copyOf(calls.subList(0, Math.min(FALLBACK_SITES, calls.size()))), Rule.FIRST_TWO);
        }
        return new Choice(calls.stream().filter(c -> afterLoop.contains(c.vaddr()) || inLoop.contains(c.vaddr()))
                .toList(), Rule.LOOP_SHAPE);
    }

    /**
     * Whether the code from {@code vaddr} returns straight on, or after one condition one side of which returns:
     * the stack protector's check ({@code jne __stack_chk_fail}) sits between a function's last call and its
     * return in hardened builds (Debian's).
     */
    private static boolean returns(BranchWalk walk, long vaddr) {
        return switch (walk.from(vaddr)) {
            case BranchWalk.Return r -> true;
            case BranchWalk.Branch(long fallThrough, long taken) ->
                    walk.from(fallThrough) instanceof BranchWalk.Return || walk.from(taken) instanceof BranchWalk.Return;
            default -> false;
        };
    }

    private static boolean leadsTo(BranchWalk walk, long vaddr, Set<Long> calls) {
        return walk.from(vaddr) instanceof BranchWalk.Call(long at) && calls.contains(at);
    }
}
