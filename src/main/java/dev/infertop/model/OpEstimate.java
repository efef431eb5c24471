package dev.infertop.model;

/**
 * One op over every graph the target computed in a span, where the operator layer traced only some of them
 * (the overhead budget's sample windows): the traced graphs' figures plus the untraced graphs' share, scaled
 * from what the windows of the run saw. With every graph traced it equals the traced figures.
 *
 * @param op     the op as the ops table names it
 * @param groups node groups, traced and estimated
 * @param wallNs wall time of those groups, traced and estimated
 */
public record OpEstimate(String op, double groups, double wallNs) {}
