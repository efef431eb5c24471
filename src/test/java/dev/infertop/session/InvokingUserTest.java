package dev.infertop.session;

import dev.infertop.process.ProcessUids;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who infertop acts for: sudo's caller through sudo, else the real uid; SUDO_UID only counts for a real root. */
class InvokingUserTest {
    @Test
    void throughSudoTheCallerIsTheInvokingUser() {
        assertEquals(new InvokingUser(1000, true), InvokingUser.of(Map.of("SUDO_UID", "1000"), 0));
    }

    @Test
    void withoutSudoTheRealUidIs() {
        assertEquals(new InvokingUser(0, false), InvokingUser.of(Map.of(), 0));
        assertEquals(new InvokingUser(1000, false), InvokingUser.of(Map.of(), 1000));
    }

    @Test
    void sudoUidIsIgnoredUnlessTheRealUidIsRoot() {
        // A user with CAP_BPF (real uid 1000) cannot pose as uid 0 or anyone else.
        assertEquals(new InvokingUser(1000, false), InvokingUser.of(Map.of("SUDO_UID", "0"), 1000));
    }

    @Test
    void aMalformedSudoUidIsAUsageErrorNotRoot() {
        for (String bad : new String[] {"", "x", "-1", "1e3", "4294967295", "99999999999"}) {
            UserError error = assertThrows(UserError.class, () -> InvokingUser.of(Map.of("SUDO_UID", bad), 0), bad);
            assertEquals(2, error.exitCode());
            assertEquals("SUDO_UID='" + bad + "' is not a numeric id: unset it, or run infertop through sudo",
                    error.getMessage());
        }
        assertEquals(new InvokingUser((int) 4294967294L, true), InvokingUser.of(Map.of("SUDO_UID", "4294967294"), 0));
    }

    @Test
    void aProcessOfAnotherUserIsSaidWithBothUsers() {
        InvokingUser root = new InvokingUser(0, false);
        assertEquals(Optional.of("infertop: pid 42 (llama-bench) runs as nobody (uid 65534), not as you, root (uid 0): "
                        + "tracing it all the same"),
                root.foreignProcessNote(42, "llama-bench", Optional.of(new ProcessUids(65534, 65534))));
    }

    @Test
    void noNoteForOwnProcessOrAGoneOne() {
        InvokingUser alice = new InvokingUser(1000, true);
        assertEquals(Optional.empty(), alice.foreignProcessNote(42, "x", Optional.of(new ProcessUids(1000, 1000))));
        assertEquals(Optional.empty(), alice.foreignProcessNote(42, "x", Optional.empty()));
        // A set-uid program the user started runs with someone else's effective uid: not theirs.
        assertTrue(alice.foreignProcessNote(42, "x", Optional.of(new ProcessUids(1000, 0))).isPresent());
    }

    @Test
    void aCommandNameWithControlCharactersIsShownVisibly() {
        String note = new InvokingUser(0, false).foreignProcessNote(7, "a\u001b]0;x\u0007b\u009b",
                Optional.of(new ProcessUids(65534, 65534))).orElseThrow();
        assertTrue(note.contains("(a\\x1b]0;x\\x07b\\x9b)"), note);
    }

    @Test
    void aUidWithoutAUserIsNamedByNumber() {
        assertEquals("uid 4000000000", InvokingUser.label((int) 4000000000L));
    }
}
