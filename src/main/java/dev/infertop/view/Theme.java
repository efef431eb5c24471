package dev.infertop.view;

import com.googlecode.lanterna.SGR;
import com.googlecode.lanterna.TextColor;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.OpClass;

import java.util.Map;

/**
 * Colours by role. Monochrome (NO_COLOR, or a terminal without colour) uses only the default colours plus
 * bold and reverse, so nothing depends on colour alone: op classes also have their own characters.
 */
public final class Theme {
    public enum Role { NORMAL, TITLE, HEADING, SELECTED, DIM, WARN, GOOD, WAIT }

    private final boolean colour;

    private Theme(boolean colour) {
        this.colour = colour;
    }

    public static final Theme COLOUR = new Theme(true);
    public static final Theme MONOCHROME = new Theme(false);

    /** NO_COLOR set and non-empty (no-color.org), or a terminal type without colour → monochrome. */
    public static Theme fromEnvironment(Map<String, String> environment) {
        String noColor = environment.get("NO_COLOR");
        if (noColor != null && !noColor.isEmpty()) {
            return MONOCHROME;
        }
        String term = environment.getOrDefault("TERM", "");
        if (term.isEmpty() || term.equals("dumb") || term.startsWith("vt1") || term.startsWith("vt2")) {
            return MONOCHROME;
        }
        return COLOUR;
    }

    public boolean colour() {
        return colour;
    }

    public void apply(TextGraphics g, Role role) {
        g.clearModifiers();
        g.setForegroundColor(TextColor.ANSI.DEFAULT);
        g.setBackgroundColor(TextColor.ANSI.DEFAULT);
        switch (role) {
            case NORMAL, DIM, WAIT -> {
                if (colour && role != Role.NORMAL) {
                    g.setForegroundColor(role == Role.WAIT ? TextColor.ANSI.WHITE_BRIGHT : TextColor.ANSI.BLACK_BRIGHT);
                }
            }
            case TITLE -> {
                g.enableModifiers(SGR.BOLD);
                if (colour) {
                    g.setForegroundColor(TextColor.ANSI.CYAN_BRIGHT);
                }
            }
            case HEADING -> {
                if (colour) {
                    g.setForegroundColor(TextColor.ANSI.BLACK);
                    g.setBackgroundColor(TextColor.ANSI.GREEN);
                } else {
                    g.enableModifiers(SGR.REVERSE);
                }
            }
            case SELECTED -> {
                if (colour) {
                    g.setForegroundColor(TextColor.ANSI.BLACK);
                    g.setBackgroundColor(TextColor.ANSI.CYAN);
                } else {
                    g.enableModifiers(SGR.REVERSE);
                }
            }
            case WARN -> {
                g.enableModifiers(SGR.BOLD);
                if (colour) {
                    g.setForegroundColor(TextColor.ANSI.RED_BRIGHT);
                }
            }
            case GOOD -> {
                if (colour) {
                    g.setForegroundColor(TextColor.ANSI.GREEN_BRIGHT);
                }
            }
        }
    }

    /** The colour an op class is drawn in (default colour when monochrome). */
    public TextColor colourOf(OpClass opClass) {
        if (!colour) {
            return TextColor.ANSI.DEFAULT;
        }
        return switch (opClass) {
            case MATMUL -> TextColor.ANSI.RED_BRIGHT;
            case ATTENTION -> TextColor.ANSI.MAGENTA_BRIGHT;
            case NORM -> TextColor.ANSI.YELLOW_BRIGHT;
            case ELEMENTWISE -> TextColor.ANSI.GREEN_BRIGHT;
            case COPY -> TextColor.ANSI.BLUE_BRIGHT;
            case OTHER -> TextColor.ANSI.WHITE;
        };
    }

    public void applyClass(TextGraphics g, OpClass opClass) {
        g.clearModifiers();
        g.setBackgroundColor(TextColor.ANSI.DEFAULT);
        g.setForegroundColor(colourOf(opClass));
        if (!colour && opClass == OpClass.MATMUL) {
            g.enableModifiers(SGR.BOLD);
        }
    }
}
