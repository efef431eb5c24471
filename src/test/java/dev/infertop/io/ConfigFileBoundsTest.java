package dev.infertop.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.infertop.ffi.LibC;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The user's config file is read as root too: a FIFO or a huge file there is refused with one line. */
class ConfigFileBoundsTest {
    @TempDir
    Path home;

    private String refusal(String name) {
        Assumptions.assumeTrue(System.getenv("XDG_CONFIG_HOME") == null, "XDG_CONFIG_HOME would win over user.home");
        String saved = System.getProperty("user.home");
        System.setProperty("user.home", home.toString());
        try {
            return assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThrows(IllegalArgumentException.class,
                    () -> ConfigFiles.readShippedThenUser(name, (line, where) -> { })).getMessage());
        } finally {
            System.setProperty("user.home", saved);
        }
    }

    @Test
    void aFifoInPlaceOfTheUsersConfigIsRefusedWithoutBlocking() throws Exception {
        Path config = Files.createDirectories(home.resolve(".config/infertop")).resolve("keys.conf");
        LibC.mkfifo(config.toString(), 0600);
        assertEquals(config + ": not a regular file (a FIFO)", refusal("keys.conf"));
    }

    @Test
    void aHugeUsersConfigIsRefusedUnread() throws Exception {
        Path config = Files.createDirectories(home.resolve(".config/infertop")).resolve("backends.conf");
        try (RandomAccessFile file = new RandomAccessFile(config.toFile(), "rw")) {
            file.setLength(ConfigFiles.MAX_USER_FILE_BYTES + 1);
        }
        assertEquals(config + ": too large (1048577 bytes, at most 1048576 read)", refusal("backends.conf"));
    }
}
