package dev.infertop.session;

import dev.infertop.model.Snapshot;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code --op-when}: a QoS rule that keeps the operator layer attached only while it holds, e.g.
 * {@code tps<5} (decode speed below 5 tokens/s over the last interval), {@code tpot>200} or {@code ttft>=800}
 * (p50, milliseconds). Evaluated once per interval; a change holds for at least {@link #MIN_DWELL_INTERVALS}
 * intervals so the layer's own cost cannot make it flap.
 */
public record OperatorRule(String text, Metric metric, Comparison comparison, double threshold) {
    static final int MIN_DWELL_INTERVALS = 2;

    enum Metric {
        TPS, TPOT, TTFT;

        double of(Snapshot snapshot) {
            return switch (this) {
                case TPS -> snapshot.interval().tokens().decodeTokensPerSecond();
                case TPOT -> snapshot.interval().tpot().p50Ms();
                case TTFT -> snapshot.interval().ttft().p50Ms();
            };
        }
    }

    enum Comparison {
        LT("<"), LE("<="), GT(">"), GE(">=");

        final String symbol;

        Comparison(String symbol) {
            this.symbol = symbol;
        }

        boolean test(double value, double threshold) {
            return switch (this) {
                case LT -> value < threshold;
                case LE -> value <= threshold;
                case GT -> value > threshold;
                case GE -> value >= threshold;
            };
        }
    }

    private static final Pattern SYNTAX = Pattern.compile("\\s*(tps|tpot|ttft)\\s*(<=|>=|<|>)\\s*([0-9]+(?:\\.[0-9]+)?)\\s*");

    public static OperatorRule parse(String text) {
        Matcher matcher = SYNTAX.matcher(text.toLowerCase(Locale.ROOT));
        if (!matcher.matches()) {
            throw new UserError("--op-when '" + text + "': expected METRIC<N, METRIC<=N, METRIC>N or METRIC>=N "
                    + "with METRIC tps (decode tokens/s), tpot or ttft (p50 ms), e.g. 'tps<5'", 2);
        }
        Comparison comparison = switch (matcher.group(2)) {
            case "<" -> Comparison.LT;
            case "<=" -> Comparison.LE;
            case ">" -> Comparison.GT;
            default -> Comparison.GE;
        };
        double threshold = Double.parseDouble(matcher.group(3));
        if (!Double.isFinite(threshold)) {
            // Digits past a double's range: no metric reaches it, and "Infinity" would be shown as the rule.
            String digits = matcher.group(3);
            throw new UserError("--op-when: the threshold " + (digits.length() > 20 ? digits.substring(0, 12) + "… ("
                    + digits.length() + " characters)" : digits) + " is too large", 2);
        }
        return new OperatorRule(text.strip(), Metric.valueOf(matcher.group(1).toUpperCase(Locale.ROOT)), comparison,
                threshold);
    }

    /** Whether the operator layer should be on after an interval that produced {@code snapshot}. */
    boolean holds(Snapshot snapshot) {
        return comparison.test(metric.of(snapshot), threshold);
    }
}
