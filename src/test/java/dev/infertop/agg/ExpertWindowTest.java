package dev.infertop.agg;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

class ExpertWindowTest {
    @Test
    void keepsExactlyTheLastTicks() {
        ExpertWindow window = new ExpertWindow(3);
        window.add(0, 1, 5);
        window.addRows(0, 5);
        window.tick();
        window.add(0, 1, 2);
        window.add(1, 3, 7);
        window.addRows(1, 7);
        window.tick();
        window.add(0, 0, 1);
        window.addRows(0, 1);
        assertArrayEquals(new long[][] {{1, 7, 0, 0}, {0, 0, 0, 7}}, window.counts(2, 4));
        assertArrayEquals(new long[] {6, 7}, window.rows(2));
        window.tick(); // the first interval (5 at [0][1]) leaves the window
        assertArrayEquals(new long[][] {{1, 2, 0, 0}, {0, 0, 0, 7}}, window.counts(2, 4));
        assertArrayEquals(new long[] {1, 7}, window.rows(2));
        window.tick();
        window.tick();
        assertArrayEquals(new long[][] {{0, 0}}, window.counts(1, 2));
    }
}
