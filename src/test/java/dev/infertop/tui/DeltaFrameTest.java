package dev.infertop.tui;

import com.googlecode.lanterna.SGR;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.TextCharacter;
import com.googlecode.lanterna.TextColor;
import com.googlecode.lanterna.graphics.BasicTextImage;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A delta frame's bytes, exactly, and replayed by a small terminal onto what was shown: the frame drawn. */
class DeltaFrameTest {
    private static final String ESC = "\u001b";

    private static BasicTextImage image(int columns, int rows) {
        return new BasicTextImage(new TerminalSize(columns, rows));
    }

    private static TextCharacter cell(char c, TextColor fg, TextColor bg, SGR... sgrs) {
        return new TextCharacter(c, fg, bg, sgrs);
    }

    @Test
    void onlyTheChangedCellsGoOutWithAMoveWhereARunStartsAndAStyleWhereItChanges() {
        BasicTextImage front = image(6, 2);
        BasicTextImage back = image(6, 2);
        DeltaFrame frame = new DeltaFrame();
        assertEquals("", frame.encode(front, back, 6, 2).toString(), "nothing changed, nothing sent");

        back.setCharacterAt(2, 0, cell('x', TextColor.ANSI.DEFAULT, TextColor.ANSI.DEFAULT));
        back.setCharacterAt(3, 0, cell('y', TextColor.ANSI.DEFAULT, TextColor.ANSI.DEFAULT));
        back.setCharacterAt(0, 1, cell('a', TextColor.ANSI.RED_BRIGHT, TextColor.ANSI.DEFAULT, SGR.BOLD));
        back.setCharacterAt(1, 1, cell('b', TextColor.ANSI.RED_BRIGHT, TextColor.ANSI.DEFAULT, SGR.BOLD));
        back.setCharacterAt(5, 1, cell('█', TextColor.ANSI.BLACK, TextColor.ANSI.GREEN, SGR.REVERSE));
        assertEquals(ESC + "[1;3H" + ESC + "[0;39;49mxy"
                + ESC + "[2;1H" + ESC + "[0;1;91;49mab"
                + ESC + "[2;6H" + ESC + "[0;7;30;42m█"
                + ESC + "[?25l", frame.encode(front, back, 6, 2).toString());
    }

    @Test
    void replayedOntoWhatWasShownEveryFrameGivesTheFrameDrawn() {
        Random random = new Random(42);
        TextColor[] colors = {TextColor.ANSI.DEFAULT, TextColor.ANSI.RED_BRIGHT, TextColor.ANSI.CYAN,
                TextColor.ANSI.BLACK_BRIGHT, new TextColor.Indexed(202), new TextColor.RGB(10, 20, 30)};
        SGR[][] styles = {{}, {SGR.BOLD}, {SGR.REVERSE}, {SGR.BOLD, SGR.UNDERLINE}};
        String chars = " .:abcMNO|▁▅█";
        int columns = 40;
        int rows = 12;
        DeltaFrame frame = new DeltaFrame();
        BasicTextImage shown = image(columns, rows);
        Replay terminal = new Replay(columns, rows);
        for (int round = 0; round < 50; round++) {
            BasicTextImage drawn = image(columns, rows);
            shown.copyTo(drawn);
            int changes = random.nextInt(columns * rows / 2);
            for (int i = 0; i < changes; i++) {
                drawn.setCharacterAt(random.nextInt(columns), random.nextInt(rows),
                        cell(chars.charAt(random.nextInt(chars.length())), colors[random.nextInt(colors.length)],
                                colors[random.nextInt(colors.length)], styles[random.nextInt(styles.length)]));
            }
            terminal.play(frame.encode(shown, drawn, columns, rows).toString());
            for (int y = 0; y < rows; y++) {
                for (int x = 0; x < columns; x++) {
                    assertEquals(drawn.getCharacterAt(x, y), terminal.cells[y][x],
                            "round " + round + " at " + x + "," + y);
                }
            }
            drawn.copyTo(shown);
        }
    }

    @Test
    void theScreenSendsADeltaAsOneWriteAndACompleteRefreshAsLanternaDoes() throws IOException {
        RawTerminal terminal = new RawTerminal(new TerminalSize(10, 3));
        TerminalSession session = TerminalSession.on(terminal);
        var g = session.screen().newTextGraphics();
        g.putString(0, 0, "abc");
        session.refreshAll(); // Lanterna's own full repaint
        assertEquals(0, terminal.frames.size());
        assertEquals('b', terminal.getCharacter(1, 0).getCharacter());
        g.putString(1, 0, "Z");
        g.putString(0, 2, "end");
        session.refresh();
        session.refresh(); // nothing changed since: nothing written
        assertEquals(List.of(ESC + "[1;2H" + ESC + "[0;39;49mZ" + ESC + "[3;1Hend" + ESC + "[?25l"),
                terminal.frames);
        session.close();
    }

