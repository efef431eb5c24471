package dev.infertop.session;

import dev.infertop.process.UserAccount;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Who runs the launched command: --user, else sudo's caller (with a note), else infertop's own user. */
class LaunchUserTest {
    private static final UserAccount ROOT = new UserAccount("root", 0, 0, List.of(0), "/root");
    private static final UserAccount ALICE = new UserAccount("alice", 1000, 1000, List.of(1000, 27), "/home/alice");

    /** A user database of root and alice; byUid gives alice the group asked for. */
    private static final LaunchUser.Directory USERS = new LaunchUser.Directory() {
        @Override
        public Optional<UserAccount> byNameOrUid(String text) {
            return switch (text) {
                case "root", "0" -> Optional.of(ROOT);
                case "alice", "1000" -> Optional.of(ALICE);
                default -> Optional.empty();
            };
        }

        @Override
        public Optional<UserAccount> byUid(int uid, int gid) {
            return uid == 1000 ? Optional.of(new UserAccount("alice", 1000, gid, List.of(gid, 27), "/home/alice"))
                    : Optional.empty();
        }
    };

    private static LaunchUser choose(String user, Map<String, String> environment) {
        return LaunchUser.choose(user, environment, 0, 0, USERS);
    }

    @Test
    void userRunsTheCommandAsThatUserSilently() {
        LaunchUser choice = choose("alice", Map.of());
        assertEquals(Optional.of(ALICE), choice.account());
        assertNull(choice.note());
        assertEquals(Optional.of(ALICE), choose("1000", Map.of()).account());
    }

    @Test
    void throughSudoTheCallerRunsItWithANote() {
        LaunchUser choice = choose(null, Map.of("SUDO_UID", "1000", "SUDO_GID", "1001"));
        assertEquals(Optional.of(new UserAccount("alice", 1000, 1001, List.of(1001, 27), "/home/alice")),
                choice.account());
        assertEquals("infertop: running the command as alice (uid 1000), who ran sudo; --user root runs it as root",
                choice.note());
        // Without SUDO_GID: the user's primary group.
        assertEquals(Optional.of(ALICE), choose(null, Map.of("SUDO_UID", "1000")).account());
    }

    @Test
    void userRootKeepsRootThroughSudo() {
        assertEquals(LaunchUser.SELF, choose("root", Map.of("SUDO_UID", "1000")));
    }

    @Test
    void withoutSudoOrFromRootItStaysInfertopsUser() {
        assertEquals(LaunchUser.SELF, choose(null, Map.of()));
        assertEquals(LaunchUser.SELF, choose(null, Map.of("SUDO_UID", "0")));
        // A non-root real uid: SUDO_UID is not sudo's (see InvokingUser).
        assertEquals(LaunchUser.SELF, LaunchUser.choose(null, Map.of("SUDO_UID", "1000"), 1000, 1000, USERS));
    }

    @Test
    void anUnknownUserIsOneUsageLine() {
        UserError error = assertThrows(UserError.class, () -> choose("mallory", Map.of()));
        assertEquals(2, error.exitCode());
        assertEquals("--user mallory: no such user (see getent passwd); give a user name or uid", error.getMessage());
        UserError control = assertThrows(UserError.class, () -> choose("x\u001b[2J", Map.of()));
        assertEquals("--user x\\x1b[2J: no such user (see getent passwd); give a user name or uid",
                control.getMessage());
    }

    @Test
    void aSudoUidWithoutAUserIsOneUsageLine() {
        UserError error = assertThrows(UserError.class, () -> choose(null, Map.of("SUDO_UID", "4242")));
        assertEquals(2, error.exitCode());
        assertEquals("SUDO_UID=4242 names no user (see getent passwd): give --user USER, or --user root to run the "
                + "command as root", error.getMessage());
    }

    @Test
    void onlyRootSwitchesUsers() {
        UserError error = assertThrows(UserError.class,
                () -> LaunchUser.choose("alice", Map.of(), 2000, 2000, USERS));
        assertEquals("--user alice: only root can run the command as another user", error.getMessage());
        // Naming oneself needs no switch.
        assertEquals(LaunchUser.SELF, LaunchUser.choose("alice", Map.of(), 1000, 1000, USERS));
    }
}
