package dev.infertop.model;

/** Off-CPU time of the target's threads inside one op's node groups (work and barrier wait alike). */
public record SchedOpTotals(String op, long runnableNs, long sleepingNs) {}
