package dev.infertop.agg;

import dev.infertop.model.BackendNames;

/**
 * Routers registered as a traced run's Pipeline registers them, for tests: the token layer first, then the
 * operator and sched layers where given; and the registered aggregators the tests feed records to.
 */
public final class Routers {
    private Routers() {}

    /** The token layer, and the operator layer's aggregator unless null. */
    public static TraceAggregator of(BackendNames backendNames, OperatorAggregator operators) {
        return of(backendNames, operators, null);
    }

    /** The token layer, then the operator and sched layers' aggregators, each unless null. */
    public static TraceAggregator of(BackendNames backendNames, OperatorAggregator operators, SchedAggregator sched) {
        TraceAggregator router = new TraceAggregator(backendNames).register(new TokenAggregator());
        if (operators != null) {
            router.register(operators);
        }
        if (sched != null) {
            router.register(sched);
        }
        return router;
    }

    /** The token layer's aggregator (tests feed it records as the decoder would). */
    public static TokenAggregator tokens(TraceAggregator router) {
        return router.registered(TokenAggregator.class);
    }

    /** The operator layer's aggregator, or null. */
    public static OperatorAggregator operators(TraceAggregator router) {
        return router.registered(OperatorAggregator.class);
    }

    /** The per-sequence accounting of batches (tests read what the last batch held). */
    static SequenceTracker sequences(TraceAggregator router) {
        return tokens(router).sequences();
    }
}
