package dev.infertop.session;

/**
 * Test only: {@code INFERTOP_TEST_INJECT} makes a real run fail on purpose at its Nth interval, so that the
 * exit path of an Error is tested where it matters, with probes attached to a real target (CleanupIT,
 * LiveMonitorIT). Read nowhere else; unset (always, outside those tests), it does nothing.
 * <ul>
 * <li>{@code oom-after-ticks:N}: an OutOfMemoryError on the collector's thread (the main thread);
 * <li>{@code stack-overflow-after-ticks:N}: a real StackOverflowError there;
 * <li>{@code oom-in-thread-after-ticks:N}: an OutOfMemoryError that ends a thread of its own, as one would
 * end the budget's, the live view's or a snapshot writer's thread.
 * </ul>
 */
final class InjectedFault {
    static final String VARIABLE = "INFERTOP_TEST_INJECT";

    private enum Kind { OOM, STACK_OVERFLOW, OOM_IN_THREAD }

    private static final InjectedFault NONE = new InjectedFault(null, 0, "");

    private final Kind kind;
    private final int afterTicks;
    private final String spec;
    private int ticks;

    private InjectedFault(Kind kind, int afterTicks, String spec) {
        this.kind = kind;
        this.afterTicks = afterTicks;
        this.spec = spec;
    }

    static InjectedFault fromEnvironment() {
        return parse(System.getenv(VARIABLE));
    }

    /** The fault {@code spec} names; none for null or empty; a usage error for anything else. */
    static InjectedFault parse(String spec) {
        if (spec == null || spec.isEmpty()) {
            return NONE;
        }
        int colon = spec.indexOf(":");
        Kind kind = colon < 0 ? null : switch (spec.substring(0, colon)) {
            case "oom-after-ticks" -> Kind.OOM;
            case "stack-overflow-after-ticks" -> Kind.STACK_OVERFLOW;
            case "oom-in-thread-after-ticks" -> Kind.OOM_IN_THREAD;
            default -> null;
        };
        String count = colon < 0 ? "" : spec.substring(colon + 1);
        if (kind == null || count.isEmpty() || count.length() > 6 || !count.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new UserError(VARIABLE + "='" + spec + "': a test hook, one of oom-after-ticks:N, "
                    + "stack-overflow-after-ticks:N, oom-in-thread-after-ticks:N; unset it", 2);
        }
        return new InjectedFault(kind, Integer.parseInt(count), spec);
    }

    /** Called at each interval of the collector: fails there, or starts a thread that fails, at the Nth. */
    void onTick() {
        if (kind == null || ++ticks != afterTicks) {
            return;
        }
        String message = "injected by " + VARIABLE + "=" + spec;
        switch (kind) {
            case OOM -> throw new OutOfMemoryError(message);
            case STACK_OVERFLOW -> recurse(0);
            case OOM_IN_THREAD -> Thread.ofPlatform().name("infertop-injected").daemon().start(() -> {
                throw new OutOfMemoryError(message);
            });
        }
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1; // until the thread's stack is used up
    }
}
