package dev.infertop.io;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The rule on the parent of what infertop writes, for an effective uid other than root's (the tool run by a user). */
class WritableDirectoryTest {
    private static final Path SHOWN = Path.of("/srv/d");

    @Test
    void itsOwnDirectoryAndARootOwnedStickyOneAreFine() {
        assertNull(WritableDirectory.refusal(SHOWN, 1000, 040700, 1000));
        assertNull(WritableDirectory.refusal(SHOWN, 1000, 040755, 1000));
        assertNull(WritableDirectory.refusal(SHOWN, 0, 041777, 1000));
        assertNull(WritableDirectory.refusal(SHOWN, 1000, 041777, 1000), "its own sticky directory");
    }

    @Test
    void anotherUsersOrAGroupWritableOneIsRefused() {
        assertEquals("/srv/d is owned by uid 1001, not by uid 1000 (infertop's) or root: its owner could swap what"
                + " infertop writes there", WritableDirectory.refusal(SHOWN, 1001, 040700, 1000));
        assertEquals("/srv/d is owned by uid 1001, not by uid 1000 (infertop's) or root: its owner could swap what"
                + " infertop writes there", WritableDirectory.refusal(SHOWN, 1001, 041777, 1000));
        assertEquals("/srv/d is writable by its group and not sticky (mode 0770): another user could swap what"
                + " infertop writes there", WritableDirectory.refusal(SHOWN, 1000, 040770, 1000));
        assertEquals("/srv/d is writable by others and not sticky (mode 2702): another user could swap what"
                + " infertop writes there", WritableDirectory.refusal(SHOWN, 0, 042702, 1000));
    }
}
