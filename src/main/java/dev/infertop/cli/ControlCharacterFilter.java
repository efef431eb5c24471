package dev.infertop.cli;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The guard at the standard streams: UTF-8 bytes pass through except those that would act on the terminal.
 * Target strings are made visible where they enter ({@link dev.infertop.model.SafeText}); this catches what a
 * path forgot (an exception's message holding a path, a library name in a warning) before it reaches the
 * operator's terminal or log. Line feed, carriage return (progress lines) and tab pass; every other C0 byte
 * and DEL become {@code \xNN}; the C1 controls (UTF-8 {@code C2 80}–{@code C2 9F}) {@code \xNN}; the
 * bidirectional controls and line/paragraph separators (U+061C, U+200E/F, U+2028–U+202E, U+2066–U+2069)
 * {@code \\uNNNN}. Byte-wise with a little state, so a character split across writes is still seen.
 *
 * <p>Only for the standard streams of the batch and JSON outputs and stderr: the live view writes its own
 * escape sequences to the terminal through its own stream (its cells are guarded in {@code view.Cells}).
 * JSON stays valid: its writers escape these characters as {@code \\uNNNN} first, so none reaches here raw.
 */
final class ControlCharacterFilter extends FilterOutputStream {
    /** Bytes held while a multi-byte sequence that may be a control is incomplete (at most two). */
    private final byte[] held = new byte[2];
    private int heldCount;

    ControlCharacterFilter(OutputStream out) {
        super(out);
    }

    /** Replaces System.out and System.err with guarded streams (UTF-8, flushed per line like the JVM's own). */
    static void install() {
        System.setOut(guarded(new FileOutputStream(FileDescriptor.out)));
        System.setErr(guarded(new FileOutputStream(FileDescriptor.err)));
    }

    static PrintStream guarded(OutputStream raw) {
        return new PrintStream(new ControlCharacterFilter(new BufferedOutputStream(raw, 8192)), true,
                StandardCharsets.UTF_8);
    }

    @Override
    public void write(int b) throws IOException {
        b &= 0xff;
        if (heldCount == 0) {
            if (b == 0xc2 || b == 0xd8 || b == 0xe2) { // may start C1, U+061C, or U+2xxx controls
                held[heldCount++] = (byte) b;
            } else if ((b < 0x20 && b != '\n' && b != '\r' && b != '\t') || b == 0x7f) {
                hex(b);
            } else {
                out.write(b);
            }
            return;
        }
        int lead = held[0] & 0xff;
        if (heldCount == 1 && lead == 0xc2) {
            heldCount = 0;
            if (b >= 0x80 && b <= 0x9f) {
                hex(b); // U+0080..U+009F is C2 80..C2 9F
            } else {
                out.write(lead);
                write(b);
            }
        } else if (heldCount == 1 && lead == 0xd8) {
            heldCount = 0;
            if (b == 0x9c) {
                unicode(0x061c);
            } else {
                out.write(lead);
                write(b);
            }
        } else if (heldCount == 1) { // 0xe2
            if (b == 0x80 || b == 0x81) {
                held[heldCount++] = (byte) b;
            } else {
                heldCount = 0;
                out.write(lead);
                write(b);
            }
        } else { // E2 80 xx or E2 81 xx
            int second = held[1] & 0xff;
            heldCount = 0;
            int cp = 0x2000 | ((second & 0x0f) << 6) | (b & 0x3f);
            if ((b & 0xc0) == 0x80 && isControl(cp)) {
                unicode(cp);
            } else {
                out.write(lead);
                out.write(second);
                write(b);
            }
        }
    }

    private static boolean isControl(int cp) {
        return cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
    }

    private void hex(int b) throws IOException {
        out.write('\\');
        out.write('x');
        out.write(Character.forDigit(b >> 4, 16));
        out.write(Character.forDigit(b & 0xf, 16));
    }

    private void unicode(int cp) throws IOException {
        out.write('\\');
        out.write('u');
        for (int shift = 12; shift >= 0; shift -= 4) {
            out.write(Character.forDigit((cp >> shift) & 0xf, 16));
        }
    }

    /**
     * Runs of bytes that need no look (printable ASCII, line breaks, tabs, UTF-8 bytes other than the three lead
     * bytes above) go out in one write; the rest byte by byte. A JSON line a tick is ~8 KB: one buffered
     * stream's lock per byte was most of printing it.
     */
    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        int end = offset + length;
        int i = offset;
        while (i < end) {
            if (heldCount == 0) {
                int run = i;
                while (run < end && passes(bytes[run] & 0xff)) {
                    run++;
                }
                if (run > i) {
                    out.write(bytes, i, run - i);
                    i = run;
                    continue;
                }
            }
            write(bytes[i++]);
        }
    }

    /** Whether {@code b}, with nothing held, goes out as it is and starts nothing that may be a control. */
    private static boolean passes(int b) {
        if (b >= 0x20 && b < 0x7f) {
            return true;
        }
        if (b < 0x80) {
            return b == '\n' || b == '\r' || b == '\t';
        }
        return b != 0xc2 && b != 0xd8 && b != 0xe2;
    }

    /** Held bytes stay held: PrintStream never splits a character across a flush, so they are mid-character. */
    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() throws IOException {
        for (int i = 0; i < heldCount; i++) {
            out.write(held[i]);
        }
        heldCount = 0;
        super.close();
    }
}
