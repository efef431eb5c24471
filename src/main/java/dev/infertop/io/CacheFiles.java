package dev.infertop.io;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reading infertop's own cache files, which anyone who could write the cache directory could have written: a
 * file is read only up to a bound, and what went wrong is said in one short line.
 */
public final class CacheFiles {
    private CacheFiles() {}

    /** The whole of {@code file}, or an IOException when it is larger than {@code maxBytes}. */
    public static byte[] readAtMost(Path file, int maxBytes) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(maxBytes + 1);
            if (bytes.length > maxBytes) {
                throw new IOException("larger than " + maxBytes + " bytes");
            }
            return bytes;
        }
    }

    /** The first line of an exception's message, at most 200 characters: what a note says of a file ignored. */
    public static String firstLine(String message) {
        if (message == null) {
            return "no detail";
        }
        String line = message.lines().findFirst().orElse("");
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }
}
