package dev.infertop.view;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertSame;

class ThemeTest {
    @Test
    void noColorSetAndNonEmptyOrAColourlessTerminalMeansMonochrome() {
        assertSame(Theme.MONOCHROME, Theme.fromEnvironment(Map.of("NO_COLOR", "1", "TERM", "xterm-256color")));
        assertSame(Theme.COLOUR, Theme.fromEnvironment(Map.of("NO_COLOR", "", "TERM", "xterm-256color")));
        assertSame(Theme.COLOUR, Theme.fromEnvironment(Map.of("TERM", "tmux-256color")));
        assertSame(Theme.MONOCHROME, Theme.fromEnvironment(Map.of("TERM", "dumb")));
        assertSame(Theme.MONOCHROME, Theme.fromEnvironment(Map.of("TERM", "vt100")));
        assertSame(Theme.MONOCHROME, Theme.fromEnvironment(Map.of()));
    }
}
