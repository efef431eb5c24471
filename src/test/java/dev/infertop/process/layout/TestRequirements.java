package dev.infertop.process.layout;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/** Skips a test whose tools are missing on a workstation; fails it on CI (env CI=true). */
final class TestRequirements {
    private TestRequirements() {}

    static void requireOrSkip(boolean present, String reason) {
        if (present) {
            return;
        }
        if ("true".equals(System.getenv("CI"))) {
            Assertions.fail(reason + " (CI=true: required)");
        }
        Assumptions.abort(reason);
    }
}