    /** A virtual terminal that takes frames raw, as the process's own terminal does. */
    private static final class RawTerminal extends DefaultVirtualTerminal implements FrameScreen.FrameOutput {
        final List<String> frames = new ArrayList<>();

        RawTerminal(TerminalSize size) {
            super(size);
        }

        @Override
        public void writeFrame(byte[] frame) {
            frames.add(new String(frame, StandardCharsets.UTF_8));
        }
    }

    /** Enough of a terminal for a delta frame: CUP, SGR (reset and a list), hiding the cursor, characters. */
    private static final class Replay {
        final TextCharacter[][] cells;
        private int x;
        private int y;
        private TextColor fg = TextColor.ANSI.DEFAULT;
        private TextColor bg = TextColor.ANSI.DEFAULT;
        private EnumSet<SGR> sgrs = EnumSet.noneOf(SGR.class);

        Replay(int columns, int rows) {
            cells = new TextCharacter[rows][columns];
            for (TextCharacter[] row : cells) {
                java.util.Arrays.fill(row, TextCharacter.DEFAULT_CHARACTER);
            }
        }

        void play(String bytes) {
            int i = 0;
            while (i < bytes.length()) {
                char c = bytes.charAt(i);
                if (c != 0x1b) {
                    cells[y][x] = new TextCharacter(c, fg, bg, sgrs);
                    x++;
                    i++;
                    continue;
                }
                assertEquals('[', bytes.charAt(i + 1));
                int end = i + 2;
                while (!Character.isLetter(bytes.charAt(end))) {
                    end++;
                }
                String parameters = bytes.substring(i + 2, end);
                switch (bytes.charAt(end)) {
                    case 'H' -> {
                        String[] rc = parameters.split(";");
                        y = Integer.parseInt(rc[0]) - 1;
                        x = Integer.parseInt(rc[1]) - 1;
                    }
                    case 'm' -> sgr(parameters.split(";"));
                    case 'l' -> assertEquals("?25", parameters);
                    default -> throw new AssertionError("unexpected sequence " + bytes.substring(i, end + 1));
                }
                i = end + 1;
            }
        }

        private void sgr(String[] p) {
            assertEquals("0", p[0], "every style starts from a reset");
            fg = TextColor.ANSI.DEFAULT;
            bg = TextColor.ANSI.DEFAULT;
            sgrs = EnumSet.noneOf(SGR.class);
            for (int k = 1; k < p.length; k++) {
                int n = Integer.parseInt(p[k]);
                if (n == 38 || n == 48) {
                    TextColor color;
                    if (p[k + 1].equals("5")) {
                        color = new TextColor.Indexed(Integer.parseInt(p[k + 2]));
                        k += 2;
                    } else {
                        color = new TextColor.RGB(Integer.parseInt(p[k + 2]), Integer.parseInt(p[k + 3]),
                                Integer.parseInt(p[k + 4]));
                        k += 4;
                    }
                    if (n == 38) {
                        fg = color;
                    } else {
                        bg = color;
                    }
                } else if (n >= 30 && n <= 39 || n >= 90 && n <= 97) {
                    fg = ansi(n % 10, n >= 90);
                } else if (n >= 40 && n <= 49 || n >= 100 && n <= 107) {
                    bg = ansi(n % 10, n >= 100);
                } else {
                    SGR sgr = null;
                    for (SGR candidate : SGR.values()) {
                        if (DeltaFrame.code(candidate) == n) {
                            sgr = candidate;
                        }
                    }
                    assertTrue(sgr != null, "SGR " + n);
                    sgrs.add(sgr);
                }
            }
        }

        private static TextColor ansi(int index, boolean bright) {
            for (TextColor.ANSI color : TextColor.ANSI.values()) {
                byte[] sequence = color.getForegroundSGRSequence();
                String s = new String(sequence, StandardCharsets.US_ASCII);
                if (s.equals((bright ? "9" : "3") + index)) {
                    return color;
                }
            }
            throw new AssertionError("no ANSI colour " + index + (bright ? " bright" : ""));
        }
    }
}
